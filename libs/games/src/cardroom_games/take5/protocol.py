"""The take5 protocol's JSON shapes, built from faces.

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

from .config import ROWS

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
