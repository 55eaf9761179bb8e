"""take5's commands: the protocol's response messages themselves, checked and turned into
events (``decide``), and the commands a player may send now (``actions``).

    {"type": "play_response", "data": CARD}      play a card of your hand this turn
    {"type": "choose_response", "data": "A"}     take a row, when your card is below them all
"""

from __future__ import annotations

import random
from typing import Any

from cardroom_engine import Command, Event, Rejection, inputs
from cardroom_engine.kit import Commands
from cardroom_wire import ErrorCode

from . import protocol as p
from .config import ROWS
from .state import CARD_PLAYED, PLAYS_REVEALED, ROW_INDEX, ROW_TAKEN, Take5State

# Game-specific rejection code (the others are the wire's ErrorCode).
ALREADY_PLAYED = "already_played"

COMMANDS = Commands[Take5State](
    "take5", unknown=f"take5 knows the commands {p.PLAY_RESPONSE!r} and {p.CHOOSE_RESPONSE!r}"
)


@COMMANDS.on(p.PLAY_RESPONSE)
def _decide_play(
    state: Take5State, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    face, bull = _card_fields(command.get("data"))
    if actor not in state.seats or state.phase != "play":
        raise Rejection(ErrorCode.NOT_YOUR_TURN, "no card is asked for now")
    seat = state.seat(actor)
    if state.plays[seat] is not None:
        raise Rejection(ALREADY_PLAYED, "you have already played a card this turn")
    if face not in state.hands[seat] or state.bulls[face] != bull:
        raise Rejection(ErrorCode.ILLEGAL_MOVE, "that card is not in your hand")
    return play(state, seat, face, house=False)


@COMMANDS.on(p.CHOOSE_RESPONSE)
def _decide_choose(
    state: Take5State, actor: str, command: Command, rng: random.Random
) -> list[Event]:
    data = inputs.choice(command.get("data"), "data (a STACK_ID)", ROW_INDEX)
    if state.phase != "choose" or actor not in state.seats or state.chooser != state.seat(actor):
        raise Rejection(ErrorCode.NOT_YOUR_TURN, "no row choice is asked of you now")
    return [take(state, ROW_INDEX[data], chosen=True, house=False)]


def _card_fields(data: object) -> tuple[int, int]:
    """(face, bull) of a CARD, or a ``bad_request`` (JSON booleans are not numbers)."""
    card = inputs.obj(data, 'data (a CARD {"face": integer, "bull": integer})')
    face = inputs.integer(card.get("face"), "data.face")
    return face, inputs.integer(card.get("bull"), "data.bull")


def play(state: Take5State, seat: int, face: int, *, house: bool) -> list[Event]:
    """``seat`` plays ``face`` (for the house at a timeout); the last play reveals them all."""
    played: Event = {"type": CARD_PLAYED, "player": state.seats[seat], "face": face}
    if house:
        played["house"] = True
    events = [played]
    if all(play is not None for i, play in enumerate(state.plays) if i != seat):
        plays = [(face if i == seat else play, i) for i, play in enumerate(state.plays)]
        events.append(
            {
                "type": PLAYS_REVEALED,
                "plays": [
                    {"player": state.seats[i], "face": f}
                    for f, i in sorted((f, i) for f, i in plays if f is not None)
                ],
            }
        )
    return events


def take(state: Take5State, row: int, *, chosen: bool, house: bool) -> Event:
    """The card being placed takes ``row`` (a full row, or the one its player chose)."""
    face, seat = state.revealed[state.placed]
    stack = state.rows[row]
    event: Event = {
        "type": ROW_TAKEN,
        "player": state.seats[seat],
        "face": face,
        "row": ROWS[row],
        "stack": list(stack),
        "bulls": sum(state.bulls[f] for f in stack),
        "chosen": chosen,
    }
    if house:
        event["house"] = True
    return event


def actions(state: Take5State, player: str) -> list[dict[str, Any]]:
    if player not in state.seats:
        return []
    seat = state.seat(player)
    if state.phase == "play" and state.plays[seat] is None:
        return [p.play_response(face, state.bulls) for face in state.hands[seat]]
    if state.phase == "choose" and state.chooser == seat:
        return [p.choose_response(row) for row in range(len(ROWS))]
    return []
