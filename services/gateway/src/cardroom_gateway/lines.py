"""The take5 protocol's lines and their translation, all pure.

Framing: one JSON value per line (UTF-8, ``\\n``-terminated) each way.

- :func:`parse` reads one client line into an :class:`Incoming` or raises :class:`LineError`
  with a stable code.
- :func:`translate` turns one cardroom notification message (a take5 message, or a table
  message such as ``GameStarted``) into the take5 lines it stands for (often one, sometimes
  none: ``PlayerAway``, ``PlayerBack`` and ``GameOver`` have no take5 line).
- :func:`error_line` is the gateway's only addition to the take5 grammar::

      {"type": "error", "data": {"code": CODE, "message": string}}

  followed, while a request is open, by that request again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cardroom_games.take5 import ROWS
from cardroom_games.take5 import protocol as p

REGISTER_REQUEST = "register_request"
REGISTER_RESPONSE = "register_response"
ERROR = "error"

SEED_CONFIG_KEYS = ("turn_count", "stack_size", "win_score", "deck_size", "bull_range")
"""The five numbers of the protocol's ``confg`` (spelled as in the protocol)."""

REQUESTS = {p.PLAY_REQUEST: p.PLAY_RESPONSE, p.CHOOSE_REQUEST: p.CHOOSE_RESPONSE}
"""Each request the server sends, and the response it asks for."""

SERVER_TYPES = frozenset(
    {REGISTER_RESPONSE, p.DEAL, p.PLAY_REQUEST, p.PLAYED, p.CHOOSE_REQUEST, p.TAKEN, p.GAME_OVER}
)


class LineErrorCode(StrEnum):
    """The stable codes of the gateway's ``error`` lines (docs/gateway.md lists them)."""

    MALFORMED = "malformed"
    """The line is not one JSON value in UTF-8."""
    LINE_TOO_LONG = "line_too_long"
    """The line is longer than the gateway's limit (64 KiB by default); it was discarded."""
    BAD_MESSAGE = "bad_message"
    """JSON, but not a message a client may send: not an object with a string ``type``, a
    type only the server sends or nobody knows, or ``data`` of the wrong shape."""
    NOT_REGISTERED = "not_registered"
    """Anything but ``register_request`` before the connection has registered."""
    OUT_OF_ORDER = "out_of_order"
    """A client message at the wrong time: a second ``register_request``, a response while
    waiting for the table, a ``play_response`` when no card is asked for (or a row is), a
    ``choose_response`` when no row is asked for, a response after the house played for you."""
    ILLEGAL_MOVE = "illegal_move"
    """A well-formed response the rules refuse: a card not in your hand (face and bull must
    both match)."""
    UNAVAILABLE = "unavailable"
    """cardroom did not take the response in time; send it again."""
    TABLE_FAILED = "table_failed"
    """The table could not be set up; the connection is closed."""
    TOO_MANY_CONNECTIONS = "too_many_connections"
    """The gateway holds its maximum of connections; this one is closed at once."""
    TOO_MANY_NEW_CONNECTIONS = "too_many_new_connections"
    """Your address opened more connections (each a new player) than the gateway takes from
    one address in a while; this one is closed at once. The message says when to try again."""
    REGISTER_TIMEOUT = "register_timeout"
    """No ``register_request`` within the registration timeout; the connection is closed."""


class LineError(Exception):
    def __init__(self, code: LineErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Incoming:
    """One well-formed client message: its type and its ``data``."""

    type: str
    data: Any


def error_line(code: LineErrorCode, message: str) -> dict[str, Any]:
    return {"type": ERROR, "data": {"code": str(code), "message": message}}


def encode(line: Mapping[str, Any]) -> bytes:
    # ASCII only: a string that cannot be encoded as UTF-8 (a lone surrogate) is escaped
    # rather than failing the write
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


INT64 = (-(2**63), 2**63 - 1)
"""A CARD's numbers are integers in this range: what every storage and language holds."""

_DIGITS = 19
"""The most digits an integer of 64 bits has. Longer ones are never converted: Python refuses
to convert more than 4,300 digits, and converting long ones costs quadratic time."""

_CLIENT_KEYS = frozenset({"type", "data"})
_CARD_KEYS = frozenset({"face", "bull"})


class _TooLong:
    """An integer literal of more digits than any 64-bit integer (it is not converted)."""


_TOO_LONG = _TooLong()


class _Refused(Exception):
    """Raised inside the JSON parser's hooks; :func:`parse` turns it into a LineError."""

    def __init__(self, code: LineErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _int(literal: str) -> int | _TooLong:
    if len(literal) - literal.startswith("-") > _DIGITS:
        return _TOO_LONG
    return int(literal)


def _constant(name: str) -> Any:
    # NaN, Infinity and -Infinity are Python's extensions, not JSON
    raise _Refused(LineErrorCode.MALFORMED, f"not one JSON value: {name} is not JSON")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        # parsers disagree on which of two values wins: refuse rather than guess
        raise _Refused(LineErrorCode.BAD_MESSAGE, "an object names one key twice")
    return value


_DECODER = json.JSONDecoder(parse_int=_int, parse_constant=_constant, object_pairs_hook=_object)


def _loads(text: str) -> Any:
    """One JSON value as RFC 8259 has it (the standard decoder also takes NaN and Infinity,
    lets the last of two equal keys win, and converts integers of any length)."""
    return _DECODER.decode(text)


def blank(raw: bytes) -> bool:
    """Whether a line holds nothing but JSON whitespace (it is then no message at all)."""
    return not raw.strip(b" \t\r\n")


def parse(raw: bytes) -> Incoming:
    """One client line (without or with its ``\\n``) as an :class:`Incoming`.

    Only the shape is checked here (the types a client may send and their ``data``); whether
    the message is expected now, and whether the card is in the hand, is decided later.
    Every failure is a :class:`LineError`, whatever the bytes.
    """
    try:
        value = _loads(raw.decode("utf-8"))
    except _Refused as exc:
        raise LineError(exc.code, exc.message) from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        # the reason names a position, never the client's bytes
        reason = "too deeply nested" if isinstance(exc, RecursionError) else str(exc)
        raise LineError(LineErrorCode.MALFORMED, f"not one JSON value: {reason}") from None
    if (
        type(value) is not dict
        or type(value.get("type")) is not str
        or not _CLIENT_KEYS.issuperset(value)
    ):
        raise LineError(
            LineErrorCode.BAD_MESSAGE, 'a message is {"type": string, "data": ...}, nothing more'
        )
    kind: str = value["type"]
    data = value.get("data")
    if kind == REGISTER_REQUEST:
        if data is not None:
            raise LineError(LineErrorCode.BAD_MESSAGE, "register_request: data must be null")
    elif kind == p.PLAY_RESPONSE:
        if not _is_card(data):
            raise LineError(
                LineErrorCode.BAD_MESSAGE,
                'play_response: data must be a CARD {"face": integer, "bull": integer} '
                "(integers of 64 bits)",
            )
    elif kind == p.CHOOSE_RESPONSE:
        if type(data) is not str or data not in ROWS:
            raise LineError(
                LineErrorCode.BAD_MESSAGE,
                f"choose_response: data must be a STACK_ID, one of {', '.join(ROWS)}",
            )
    elif kind in SERVER_TYPES or kind == ERROR:
        raise LineError(LineErrorCode.BAD_MESSAGE, f"{kind!r} is sent by the server only")
    else:
        raise LineError(
            LineErrorCode.BAD_MESSAGE,
            f"unknown type {kind[:40]!r}; a client sends register_request, "
            "play_response or choose_response",
        )
    return Incoming(kind, data)


def _is_card(data: Any) -> bool:
    if type(data) is not dict or data.keys() != _CARD_KEYS:
        return False
    low, high = INT64
    return all(type(data[k]) is int and low <= data[k] <= high for k in _CARD_KEYS)


def register_response(player: str, seats: list[str], config: Mapping[str, Any]) -> dict[str, Any]:
    """The protocol's REGISTER_RESPONSE_MSG for ``player`` of a table that has just started."""
    confg = {key: config[key] for key in SEED_CONFIG_KEYS}
    confg["bull_range"] = list(confg["bull_range"])
    return {
        "type": REGISTER_RESPONSE,
        "data": {"id": seats.index(player), "player_count": len(seats), "confg": confg},
    }


def translate(message: Mapping[str, Any], player: str) -> list[dict[str, Any]]:
    """The take5 lines one cardroom notification message stands for, for ``player``.

    - ``GameStarted`` (the table is full and started) -> ``register_response``: the
      protocol's ID is the seat index, as in every take5 message;
    - take5's own messages are protocol lines already: they are passed on as ``{type, data}``;
    - ``GameOver`` (take5's ``game_over`` came just before it), ``PlayerAway``,
      ``PlayerBack`` and anything unknown -> nothing.
    """
    kind = message.get("type")
    if kind == "GameStarted":
        return [register_response(player, list(message["seats"]), message["config"])]
    if kind in SERVER_TYPES:
        return [{"type": kind, "data": message.get("data")}]
    return []
