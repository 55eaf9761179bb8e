"""Appends: one stream's batch, or a group of them, with everything owed with the events.

An append writes the stream row (the optimistic-concurrency check), the command id with its
reply, the pending acknowledgements and their gate, the handled mark of the gate it follows
up, and the events, all or nothing. An append to a running game, a table's creation and a
group commit of appends to running games are each ONE statement on an autocommit
connection of the hot pool: one round trip, and no transaction holds the global append lock
across a round trip.

Global order: readers tail the log with ``position > checkpoint``, which is only safe if a
position, once visible, is never followed by a smaller one becoming visible later. Positions
come from a sequence as rows are inserted, so two transactions could commit in the opposite
order of their positions. Every append therefore takes one transaction-level advisory lock
(:data:`APPEND_LOCK_KEY`) right before inserting its events and holds it until its commit is
visible: inserts, and so positions, are serialised in commit order. Rolled-back appends leave
gaps in the positions; readers do not care. The same statement NOTIFYs
:data:`NOTIFY_CHANNEL`, delivered at commit, so tailing readers need not poll.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from sqlalchemy import select

from .asyncengine import AsyncConnection, AsyncEngine
from .hot import HotPool, Statement, unreachable
from .jsontext import json_text
from .model import Append, ConcurrencyError, DuplicateCommand, EventStoreError, RecordedEvent
from .schema import streams
from .stats import STATS

log = logging.getLogger("cardroom.eventstore")

#: The channel every append NOTIFYs (inside its transaction, so at commit).
NOTIFY_CHANNEL = "cardroom_events"

#: The transaction-level advisory lock taken right before events are inserted ("cardroom").
APPEND_LOCK_KEY = int.from_bytes(b"cardroom", "big")

# What an append owes with its stream row ``s``: the command id's answer, the pending acks and
# their gate, the handled mark of the gate it follows up.
_OWED_SQL = """
c AS (
    INSERT INTO commands (stream_id, command_id, reply)
    SELECT s.stream_id, CAST(:command_id AS text), CAST(:reply AS jsonb) FROM s
    WHERE CAST(:command_id AS text) IS NOT NULL
    ON CONFLICT (stream_id, command_id) DO NOTHING
    RETURNING 1
),
p AS (
    INSERT INTO pending_acks (stream_id, version, player_id, gate_version)
    SELECT s.stream_id, a.version, a.player_id, a.gate
    FROM s, unnest(
        CAST(:ack_versions AS integer[]), CAST(:ack_players AS text[]),
        CAST(:ack_gates AS integer[])
    ) AS a(version, player_id, gate)
),
g AS (
    INSERT INTO gates (stream_id, version, remaining)
    SELECT s.stream_id, CAST(:new_version AS integer), CAST(:holding AS integer)
    FROM s WHERE CAST(:holding AS integer) > 0
),
h AS (
    UPDATE gates SET handled = true FROM s
    WHERE gates.stream_id = s.stream_id AND gates.version = CAST(:handled_gate AS integer)
)
"""

_NEW_STREAM_SQL = """
    INSERT INTO streams (stream_id, stream_type, version)
    VALUES (CAST(:stream_id AS text), CAST(:stream_type AS text), CAST(:new_version AS integer))
    ON CONFLICT (stream_id) DO NOTHING
    RETURNING stream_id
"""


# One append in ONE statement, on an autocommit connection (its own implicit transaction): no
# BEGIN or COMMIT round trips. Every part hangs off the stream row ``s``, so nothing is
# written unless it is: ``s`` refuses a stream not at the expected version, and a command id
# recorded before (the stream row's lock and version check serialise two appends of one
# command id, so the loser sees a changed version). The global append lock is taken in the
# events' insert (an uncorrelated sub-select: an InitPlan, evaluated once before the first
# row takes its position), only after ``s`` has finished (the CASE reads its count first), so
# it is held for this statement and its commit only, and never while waiting for a stream
# row.
def _append_one_sql(stream_sql: str) -> str:
    return f"""
WITH s AS ({stream_sql}),
n AS (SELECT count(*) AS ok FROM s),
{_OWED_SQL.strip()},
ev AS (
    INSERT INTO events (stream_id, stream_type, version, event_id, type, data, metadata)
    SELECT CAST(:stream_id AS text), CAST(:stream_type AS text), e.version, e.event_id, e.type,
           CAST(e.data AS jsonb), CAST(e.metadata AS jsonb)
    FROM unnest(
        CAST(:versions AS integer[]), CAST(:event_ids AS uuid[]), CAST(:types AS text[]),
        CAST(:data AS text[]), CAST(:metadata AS text[])
    ) AS e(version, event_id, type, data, metadata)
    WHERE (SELECT CASE WHEN n.ok > 0 THEN (
        SELECT true FROM pg_advisory_xact_lock({APPEND_LOCK_KEY}), pg_notify('{NOTIFY_CHANNEL}', '')
    ) END FROM n)
    RETURNING position, version, recorded_at
)
SELECT n.ok AS stream_ok, (SELECT count(*) FROM c) AS command_ok,
       CAST(:command_id AS text) IS NOT NULL AND n.ok = 0 AND EXISTS (
           SELECT 1 FROM commands
           WHERE stream_id = CAST(:stream_id AS text) AND command_id = CAST(:command_id AS text)
       ) AS duplicate,
       ev.position, ev.version, ev.recorded_at
FROM n LEFT JOIN ev ON true
ORDER BY ev.version
"""


# An append to a running game: the stream row's update takes its row lock, which serialises
# the appenders of one stream (a loser waits for the winner's commit, re-checks ``version``
# and updates nothing).
_APPEND_ONE = Statement(
    _append_one_sql(
        """
    UPDATE streams SET version = CAST(:new_version AS integer), updated_at = now()
    WHERE stream_id = CAST(:stream_id AS text)
      AND version = CAST(:expected AS integer)
      AND stream_type = CAST(:stream_type AS text)
      AND (CAST(:command_id AS text) IS NULL OR NOT EXISTS (
          SELECT 1 FROM commands
          WHERE stream_id = CAST(:stream_id AS text) AND command_id = CAST(:command_id AS text)))
    RETURNING stream_id
"""
    )
)

# The same for a new stream (a table's creation): its stream row is inserted, or nothing is
# written when it exists.
_APPEND_NEW = Statement(_append_one_sql(_NEW_STREAM_SQL))

# Group commit of appends to running games (of different streams) in ONE statement: ``b`` is
# one row per append, ``i`` its index; every part joins the appends whose stream row ``s``
# took. Appends whose stream was not at the expected version (or whose command id was seen
# before) write nothing and are told apart in the result. Events are inserted in append order,
# so a stream's versions get ascending positions; the global lock is taken as in
# _APPEND_ONE, after every stream row. The command id checks end in ``OFFSET 0`` so that
# PostgreSQL keeps them lookups by key: without it a generic plan may instead hash the whole
# ``commands`` table on every execution (its choice on an empty table).
_APPEND_GROUP = Statement(
    f"""
WITH b AS (
    SELECT * FROM unnest(
        CAST(:stream_ids AS text[]), CAST(:stream_types AS text[]),
        CAST(:expected AS integer[]), CAST(:new_versions AS integer[]),
        CAST(:command_ids AS text[]), CAST(:replies AS text[]), CAST(:handled AS integer[])
    ) WITH ORDINALITY
      AS b(stream_id, stream_type, expected, new_version, command_id, reply, handled_gate, i)
),
s AS (
    UPDATE streams t SET version = b.new_version, updated_at = now()
    FROM b
    WHERE t.stream_id = b.stream_id AND t.version = b.expected
      AND t.stream_type = b.stream_type
      AND (b.command_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM commands c
          WHERE c.stream_id = b.stream_id AND c.command_id = b.command_id OFFSET 0))
    RETURNING b.i, b.stream_id, b.stream_type, b.new_version, b.command_id, b.reply,
              b.handled_gate
),
n AS (SELECT count(*) AS ok FROM s),
c AS (
    INSERT INTO commands (stream_id, command_id, reply)
    SELECT s.stream_id, s.command_id, CAST(s.reply AS jsonb) FROM s
    WHERE s.command_id IS NOT NULL
    ON CONFLICT (stream_id, command_id) DO NOTHING
),
a AS (
    SELECT * FROM unnest(
        CAST(:ack_of AS integer[]), CAST(:ack_versions AS integer[]),
        CAST(:ack_players AS text[]), CAST(:ack_gates AS integer[])
    ) AS a(bi, version, player_id, gate)
),
p AS (
    INSERT INTO pending_acks (stream_id, version, player_id, gate_version)
    SELECT s.stream_id, a.version, a.player_id, a.gate
    FROM a JOIN s ON s.i = a.bi
),
g AS (
    INSERT INTO gates (stream_id, version, remaining)
    SELECT s.stream_id, s.new_version, k.n
    FROM (SELECT bi, count(*) FILTER (WHERE gate > 0) AS n FROM a GROUP BY bi) AS k
    JOIN s ON s.i = k.bi
    WHERE k.n > 0
),
h AS (
    UPDATE gates SET handled = true FROM s
    WHERE gates.stream_id = s.stream_id AND gates.version = s.handled_gate
),
ev AS (
    INSERT INTO events (stream_id, stream_type, version, event_id, type, data, metadata)
    SELECT s.stream_id, s.stream_type, e.version, e.event_id, e.type,
           CAST(e.data AS jsonb), CAST(e.metadata AS jsonb)
    FROM unnest(
        CAST(:event_of AS integer[]), CAST(:versions AS integer[]), CAST(:event_ids AS uuid[]),
        CAST(:types AS text[]), CAST(:data AS text[]), CAST(:metadata AS text[])
    ) WITH ORDINALITY AS e(bi, version, event_id, type, data, metadata, k)
    JOIN s ON s.i = e.bi
    WHERE (SELECT CASE WHEN n.ok > 0 THEN (
        SELECT true FROM pg_advisory_xact_lock({APPEND_LOCK_KEY}), pg_notify('{NOTIFY_CHANNEL}', '')
    ) END FROM n)
    ORDER BY e.k
    RETURNING position, stream_id, version, recorded_at
)
SELECT b.i, s.i IS NOT NULL AS stream_ok,
       s.i IS NULL AND b.command_id IS NOT NULL AND EXISTS (
           SELECT 1 FROM commands c
           WHERE c.stream_id = b.stream_id AND c.command_id = b.command_id OFFSET 0
       ) AS duplicate,
       ev.position, ev.version, ev.recorded_at
FROM b LEFT JOIN s ON s.i = b.i LEFT JOIN ev ON s.i IS NOT NULL AND ev.stream_id = b.stream_id
ORDER BY b.i, ev.version
"""
)


_COMMAND_REPLY = Statement(
    """
SELECT CAST(reply AS text) FROM commands
WHERE stream_id = CAST(:stream_id AS text) AND command_id = CAST(:command_id AS text)
"""
)


@dataclass(frozen=True)
class _Prepared:
    """An :class:`Append` with its parameters computed (and JSON serialised) up front."""

    batch: Append
    state_params: dict[str, Any]
    data: list[str]
    metadata: list[str]

    @classmethod
    def of(cls, batch: Append) -> _Prepared:
        owed = batch.owed()
        state_params = {
            "stream_id": batch.stream_id,
            "stream_type": batch.stream_type,
            "expected": batch.expected_version,
            "new_version": batch.last_version,
            "command_id": batch.command_id,
            "reply": None if batch.command_id is None else json_text(batch.reply or {}),
            # an ack that holds nothing is owed under the negated version (gates.py)
            "ack_versions": [version for version, _, _ in owed],
            "ack_players": [player for _, player, _ in owed],
            "ack_gates": [gate for _, _, gate in owed],
            "holding": sum(gate > 0 for _, _, gate in owed),
            "handled_gate": batch.handled_gate,
        }
        return cls(
            batch=batch,
            state_params=state_params,
            data=[json_text(event.data) for event in batch.events],
            metadata=[json_text(event.metadata) for event in batch.events],
        )

    @property
    def statement(self) -> Statement:
        """The one statement of this append on its own: a new stream's or a running one's."""
        return _APPEND_ONE if self.batch.expected_version > 0 else _APPEND_NEW

    def one_params(self) -> dict[str, Any]:
        """The parameters of :attr:`statement`."""
        batch = self.batch
        first = batch.expected_version + 1
        return {
            **self.state_params,
            "versions": list(range(first, first + len(batch.events))),
            "event_ids": [event.event_id for event in batch.events],
            "types": [event.type for event in batch.events],
            "data": self.data,
            "metadata": self.metadata,
        }


def recorded(batch: Append, rows: Sequence[asyncpg.Record]) -> list[RecordedEvent]:
    """The events of an append that was written, from its rows (per event ``position``,
    ``version`` and ``recorded_at``; one row of nulls when it had no events)."""
    return [
        RecordedEvent(
            position=row["position"],
            stream_id=batch.stream_id,
            stream_type=batch.stream_type,
            version=row["version"],
            event_id=event.event_id,
            type=event.type,
            data=event.data,
            metadata=event.metadata,
            recorded_at=row["recorded_at"],
        )
        for row, event in zip(rows if batch.events else [], batch.events, strict=True)
    ]


def refusal(batch: Append, stream: tuple[int, str] | None) -> EventStoreError:
    """Why ``batch`` was not written, its stream being at ``(version, type)`` (None: there is
    no such stream): another version, or another type of stream."""
    actual = 0 if stream is None else stream[0]
    if stream is not None and actual == batch.expected_version and stream[1] != batch.stream_type:
        return EventStoreError(
            f"stream {batch.stream_id!r} is a {stream[1]!r} stream, not {batch.stream_type!r}"
        )
    return ConcurrencyError(batch.stream_id, batch.expected_version, actual)


async def one_by_one(
    append: Callable[[Append], Awaitable[list[RecordedEvent]]], batches: Sequence[Append]
) -> list[list[RecordedEvent] | EventStoreError]:
    """Each batch appended on its own by ``append``; result i is batch i's events or its
    error. One that fails for any reason but the database being unreachable fails alone,
    with an EventStoreError caused by what it met; an unreachable database raises."""
    results: list[list[RecordedEvent] | EventStoreError] = []
    for batch in batches:
        try:
            results.append(await append(batch))
        except EventStoreError as error:
            results.append(error)
        except Exception as exc:
            if unreachable(exc):
                raise
            refused = EventStoreError(f"event not appended: {type(exc).__name__}")
            refused.__cause__ = exc
            results.append(refused)
    return results


class Appends:
    """The appending part of :class:`~cardroom_eventstore.EventStore`."""

    _autocommit: AsyncEngine
    hot: HotPool

    async def append(self, batch: Append) -> list[RecordedEvent]:
        """Append one batch atomically; raises ConcurrencyError or DuplicateCommand.

        One statement either way, in its own implicit transaction: a new stream's creation
        (``_APPEND_NEW``) or an append to an existing one (``_APPEND_ONE``, the hot path:
        every command and follow-up of a running game).
        """
        return await self._append_one(_Prepared.of(batch))

    async def _append_one(self, prepared: _Prepared) -> list[RecordedEvent]:
        batch = prepared.batch
        try:
            rows = await self.hot.fetch(prepared.statement, prepared.one_params())
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise EventStoreError(f"event not appended: {exc}") from exc
        STATS.statement(1)
        outcome = await self._outcome(batch, rows)
        if isinstance(outcome, EventStoreError):
            raise outcome
        STATS.appended(len(outcome))
        return outcome

    async def _outcome(
        self, batch: Append, rows: Sequence[asyncpg.Record]
    ) -> list[RecordedEvent] | EventStoreError:
        """One append's result from its rows of a one-statement append: ``stream_ok`` and
        ``duplicate`` (the same on every row), and per event ``position``, ``version`` and
        ``recorded_at`` (one row with nulls when nothing was inserted)."""
        head = rows[0]
        if not head["stream_ok"]:
            if head["duplicate"]:
                return DuplicateCommand(batch.stream_id, batch.command_id or "")
            async with self._autocommit.connect() as conn:
                return await self._conflict(conn, batch)
        return recorded(batch, rows)

    async def append_group(
        self, batches: Sequence[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]:
        """Group commit of appends to running games, of different streams, in ONE statement.

        Result i is batch i's events or its error. For
        existing streams only (``expected_version`` > 0), each stream at most once: one round
        trip and one commit for all of them. If the statement itself fails for any reason but
        the database being unreachable (an event id recorded before, a deadlock with another
        group, one append's data the database refuses), the appends are made one by one
        (:meth:`append_each`), so that only a bad one fails.
        """
        if not batches:
            return []
        streams = [b.stream_id for b in batches]
        if len(set(streams)) != len(streams) or any(b.expected_version == 0 for b in batches):
            raise ValueError("append_group: existing streams, each at most once")
        try:
            rows = await self._append_group(streams, batches)
        except Exception as exc:
            if unreachable(exc):
                raise
            log.warning(
                "a group of %d appends failed (%s); one by one", len(batches), type(exc).__name__
            )
            return await self.append_each(batches)
        STATS.statement(len(batches))
        by_batch: dict[int, list[asyncpg.Record]] = {}
        for row in rows:
            by_batch.setdefault(int(row["i"]), []).append(row)
        outcomes = [
            await self._outcome(batch, by_batch[i]) for i, batch in enumerate(batches, start=1)
        ]
        for outcome in outcomes:
            if not isinstance(outcome, EventStoreError):
                STATS.appended(len(outcome))
        return outcomes

    async def _append_group(
        self, streams: list[str], batches: Sequence[Append]
    ) -> list[asyncpg.Record]:
        prepared = [_Prepared.of(b) for b in batches]
        params: dict[str, list[Any]] = {
            "stream_ids": streams,
            "stream_types": [b.stream_type for b in batches],
            "expected": [b.expected_version for b in batches],
            "new_versions": [b.last_version for b in batches],
            "command_ids": [b.command_id for b in batches],
            "replies": [p.state_params["reply"] for p in prepared],
            "handled": [b.handled_gate for b in batches],
            "ack_of": [],
            "ack_versions": [],
            "ack_players": [],
            "ack_gates": [],
            "event_of": [],
            "versions": [],
            "event_ids": [],
            "types": [],
            "data": [],
            "metadata": [],
        }
        for i, (batch, prep) in enumerate(zip(batches, prepared, strict=True), start=1):
            params["ack_of"] += [i] * len(prep.state_params["ack_versions"])
            params["ack_versions"] += prep.state_params["ack_versions"]
            params["ack_players"] += prep.state_params["ack_players"]
            params["ack_gates"] += prep.state_params["ack_gates"]
            first = batch.expected_version + 1
            params["event_of"] += [i] * len(batch.events)
            params["versions"] += list(range(first, first + len(batch.events)))
            params["event_ids"] += [event.event_id for event in batch.events]
            params["types"] += [event.type for event in batch.events]
            params["data"] += prep.data
            params["metadata"] += prep.metadata
        return await self.hot.fetch(_APPEND_GROUP, params)

    async def append_each(
        self, batches: Sequence[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]:
        """Append each batch on its own; result i is batch i's events or its error.

        An append that fails for any reason but the database being unreachable (data the
        database refuses, say) fails alone, with an EventStoreError caused by what it met;
        an unreachable database raises.
        """
        return await one_by_one(self.append, batches)

    async def _conflict(self, conn: AsyncConnection, batch: Append) -> EventStoreError:
        row = (
            await conn.execute(
                select(streams.c.version, streams.c.stream_type).where(
                    streams.c.stream_id == batch.stream_id
                )
            )
        ).one_or_none()
        return refusal(batch, None if row is None else (int(row.version), str(row.stream_type)))

    async def command_reply(self, stream_id: str, command_id: str) -> dict[str, Any] | None:
        """The reply recorded with the command id ({} if none was given), None if unseen."""
        row = await self.hot.fetchrow(
            _COMMAND_REPLY, {"stream_id": stream_id, "command_id": command_id}
        )
        if row is None:
            return None
        reply: dict[str, Any] = json.loads(row[0])
        return reply
