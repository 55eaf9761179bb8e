"""The event folds (``evolve``): one function per event type, registered in :data:`FOLDS`.

Every random outcome is already written in the event (see :mod:`.flow`), so a fold only
applies it. Each fold builds the new state with one ``_replace``: evolve runs for every
event of every replay.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardroom_engine import Event
from cardroom_engine.kit import Folds, put, without

from . import cards as C
from .cards import TYPES
from .state import (
    ACTION_RESOLUTION,
    ACTION_RESOLVED,
    AUTO_DRAWN,
    CARD_DISCARDED,
    CARD_DRAWN,
    CARD_NAME_SELECTED,
    CARD_NAME_SELECTION,
    CARD_PLAYED,
    CARD_SELECTED,
    CARD_SELECTION,
    DEALT,
    DISCARD_PHASE,
    DISCARDED_AND_DRAWN,
    END_SCORE,
    GAME_END,
    GAME_WON,
    HAND_LIMIT,
    INTERRUPT_PLAYED,
    NEXT_PLAYER,
    NOT_INTERRUPTED,
    PLAYER_TURN,
    REACTION_PHASE,
    REACTION_SKIPPED,
    SELECTION_OFFERED,
    TARGET_SELECTION,
    TARGETS_SELECTED,
    THREESOME_PLAYED,
    TURN_ENDED,
    TURN_PASSED,
    PapasState,
    Play,
)

FOLDS = Folds[PapasState]("papas")

Cards = tuple[int, ...]
Hands = tuple[Cards, ...]


# -- helpers shared by several folds ---------------------------------------------------------


def _without_all(cards: Cards, gone: Cards) -> Cards:
    return tuple(c for c in cards if c not in gone)


def _apply_draw(
    deck: Cards, discard: Cards, drawn: Sequence[int], reshuffled: Sequence[int] | None
) -> tuple[Cards, Cards]:
    """The deck and discard pile after a draw written by :func:`.flow.draw_cards`."""
    if reshuffled is None:
        return deck[len(drawn) :], discard
    return tuple(reshuffled[len(drawn) - len(deck) :]), ()


def _give(
    deck: Cards, discard: Cards, hands: Hands, seat: int, event: Event
) -> tuple[Cards, Cards, Hands]:
    """The deck, discard pile and hands once ``seat`` drew the event's ``drawn`` cards."""
    drawn = event["drawn"]
    deck, discard = _apply_draw(deck, discard, drawn, event["reshuffled"])
    return deck, discard, put(hands, seat, (*hands[seat], *drawn))


def _move(hands: Hands, card: int | None, source: int, dest: int) -> Hands:
    if card is None:
        return hands
    hands = put(hands, source, without(hands[source], card))
    return put(hands, dest, (*hands[dest], card))


def _scored(state: PapasState, potatoes: tuple[int, ...], phase: str) -> tuple[str, int | None]:
    """The phase and winner once golden potatoes change: reaching the threshold ends the
    game (EndScore), won by the first seat with the most."""
    best = max(potatoes)
    if best >= state.threshold:
        return END_SCORE, potatoes.index(best)
    return phase, state.winner


def _open_window(state: PapasState, play: Play, hands: Hands, discard: Cards) -> PapasState:
    """Reaction window n+1 on ``play``: every other player may react."""
    active = state.active
    return state._replace(
        hands=hands,
        discard=discard,
        turn_fresh=False,
        play=play,
        phase=REACTION_PHASE,
        window=state.window + 1,
        reactors=(*range(active), *range(active + 1, len(state.seats))),
        window_interrupted=False,
    )


# -- the folds, in the order of the state machine ------------------------------------------------


@FOLDS.on(DEALT)
def _game_start(state: PapasState, event: Event) -> PapasState:
    deck = tuple(event["deck"])
    size = int(event["hand_size"])
    n = len(state.seats)
    return state._replace(
        deck=deck[n * size :],
        hands=tuple(deck[i * size : (i + 1) * size] for i in range(n)),
        phase=PLAYER_TURN,
        active=0,
        turn_fresh=True,
    )


@FOLDS.on(CARD_PLAYED)
def _play_card(state: PapasState, event: Event) -> PapasState:
    seat = state.active
    card = int(event["card"])
    name = event["name"]
    targets = tuple(map(state.seat, event["targets"]))
    play = Play("card", (card,), name, targets=targets)
    hands = put(state.hands, seat, without(state.hands[seat], card))
    discard = (*state.discard, card)
    if name in C.NEEDS_TARGET:
        return state._replace(
            hands=hands, discard=discard, turn_fresh=False, play=play, phase=TARGET_SELECTION
        )
    return _open_window(state, play, hands, discard)


@FOLDS.on(THREESOME_PLAYED)
def _play_threesome(state: PapasState, event: Event) -> PapasState:
    seat = state.active
    cards = tuple(int(c) for c in event["cards"])
    play = Play("threesome", cards, event["kind"], int(event["reward"]))
    hands = put(state.hands, seat, _without_all(state.hands[seat], cards))
    return _open_window(state, play, hands, (*state.discard, *cards))


@FOLDS.on(TARGETS_SELECTED)
def _select_targets(state: PapasState, event: Event) -> PapasState:
    # _open_window's turn_fresh=False changes nothing: PlayCard made the turn not fresh
    play = state.play
    assert play is not None
    targets = tuple(map(state.seat, event["targets"]))
    play = Play(play.kind, play.cards, play.name, play.reward, targets)
    return _open_window(state, play, state.hands, state.discard)


@FOLDS.on(REACTION_SKIPPED)
def _skip(state: PapasState, event: Event) -> PapasState:
    return state._replace(reactors=without(state.reactors, state.seat(event["player"])))


@FOLDS.on(INTERRUPT_PLAYED)
def _interrupt(state: PapasState, event: Event) -> PapasState:
    seat = state.seat(event["player"])
    card = int(event["card"])
    return state._replace(
        hands=put(state.hands, seat, without(state.hands[seat], card)),
        discard=(*state.discard, card),
        play=None,
        reactors=(),
        window_interrupted=True,
        phase=PLAYER_TURN,
    )


@FOLDS.on(NOT_INTERRUPTED)
def _no_interrupt(state: PapasState, event: Event) -> PapasState:
    play = state.play
    assert play is not None
    if play.kind == "threesome":
        active = state.active
        potatoes = put(state.potatoes, active, state.potatoes[active] + play.reward)
        phase, winner = _scored(state, potatoes, PLAYER_TURN)
        return state._replace(
            reactors=(),
            window_interrupted=False,
            play=None,
            potatoes=potatoes,
            phase=phase,
            winner=winner,
        )
    if play.name in C.NEEDS_CARD_SELECTION:
        if state.hands[play.targets[0]]:
            return state._replace(
                reactors=(), window_interrupted=False, phase=CARD_SELECTION, selection=()
            )
        # nothing to take from an empty hand
        return state._replace(
            reactors=(), window_interrupted=False, phase=ACTION_RESOLUTION, selected=None
        )
    phase = CARD_NAME_SELECTION if play.name == C.POPE_POTATO else ACTION_RESOLUTION
    return state._replace(reactors=(), window_interrupted=False, phase=phase)


@FOLDS.on(SELECTION_OFFERED)
def _card_selection(state: PapasState, event: Event) -> PapasState:
    return state._replace(
        selection=tuple((str(token), int(card)) for token, card in event["options"])
    )


@FOLDS.on(CARD_SELECTED)
def _card_selected(state: PapasState, event: Event) -> PapasState:
    return state._replace(selection=(), selected=int(event["card"]), phase=ACTION_RESOLUTION)


@FOLDS.on(CARD_NAME_SELECTED)
def _card_name_selected(state: PapasState, event: Event) -> PapasState:
    return state._replace(named=str(event["name"]), phase=ACTION_RESOLUTION)


@FOLDS.on(ACTION_RESOLVED)
def _action_resolved(state: PapasState, event: Event) -> PapasState:
    play = state.play
    assert play is not None
    seat = state.active
    name = play.name
    target = play.targets[0] if play.targets else seat
    potatoes, hands, deck, discard = state.potatoes, state.hands, state.deck, state.discard
    direction, skip_next = state.direction, state.skip_next
    if name == C.GET_OFF_THE_PONY:
        n = int(event["potatoes"])
        potatoes = put(potatoes, target, potatoes[target] - n)
        potatoes = put(potatoes, seat, potatoes[seat] + n)
    elif name == C.LOOK_AHEAD:
        potatoes = put(potatoes, target, max(0, potatoes[target] - int(event["potatoes"])))
    elif name == C.POTATO_OF_THE_YEAR:
        potatoes = put(potatoes, seat, potatoes[seat] + int(event["potatoes"]))
    elif name in (C.LEND_ME_A_BUCK, C.POTATO_DAWAN, C.POPE_POTATO):
        hands = _move(hands, event["taken"], target, seat)
    elif name == C.PAPAGEDDON:
        hands = _move(hands, event["taken"], target, seat)
        direction = int(event["direction"])
    elif name == C.RUNAWAY_POTATOES:
        for player, card in event["runaway"].items():
            other = state.seat(player)
            hands = put(hands, other, without(hands[other], int(card)))
        if event["deck"] is not None:
            deck = tuple(event["deck"])
    elif name in (C.HARRY_POTATO, C.JUMP_TO_THE_SIDE):
        deck, discard, hands = _give(deck, discard, hands, seat, event)
        if name == C.JUMP_TO_THE_SIDE:
            skip_next = True
    elif name == C.POTATO_OF_DESTINY:
        discard = (*discard, *hands[target])
        hands = put(hands, target, ())
        deck, discard, hands = _give(deck, discard, hands, target, event)
    elif name == C.SPIDER_POTATO:
        a, b = play.targets
        hands = put(put(hands, a, hands[b]), b, hands[a])
    alarm = TYPES[name].alarm
    phase, winner = _scored(state, potatoes, NEXT_PLAYER if alarm else PLAYER_TURN)
    return state._replace(
        hands=hands,
        deck=deck,
        discard=discard,
        potatoes=potatoes,
        direction=direction,
        skip_next=skip_next,
        phase=phase,
        winner=winner,
        draw_due=alarm,
        play=None,
        selection=(),
        selected=None,
        named=None,
    )


@FOLDS.on(TURN_ENDED)
def _end_turn(state: PapasState, event: Event) -> PapasState:
    seat = state.active
    deck, discard, hands = _give(state.deck, state.discard, state.hands, seat, event)
    return state._replace(
        deck=deck,
        discard=discard,
        hands=hands,
        phase=DISCARD_PHASE if len(hands[seat]) > HAND_LIMIT else NEXT_PLAYER,
        draw_due=False,
    )


@FOLDS.on(DISCARDED_AND_DRAWN)
def _discard_and_draw(state: PapasState, event: Event) -> PapasState:
    seat = state.active
    card = int(event["card"])
    hands = put(state.hands, seat, without(state.hands[seat], card))
    deck, discard, hands = _give(state.deck, (*state.discard, card), hands, seat, event)
    return state._replace(
        deck=deck,
        discard=discard,
        hands=hands,
        turn_fresh=False,
        phase=NEXT_PLAYER,
        draw_due=False,
    )


@FOLDS.on(AUTO_DRAWN)
def _auto_draw(state: PapasState, event: Event) -> PapasState:
    deck, discard, hands = _give(state.deck, state.discard, state.hands, state.active, event)
    return state._replace(
        deck=deck,
        discard=discard,
        hands=hands,
        phase=NEXT_PLAYER,
        draw_due=False,
        turn_fresh=False,
    )


@FOLDS.on(CARD_DRAWN)
def _draw_card(state: PapasState, event: Event) -> PapasState:
    """NextPlayer's end-of-turn draw (after an alarm card): as an EndTurn's."""
    return _end_turn(state, event)


@FOLDS.on(CARD_DISCARDED)
def _discard(state: PapasState, event: Event) -> PapasState:
    seat = state.active
    card = int(event["card"])
    hand = without(state.hands[seat], card)
    return state._replace(
        hands=put(state.hands, seat, hand),
        discard=(*state.discard, card),
        phase=DISCARD_PHASE if len(hand) > HAND_LIMIT else NEXT_PLAYER,
    )


@FOLDS.on(TURN_PASSED)
def _next_turn(state: PapasState, event: Event) -> PapasState:
    return state._replace(
        active=state.seat(event["player"]),
        phase=PLAYER_TURN,
        turn_fresh=True,
        skip_next=False,
        draw_due=False,
    )


@FOLDS.on(GAME_WON)
def _end_score(state: PapasState, event: Event) -> PapasState:
    return state._replace(phase=GAME_END)


EVENT_TYPES = FOLDS.types
