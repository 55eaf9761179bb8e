"""Values passed to and returned by the event store, and its errors."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

TO = "to"
"""The metadata key of an event's addressees."""

SHOWN = "shown"
"""The metadata key of the versions an event's addressees were shown, when they differ from
the event's own version (a game whose events are for some seats only: see
``cardroom_engine.TableState.seen``); each addressee acknowledges the event by its own."""


@dataclass(frozen=True)
class NewEvent:
    """An event to append.

    ``addressees`` are the players who must acknowledge this event before the stream's gate
    opens again; they are also stored as ``metadata["to"]`` (sorted; ``[]`` when there are
    none), so that a reader of the log knows who was sent the event without recomputing its
    messages (absent only on events stored before it was recorded: such a reader asks the
    game's ``notify``). ``data`` and ``metadata`` must be JSON-serialisable (stored as JSONB, so a
    reader gets them back as JSON: tuples become lists, keys become strings).
    """

    type: str
    data: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    addressees: frozenset[str] = frozenset()
    event_id: uuid.UUID = field(default_factory=uuid.uuid4)
    shown: Mapping[str, int] = field(default_factory=dict)
    """The version each addressee was shown, when not the event's own (``metadata.shown``):
    its pending acknowledgement is kept under that number, the one it acknowledges."""
    holds: bool = True
    """Whether its acknowledgements hold the stream's gate. False for an event told to some
    seats only: they are owed all the same, but the others, whose commands would meet the
    gate held, must not learn that it happened (:meth:`Append.owed`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.addressees, frozenset):
            object.__setattr__(self, "addressees", frozenset(self.addressees))
        meta = {**self.metadata, TO: sorted(self.addressees)}
        if self.shown:
            meta[SHOWN] = dict(self.shown)
        object.__setattr__(self, "metadata", meta)


@dataclass(frozen=True)
class RecordedEvent:
    """An event as stored: its global ``position`` and its ``version`` in its stream."""

    position: int
    stream_id: str
    stream_type: str
    version: int
    event_id: uuid.UUID
    type: str
    data: dict[str, Any]
    metadata: dict[str, Any]
    recorded_at: datetime


@dataclass(frozen=True)
class Append:
    """One atomic append to one stream.

    The events get the versions ``expected_version + 1, ...`` in order; ``expected_version``
    must be the stream's current version (0 for a stream that does not exist yet).

    - ``command_id``: record the command as handled, with ``reply`` (``{}`` when None); a
      command id already recorded for this stream makes the append fail with
      :class:`DuplicateCommand`.
    - ``handled_gate``: mark the released gate of that version as handled (its follow-up is
      this append). Only with ``handled_gate`` may ``events`` be empty: then the append checks
      the expected version, marks the gate and appends nothing.

    The acknowledgements of an event whose ``holds`` is false are owed but hold no gate
    (:meth:`owed`); a batch of such events only has no gate at all.
    """

    stream_id: str
    stream_type: str
    expected_version: int
    events: Sequence[NewEvent]
    command_id: str | None = None
    reply: dict[str, Any] | None = None
    handled_gate: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", tuple(self.events))
        if self.expected_version < 0:
            raise ValueError(f"expected_version must be >= 0, got {self.expected_version}")
        if not self.events:
            if self.handled_gate is None:
                raise ValueError("an append without events needs handled_gate")
            if self.expected_version == 0:
                raise ValueError("a stream without events has no gate to mark handled")
        if self.reply is not None and self.command_id is None:
            raise ValueError("reply needs command_id")

    @property
    def last_version(self) -> int:
        """The stream's version after this append."""
        return self.expected_version + len(self.events)

    def owed(self) -> list[tuple[int, str, int]]:
        """The acknowledgements this append owes, as ``pending_acks`` keeps them: the version
        each addressee acknowledges (the one it was shown), the player, and the
        ``gate_version``: ``last_version`` where it holds the gate (its event holds), else
        ``-last_version`` (owed, holding nothing: resent, listed by a sync, timed as
        :mod:`.deadlines` says). The gate waits for as many acknowledgements as hold it; with
        none, the append has no gate."""
        rows: list[tuple[int, str, int]] = []
        for version, event in enumerate(self.events, start=self.expected_version + 1):
            gate = self.last_version if event.holds else -self.last_version
            for player in sorted(event.addressees):
                rows.append((event.shown.get(player, version), player, gate))
        return rows


@dataclass(frozen=True)
class AckResult:
    """The outcome of one acknowledgement.

    ``accepted``: the (version, player) was pending and is now acknowledged.
    ``released_gate``: the version of the gate this ack released (reported exactly once ever),
    else None.
    ``open``: with a release, whether no gating acknowledgement at all was owed for the stream
    any more when this one committed (the gate is open, not just this gate released). It stays
    true until the next append, which changes the stream's version.
    ``away``: the acknowledged notification was owed by an away player (excused, it held no
    gate): whoever acknowledges it is back.
    """

    accepted: bool
    released_gate: int | None = None
    open: bool = False
    away: bool = False  # the ack was owed while the player was away (it held no gate)


class EventStoreError(Exception):
    """Base class of the event store's errors."""

    retryable: bool = False


class ConcurrencyError(EventStoreError):
    """The stream's version is not the expected one: reload and decide again."""

    retryable = True

    def __init__(self, stream_id: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream_id!r} is at version {actual}, expected {expected}")
        self.stream_id = stream_id
        self.expected = expected
        self.actual = actual

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.stream_id, self.expected, self.actual))


class DuplicateCommand(EventStoreError):
    """The command id was already recorded for this stream; see ``command_reply``."""

    def __init__(self, stream_id: str, command_id: str) -> None:
        super().__init__(f"command {command_id!r} was already handled for stream {stream_id!r}")
        self.stream_id = stream_id
        self.command_id = command_id

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.stream_id, self.command_id))
