"""An event store in memory: the same interface (:class:`~cardroom_eventstore.interface.Store`)
and the same behaviour as :class:`~cardroom_eventstore.EventStore`, for fast unit tests of the
services, as the ``eventsourcing`` library has its in-memory recorders.

One process, one event loop: every operation runs without awaiting in the middle, so each is
atomic as a statement is on PostgreSQL, and appends commit in position order. Values are
stored as PostgreSQL gives them back (JSON round-tripped: tuples become lists, keys
strings); what PostgreSQL refuses is refused here too (a NUL character in JSON text, a
version beyond the ``integer`` columns, an event id recorded before).
``tests/eventstore/test_store_contract.py`` runs the same assertions on both.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from uuid import UUID

from .appends import one_by_one, refusal
from .deadlines import ACKS, Due, Wanted
from .gates import NOT_GATING, VERSIONS
from .jsontext import json_text
from .model import (
    SHOWN,
    TO,
    AckResult,
    Append,
    DuplicateCommand,
    EventStoreError,
    RecordedEvent,
)
from .readmodels import LIST_LIMIT, LOBBY, StoredNotification, StoredView
from .signatures import Signed

if TYPE_CHECKING:
    from .interface import Store
    from .store import EventStore


def _stored(value: Any) -> Any:
    """``value`` as a ``jsonb`` column gives it back; what PostgreSQL refuses raises."""
    text = json_text(value)
    if "\\u0000" in text:
        raise ValueError("unsupported Unicode escape sequence: \\u0000 cannot be stored")
    return json.loads(text)


@dataclass
class _Stream:
    stream_type: str
    version: int
    updated_at: datetime


@dataclass
class _Gate:
    remaining: int
    released_at: datetime | None = None
    handled: bool = False


@dataclass
class _Deadline:
    version: int
    due_at: datetime
    fired_at: datetime | None = None
    claimed_until: datetime | None = None


class InMemoryEventStore:
    """See the module. ``now`` is its clock (the recorded time of events, releases, ...)."""

    def __init__(self, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.now = now
        self._streams: dict[str, _Stream] = {}
        self._events: list[RecordedEvent] = []  # in position order
        self._by_stream: dict[str, list[RecordedEvent]] = {}
        self._event_ids: set[UUID] = set()
        self._positions = itertools.count(1)
        self._commands: dict[tuple[str, str], dict[str, Any]] = {}
        # (stream, version, player) -> gate_version (NOT_GATING: excused)
        self._pending: dict[tuple[str, int, str], int] = {}
        self._gates: dict[tuple[str, int], _Gate] = {}
        self._checkpoints: dict[str, int] = {}
        self._tracking_locks: dict[str, asyncio.Lock] = {}
        self._listening = False
        self._generation = 0
        self._seen_generation = 0
        self._changed = asyncio.Event()
        self.deadlines = InMemoryDeadlines(self)
        # the read models, as the projector's batches leave them (``write_read_models``)
        self._notes: dict[tuple[str, str, int], StoredNotification] = {}
        self._views: dict[tuple[str, str], StoredView] = {}
        self._tables: dict[str, tuple[datetime, dict[str, Any]]] = {}
        self._signatures: dict[tuple[str, int, str], Signed] = {}

    # -- appends ------------------------------------------------------------------------------

    async def append(self, batch: Append) -> list[RecordedEvent]:
        """See ``EventStore.append``."""
        return self._append(batch)

    def _append(self, batch: Append) -> list[RecordedEvent]:
        for version in (batch.expected_version, batch.last_version, batch.handled_gate or 0):
            if version not in VERSIONS:
                raise OverflowError(f"value out of int32 range: {version}")
        data = [_stored(event.data) for event in batch.events]
        metadata = [_stored(event.metadata) for event in batch.events]
        reply = None if batch.command_id is None else _stored(batch.reply or {})
        stream = self._streams.get(batch.stream_id)
        seen = (batch.stream_id, batch.command_id or "") in self._commands
        if batch.expected_version == 0:
            written = stream is None
        else:
            written = (
                stream is not None
                and stream.version == batch.expected_version
                and stream.stream_type == batch.stream_type
                and not (batch.command_id is not None and seen)
            )
        if not written:
            if batch.command_id is not None and seen:
                raise DuplicateCommand(batch.stream_id, batch.command_id)
            raise refusal(batch, None if stream is None else (stream.version, stream.stream_type))
        ids = [event.event_id for event in batch.events]
        if len(set(ids)) < len(ids) or self._event_ids.intersection(ids):
            raise EventStoreError("event not appended: an event id recorded before")
        # written: everything, as one statement would
        now = self.now()
        self._streams[batch.stream_id] = _Stream(batch.stream_type, batch.last_version, now)
        if batch.command_id is not None and reply is not None:
            self._commands[(batch.stream_id, batch.command_id)] = reply
        holding = 0
        for version, player, gate_version in batch.owed():
            self._pending[(batch.stream_id, version, player)] = gate_version
            holding += gate_version > 0
        if holding:
            self._gates[(batch.stream_id, batch.last_version)] = _Gate(holding)
        if batch.handled_gate is not None:
            gate = self._gates.get((batch.stream_id, batch.handled_gate))
            if gate is not None:
                gate.handled = True
        recorded: list[RecordedEvent] = []
        log = self._by_stream.setdefault(batch.stream_id, [])
        for i, event in enumerate(batch.events):
            stored = RecordedEvent(
                position=next(self._positions),
                stream_id=batch.stream_id,
                stream_type=batch.stream_type,
                version=batch.expected_version + 1 + i,
                event_id=event.event_id,
                type=event.type,
                data=data[i],
                metadata=metadata[i],
                recorded_at=now,
            )
            self._events.append(stored)
            log.append(stored)
            self._event_ids.add(event.event_id)
            # the appender gets its own values back, as from PostgreSQL
            recorded.append(replace(stored, data=event.data, metadata=event.metadata))
        if recorded and self._listening:
            self._generation += 1
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()
        return recorded

    async def append_group(
        self, batches: Sequence[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]:
        """See ``EventStore.append_group``."""
        streams = [b.stream_id for b in batches]
        if len(set(streams)) != len(streams) or any(b.expected_version == 0 for b in batches):
            raise ValueError("append_group: existing streams, each at most once")
        return await self.append_each(batches)

    async def append_each(
        self, batches: Sequence[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]:
        """See ``EventStore.append_each``."""
        return await one_by_one(self.append, batches)

    async def command_reply(self, stream_id: str, command_id: str) -> dict[str, Any] | None:
        reply = self._commands.get((stream_id, command_id))
        return None if reply is None else dict(reply)

    # -- the log ------------------------------------------------------------------------------

    async def read_stream(
        self, stream_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        return [
            e
            for e in self._by_stream.get(stream_id, [])
            if e.version >= from_version and (to_version is None or e.version <= to_version)
        ]

    async def read_all(self, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        return [e for e in self._events if e.position > after_position][:limit]

    async def stream_version(self, stream_id: str) -> int:
        stream = self._streams.get(stream_id)
        return 0 if stream is None else stream.version

    async def behind(self, after_position: int, cap: int = 100_000) -> tuple[int, datetime | None]:
        later = [e for e in self._events if e.position > after_position][:cap]
        return len(later), (later[0].recorded_at if later else None)

    async def wait_for_append(self, timeout: float) -> bool:
        """See ``EventStore.wait_for_append`` (the first call starts listening)."""
        self._listening = True
        if self._generation != self._seen_generation:
            self._seen_generation = self._generation
            return True
        try:
            async with asyncio.timeout(timeout):
                await self._changed.wait()
        except TimeoutError:
            return False
        self._seen_generation = self._generation
        return True

    # -- gates --------------------------------------------------------------------------------

    async def ack(self, stream_id: str, version: int, player_id: str) -> AckResult:
        return (await self.ack_many([(stream_id, version, player_id)]))[0]

    async def ack_many(self, acks: Sequence[tuple[str, int, str]]) -> list[AckResult]:
        """See ``EventStore.ack_many``."""
        deleted: dict[int, int] = {}  # ack index -> the gate_version of the row it deleted
        for i, key in enumerate(acks):
            if key[1] in VERSIONS and key in self._pending:
                deleted[i] = self._pending.pop(key)
        # each gate counts down by the rows it lost; the last of them reports its release
        last: dict[tuple[str, int], int] = {}
        lost: dict[tuple[str, int], int] = {}
        for i, gate_version in deleted.items():
            if gate_version > NOT_GATING:
                gate = (acks[i][0], gate_version)
                lost[gate] = lost.get(gate, 0) + 1
                last[gate] = i
        released: dict[int, int] = {}
        for gate, n in lost.items():
            if self._count_down(gate, n):
                released[last[gate]] = gate[1]
        results: list[AckResult] = []
        for i, (stream_id, _, _) in enumerate(acks):
            if i not in deleted:
                results.append(AckResult(accepted=False))
                continue
            release = released.get(i)
            results.append(
                AckResult(
                    accepted=True,
                    released_gate=release,
                    open=release is not None and self._open(stream_id),
                    away=deleted[i] == NOT_GATING,
                )
            )
        return results

    def _count_down(self, gate: tuple[str, int], n: int) -> bool:
        """Count the gate down by ``n``; True when that released it."""
        row = self._gates[gate]
        row.remaining -= n
        if row.remaining == 0:
            row.released_at = self.now()
            return True
        return False

    def _open(self, stream_id: str) -> bool:
        return not any(
            s == stream_id and gate > NOT_GATING for (s, _, _), gate in self._pending.items()
        )

    async def pending(self, stream_id: str) -> dict[int, frozenset[str]]:
        owed: dict[int, set[str]] = {}
        for s, version, player in sorted(self._pending):
            if s == stream_id:
                owed.setdefault(version, set()).add(player)
        return {version: frozenset(players) for version, players in owed.items()}

    async def pending_for_player(self, stream_id: str, player_id: str) -> list[int]:
        return sorted(v for s, v, p in self._pending if s == stream_id and p == player_id)

    async def addressed(self, stream_id: str, version: int, player_id: str) -> bool:
        for event in self._by_stream.get(stream_id, []):
            shown = event.metadata.get(SHOWN)
            if (
                event.version == version
                and shown is None
                and player_id in event.metadata.get(TO, [])
            ):
                return True
            if shown is not None and shown.get(player_id) == version:
                return True
        return False

    async def gate_open(self, stream_id: str, *, handled: Collection[int] = ()) -> bool:
        is_open = self._open(stream_id)
        if not is_open:
            for version in handled:
                gate = self._gates.get((stream_id, version))
                if gate is not None:
                    gate.handled = True
        return is_open

    async def opened_since(self, stream_id: str, version: int) -> datetime | None:
        return max(
            (
                gate.released_at
                for (s, v), gate in self._gates.items()
                if s == stream_id and v >= version and gate.released_at is not None
            ),
            default=None,
        )

    async def debtors(self, stream_id: str, gate: int = 2**31 - 1) -> set[str]:
        return {
            p
            for (s, _, p), g in self._pending.items()
            if s == stream_id and g != NOT_GATING and abs(g) <= gate
        }

    async def excuse(self, stream_id: str, players: Collection[str]) -> list[int]:
        lost: dict[int, int] = {}
        for key, gate in self._pending.items():
            if key[0] == stream_id and key[2] in players and gate != NOT_GATING:
                self._pending[key] = NOT_GATING
                if gate > NOT_GATING:  # (an ack that holds nothing counts no gate down)
                    lost[gate] = lost.get(gate, 0) + 1
        return [g for g in sorted(lost) if self._count_down((stream_id, g), lost[g])]

    async def unhandled_releases(
        self, limit: int = 100, *, older_than: float = 0.0
    ) -> list[tuple[str, int]]:
        since = self.now() - timedelta(seconds=older_than)
        found = [
            (gate.released_at, stream_id, version)
            for (stream_id, version), gate in self._gates.items()
            if gate.remaining == 0
            and not gate.handled
            and gate.released_at is not None
            and (older_than <= 0 or gate.released_at <= since)
        ]
        return [(s, v) for _, s, v in sorted(found)[:limit]]

    async def mark_gate_handled(self, stream_id: str, version: int) -> None:
        gate = self._gates.get((stream_id, version))
        if gate is not None:
            gate.handled = True

    # -- tracking -----------------------------------------------------------------------------

    async def checkpoint(self, name: str) -> int:
        return self._checkpoints.get(name, 0)

    async def checkpoints(self, prefix: str) -> list[tuple[str, int]]:
        return sorted((n, p) for n, p in self._checkpoints.items() if n.startswith(prefix))

    @asynccontextmanager
    async def tracking(self, name: str, *, durable: bool = True) -> AsyncIterator[InMemoryTracking]:
        """See ``EventStore.tracking``: its record locked; its advance commits with the block,
        or is forgotten when the block raises (durable or not: memory holds no WAL)."""
        lock = self._tracking_locks.setdefault(name, asyncio.Lock())
        async with lock:
            record = InMemoryTracking(name, self._checkpoints.get(name, 0))
            yield record
            self._checkpoints[name] = record.position

    # -- read models and transition signatures ------------------------------------------------

    def write_read_models(
        self,
        notes: Sequence[StoredNotification],
        views: Sequence[StoredView],
        summaries: Sequence[dict[str, Any]],
    ) -> None:
        """What ``readmodels.write_batch`` stores, for tests (no projector runs here): the
        notifications still owed, the views and the lobby's summaries."""
        for n in notes:
            if (n.game_id, n.version, n.player_id) in self._pending:
                self._notes[(n.game_id, n.player_id, n.seq)] = replace(
                    n, payload=_stored(n.payload)
                )
        for v in views:
            self._views[(v.game_id, v.player_id)] = v._replace(
                view=_stored(v.view), actions=_stored(v.actions)
            )
        for t in summaries:
            self._tables[t["game"]] = (self.now(), _stored(t))

    async def view(self, game_id: str, player_id: str) -> StoredView | None:
        return self._views.get((game_id, player_id))

    async def notifications_for_versions(
        self, game_id: str, player_id: str, versions: Sequence[int]
    ) -> list[StoredNotification]:
        wanted = set(versions)
        return sorted(
            (
                n
                for (g, p, _), n in self._notes.items()
                if g == game_id and p == player_id and n.version in wanted
            ),
            key=lambda n: n.seq,
        )

    async def list_tables(
        self, game_type: str | None = None, status: str | None = None, limit: int = LIST_LIMIT
    ) -> list[tuple[datetime, dict[str, Any]]]:
        found = [
            (at, dict(summary))
            for at, summary in self._tables.values()
            if (game_type is None or summary["game_type"] == game_type)
            and (status is None or summary["status"] == status)
        ]
        found.sort(key=lambda row: row[0], reverse=True)
        return found[:limit]

    async def waiting_tables(self, creator: str, since: datetime) -> int:
        return sum(
            1
            for at, summary in self._tables.values()
            if summary["status"] == LOBBY and summary.get("creator") == creator and at >= since
        )

    async def delete_acknowledged(self) -> int:
        gone = [
            key
            for key, n in self._notes.items()
            if (key[0], n.version, key[1]) not in self._pending
        ]
        for key in gone:
            del self._notes[key]
        return len(gone)

    async def record_signature(
        self, stream_id: str, version: int, player_id: str, signed: Signed
    ) -> bool:
        key = (stream_id, version, player_id)
        if key not in self._pending or key in self._signatures:
            return False
        rejection = None if signed.rejection is None else _stored(signed.rejection)
        self._signatures[key] = Signed(signed.signature, rejection)
        return True

    async def signatures_since(
        self, stream_id: str, after: int, upto: int
    ) -> dict[tuple[int, str], Signed]:
        return {
            (v, p): signed
            for (s, v, p), signed in self._signatures.items()
            if s == stream_id and after < v <= upto
        }

    async def close(self) -> None:
        """Nothing to close."""


class InMemoryTracking:
    """A tracking record of :class:`InMemoryEventStore` (``EventStore.tracking``'s twin)."""

    def __init__(self, name: str, position: int) -> None:
        self.name = name
        self.position = position

    async def advance(self, position: int) -> None:
        if position < self.position:
            raise ValueError(f"checkpoint {self.name!r} cannot go back from {self.position}")
        self.position = position


class InMemoryDeadlines:
    """The deadlines of :class:`InMemoryEventStore` (``EventStore.deadlines``'s twin)."""

    def __init__(self, store: InMemoryEventStore) -> None:
        self._store = store
        self._rows: dict[tuple[str, str], _Deadline] = {}
        self._versions: dict[str, tuple[int, bool]] = {}  # game -> (version, active)

    async def write(
        self,
        game: str,
        version: int,
        *,
        active: bool,
        wanted: Sequence[Wanted],
        ack_timeout: float | None,
        waited: Sequence[str] = (),
    ) -> datetime | None:
        recorded = self._versions.get(game)
        if recorded is not None and recorded[0] > version:
            return None  # an evaluation never goes back
        self._versions[game] = (version, active)
        want = [(d.key, float(d.seconds), d.since) for d in wanted]
        gates = [
            abs(g)
            for (s, _, p), g in self._store._pending.items()
            if s == game and (g > NOT_GATING or (g < NOT_GATING and p in waited))
        ]
        if gates and ack_timeout is not None:
            want.append((f"{ACKS}{min(gates)}", ack_timeout, min(gates)))
        keys = {key for key, _, _ in want}
        for gone in [k for k in self._rows if k[0] == game and k[1] not in keys]:
            del self._rows[gone]
        events = {e.version: e for e in self._store._by_stream.get(game, [])}
        put: list[_Deadline] = []
        for key, seconds, since in want:
            if since not in events:
                continue
            row = self._rows.get((game, key))
            if row is None:
                due = events[since].recorded_at + timedelta(seconds=seconds)
                row = self._rows[(game, key)] = _Deadline(version, due)
            elif row.version < version:
                row.version, row.claimed_until = version, None
            else:
                continue
            put.append(row)
        return min((r.due_at for r in put if r.fired_at is None), default=None)

    sync = write

    async def mark_fired(self, game: str, key: str, version: int) -> None:
        row = self._rows.get((game, key))
        if row is not None and row.version == version and row.fired_at is None:
            row.fired_at, row.claimed_until = self._store.now(), None

    async def claim(self, now: datetime, lease: datetime, limit: int) -> list[Due]:
        due = sorted(
            (row.due_at, game, key)
            for (game, key), row in self._rows.items()
            if row.fired_at is None
            and row.due_at <= now
            and (row.claimed_until is None or row.claimed_until <= now)
        )[:limit]
        claimed: list[Due] = []
        for _, game, key in due:
            row = self._rows[(game, key)]
            row.claimed_until = lease
            claimed.append(Due(game, key, row.version, row.due_at))
        return claimed

    async def next_due(self) -> datetime | None:
        return min(
            (
                max(r.due_at, r.claimed_until or r.due_at)
                for r in self._rows.values()
                if r.fired_at is None
            ),
            default=None,
        )

    async def retry_at(self, due: Due, at: datetime) -> None:
        row = self._rows.get((due.game, due.key))
        if row is not None and row.version == due.version and row.fired_at is None:
            row.claimed_until = at

    async def time_left(
        self, game: str, since: int, *, kinds: Sequence[str], gated: str
    ) -> float | None:
        store = self._store
        written, active = self._versions.get(game, (0, False))
        if not active or written < since or game not in store._streams or not store._open(game):
            return None
        events = {e.version: e for e in store._by_stream.get(game, [])}
        due: list[datetime] = []
        for (g, key), row in self._rows.items():
            kind, _, rest = key.partition(":")
            if g != game or row.fired_at is not None or key.startswith(ACKS) or kind not in kinds:
                continue
            at = row.due_at
            if kind == gated and rest.isdigit() and int(rest) in events:
                # a turn runs from the opening of the newest gate at or after its event
                since = int(rest)
                opened = await store.opened_since(game, since)
                if opened is not None and opened > events[since].recorded_at:
                    at += opened - events[since].recorded_at
            due.append(at)
        return min(due).timestamp() - store.now().timestamp() if due else None

    async def lagging(self, cutoff: datetime, limit: int) -> list[str]:
        streams = self._store._streams
        found = sorted(
            (streams[game].updated_at, game)
            for game, (version, active) in self._versions.items()
            if active
            and game in streams
            and streams[game].version > version
            and streams[game].updated_at < cutoff
        )
        return [game for _, game in found[:limit]]


if TYPE_CHECKING:

    def _both_are_stores(memory: InMemoryEventStore, real: EventStore) -> tuple[Store, Store]:
        """For mypy: both implementations conform to the interface."""
        return memory, real
