"""The event store's interface: what :class:`~cardroom_eventstore.EventStore` (PostgreSQL)
and :class:`~cardroom_eventstore.memory.InMemoryEventStore` both provide, and a contract test
(``tests/eventstore/test_store_contract.py``) checks they do alike.

Left out: what only PostgreSQL does (``tracking_many``, whose connection writes the read
models; the acktracker's claims of resends, scheduled in SQL; the connections themselves).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol

from .deadlines import Due, Wanted
from .model import AckResult, Append, EventStoreError, RecordedEvent
from .readmodels import StoredNotification, StoredView
from .signatures import Signed


class TrackingRecord(Protocol):
    """A tracking record locked for its block (see ``EventStore.tracking``)."""

    name: str
    position: int

    async def advance(self, position: int) -> None: ...


class DeadlineStore(Protocol):
    """The games' deadlines (see :mod:`cardroom_eventstore.deadlines`)."""

    async def write(
        self,
        game: str,
        version: int,
        *,
        active: bool,
        wanted: Sequence[Wanted],
        ack_timeout: float | None,
        waited: Sequence[str] = (),
    ) -> datetime | None: ...

    async def mark_fired(self, game: str, key: str, version: int) -> None: ...

    async def claim(self, now: datetime, lease: datetime, limit: int) -> list[Due]: ...

    async def next_due(self) -> datetime | None: ...

    async def retry_at(self, due: Due, at: datetime) -> None: ...

    async def lagging(self, cutoff: datetime, limit: int) -> list[str]: ...

    async def time_left(
        self, game: str, since: int, *, kinds: Sequence[str], gated: str
    ) -> float | None: ...


class Store(Protocol):
    """Appends, the log, gates, command replies, checkpoints, deadlines, the read models'
    reads and transition signatures."""

    # appends
    async def append(self, batch: Append) -> list[RecordedEvent]: ...

    async def append_group(
        self, batches: Sequence[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]: ...

    async def append_each(
        self, batches: Sequence[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]: ...

    async def command_reply(self, stream_id: str, command_id: str) -> dict[str, Any] | None: ...

    # the log
    async def read_stream(
        self, stream_id: str, from_version: int = ..., to_version: int | None = ...
    ) -> list[RecordedEvent]: ...

    async def read_all(
        self, after_position: int = ..., limit: int = ...
    ) -> list[RecordedEvent]: ...

    async def stream_version(self, stream_id: str) -> int: ...

    async def behind(self, after_position: int, cap: int = ...) -> tuple[int, datetime | None]: ...

    async def wait_for_append(self, timeout: float) -> bool: ...

    # gates
    async def ack(self, stream_id: str, version: int, player_id: str) -> AckResult: ...

    async def ack_many(self, acks: Sequence[tuple[str, int, str]]) -> list[AckResult]: ...

    async def pending(self, stream_id: str) -> dict[int, frozenset[str]]: ...

    async def pending_for_player(self, stream_id: str, player_id: str) -> list[int]: ...

    async def addressed(self, stream_id: str, version: int, player_id: str) -> bool: ...

    async def gate_open(self, stream_id: str, *, handled: Collection[int] = ...) -> bool: ...

    async def debtors(self, stream_id: str, gate: int = ...) -> set[str]: ...

    async def excuse(self, stream_id: str, players: Collection[str]) -> list[int]: ...

    async def opened_since(self, stream_id: str, version: int) -> datetime | None: ...

    async def unhandled_releases(
        self, limit: int = ..., *, older_than: float = ...
    ) -> list[tuple[str, int]]: ...

    async def mark_gate_handled(self, stream_id: str, version: int) -> None: ...

    # tracking
    async def checkpoint(self, name: str) -> int: ...

    async def checkpoints(self, prefix: str) -> list[tuple[str, int]]: ...

    def tracking(
        self, name: str, *, durable: bool = True
    ) -> AbstractAsyncContextManager[TrackingRecord]: ...

    # read models (written by the projector's tracking transactions)
    async def view(self, game_id: str, player_id: str) -> StoredView | None: ...

    async def notifications_for_versions(
        self, game_id: str, player_id: str, versions: Sequence[int]
    ) -> list[StoredNotification]: ...

    async def list_tables(
        self, game_type: str | None = ..., status: str | None = ..., limit: int = ...
    ) -> list[tuple[datetime, dict[str, Any]]]: ...

    async def waiting_tables(self, creator: str, since: datetime) -> int: ...

    async def delete_acknowledged(self) -> int: ...

    # transition signatures
    async def record_signature(
        self, stream_id: str, version: int, player_id: str, signed: Signed
    ) -> bool: ...

    async def signatures_since(
        self, stream_id: str, after: int, upto: int
    ) -> dict[tuple[int, str], Signed]: ...

    # deadlines
    @property
    def deadlines(self) -> DeadlineStore: ...

    async def close(self) -> None: ...
