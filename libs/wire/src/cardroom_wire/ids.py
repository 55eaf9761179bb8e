"""Identifiers that travel inside NATS subjects.

Player and game ids are single subject tokens: the broker enforces identity through the
subject (``cardroom.cmd.<game>.<player>``), so an id with a dot, a space or a wildcard could
impersonate a whole subtree. Only a conservative alphabet is accepted.
"""

from __future__ import annotations

import re
import secrets
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

MAX_ID_LENGTH = 64
_TOKEN = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_ID_LENGTH}}}")


class InvalidId(ValueError):
    """An id that is not a single safe subject token."""


def check_id(value: object, what: str = "id") -> str:
    """Return ``value`` if it is a safe subject token, else raise :class:`InvalidId`."""
    if not isinstance(value, str):
        raise InvalidId(f"{what} must be a string")
    if not _TOKEN.fullmatch(value):
        raise InvalidId(
            f"{what} must be 1 to {MAX_ID_LENGTH} characters of letters, digits, '-' or '_'"
        )
    return value


def is_id(value: object) -> bool:
    try:
        check_id(value)
    except InvalidId:
        return False
    return True


def new_id(prefix: str = "") -> str:
    """A fresh random id (URL- and subject-safe)."""
    return prefix + secrets.token_hex(8)


def _validate_token(value: str) -> str:
    try:
        return check_id(value)
    except InvalidId as exc:
        raise ValueError(str(exc)) from None


Token = Annotated[str, AfterValidator(_validate_token)]
"""A pydantic field type for player, game and command ids."""

SEAT_KEY_LENGTH = 64
_SEAT_KEY = re.compile(rf"[0-9a-f]{{{SEAT_KEY_LENGTH}}}")


def check_seat_key(value: object, what: str = "key") -> str:
    """Return ``value`` if it is an Ed25519 verify key as a seat is bound to it (exactly 64
    lowercase hexadecimal characters: one spelling per key, so two spellings of one key can
    never pass for two keys), else raise ``ValueError`` (the value is not echoed)."""
    if not isinstance(value, str) or not _SEAT_KEY.fullmatch(value):
        raise ValueError(
            f"{what} must be an Ed25519 verify key: {SEAT_KEY_LENGTH} lowercase hexadecimal "
            "characters"
        )
    return value


SeatKey = Annotated[
    str,
    AfterValidator(check_seat_key),
    WithJsonSchema({"type": "string", "pattern": f"^[0-9a-f]{{{SEAT_KEY_LENGTH}}}$"}),
]
"""A pydantic field type for the verify key a player binds to its seat (see ``JoinTable``)."""
