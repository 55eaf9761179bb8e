"""The event record as published on ``<root>.events.<game type>.<game>`` (docs/events.md).

Analytics reads nothing else: this module is its whole contract with the rest of cardroom.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# the engine's events (every game stream begins with created/joined and ends with finished)
CREATED = "table.created"
JOINED = "table.joined"
STARTED = "table.started"
FINISHED = "table.finished"

_KIND = re.compile(r"^([A-Za-z][A-Za-z_]*)-\d+$")


class BadRecord(ValueError):
    """A message on the event stream that is not an event record."""


def kind_of(player: str) -> str | None:
    """The bot kind of a player named after it (``heuristic-1`` -> ``heuristic``), else None."""
    match = _KIND.match(player)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Record:
    event_id: str
    position: int
    game: str
    game_type: str
    version: int
    type: str
    data: dict[str, Any]
    metadata: dict[str, Any]
    recorded_at: datetime

    @classmethod
    def parse(cls, payload: Any) -> Record:
        """Validate one decoded record; raises :class:`BadRecord`."""
        if not isinstance(payload, dict):
            raise BadRecord("an event record is a JSON object")

        def text(key: str) -> str:
            value = payload.get(key)
            if not isinstance(value, str) or not value:
                raise BadRecord(f"{key}: expected a non-empty string")
            return value

        def integer(key: str, least: int) -> int:
            value = payload.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise BadRecord(f"{key}: expected an integer >= {least}")
            return value

        def obj(key: str) -> dict[str, Any]:
            value = payload.get(key, {})
            if not isinstance(value, dict):
                raise BadRecord(f"{key}: expected an object")
            return value

        try:
            recorded_at = datetime.fromisoformat(text("recorded_at"))
        except ValueError as exc:
            raise BadRecord(f"recorded_at: {exc}") from None
        if recorded_at.tzinfo is None:
            raise BadRecord("recorded_at: a time zone is required")
        return cls(
            event_id=text("event_id"),
            position=integer("position", 0),
            game=text("game"),
            game_type=text("game_type"),
            version=integer("version", 1),
            type=text("type"),
            data=obj("data"),
            metadata=obj("metadata"),
            recorded_at=recorded_at,
        )

    @classmethod
    def decode(cls, body: bytes) -> Record:
        try:
            payload = json.loads(body)
        except ValueError as exc:
            raise BadRecord(f"not JSON: {exc}") from None
        return cls.parse(payload)
