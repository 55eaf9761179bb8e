"""Dónde las papas queman ("papas"): a BGA-style state machine (the states and transitions
listed below) with the rules of the card game and the project's choices where they are open.

The game is specified as a state machine, not a message protocol, so the messages are named
after its states and transitions. The events are named as every game's are, for the fact they
record (``papas.<what_happened>``); each causes one message, whose ``type`` is the transition's
name (``protocol.MESSAGES``). Each message carries ``state`` (the state after the event) and
``active``.

Commands (player -> game; ``actions()`` lists them complete, one per distinct card face)::

    PlayCard {card}            PlayerTurn: an action card A3-A14 (BGA actPlayCard)
    PlayThreesome {cards:[3]}  PlayerTurn: any kind of threesome (actPlayThreesome)
    EndTurn {}                 PlayerTurn: draw 1 and end the turn (actEndTurn)
    DiscardAndDraw {}          PlayerTurn: one card at the start of the turn (actDiscardAndDraw)
    SelectTargets {targets}    TargetSelection: one opponent, or two different players
    SkipReaction {window}      ReactionPhase: pass (actSkipReaction)
    PlayInterrupt {window, card}  ReactionPhase: "No dude" / "I told you no dude"
    SelectCard {token}         CardSelection: a one-time opaque token (actSelectCard)
    SelectCardName {name}      CardNameSelection: one of the 18 names (Pope Potato)
    DiscardCard {card}         DiscardPhase: one card at a time while the hand exceeds 7

Events, the message each one causes and the state-machine transition it is::

    papas.dealt                GameStart: [*] -> PlayerTurn "Game Start": the deal (the event
                               holds the deck permutation)
    papas.card_played          PlayCard: PlayerTurn -> TargetSelection "Play Action Card
                               (requires target)", or -> ReactionPhase "Play Card (no target)"
                               (Papageddon: implicit target)
    papas.threesome_played     PlayThreesome: PlayerTurn -> ReactionPhase "Play Threesome"
    papas.targets_selected     SelectTargets: TargetSelection -> ReactionPhase "Select Targets"
    papas.reaction_skipped     SkipReaction: ReactionPhase/WaitForReactions: one player passes
                               (sent to them only)
    papas.interrupt_played     InterruptPlayed: ReactionPhase/InterruptPlayed -> PlayerTurn
                               "Interrupt Played / Cancelled"
    papas.not_interrupted      NoInterrupt: ReactionPhase/NoInterrupt "Timer expires / All
                               skip" -> PlayerTurn (threesome scored), CardSelection,
                               CardNameSelection or ActionResolution
    papas.selection_offered    CardSelection: entering CardSelection/SelectCard: the tokens, in
                               a shuffled order, to the actor alone (with the faces for Potato
                               Dawan); others get a count
    papas.card_selected        CardSelected: CardSelection -> ActionResolution "Card Selected"
    papas.card_name_selected   CardNameSelected: CardNameSelection -> ActionResolution "Card
                               Name Selected"
    papas.action_resolved      ActionResolved: ActionResolution -> PlayerTurn "Action Resolved
                               (continue turn)", or -> NextPlayer "Action Resolved (alarm
                               card)" (end-of-turn draw due)
    papas.turn_ended           EndTurn: PlayerTurn -> NextPlayer "End Turn (hand <= 7)" /
                               -> DiscardPhase (> 7)
    papas.discarded_and_drawn  DiscardAndDraw: PlayerTurn/OfferDiscard -> NextPlayer "Discard &
                               Draw"
    papas.auto_drawn           AutoDraw: PlayerTurn/CheckHand 0 cards -> AutoDraw -> NextPlayer
                               "Empty Hand"
    papas.card_drawn           DrawCard: NextPlayer/DrawCard -> CheckHandSize (-> DiscardPhase
                               if > 7)
    papas.card_discarded       DiscardCards: DiscardPhase/DiscardCards -> CheckHandSize
                               (-> NextPlayer when <= 7)
    papas.turn_passed          NextTurn: NextPlayer/NextTurn -> PlayerTurn "Next Player's Turn"
                               (Jump to the side: ``skipped`` lists the player who loses their
                               turn)
    papas.game_won             EndScore: NextPlayer/CheckWin -> EndScore "Win Condition Met";
                               then GameEnd (the engine appends table.finished, the GameOver
                               message)

ActionResolution, NextPlayer and EndScore are automatic states (BGA "game" states): the engine
runs them as ``follow_up`` once everyone has acknowledged the previous event. The win check happens
whenever golden potatoes change (threesome scored, action resolved): reaching the threshold
goes to EndScore at once. Draws that empty the deck shuffle the discard pile into a new
deck; the permutation is in the event (``reshuffled``), players only learn that it happened.

Reaction windows: every PlayCard without target, PlayThreesome and SelectTargets opens
window ``n``; every other player gets the same message and may SkipReaction or
PlayInterrupt. The first valid interrupt wins (later ones: ``already_interrupted``); the
window closes when all have passed or at ``deadline(state) = Deadline(reaction_seconds,
"reaction:n")`` through ``on_timeout``. No counter-interrupts: an interrupt cannot itself be
interrupted.

Refusal codes: the engine's ``bad_request``, ``unknown_command``, ``not_your_turn``,
``illegal_move`` and this game's ``card_not_in_hand``, ``not_playable``,
``invalid_threesome``, ``bad_target``, ``reaction_closed``, ``already_interrupted``,
``already_skipped``, ``not_an_interrupt``, ``cannot_cancel_threesome``, ``unknown_token``,
``unknown_card_name``, ``discard_and_draw_unavailable``, ``wrong_state``.
"""

from __future__ import annotations

from .bots import BOTS, HeuristicBot
from .commands import COMMAND_TYPES
from .folds import EVENT_TYPES
from .rules import Papas
from .state import PapasConfig, PapasState

GAME = Papas()

__all__ = [
    "BOTS",
    "COMMAND_TYPES",
    "EVENT_TYPES",
    "GAME",
    "HeuristicBot",
    "Papas",
    "PapasConfig",
    "PapasState",
]
