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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from sqlalchemy import func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from .hot import HotPool, Statement, unreachable
from .jsontext import json_text
from .model import Append, ConcurrencyError, DuplicateCommand, EventStoreError, RecordedEvent
from .schema import snapshots, streams
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
    SELECT s.stream_id, a.version, a.player_id, CAST(:gate AS integer)
    FROM s, unnest(CAST(:ack_versions AS integer[]), CAST(:ack_players AS text[]))
        AS a(version, player_id)
),
g AS (
    INSERT INTO gates (stream_id, version, remaining)
    SELECT s.stream_id, CAST(:gate AS integer), cardinality(CAST(:ack_players AS text[]))
    FROM s WHERE cardinality(CAST(:ack_players AS text[])) > 0
),
h AS (
    UPDATE gates SET handled = true FROM s
    WHERE gates.stream_id = s.stream_id AND gates.version = CAST(:handled_gate AS integer)
)
"""

# Statement 1 of an append: the stream row and everything else the batch owes, in one round
# trip. Every other part hangs off ``s``, so when the stream is not at the expected version
# nothing at all is written. A command id seen before leaves ``c`` empty while the rest was
# written; the caller must then roll back (the transaction, or the group-commit attempt).
_STATE_SQL = """
WITH s AS ({stream_sql}),
{owed}
SELECT (SELECT count(*) FROM s) AS stream_ok, (SELECT count(*) FROM c) AS command_ok
"""

_NEW_STREAM_SQL = """
    INSERT INTO streams (stream_id, stream_type, version)
    VALUES (CAST(:stream_id AS text), CAST(:stream_type AS text), CAST(:new_version AS integer))
    ON CONFLICT (stream_id) DO NOTHING
    RETURNING stream_id
"""

# The row lock taken by this UPDATE serialises the appenders of one stream; a loser waits for
# the winner's commit, re-checks ``version`` against the new row and updates nothing.
_EXISTING_STREAM_SQL = """
    UPDATE streams SET version = CAST(:new_version AS integer), updated_at = now()
    WHERE stream_id = CAST(:stream_id AS text)
      AND version = CAST(:expected AS integer)
      AND stream_type = CAST(:stream_type AS text)
    RETURNING stream_id
"""

_STATE_NEW = text(_STATE_SQL.format(stream_sql=_NEW_STREAM_SQL, owed=_OWED_SQL.strip()))
_STATE_EXISTING = text(_STATE_SQL.format(stream_sql=_EXISTING_STREAM_SQL, owed=_OWED_SQL.strip()))

# Statement 2 of an append (of a whole group commit): insert the events.
#
# Global order without skipped late commits: readers tail the log with "position > checkpoint",
# which is only safe if a position, once visible, is never followed by a smaller one becoming
# visible later. Positions come from a sequence when the row is inserted, so two transactions
# could commit in the opposite order of their positions. We therefore take one transaction-level
# advisory lock right before the insert and hold it until COMMIT (PostgreSQL releases it after
# the commit is visible): event inserts, and so positions, are serialised in commit order. The
# lock is taken after everything else of the transaction, in the same statement as the insert
# (uncorrelated sub-select = an InitPlan, evaluated once before the first row and its nextval),
# so it is held only for this statement and the commit. Rolled-back transactions leave gaps in
# the positions; readers do not care. The NOTIFY is delivered at commit (deduplicated per
# transaction); tailing readers use it to avoid polling.
_INSERT_EVENTS = text(
    f"""
INSERT INTO events (stream_id, stream_type, version, event_id, type, data, metadata)
SELECT e.stream_id, e.stream_type, e.version, e.event_id, e.type,
       CAST(e.data AS jsonb), CAST(e.metadata AS jsonb)
FROM unnest(
    CAST(:stream_ids AS text[]), CAST(:stream_types AS text[]), CAST(:versions AS integer[]),
    CAST(:event_ids AS uuid[]), CAST(:types AS text[]), CAST(:data AS text[]),
    CAST(:metadata AS text[])
) AS e(stream_id, stream_type, version, event_id, type, data, metadata)
WHERE (SELECT true FROM pg_advisory_xact_lock({APPEND_LOCK_KEY}), pg_notify('{NOTIFY_CHANNEL}', ''))
RETURNING position, stream_id, version, recorded_at
"""
)


# An append to an existing stream in ONE statement, on an autocommit connection (its own
# implicit transaction): no BEGIN or COMMIT round trips. The same parts as statements 1 and 2
# above, chained so that nothing is written unless the stream row is: ``s`` also refuses a
# command id recorded before (the stream row's lock and version check serialise two appends of
# one command id, so the loser sees a changed version). The global append lock is taken only
# after ``s`` has finished (the CASE reads its count first), so this statement never waits for
# a stream row while holding the lock that group commits take after theirs.
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
# written when it exists. It was a transaction of two statements and a COMMIT, which held the
# global append lock across the round trip to the COMMIT: under the throughput benchmark's
# burst of 200 creations that insert waited 45 ms at the median, and every append with it.
_APPEND_NEW = Statement(_append_one_sql(_NEW_STREAM_SQL))

# Group commit of appends to running games (of different streams) in ONE statement: ``b`` is
# one row per append, ``i`` its index; every part joins the appends whose stream row ``s``
# took. Appends whose stream was not at the expected version (or whose command id was seen
# before) write nothing and are told apart in the result. Events are inserted in append order,
# so a stream's versions get ascending positions; the global lock is taken as in
# _APPEND_ONE, after every stream row.
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
          WHERE c.stream_id = b.stream_id AND c.command_id = b.command_id))
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
        CAST(:ack_players AS text[])
    ) AS a(bi, version, player_id)
),
p AS (
    INSERT INTO pending_acks (stream_id, version, player_id, gate_version)
    SELECT s.stream_id, a.version, a.player_id, s.new_version FROM a JOIN s ON s.i = a.bi
),
g AS (
    INSERT INTO gates (stream_id, version, remaining)
    SELECT s.stream_id, s.new_version, k.n
    FROM (SELECT bi, count(*) AS n FROM a GROUP BY bi) AS k JOIN s ON s.i = k.bi
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
           WHERE c.stream_id = b.stream_id AND c.command_id = b.command_id
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
        ack_versions: list[int] = []
        ack_players: list[str] = []
        for version, event in enumerate(batch.events, start=batch.expected_version + 1):
            shown = event.shown
            for player in sorted(event.addressees):
                ack_versions.append(shown.get(player, version))
                ack_players.append(player)
        state_params = {
            "stream_id": batch.stream_id,
            "stream_type": batch.stream_type,
            "expected": batch.expected_version,
            "new_version": batch.last_version,
            "command_id": batch.command_id,
            "reply": None if batch.command_id is None else json_text(batch.reply or {}),
            "gate": batch.last_version,
            "ack_versions": ack_versions,
            "ack_players": ack_players,
            "handled_gate": batch.handled_gate,
        }
        return cls(
            batch=batch,
            state_params=state_params,
            data=[json_text(event.data) for event in batch.events],
            metadata=[json_text(event.metadata) for event in batch.events],
        )


class _Redo(Exception):
    """Internal: roll back a group-commit attempt and retry it without one batch."""

    def __init__(self, index: int, error: EventStoreError) -> None:
        super().__init__(index)
        self.index = index
        self.error = error


class Appends:
    """The appending part of :class:`~cardroom_eventstore.EventStore`."""

    engine: AsyncEngine
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
        first = batch.expected_version + 1
        params = {
            **prepared.state_params,
            "versions": list(range(first, first + len(batch.events))),
            "event_ids": [event.event_id for event in batch.events],
            "types": [event.type for event in batch.events],
            "data": prepared.data,
            "metadata": prepared.metadata,
        }
        try:
            statement = _APPEND_ONE if batch.expected_version > 0 else _APPEND_NEW
            rows = await self.hot.fetch(statement, params)
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

    async def _append_in(self, conn: AsyncConnection, prepared: _Prepared) -> list[RecordedEvent]:
        """Append inside the caller's transaction (which must roll back if this raises)."""
        error = await self._write_state(conn, prepared)
        if error is not None:
            raise error
        return (await self._insert_events(conn, [prepared]))[0]

    async def append_group(
        self, batches: Sequence[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]:
        """Group commit of appends to running games, of different streams, in ONE statement.

        Like :meth:`append_many` (result i is batch i's events or its error), but for
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
        results: list[list[RecordedEvent] | EventStoreError] = []
        for batch in batches:
            try:
                results.append(await self.append(batch))
            except EventStoreError as error:
                results.append(error)
            except Exception as exc:
                if unreachable(exc):
                    raise
                refused = EventStoreError(f"event not appended: {type(exc).__name__}")
                refused.__cause__ = exc
                results.append(refused)
        return results

    async def append_many(
        self, batches: Sequence[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]:
        """Group commit: append every batch in ONE transaction; a failing batch fails alone.

        The result at index i is batch i's recorded events, or the EventStoreError it failed
        with (ConcurrencyError, DuplicateCommand, ...). Errors of the database itself raise.

        A stream conflict writes nothing, so that batch is just left out. A duplicate command
        id is only detected after its batch's stream row was written: the attempt is rolled back
        and retried without that batch (rare: callers check ``command_reply`` first). This
        costs one statement per batch instead of three for a SAVEPOINT per batch. Anything
        else that fails the transaction, but the database being unreachable (one batch's data
        that the database refuses, say), has the batches appended one by one
        (:meth:`append_each`).

        Stream rows are written in stream id order (so concurrent group commits lock them in
        one order and cannot deadlock); the events get their positions in batch order.
        """
        try:
            prepared = [_Prepared.of(batch) for batch in batches]
        except Exception:  # one batch's data cannot be written: that one fails alone
            return await self.append_each(batches)
        results: list[list[RecordedEvent] | EventStoreError | None] = [None] * len(batches)
        todo = list(range(len(batches)))
        while todo:
            written: list[int] = []
            try:
                async with self.engine.begin() as conn:
                    for i in sorted(todo, key=lambda i: batches[i].stream_id):
                        try:
                            error = await self._write_state(conn, prepared[i])
                        except IntegrityError as exc:
                            raise _Redo(i, EventStoreError(str(exc.orig))) from exc
                        if isinstance(error, DuplicateCommand):
                            raise _Redo(i, error)
                        if error is None:
                            written.append(i)
                        else:
                            results[i] = error
                    written.sort()
                    recorded = await self._insert_events(conn, [prepared[i] for i in written])
            except _Redo as redo:
                results[redo.index] = redo.error
                todo = [i for i in todo if results[i] is None]
                continue
            except EventStoreError:
                # An event id already recorded: find the culprit by appending one by one.
                await self._each(batches, written, results)
                break
            except Exception as exc:
                if unreachable(exc):
                    raise
                # data of one batch that the database refused: each batch on its own
                await self._each(batches, [i for i in todo if results[i] is None], results)
                break
            for i, recorded_events in zip(written, recorded, strict=True):
                results[i] = recorded_events
            break
        done: list[list[RecordedEvent] | EventStoreError] = []
        for result in results:
            assert result is not None, "every batch has a result"
            done.append(result)
        return done

    async def _each(
        self,
        batches: Sequence[Append],
        indexes: list[int],
        results: list[list[RecordedEvent] | EventStoreError | None],
    ) -> None:
        """:meth:`append_each` of ``batches[i]`` for each ``i`` of ``indexes``, into ``results``."""
        answers = await self.append_each([batches[i] for i in indexes])
        for i, answer in zip(indexes, answers, strict=True):
            results[i] = answer

    async def _write_state(
        self, conn: AsyncConnection, prepared: _Prepared
    ) -> EventStoreError | None:
        """Statement 1: stream row, command id, pending acks, gate, handled gate.

        Returns None on success, else the error; a ConcurrencyError (or stream type mismatch)
        wrote nothing, a DuplicateCommand left writes that must be rolled back.
        """
        batch = prepared.batch
        statement = _STATE_NEW if batch.expected_version == 0 else _STATE_EXISTING
        row = (await conn.execute(statement, prepared.state_params)).one()
        if not row.stream_ok:
            return await self._conflict(conn, batch)
        if batch.command_id is not None and not row.command_ok:
            return DuplicateCommand(batch.stream_id, batch.command_id)
        return None

    async def _conflict(self, conn: AsyncConnection, batch: Append) -> EventStoreError:
        row = (
            await conn.execute(
                select(streams.c.version, streams.c.stream_type).where(
                    streams.c.stream_id == batch.stream_id
                )
            )
        ).one_or_none()
        actual = 0 if row is None else int(row.version)
        if (
            row is not None
            and actual == batch.expected_version
            and row.stream_type != batch.stream_type
        ):
            return EventStoreError(
                f"stream {batch.stream_id!r} is a {row.stream_type!r} stream, "
                f"not {batch.stream_type!r}"
            )
        return ConcurrencyError(batch.stream_id, batch.expected_version, actual)

    async def _insert_events(
        self, conn: AsyncConnection, prepared: Sequence[_Prepared]
    ) -> list[list[RecordedEvent]]:
        """Statement 2: insert the events of every batch, under the global append lock."""
        stream_ids: list[str] = []
        stream_types: list[str] = []
        versions: list[int] = []
        event_ids: list[Any] = []
        types: list[str] = []
        data: list[str] = []
        metadata: list[str] = []
        for item in prepared:
            batch = item.batch
            for version, event in enumerate(batch.events, start=batch.expected_version + 1):
                stream_ids.append(batch.stream_id)
                stream_types.append(batch.stream_type)
                versions.append(version)
                event_ids.append(event.event_id)
                types.append(event.type)
            data.extend(item.data)
            metadata.extend(item.metadata)
        if not versions:
            return [[] for _ in prepared]
        params = {
            "stream_ids": stream_ids,
            "stream_types": stream_types,
            "versions": versions,
            "event_ids": event_ids,
            "types": types,
            "data": data,
            "metadata": metadata,
        }
        try:
            rows = (await conn.execute(_INSERT_EVENTS, params)).all()
        except IntegrityError as exc:
            raise EventStoreError(f"event not appended: {exc.orig}") from exc
        stored: dict[tuple[str, int], tuple[int, datetime]] = {
            (row.stream_id, row.version): (row.position, row.recorded_at) for row in rows
        }
        result: list[list[RecordedEvent]] = []
        for item in prepared:
            batch = item.batch
            recorded: list[RecordedEvent] = []
            for version, event in enumerate(batch.events, start=batch.expected_version + 1):
                position, recorded_at = stored[(batch.stream_id, version)]
                recorded.append(
                    RecordedEvent(
                        position=position,
                        stream_id=batch.stream_id,
                        stream_type=batch.stream_type,
                        version=version,
                        event_id=event.event_id,
                        type=event.type,
                        data=event.data,
                        metadata=event.metadata,
                        recorded_at=recorded_at,
                    )
                )
            result.append(recorded)
        return result

    # ------------------------------------------------------------------ commands, snapshots

    async def command_reply(self, stream_id: str, command_id: str) -> dict[str, Any] | None:
        """The reply recorded with the command id ({} if none was given), None if unseen."""
        row = await self.hot.fetchrow(
            _COMMAND_REPLY, {"stream_id": stream_id, "command_id": command_id}
        )
        if row is None:
            return None
        reply: dict[str, Any] = json.loads(row[0])
        return reply

    async def save_snapshot(self, stream_id: str, version: int, state: dict[str, Any]) -> None:
        """Store the stream's state at ``version`` (an older snapshot never replaces a newer)."""
        statement = pg_insert(snapshots).values(stream_id=stream_id, version=version, state=state)
        statement = statement.on_conflict_do_update(
            index_elements=[snapshots.c.stream_id],
            set_={
                "version": statement.excluded.version,
                "state": statement.excluded.state,
                "recorded_at": func.now(),
            },
            where=snapshots.c.version <= statement.excluded.version,
        )
        async with self._autocommit.connect() as conn:
            await conn.execute(statement)

    async def load_snapshot(self, stream_id: str) -> tuple[int, dict[str, Any]] | None:
        """(version, state) of the stream's newest snapshot, or None."""
        query = select(snapshots.c.version, snapshots.c.state).where(
            snapshots.c.stream_id == stream_id
        )
        async with self._autocommit.connect() as conn:
            row = (await conn.execute(query)).one_or_none()
        return None if row is None else (int(row.version), dict(row.state))
