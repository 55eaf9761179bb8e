"""The 66 game's commands: what each one leads to, in each protocol generation.

:data:`V1_COMMANDS` and :data:`V2_COMMANDS` register one handler per command type (the names
are in moves.py); a handler checks that the phase allows its command and reads its fields.
:func:`decide` first refuses what no handler may see: a command of the other protocol, a
player who is not seated, a finished game, a player whose turn it is not.
"""

from __future__ import annotations

import random

from cardroom_engine import Command, Event, Rejection, inputs
from cardroom_engine.kit import Commands
from cardroom_wire import ErrorCode

from . import moves as m
from .cards import POWER_VALUES, draw
from .flow import round_dealt
from .state import (
    ANOTHERS_CARD_PEEKED,
    CARD_DISCARDED,
    CARDS_EXCHANGED,
    CARDS_REPLACED,
    CARDS_SHOWN,
    CLAIM_REPLACE,
    DECK_CARD_TAKEN,
    DECK_TAKEN,
    DISCARD_TAKEN,
    DISCARD_TAKEN_EVENT,
    EXCHANGE,
    GAME_OVER,
    OWN_CARD_PEEKED,
    PEEK_OTHER,
    PEEK_OWN,
    READY,
    ROUND_OVER,
    ROUND_STOPPED,
    SWAP_OTHER,
    SWAP_OWN,
    SWAP_OWN_PICKED,
    V1,
    SixtySixState,
)

# Stable codes of this game's own refusals (besides the engine's generic ones).
STOP_ALREADY_REQUESTED = "stop_already_requested"
MUST_TARGET_ANOTHER_PLAYER = "must_target_another_player"

MAX_INDEXES = 64
"""The longest list of card indexes read (a hand is far shorter; a longer list is no move)."""

V1_COMMANDS = Commands[SixtySixState]("sixtysix")
V2_COMMANDS = Commands[SixtySixState]("sixtysix")


def decide(state: SixtySixState, actor: str, command: Command, rng: random.Random) -> list[Event]:
    kind = command.get("type")
    commands = V1_COMMANDS if state.protocol == V1 else V2_COMMANDS
    if not isinstance(kind, str) or kind not in commands:
        raise Rejection(ErrorCode.UNKNOWN_COMMAND, "not a command of this table's protocol")
    if actor not in state.seats:
        raise Rejection(ErrorCode.NOT_SEATED, "you are not seated at this table")
    seat = state.seat_of(actor)
    if state.phase == GAME_OVER:
        raise Rejection(ErrorCode.GAME_FINISHED, "the game is over")
    if state.mover() != seat:
        raise Rejection(ErrorCode.NOT_YOUR_TURN, "it is not your turn to move")
    return commands.decide(state, actor, command, rng)


# -- reading and checking fields ----------------------------------------------------------


def _illegal(message: str) -> Rejection:
    return Rejection(ErrorCode.ILLEGAL_MOVE, message)


def _not_now(command: Command) -> Rejection:
    return _illegal(f"{command['type']} is not possible now")


def _int(command: Command, field: str) -> int:
    # bool is not a position; neither is "1" or 1.0. Out of the hand: the game's illegal_move
    return inputs.integer(command.get(field), field)


def _own_index(state: SixtySixState, command: Command, field: str = "cardIndex") -> int:
    index = _int(command, field)
    if not 0 <= index < len(state.hands[state.active]):
        raise _illegal("there is no card at that position in your hand")
    return index


def _other_card(
    state: SixtySixState, command: Command, player_field: str, card_field: str
) -> tuple[int, int]:
    target = _int(command, player_field)
    index = _int(command, card_field)
    if not 0 <= target < state.n:
        raise _illegal("there is no player with that index")
    if target == state.active:
        raise Rejection(MUST_TARGET_ANOTHER_PLAYER, "pick a card of another player")
    if not 0 <= index < len(state.hands[target]):
        raise _illegal("that player has no card at that position")
    return target, index


# -- the events both generations share ----------------------------------------------------


def _claim(state: SixtySixState, command: Command) -> Event:
    indexes = inputs.integers(command.get("cardIndexes"), "cardIndexes", 0, MAX_INDEXES)
    hand = state.hands[state.active]
    if len(indexes) < 2 or len(indexes) > len(hand):
        raise _illegal("show at least two of your cards")
    if len(set(indexes)) != len(indexes):
        raise _illegal("show each card only once")
    if any(not 0 <= i < len(hand) for i in indexes):
        raise _illegal("there is no card at that position in your hand")
    values = [hand[i] for i in indexes]
    return {
        "type": CARDS_SHOWN,
        "player": state.active,
        "cardIndexes": indexes,
        "values": values,
        "identical": len(set(values)) == 1,
    }


def _replace_one(state: SixtySixState, index: int, source: str) -> Event:
    return {
        "type": CARDS_REPLACED,
        "player": state.active,
        "cardIndexes": [index],
        "source": source,
        "value": state.drawn if source == "deck" else state.discard,
        "discardedValue": state.hands[state.active][index],
        "claim": False,
    }


def _peek_own(state: SixtySixState, command: Command) -> Event:
    index = _own_index(state, command)
    return {
        "type": OWN_CARD_PEEKED,
        "player": state.active,
        "cardIndex": index,
        "value": state.hands[state.active][index],
    }


def _peek_other(state: SixtySixState, command: Command, player_field: str) -> Event:
    target, index = _other_card(state, command, player_field, "cardIndex")
    return {
        "type": ANOTHERS_CARD_PEEKED,
        "player": state.active,
        "target": target,
        "cardIndex": index,
        "value": state.hands[target][index],
    }


def _exchange(state: SixtySixState, own: int, target: int, other: int) -> Event:
    return {
        "type": CARDS_EXCHANGED,
        "player": state.active,
        "cardIndex": own,
        "target": target,
        "targetCardIndex": other,
        "ownValue": state.hands[state.active][own],
        "targetValue": state.hands[target][other],
    }


# -- the commands both generations share ----------------------------------------------------


@V1_COMMANDS.on(m.START_NEXT_ROUND)
@V2_COMMANDS.on(m.START_NEXT_ROUND)
def _start_next_round(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != ROUND_OVER:
        raise _not_now(command)
    assert state.next_starter is not None
    return [round_dealt(state, state.next_starter, rng)]


@V1_COMMANDS.on(m.TAKE_CARD_FROM_DECK)
@V2_COMMANDS.on(m.TAKE_CARD_FROM_DECK)
def _take_card_from_deck(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != READY:
        raise _not_now(command)
    value = draw(state.deck, state.deck_size, rng)
    return [{"type": DECK_CARD_TAKEN, "player": state.active, "value": value}]


@V1_COMMANDS.on(m.STOP_ROUND)
@V2_COMMANDS.on(m.STOP_ROUND)
def _stop_round(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != READY:
        raise _not_now(command)
    if state.stopper is not None:
        raise Rejection(STOP_ALREADY_REQUESTED, "a stop was already requested this round")
    return [{"type": ROUND_STOPPED, "player": state.active}]


@V1_COMMANDS.on(m.DISCARD)
@V2_COMMANDS.on(m.DISCARD)
def _discard(state: SixtySixState, actor: str, command: Command, rng: random.Random) -> list[Event]:
    if state.phase != DECK_TAKEN:
        raise _not_now(command)
    value = state.drawn
    assert value is not None
    return [
        {
            "type": CARD_DISCARDED,
            "player": state.active,
            "value": value,
            "power": value in POWER_VALUES,
        }
    ]


# -- v2 -------------------------------------------------------------------------------------


@V2_COMMANDS.on(m.TAKE_DISCARDED_CARD)
def _take_discarded_card(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != READY:
        raise _not_now(command)
    if state.discard is None:
        raise _illegal("nothing has been discarded yet")
    return [{"type": DISCARD_TAKEN_EVENT, "player": state.active}]


@V2_COMMANDS.on(m.PICK_OWN_CARD)
def _pick_own_card(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase in (DECK_TAKEN, DISCARD_TAKEN):  # place the card taken
        index = _own_index(state, command)
        source = "deck" if state.phase == DECK_TAKEN else "discard"
        return [_replace_one(state, index, source)]
    return _own_card_for_power(state, actor, command, rng)


@V2_COMMANDS.on(m.PEEK_OWN_CARD)
def _own_card_for_power(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase == PEEK_OWN:
        return [_peek_own(state, command)]
    if state.phase == SWAP_OWN:
        index = _own_index(state, command)
        return [{"type": SWAP_OWN_PICKED, "player": state.active, "cardIndex": index}]
    raise _not_now(command)


@V2_COMMANDS.on(m.PICK_ANOTHERS_CARD, m.PEEK_ANOTHERS_CARD)
def _anothers_card_for_power(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase == PEEK_OTHER:
        return [_peek_other(state, command, "playerIndex")]
    if state.phase == SWAP_OTHER:
        target, other = _other_card(state, command, "playerIndex", "cardIndex")
        assert state.swap_index is not None
        return [_exchange(state, state.swap_index, target, other)]
    raise _not_now(command)


@V2_COMMANDS.on(m.SHOW_CARDS)
def _show_cards_v2(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase not in (DECK_TAKEN, DISCARD_TAKEN):  # a claim with the card taken
        raise _not_now(command)
    return [_claim(state, command)]


# -- v1 -------------------------------------------------------------------------------------


@V1_COMMANDS.on(m.SHOW_CARDS)
def _show_cards_v1(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != READY:  # a claim instead of taking a card
        raise _not_now(command)
    return [_claim(state, command)]


@V1_COMMANDS.on(m.REPLACE_CARD_BY_DISCARDED)
def _replace_card_by_discarded(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != READY:
        raise _not_now(command)
    index = _own_index(state, command)
    if state.discard is None:
        raise _illegal("nothing has been discarded yet")
    return [_replace_one(state, index, "discard")]


@V1_COMMANDS.on(m.REPLACE_CARD_FROM_DECK)
def _replace_card_from_deck(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != DECK_TAKEN:
        raise _not_now(command)
    return [_replace_one(state, _own_index(state, command), "deck")]


@V1_COMMANDS.on(m.REPLACE_CARDS_FROM_DECK)
def _replace_cards_from_deck(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != CLAIM_REPLACE:
        raise _not_now(command)
    if state.deck_size == 0:
        raise _illegal("the deck is empty")
    value = draw(state.deck, state.deck_size, rng)
    return [
        {
            "type": CARDS_REPLACED,
            "player": state.active,
            "cardIndexes": list(state.shown),
            "source": "deck",
            "blind": True,
            "value": value,
            "discardedValue": state.hands[state.active][min(state.shown)],
            "claim": True,
        }
    ]


@V1_COMMANDS.on(m.REPLACE_CARDS_BY_DISCARDED)
def _replace_cards_by_discarded(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != CLAIM_REPLACE:
        raise _not_now(command)
    if state.discard is None:
        raise _illegal("nothing has been discarded yet")
    return [
        {
            "type": CARDS_REPLACED,
            "player": state.active,
            "cardIndexes": list(state.shown),
            "source": "discard",
            "value": state.discard,
            "discardedValue": state.hands[state.active][min(state.shown)],
            "claim": True,
        }
    ]


@V1_COMMANDS.on(m.PEEK_OWN_CARD)
def _peek_own_card(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != PEEK_OWN:
        raise _not_now(command)
    return [_peek_own(state, command)]


@V1_COMMANDS.on(m.PEEK_ANOTHERS_CARD)
def _peek_anothers_card(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != PEEK_OTHER:
        raise _not_now(command)
    return [_peek_other(state, command, "anotherPlayerIndex")]


@V1_COMMANDS.on(m.EXCHANGE_CARDS)
def _exchange_cards(
    state: SixtySixState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    if state.phase != EXCHANGE:
        raise _not_now(command)
    own = _own_index(state, command)
    target, other = _other_card(state, command, "anotherPlayerIndex", "anotherPlayerCardIndex")
    return [_exchange(state, own, target, other)]
