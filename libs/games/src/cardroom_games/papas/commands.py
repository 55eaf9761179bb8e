"""The commands: ``decide`` (checks, then one handler per command type in :data:`COMMANDS`)
and ``actions``, the complete legal commands of a player.

A refusal says only what the actor may know: public facts and their own hand.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from cardroom_engine import Event, Rejection, inputs
from cardroom_engine.game import Command
from cardroom_engine.kit import Commands
from cardroom_wire import ErrorCode

from . import cards as C
from .cards import CARD_NAME, NAMES, TYPES
from .flow import draw_cards, no_interrupt
from .state import (
    CARD_DISCARDED,
    CARD_NAME_SELECTED,
    CARD_NAME_SELECTION,
    CARD_PLAYED,
    CARD_SELECTED,
    CARD_SELECTION,
    DISCARD_PHASE,
    DISCARDED_AND_DRAWN,
    END_SCORE,
    GAME_END,
    INTERRUPT_PLAYED,
    PLAYER_TURN,
    REACTION_PHASE,
    REACTION_SKIPPED,
    SETUP,
    TARGET_SELECTION,
    TARGETS_SELECTED,
    THREESOME_PLAYED,
    TURN_ENDED,
    PapasState,
)

# Stable refusal codes of this game (besides the engine's ErrorCode values).
CARD_NOT_IN_HAND = "card_not_in_hand"
NOT_PLAYABLE = "not_playable"
INVALID_THREESOME = "invalid_threesome"
BAD_TARGET = "bad_target"
REACTION_CLOSED = "reaction_closed"
ALREADY_INTERRUPTED = "already_interrupted"
ALREADY_SKIPPED = "already_skipped"
NOT_AN_INTERRUPT = "not_an_interrupt"
CANNOT_CANCEL_THREESOME = "cannot_cancel_threesome"
UNKNOWN_TOKEN = "unknown_token"
UNKNOWN_CARD_NAME = "unknown_card_name"
DISCARD_AND_DRAW_UNAVAILABLE = "discard_and_draw_unavailable"
WRONG_STATE = "wrong_state"

COMMANDS = Commands[PapasState]("papas")


def decide(state: PapasState, actor: str, command: Command, rng: random.Random) -> list[Event]:
    kind = command.get("type")
    if type(kind) is not str:
        raise Rejection(ErrorCode.BAD_REQUEST, "a command needs a string 'type'")
    if kind not in COMMANDS:  # this game's wording, not the kit's list of commands
        raise Rejection(ErrorCode.UNKNOWN_COMMAND, "unknown command type")
    if actor not in state.seats:
        raise Rejection(ErrorCode.NOT_YOUR_TURN, "you are not playing in this game")
    if state.phase in (SETUP, END_SCORE, GAME_END):
        raise Rejection(ErrorCode.ILLEGAL_MOVE, "the game is not running")
    return COMMANDS.decide(state, actor, command, rng)


# -- checks shared by the handlers -------------------------------------------------------------


def _card(command: Command, key: str = "card") -> int:
    # any integer: one that is no card of the deck is not in the hand either
    return inputs.integer(command[key], key)


def _turn(state: PapasState, seat: int, phase: str) -> None:
    if seat != state.active:
        raise Rejection(ErrorCode.NOT_YOUR_TURN, "it is not your turn")
    if state.phase != phase:
        raise Rejection(WRONG_STATE, f"not possible now: the game is in {state.phase}")


def _in_hand(state: PapasState, seat: int, card: int) -> None:
    if card not in state.hands[seat]:
        raise Rejection(CARD_NOT_IN_HAND, "that card is not in your hand")


def _window(state: PapasState, seat: int, window: int) -> None:
    """Refuse a reaction that does not belong to the open window (public facts only)."""
    if state.phase != REACTION_PHASE or window != state.window:
        if window == state.window and state.window_interrupted:
            raise Rejection(ALREADY_INTERRUPTED, "another player has already reacted")
        raise Rejection(REACTION_CLOSED, "that reaction window is not open")
    if seat == state.active:
        raise Rejection(ErrorCode.NOT_YOUR_TURN, "you cannot react to your own play")
    if seat not in state.reactors:
        raise Rejection(ALREADY_SKIPPED, "you have already passed in this window")


# -- the handlers --------------------------------------------------------------------------------


@COMMANDS.on("PlayCard")
def _play_card(state: PapasState, actor: str, command: Command, rng: random.Random) -> list[Event]:
    inputs.only(command, "card")
    card = _card(command)
    seat = state.seat(actor)
    _turn(state, seat, PLAYER_TURN)
    _in_hand(state, seat, card)
    name = CARD_NAME[card]
    if name not in C.PLAYABLE:
        raise Rejection(NOT_PLAYABLE, "potatoes, wildcards and interrupts cannot be played alone")
    targets: list[str] = []
    if TYPES[name].target == "next_player":
        targets = [state.seats[state.next_seat(seat)]]
    return [{"type": CARD_PLAYED, "player": actor, "card": card, "name": name, "targets": targets}]


@COMMANDS.on("PlayThreesome")
def _play_threesome(
    state: PapasState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    inputs.only(command, "cards")
    cards = inputs.integers(command["cards"], "cards", 3, 3)
    if len(set(cards)) != 3:
        raise Rejection(ErrorCode.BAD_REQUEST, "cards: three different cards are required")
    seat = state.seat(actor)
    _turn(state, seat, PLAYER_TURN)
    for card in cards:
        _in_hand(state, seat, card)
    reward = C.threesome_reward(cards, state.values)
    if not reward:
        raise Rejection(INVALID_THREESOME, "these three cards are not a threesome")
    return [
        {
            "type": THREESOME_PLAYED,
            "player": actor,
            "cards": cards,
            "kind": C.threesome_kind(cards, state.values),
            "reward": reward,
        }
    ]


@COMMANDS.on("SelectTargets")
def _select_targets(
    state: PapasState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    inputs.only(command, "targets")
    targets = inputs.texts(command["targets"], "targets", 1, 2)
    _turn(state, state.seat(actor), TARGET_SELECTION)
    assert state.play is not None
    kind = TYPES[state.play.name].target
    for target in targets:
        if target not in state.seats:
            raise Rejection(BAD_TARGET, "every target must be a player of this game")
    if kind == "two_players":
        if len(targets) != 2 or targets[0] == targets[1]:
            raise Rejection(BAD_TARGET, "this card needs two different players")
    elif len(targets) != 1 or targets[0] == actor:
        raise Rejection(BAD_TARGET, "this card needs one opponent")
    return [{"type": TARGETS_SELECTED, "player": actor, "targets": targets}]


@COMMANDS.on("SkipReaction")
def _skip(state: PapasState, actor: str, command: Command, rng: random.Random) -> list[Event]:
    inputs.only(command, "window")
    window = inputs.integer(command["window"], "window")
    seat = state.seat(actor)
    _window(state, seat, window)
    events: list[Event] = [{"type": REACTION_SKIPPED, "player": actor, "window": window}]
    if state.reactors == (seat,):
        events.append(no_interrupt(state, "all_skipped"))
    return events


@COMMANDS.on("PlayInterrupt")
def _interrupt(state: PapasState, actor: str, command: Command, rng: random.Random) -> list[Event]:
    inputs.only(command, "window", "card")
    window = inputs.integer(command["window"], "window")
    card = _card(command)
    seat = state.seat(actor)
    _window(state, seat, window)
    _in_hand(state, seat, card)
    name = CARD_NAME[card]
    if name not in C.INTERRUPTS:
        raise Rejection(NOT_AN_INTERRUPT, "that card is not an interrupt")
    assert state.play is not None
    if name == C.NO_DUDE and state.play.kind == "threesome":
        raise Rejection(CANNOT_CANCEL_THREESOME, '"No dude" cannot cancel a threesome')
    return [
        {
            "type": INTERRUPT_PLAYED,
            "player": actor,
            "window": window,
            "card": card,
            "name": name,
            "cancelled": state.seats[state.active],
        }
    ]


@COMMANDS.on("SelectCard")
def _select_card(
    state: PapasState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    inputs.only(command, "token")
    token = inputs.text(command["token"], "token")
    _turn(state, state.seat(actor), CARD_SELECTION)
    for known, card in state.selection:
        if known == token:
            return [{"type": CARD_SELECTED, "player": actor, "token": token, "card": card}]
    raise Rejection(UNKNOWN_TOKEN, "that selection token is not valid")


@COMMANDS.on("SelectCardName")
def _select_name(
    state: PapasState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    inputs.only(command, "name")
    name = inputs.text(command["name"], "name")
    _turn(state, state.seat(actor), CARD_NAME_SELECTION)
    if name not in TYPES:
        raise Rejection(UNKNOWN_CARD_NAME, "no card has that name")
    return [{"type": CARD_NAME_SELECTED, "player": actor, "name": name}]


@COMMANDS.on("EndTurn")
def _end_turn(state: PapasState, actor: str, command: Command, rng: random.Random) -> list[Event]:
    inputs.only(command)
    _turn(state, state.seat(actor), PLAYER_TURN)
    drawn, reshuffled = draw_cards(state.deck, state.discard, 1, rng)
    return [{"type": TURN_ENDED, "player": actor, "drawn": drawn, "reshuffled": reshuffled}]


@COMMANDS.on("DiscardAndDraw")
def _discard_and_draw(
    state: PapasState, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    inputs.only(command)
    seat = state.seat(actor)
    _turn(state, seat, PLAYER_TURN)
    hand = state.hands[seat]
    if not (state.turn_fresh and len(hand) == 1):
        raise Rejection(
            DISCARD_AND_DRAW_UNAVAILABLE, "only with exactly one card at the start of your turn"
        )
    discard = (*state.discard, hand[0])
    drawn, reshuffled = draw_cards(state.deck, discard, 3, rng)
    return [
        {
            "type": DISCARDED_AND_DRAWN,
            "player": actor,
            "card": hand[0],
            "drawn": drawn,
            "reshuffled": reshuffled,
        }
    ]


@COMMANDS.on("DiscardCard")
def _discard(state: PapasState, actor: str, command: Command, rng: random.Random) -> list[Event]:
    inputs.only(command, "card")
    card = _card(command)
    seat = state.seat(actor)
    _turn(state, seat, DISCARD_PHASE)
    _in_hand(state, seat, card)
    return [{"type": CARD_DISCARDED, "player": actor, "card": card}]


COMMAND_TYPES = COMMANDS.types


# -- legal actions -------------------------------------------------------------------------------


def actions(state: PapasState, player: str) -> list[dict[str, Any]]:
    """Complete legal commands, one per distinct card face (copies of a face are
    interchangeable; ``decide`` accepts any copy)."""
    if player not in state.seats:
        return []
    seat = state.seat(player)
    phase = state.phase
    if phase == REACTION_PHASE:
        if seat not in state.reactors:
            return []
        out: list[dict[str, Any]] = [{"type": "SkipReaction", "window": state.window}]
        assert state.play is not None
        seen: set[str] = set()
        for card in state.hands[seat]:
            name = CARD_NAME[card]
            if name in C.INTERRUPTS and name not in seen:
                if name == C.NO_DUDE and state.play.kind == "threesome":
                    continue
                seen.add(name)
                out.append({"type": "PlayInterrupt", "window": state.window, "card": card})
        return out
    if seat != state.active:
        return []
    hand = state.hands[seat]
    if phase == PLAYER_TURN:
        if not hand:
            return []  # the automatic draw follows
        out = []
        for card in _distinct(hand, state.values):
            if CARD_NAME[card] in C.PLAYABLE:
                out.append({"type": "PlayCard", "card": card})
        out.extend({"type": "PlayThreesome", "cards": t} for t in threesomes(hand, state.values))
        if state.turn_fresh and len(hand) == 1:
            out.append({"type": "DiscardAndDraw"})
        out.append({"type": "EndTurn"})
        return out
    if phase == TARGET_SELECTION:
        assert state.play is not None
        others = [p for p in state.seats if p != player]
        if TYPES[state.play.name].target == "two_players":
            seats = state.seats
            return [
                {"type": "SelectTargets", "targets": [a, b]}
                for i, a in enumerate(seats)
                for b in seats[i + 1 :]
            ]
        return [{"type": "SelectTargets", "targets": [p]} for p in others]
    if phase == CARD_SELECTION:
        return [{"type": "SelectCard", "token": token} for token, _ in state.selection]
    if phase == CARD_NAME_SELECTION:
        return [{"type": "SelectCardName", "name": name} for name in NAMES]
    if phase == DISCARD_PHASE:
        return [{"type": "DiscardCard", "card": c} for c in _distinct(hand, state.values)]
    return []


def _distinct(hand: Sequence[int], values: Sequence[int]) -> list[int]:
    """One card of each face (name and value) in the hand, in hand order."""
    seen: set[tuple[str, int]] = set()
    out = []
    for card in hand:
        face = (CARD_NAME[card], values[card])
        if face not in seen:
            seen.add(face)
            out.append(card)
    return out


def threesomes(hand: Sequence[int], values: Sequence[int]) -> list[list[int]]:
    """Every legal threesome in a hand, one per distinct combination of faces."""
    candidates = [c for c in hand if TYPES[CARD_NAME[c]].kind != "action" or values[c] == 3]
    if len(candidates) < 3:
        return []
    by_face: dict[tuple[str, int], list[int]] = {}
    for card in candidates:
        by_face.setdefault((CARD_NAME[card], values[card]), []).append(card)
    faces = list(by_face.values())
    out: list[list[int]] = []
    count = len(faces)
    for i in range(count):
        for j in range(i, count):
            for k in range(j, count):
                picked = _pick(faces, (i, j, k))
                if picked is not None and C.threesome_reward(picked, values):
                    out.append(picked)
    return out


def _pick(faces: list[list[int]], indexes: tuple[int, int, int]) -> list[int] | None:
    used: dict[int, int] = {}
    picked = []
    for index in indexes:
        n = used.get(index, 0)
        if n >= len(faces[index]):
            return None
        picked.append(faces[index][n])
        used[index] = n + 1
    return picked
