"""The event record: one committed event as it is published on the event stream.

The relay publishes each event on ``<root>.events.<game type>.<game>`` (JetStream, with
``Nats-Msg-Id`` = ``event_id``); the projector, analytics and any outside subscriber read
it. It is the full truth, hidden cards included: for services and trusted subscribers only,
never for players.

A reader ignores fields it does not know (the record may grow), and refuses a record whose
known fields are wrong: :meth:`EventRecord.decode` raises :class:`BadRecord`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from .messages import describe_validation

__all__ = ["BadRecord", "EventRecord"]


class BadRecord(ValueError):
    """A message on the event stream that is not an event record."""


class EventRecord(BaseModel):
    """One event on the event stream (see the module docs)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    event_id: str = Field(min_length=1, description="unique; also the Nats-Msg-Id")
    position: int = Field(
        ge=0, strict=True, description="global commit order; increasing, may have gaps"
    )
    game: str = Field(min_length=1, description="the game (event stream) id")
    game_type: str = Field(min_length=1, description="the game's type; never changes")
    version: int = Field(
        ge=1, strict=True, description="the event's number in its game, without gaps"
    )
    type: str = Field(min_length=1, description="table.* (the engine's) or the game's own")
    data: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    recorded_at: AwareDatetime = Field(description="when it was committed (ISO 8601, zoned)")

    @classmethod
    def decode(cls, body: bytes | str) -> EventRecord:
        """Parse and check one published record; raises :class:`BadRecord`."""
        try:
            return cls.model_validate_json(body)
        except ValidationError as exc:
            raise BadRecord(describe_validation(exc)) from None

    @classmethod
    def parse(cls, payload: Any) -> EventRecord:
        """Check one decoded record (a dict as JSON gives it); raises :class:`BadRecord`."""
        if not isinstance(payload, dict):
            raise BadRecord("an event record is a JSON object")
        try:
            return cls.model_validate(payload)
        except ValidationError as exc:
            raise BadRecord(describe_validation(exc)) from None

    @staticmethod
    def read(body: bytes | str) -> dict[str, Any]:
        """One published record as a dict, checked only for what a follower keys it by
        (``game`` a string, ``version`` an integer); raises :class:`BadRecord`.

        For the relay's own followers (the projector, per event): the relay publishes what
        the store committed through :meth:`payload`, and this reads it in about 0.9 us where
        :meth:`decode` takes 2.2 us and a dict of the model 3.7 us, on a 0.1-0.2 ms budget of
        the projector's CPU per event. An outside reader uses :meth:`decode`."""
        try:
            record = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise BadRecord(f"not valid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise BadRecord("an event record is a JSON object")
        if not isinstance(record.get("game"), str) or type(record.get("version")) is not int:
            raise BadRecord("game: a string and version: an integer are required")
        return record

    @staticmethod
    def payload(
        *,
        event_id: str,
        position: int,
        game: str,
        game_type: str,
        version: int,
        type: str,
        data: dict[str, Any],
        metadata: dict[str, Any],
        recorded_at: datetime,
    ) -> dict[str, Any]:
        """The record as the relay publishes it, built without validation (the relay
        publishes what the store committed; every event passes through here)."""
        return {
            "event_id": event_id,
            "position": position,
            "game": game,
            "game_type": game_type,
            "version": version,
            "type": type,
            "data": data,
            "metadata": metadata,
            "recorded_at": recorded_at.isoformat(),
        }
