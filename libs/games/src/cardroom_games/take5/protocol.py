"""The take5 protocol's JSON shapes, built from faces, and what each player is sent
(``notify``) and shown (``view``).

Player ids: the protocol's ID is a number assigned by the server. cardroom's players are string
ids seated in order, and inside every take5 message a player is named by their **seat index**
(0 for the first seat, 1 for the next, ...). ``ids(seats)`` gives the mapping; a gateway
that assigns its own numbers answers ``register_response.data.id`` with the same index.

    CARD   = {"face": number, "bull": number}
    BOARD  = {"A": [CARD], "B": [CARD], "C": [CARD], "D": [CARD]}
    PLAYED = [{"id": ID, "card": CARD}]        (ascending face: the order of resolution)
    TAKEN  = {"id": ID, "stack": [CARD]}       (the row that was taken)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cardroom_engine import Event, Message

from .config import ROWS
from .state import (
    CHOICE_REQUESTED,
    DEALT,
    GAME_ENDED,
    PLAYS_REVEALED,
    ROW_TAKEN,
    TURN_STARTED,
    Take5State,
)

DEAL = "deal"
PLAY_REQUEST = "play_request"
PLAY_RESPONSE = "play_response"
PLAYED = "played"
CHOOSE_REQUEST = "choose_request"
CHOOSE_RESPONSE = "choose_response"
TAKEN = "taken"
GAME_OVER = "game_over"


def ids(seats: Sequence[str]) -> dict[str, int]:
    """``{player: protocol id}``: the seat index."""
    return {player: index for index, player in enumerate(seats)}


def card(face: int, bulls: Sequence[int]) -> dict[str, int]:
    return {"face": face, "bull": bulls[face]}


def cards(faces: Iterable[int], bulls: Sequence[int]) -> list[dict[str, int]]:
    return [{"face": face, "bull": bulls[face]} for face in faces]


def board(rows: Sequence[Sequence[int]], bulls: Sequence[int]) -> dict[str, list[dict[str, int]]]:
    return {name: cards(row, bulls) for name, row in zip(ROWS, rows, strict=True)}


def deal_msg(hand: Sequence[int], bulls: Sequence[int]) -> dict[str, Any]:
    return {"type": DEAL, "data": cards(hand, bulls)}


def play_request_msg(rows: Sequence[Sequence[int]], bulls: Sequence[int]) -> dict[str, Any]:
    return {"type": PLAY_REQUEST, "data": board(rows, bulls)}


def played_msg(plays: Sequence[tuple[int, int]], bulls: Sequence[int]) -> dict[str, Any]:
    """``plays``: (face, seat index), ascending by face."""
    return {
        "type": PLAYED,
        "data": [{"id": seat, "card": card(face, bulls)} for face, seat in plays],
    }


def choose_request_msg(rows: Sequence[Sequence[int]], bulls: Sequence[int]) -> dict[str, Any]:
    return {"type": CHOOSE_REQUEST, "data": board(rows, bulls)}


def taken_msg(seat: int, stack: Sequence[int], bulls: Sequence[int]) -> dict[str, Any]:
    return {"type": TAKEN, "data": {"id": seat, "stack": cards(stack, bulls)}}


def game_over_msg(scores: Sequence[int]) -> dict[str, Any]:
    return {
        "type": GAME_OVER,
        "data": [{"player": seat, "score": score} for seat, score in enumerate(scores)],
    }


def play_response(face: int, bulls: Sequence[int]) -> dict[str, Any]:
    """The command (and the protocol's PLAY_RESPONSE_MSG) that plays one card."""
    return {"type": PLAY_RESPONSE, "data": card(face, bulls)}


def choose_response(row: int) -> dict[str, Any]:
    """The command (and the protocol's CHOOSE_RESPONSE_MSG) that takes row ``ROWS[row]``."""
    return {"type": CHOOSE_RESPONSE, "data": ROWS[row]}


def notify(before: Take5State, event: Event, after: Take5State) -> dict[str, Message]:
    kind = event["type"]
    bulls = after.bulls
    if kind == DEALT:
        return {
            player: deal_msg(hand, bulls)
            for player, hand in zip(after.seats, after.hands, strict=True)
        }
    if kind == TURN_STARTED:
        return {player: play_request_msg(after.rows, bulls) for player in after.seats}
    if kind == PLAYS_REVEALED:
        return {player: played_msg(after.revealed, bulls) for player in after.seats}
    if kind == CHOICE_REQUESTED:
        return {event["player"]: choose_request_msg(after.rows, bulls)}
    if kind == ROW_TAKEN:
        seat = after.seat(event["player"])
        return {player: taken_msg(seat, event["stack"], bulls) for player in after.seats}
    if kind == GAME_ENDED:
        return {player: game_over_msg(after.scores) for player in after.seats}
    return {}  # card_played (secret) and card_placed (shown by the next board)


def view(state: Take5State, player: str | None) -> dict[str, Any]:
    bulls = state.bulls
    me = state.seat(player) if player is not None and player in state.seats else None
    if state.phase == "play":
        waiting = [i for i, play in enumerate(state.plays) if play is None]
    elif state.phase == "choose" and state.chooser is not None:
        waiting = [state.chooser]
    else:
        waiting = []
    shown: dict[str, Any] = {
        "phase": state.phase,
        "round": state.round,
        "turn": state.turn,
        "turn_count": state.config.turn_count,
        "stack_size": state.config.stack_size,
        "win_score": state.config.win_score,
        "ids": ids(state.seats),
        "me": me,
        "board": board(state.rows, bulls) if state.rows else None,
        "scores": [{"player": i, "score": s} for i, s in enumerate(state.scores)],
        "waiting_for": waiting,
        "played": played_msg(state.revealed, bulls)["data"],
        "to_place": played_msg(state.revealed[state.placed :], bulls)["data"],
        "chooser": state.chooser,
    }
    if me is not None:
        shown["hand"] = cards(state.hands[me], bulls) if state.hands else []
        mine = state.plays[me] if state.plays else None
        shown["my_play"] = None if mine is None else card(mine, bulls)
    return shown
