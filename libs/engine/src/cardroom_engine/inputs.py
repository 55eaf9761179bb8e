"""Reading what players send: every value is hostile until one of these readers accepts it.

A command reaches ``decide`` as parsed JSON that only the wire's envelope has checked (a dict
with a string ``type``); every other field may hold any JSON value. The readers here take a
value and the name a player knows it by, and return it in exactly the shape asked for, or
raise a ``bad_request`` :class:`~cardroom_engine.game.Rejection`:

- JSON ``true`` is not 1, and ``1.0`` and ``"1"`` are not integers either;
- by default an integer outside 64 bits is refused: no storage holds it;
- a list's length is checked before any element is looked at, a string's before it is used.

Whether a well-formed value is legal now (that card is in your hand) is the game's decision,
with its own code. Messages name the field, never echo the value, and stay short.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from cardroom_wire import ErrorCode
from cardroom_wire.messages import cut

from .game import Rejection

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
SHORT = 64
"""The default longest string field (the wire's limit of a command's ``type``)."""


def bad(what: str, expected: str) -> Rejection:
    """The ``bad_request`` of a field that is not what it must be."""
    return Rejection(ErrorCode.BAD_REQUEST, f"{what}: {expected} is required")


# The messages name no number unless the caller chose the bounds: a game may promise that its
# refusals never show a digit, so none can be taken for a card.


def integer(value: object, what: str, low: int = INT64_MIN, high: int = INT64_MAX) -> int:
    """An integer from ``low`` to ``high`` (bool is not an integer)."""
    if type(value) is not int:
        raise bad(what, "an integer")
    if not low <= value <= high:
        if (low, high) == (INT64_MIN, INT64_MAX):
            raise bad(what, "an integer of a size storage holds")
        raise bad(what, f"an integer from {low} to {high}")
    return value


def text(value: object, what: str, max_length: int = SHORT, min_length: int = 1) -> str:
    """A string of ``min_length`` to ``max_length`` characters."""
    if type(value) is not str:
        raise bad(what, "a string")
    if not min_length <= len(value) <= max_length:
        raise bad(what, "a shorter string" if len(value) > max_length else "a longer string")
    return value


def choice(value: object, what: str, options: Collection[str]) -> str:
    """One of the strings ``options`` (a set, or a mapping's keys)."""
    if type(value) is not str or value not in options:
        raise bad(what, f"one of {', '.join(sorted(options))}")
    return value


def items(value: object, what: str, min_items: int, max_items: int) -> list[Any]:
    """A JSON array (or a tuple) of ``min_items`` to ``max_items`` elements, not yet checked."""
    if type(value) is not list and type(value) is not tuple:
        raise bad(what, "a list")
    if not min_items <= len(value) <= max_items:
        raise bad(what, "a shorter list" if len(value) > max_items else "a longer list")
    return list(value)


def integers(
    value: object,
    what: str,
    min_items: int,
    max_items: int,
    low: int = INT64_MIN,
    high: int = INT64_MAX,
) -> list[int]:
    """A list of integers, each from ``low`` to ``high``."""
    out = items(value, what, min_items, max_items)
    for element in out:
        if type(element) is not int:
            raise bad(what, "a list of integers")
        if not low <= element <= high:
            integer(element, f"{what} (each)", low, high)
    return out


def texts(
    value: object, what: str, min_items: int, max_items: int, max_length: int = SHORT
) -> list[str]:
    """A list of strings of 1 to ``max_length`` characters."""
    out = items(value, what, min_items, max_items)
    for element in out:
        if type(element) is not str or not 0 < len(element) <= max_length:
            raise bad(what, "a list of short, non-empty strings")
    return out


def obj(value: object, what: str) -> dict[str, Any]:
    """A JSON object."""
    if type(value) is not dict:
        raise bad(what, "an object")
    return value


def objects(value: object, what: str, min_items: int, max_items: int) -> list[dict[str, Any]]:
    """A list of JSON objects (their fields not yet checked)."""
    out = items(value, what, min_items, max_items)
    if any(type(element) is not dict for element in out):
        raise bad(what, "a list of objects")
    return out


def only(command: Mapping[str, Any], *fields: str) -> None:
    """The command has exactly these fields besides ``type``: none missing, none more."""
    if len(command) != len(fields) + ("type" in command):
        for key in command:
            if key != "type" and key not in fields:
                raise Rejection(ErrorCode.BAD_REQUEST, f"unexpected field {cut(key)!r}")
    for key in fields:
        if key not in command:
            raise Rejection(ErrorCode.BAD_REQUEST, f"missing field {key!r}")


def within_depth(value: object, depth: int) -> bool:
    """Whether ``value`` nests no more than ``depth`` arrays and objects (a bare value: 0).
    Without recursion: code that walks a move recursively (hashing it, for one) must never
    meet more nesting than Python's stack allows."""
    level: list[object] = [value]
    for _ in range(depth + 1):
        inner: list[object] = []
        for item in level:
            if type(item) is dict:
                inner.extend(item.values())
            elif type(item) is list:
                inner.extend(item)
        if not inner:
            return True
        level = inner
    return False
