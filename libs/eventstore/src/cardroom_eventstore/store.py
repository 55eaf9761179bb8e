"""The PostgreSQL event store: appends, reads, acknowledgement gates, checkpoints.

Hot paths are written as a few hand-written SQL statements (SQLAlchemy ``text``). An append
to a running game is one statement on an autocommit connection, one round trip whatever it
carries: the stream row, everything owed with it (command id, pending acks, gate, handled
gate) and the events. A new stream and a group commit take a transaction: BEGIN, one
statement per stream row and what it owes, one statement that inserts every event, COMMIT.
Other single-statement operations (reads, ``ack``) also run on autocommit connections.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from sqlalchemy import delete, func, select, text, update
from sqlalchemy import event as sa_event
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from .hot import HotPool, Statement, unreachable
from .jsontext import json_text
from .model import (
    SHOWN,
    TO,
    AckResult,
    Append,
    ConcurrencyError,
    DuplicateCommand,
    EventStoreError,
    RecordedEvent,
)
from .schema import checkpoints, events, gates, pending_acks, snapshots, streams
from .stats import STATS

log = logging.getLogger("cardroom.eventstore")

#: Connections of the hot statements' pool, besides the SQLAlchemy engine's (see :mod:`.hot`).
HOT_POOL_SIZE = 8
RELAXED_POOL_SIZE = 4

#: The channel every append NOTIFYs (inside its transaction, so at commit).
NOTIFY_CHANNEL = "cardroom_events"

#: The first key of the per-game advisory locks of ack batches (two-key advisory locks are a
#: space apart from the one-key global append lock).
ACK_LOCK_CLASS = int.from_bytes(b"ack", "big")

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

# The pending row is the arbiter: whoever deletes it owns the decrement. The gate's row lock
# serialises concurrent decrements (a waiter re-reads ``remaining`` after the winner commits),
# so exactly one ack sees the count reach 0. ``open`` reads the statement's snapshot: a
# concurrent ack it does not see makes it false (the reader asks again), never wrongly true.
_ACK = Statement(
    """
WITH d AS (
    DELETE FROM pending_acks
    WHERE stream_id = CAST(:stream_id AS text) AND version = CAST(:version AS integer)
      AND player_id = CAST(:player_id AS text)
    RETURNING gate_version
),
u AS (
    UPDATE gates
    SET remaining = gates.remaining - 1,
        released_at = CASE WHEN gates.remaining = 1 THEN now() ELSE gates.released_at END
    FROM d
    WHERE gates.stream_id = CAST(:stream_id AS text) AND gates.version = d.gate_version
    RETURNING gates.version, gates.remaining
)
SELECT (SELECT count(*) FROM d) AS deleted, (SELECT version FROM u WHERE remaining = 0) AS released,
       (SELECT gate_version FROM d) = 0 AS away,
       NOT EXISTS (
           SELECT 1 FROM pending_acks
           WHERE stream_id = CAST(:stream_id AS text) AND gate_version <> 0
             AND NOT (version = CAST(:version AS integer) AND player_id = CAST(:player_id AS text))
       ) AS open
"""
)

# The same for many acks at once (``i`` numbers them): the pending rows the batch deletes count
# their gates down by how many each lost, and of the acks that bring a gate to 0 the last one
# reports the release (as if they came one after the other). ``open`` leaves out the rows this
# very statement deletes (its snapshot still sees them). Two batches would lock their rows in no
# set order and could deadlock, so a batch first takes a transaction-level advisory lock per
# game, in game order (``l``, which the delete joins, so it is read first), and batches of the
# same games take turns.
_ACK_MANY = Statement(
    f"""
WITH a AS (
    SELECT * FROM unnest(
        CAST(:streams AS text[]), CAST(:versions AS integer[]), CAST(:players AS text[])
    ) WITH ORDINALITY AS a(stream_id, version, player_id, i)
),
l AS (
    SELECT count(*) AS n FROM (
        SELECT pg_advisory_xact_lock({ACK_LOCK_CLASS}, hashtext(g.stream_id))
        FROM (SELECT DISTINCT stream_id FROM a ORDER BY stream_id) AS g
    ) AS locked
),
once AS (  -- an ack repeated in the batch: the first one counts, the others are refused
    SELECT DISTINCT ON (stream_id, version, player_id) * FROM a
    ORDER BY stream_id, version, player_id, i
),
d AS (
    DELETE FROM pending_acks p USING once AS a, l
    WHERE p.stream_id = a.stream_id AND p.version = a.version AND p.player_id = a.player_id
    RETURNING a.i, p.stream_id, p.gate_version
),
c AS (
    SELECT stream_id, gate_version, count(*) AS n, max(i) AS last
    FROM d WHERE gate_version <> 0 GROUP BY stream_id, gate_version
),
u AS (
    UPDATE gates g
    SET remaining = g.remaining - c.n,
        released_at = CASE WHEN g.remaining = c.n THEN now() ELSE g.released_at END
    FROM c
    WHERE g.stream_id = c.stream_id AND g.version = c.gate_version
    RETURNING g.version, g.remaining, c.last
)
SELECT a.i, EXISTS (SELECT 1 FROM d WHERE d.i = a.i) AS deleted, r.version AS released,
       EXISTS (SELECT 1 FROM d WHERE d.i = a.i AND d.gate_version = 0) AS away,
       r.version IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM pending_acks p
           WHERE p.stream_id = a.stream_id AND p.gate_version <> 0
             AND NOT EXISTS (
                 SELECT 1 FROM a AS mine
                 WHERE mine.stream_id = p.stream_id AND mine.version = p.version
                   AND mine.player_id = p.player_id)
       ) AS open
FROM a LEFT JOIN u AS r ON r.last = a.i AND r.remaining = 0
ORDER BY a.i
"""
)

#: Tries of a batch of acks that met a deadlock (with another batch, or an excuse).
ACK_TRIES = 3

#: The versions a row can hold (``integer`` columns): an ack of any other names no event, and
#: is refused here rather than sent to fail the statement it shares with other players' acks.
VERSIONS = range(-(2**31), 2**31)

NOT_GATING = 0
"""The ``gate_version`` of an acknowledgement that is owed but holds no gate (no gate has
version 0): an away player's, see :meth:`EventStore.excuse`."""

# True when no acknowledgement that holds the gate is owed for the stream.
_OPEN_SQL = f"""NOT EXISTS (
    SELECT 1 FROM pending_acks
    WHERE stream_id = CAST(:stream_id AS text) AND gate_version <> {NOT_GATING}
)"""

_GATE_OPEN = Statement(f"SELECT {_OPEN_SQL}")

# The gate check of a release's follow-up: when the game is not open, the released gates
# are marked handled in the same statement (whatever opens the game releases a gate of its
# own, whose follow-up moves the game on); when it is open they are not, and the follow-up's
# append marks them (``Append.handled_gate``).
# (A data-modifying WITH runs to completion whether or not the query reads it.)
_GATE_OPEN_MARKING = Statement(
    f"""
WITH o AS (SELECT {_OPEN_SQL} AS open),
m AS (
    UPDATE gates SET handled = true
    FROM o
    WHERE NOT o.open AND gates.stream_id = CAST(:stream_id AS text)
      AND gates.version = ANY(CAST(:versions AS integer[]))
)
SELECT o.open FROM o
"""
)

_MARK_HANDLED = Statement(
    """
UPDATE gates SET handled = true
WHERE stream_id = CAST(:stream_id AS text) AND version = CAST(:version AS integer)
"""
)

_COMMAND_REPLY = Statement(
    """
SELECT CAST(reply AS text) FROM commands
WHERE stream_id = CAST(:stream_id AS text) AND command_id = CAST(:command_id AS text)
"""
)

_DEBTORS = text(
    """
SELECT DISTINCT player_id FROM pending_acks
WHERE stream_id = CAST(:stream_id AS text) AND gate_version <> 0
  AND gate_version <= CAST(:gate AS integer)
"""
)

# Lock the players' gating rows first (a concurrent ack either deleted a row already, and it is
# skipped, or waits and then deletes the row we moved, which counts nothing down), then count
# each gate down by the rows it lost; whoever brings ``remaining`` to 0 reports the release.
_EXCUSE = text(
    """
WITH old AS (
    SELECT version, player_id, gate_version FROM pending_acks
    WHERE stream_id = CAST(:stream_id AS text)
      AND player_id = ANY(CAST(:players AS text[])) AND gate_version <> 0
    FOR UPDATE
),
moved AS (
    UPDATE pending_acks p SET gate_version = 0 FROM old
    WHERE p.stream_id = CAST(:stream_id AS text) AND p.version = old.version
      AND p.player_id = old.player_id
    RETURNING old.gate_version
)
SELECT gate_version, count(*) AS n FROM moved GROUP BY gate_version ORDER BY gate_version
"""
)

_RELEASE = text(
    """
UPDATE gates
SET remaining = remaining - CAST(:n AS integer),
    released_at = CASE WHEN remaining = CAST(:n AS integer) THEN now() ELSE released_at END
WHERE stream_id = CAST(:stream_id AS text) AND version = CAST(:version AS integer)
RETURNING remaining
"""
)

# Creates the tracking record on first use; ON CONFLICT DO UPDATE locks the row either way, so
# two trackers of one name serialise and the second starts from the first one's checkpoint.
_TRACK = text(
    """
INSERT INTO checkpoints (name, position) VALUES (CAST(:name AS text), 0)
ON CONFLICT (name) DO UPDATE SET position = checkpoints.position
RETURNING position
"""
)

# The same for many names at once (in the order given: sorted by the caller).
_TRACK_MANY = Statement(
    """
INSERT INTO checkpoints (name, position)
SELECT n.name, 0 FROM unnest(CAST(:names AS text[])) WITH ORDINALITY AS n(name, i) ORDER BY n.i
ON CONFLICT (name) DO UPDATE SET position = checkpoints.position
RETURNING name, position
"""
)

_ADVANCE_MANY = Statement(
    """
UPDATE checkpoints c SET position = u.position, updated_at = now()
FROM unnest(CAST(:names AS text[]), CAST(:positions AS bigint[])) AS u(name, position)
WHERE c.name = u.name
"""
)

_EVENT_COLUMNS = (
    events.c.position,
    events.c.stream_id,
    events.c.stream_type,
    events.c.version,
    events.c.event_id,
    events.c.type,
    events.c.data,
    events.c["metadata"],
    events.c.recorded_at,
)

# connect() arguments SQLAlchemy's asyncpg dialect consumes itself.
_DIALECT_ONLY_ARGS = (
    "prepared_statement_cache_size",
    "prepared_statement_name_func",
    "async_creator_fn",
    "async_fallback",
)


def _count_connections(engine: AsyncEngine) -> None:
    """Count the engine's connections opened and invalidated (stats.STATS), once per engine."""
    sync = engine.sync_engine
    if sa_event.contains(sync, "connect", _engine_opened):
        return
    sa_event.listen(sync, "connect", _engine_opened)
    sa_event.listen(sync, "invalidate", _engine_lost)


def _engine_opened(*_: Any) -> None:
    STATS.opened("engine")


def _engine_lost(*_: Any) -> None:
    STATS.lost("engine")


def _listener_args(engine: AsyncEngine, connect_args: dict[str, Any]) -> dict[str, Any]:
    """asyncpg.connect() arguments for the dedicated LISTEN connection, as the engine's."""
    _, params = engine.dialect.create_connect_args(engine.url)
    merged = {**params, **connect_args}
    return {k: v for k, v in merged.items() if k not in _DIALECT_ONLY_ARGS}


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


class TrackingMany:
    """Several tracking records locked in one transaction (see :meth:`EventStore.tracking_many`).

    ``positions`` maps each name to its checkpoint; :meth:`advance` moves some of them, in the
    same transaction as the caller's writes on ``conn``.
    """

    def __init__(
        self, conn: PoolConnectionProxy[asyncpg.Record], positions: dict[str, int]
    ) -> None:
        self.conn = conn
        self.positions = positions

    async def advance(self, moves: dict[str, int]) -> None:
        for name, position in moves.items():
            if position < self.positions[name]:
                raise ValueError(f"checkpoint {name!r} cannot go back from {self.positions[name]}")
        if moves:
            names = sorted(moves)
            params = {"names": names, "positions": [moves[n] for n in names]}
            await self.conn.execute(_ADVANCE_MANY.sql, *_ADVANCE_MANY.args(params))
            self.positions.update(moves)


class Tracking:
    """A projection's tracking record, inside the projection's own transaction.

    ``conn`` is the transaction for the projection's writes; ``position`` is the checkpoint
    (locked for the transaction); :meth:`advance` moves it in the same transaction, so the
    projection's effects and its checkpoint commit, or roll back, together.
    """

    def __init__(self, conn: AsyncConnection, name: str, position: int) -> None:
        self.conn = conn
        self.name = name
        self.position = position

    async def advance(self, position: int) -> None:
        """Record that everything up to ``position`` is processed (commits with the block)."""
        if position < self.position:
            raise ValueError(f"checkpoint {self.name!r} cannot go back from {self.position}")
        await self.conn.execute(
            update(checkpoints)
            .where(checkpoints.c.name == self.name)
            .values(position=position, updated_at=func.now())
        )
        self.position = position


class EventStore:
    """The event store over one SQLAlchemy async engine (asyncpg)."""

    def __init__(self, engine: AsyncEngine, listener_args: dict[str, Any] | None = None) -> None:
        #: Public, so other code can run its own transactions on the same database.
        self.engine = engine
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._listener_args = (
            _listener_args(engine, {}) if listener_args is None else dict(listener_args)
        )
        self._listener: asyncpg.Connection[asyncpg.Record] | None = None
        #: The hot statements' own pool (appends to running games, gate checks, acks).
        self.hot = HotPool(self._listener_args, HOT_POOL_SIZE)
        #: The same for derived data whose loss in a database crash is repaired by whoever
        #: reads it (deadlines, the handled mark of a gate): commits that do not wait for
        #: the WAL flush. Never for events, acks or anything owed with them.
        self.relaxed = HotPool(
            {**self._listener_args, "server_settings": {"synchronous_commit": "off"}},
            RELAXED_POOL_SIZE,
            name="relaxed",
        )
        _count_connections(engine)
        self._listener_lock = asyncio.Lock()
        self._listened_before = False
        self._generation = 0
        self._seen_generation = 0
        self._changed = asyncio.Event()

    @classmethod
    async def connect(cls, url: str, **engine_kwargs: Any) -> EventStore:
        """An event store on ``url`` (``postgresql+asyncpg://...``); kwargs go to the engine."""
        engine = create_async_engine(url, **engine_kwargs)
        return cls(engine, _listener_args(engine, engine_kwargs.get("connect_args", {})))

    @property
    def connect_args(self) -> dict[str, Any]:
        """``asyncpg.connect()`` arguments for a connection of one's own to this store's
        database (a worker process's, say)."""
        return dict(self._listener_args)

    async def close(self) -> None:
        """Close the listener connection and dispose of the engine's pool."""
        listener, self._listener = self._listener, None
        if listener is not None and not listener.is_closed():
            await listener.close()
        await self.hot.close()
        await self.relaxed.close()
        await self.engine.dispose()

    # ------------------------------------------------------------------ appends

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

    # ------------------------------------------------------------------ reads

    async def read_stream(
        self, stream_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """The stream's events with from_version <= version <= to_version, in version order."""
        query = select(*_EVENT_COLUMNS).where(
            events.c.stream_id == stream_id, events.c.version >= from_version
        )
        if to_version is not None:
            query = query.where(events.c.version <= to_version)
        query = query.order_by(events.c.version)
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [RecordedEvent(*row) for row in rows]

    async def stream_version(self, stream_id: str) -> int:
        """The stream's current version; 0 when it does not exist."""
        async with self._autocommit.connect() as conn:
            version = await conn.scalar(
                select(streams.c.version).where(streams.c.stream_id == stream_id)
            )
        return 0 if version is None else int(version)

    async def stream_type(self, stream_id: str) -> str | None:
        """The stream's type (the game), or None when it does not exist."""
        async with self._autocommit.connect() as conn:
            value = await conn.scalar(
                select(streams.c.stream_type).where(streams.c.stream_id == stream_id)
            )
        return None if value is None else str(value)

    async def behind(self, after_position: int, cap: int = 100_000) -> tuple[int, datetime | None]:
        """How far a follower at ``after_position`` is behind: the events committed after it
        (counted up to ``cap``) and the commit time of the first of them (None if none)."""
        later = select(events.c.position).where(events.c.position > after_position)
        count = select(func.count()).select_from(later.limit(cap).subquery())
        first = (
            select(events.c.recorded_at)
            .where(events.c.position > after_position)
            .order_by(events.c.position)
            .limit(1)
        )
        async with self._autocommit.connect() as conn:
            n = int(await conn.scalar(count) or 0)
            oldest = await conn.scalar(first) if n else None
        return n, oldest

    async def read_all(self, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """Up to ``limit`` events with position > after_position, in position (commit) order.

        Positions may have gaps (rolled-back appends), but an event never becomes visible
        below a position already read, so tailing "after the last position seen" skips none.
        """
        query = (
            select(*_EVENT_COLUMNS)
            .where(events.c.position > after_position)
            .order_by(events.c.position)
            .limit(limit)
        )
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [RecordedEvent(*row) for row in rows]

    # ------------------------------------------------------------------ notifications

    # The timeout is part of the contract (a tailing reader re-reads at least that often).
    async def wait_for_append(self, timeout: float) -> bool:
        """Wait until an append commits (LISTEN on ``cardroom_events``), at most ``timeout`` s.

        True when an append was notified since the previous call returned (possibly before
        this call), or when the listener connection had died and was re-established (appends
        may have been missed: read again). False on timeout. The first call starts listening.
        """
        reconnected = await self._ensure_listener()
        if reconnected or self._generation != self._seen_generation:
            self._seen_generation = self._generation
            return True
        changed = self._changed
        try:
            async with asyncio.timeout(timeout):
                await changed.wait()
        except TimeoutError:
            return False
        # Woken by a notification or by the listener's death; in the latter case appends may
        # have been missed (True either way) and listening resumes before returning.
        await self._ensure_listener()
        self._seen_generation = self._generation
        return True

    async def _ensure_listener(self) -> bool:
        """Open the listener connection if needed; True if it replaced one that died."""
        if self._listener is not None and not self._listener.is_closed():
            return False
        async with self._listener_lock:
            if self._listener is not None and not self._listener.is_closed():
                return False
            listener = await asyncpg.connect(**self._listener_args)
            try:
                await listener.add_listener(NOTIFY_CHANNEL, self._on_notify)
            except BaseException:
                await listener.close()
                raise
            listener.add_termination_listener(self._on_terminate)
            STATS.opened("listener")
            self._listener = listener
            reconnected = self._listened_before
            self._listened_before = True
            return reconnected

    def _wake(self) -> None:
        self._generation += 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _on_notify(
        self,
        connection: asyncpg.Connection[asyncpg.Record],
        pid: int,
        channel: str,
        payload: object,
    ) -> None:
        self._wake()

    def _on_terminate(self, connection: asyncpg.Connection[asyncpg.Record]) -> None:
        # Wake the waiters: the next wait_for_append reconnects and reports a possible miss.
        if connection is self._listener:
            STATS.lost("listener")
            self._wake()

    # ------------------------------------------------------------------ acknowledgement gates

    async def ack(self, stream_id: str, version: int, player_id: str) -> AckResult:
        """Acknowledge one event version for one player (one statement, one round trip)."""
        if version not in VERSIONS:
            return AckResult(accepted=False)  # no such event: a column cannot hold it
        params = {"stream_id": stream_id, "version": version, "player_id": player_id}
        row = await self.hot.fetchrow(_ACK, params)
        assert row is not None
        if not row["deleted"]:
            return AckResult(accepted=False)
        released = row["released"]
        return AckResult(
            accepted=True,
            released_gate=released,
            open=released is not None and row["open"],
            away=bool(row["away"]),
        )

    async def ack_many(self, acks: Sequence[tuple[str, int, str]]) -> list[AckResult]:
        """:meth:`ack` for many ``(stream, version, player)`` at once, in one statement.

        The results are those the acks would have had one after the other in this order,
        except ``open``, which holds as of the batch's commit (a later ack of the batch may
        open the game for an earlier release). A deadlock with another statement locking the
        same rows (an excuse) is retried. An ack of a version no column can hold is refused
        without the database, like an ack of a version that does not exist.
        """
        if not acks:
            return []
        valid = [a for a in acks if a[1] in VERSIONS]
        if len(valid) < len(acks):
            found = iter(await self.ack_many(valid))
            return [next(found) if a[1] in VERSIONS else AckResult(accepted=False) for a in acks]
        params = {
            "streams": [a[0] for a in acks],
            "versions": [a[1] for a in acks],
            "players": [a[2] for a in acks],
        }
        for attempt in range(ACK_TRIES):
            try:
                rows = await self.hot.fetch(_ACK_MANY, params)
                break
            except asyncpg.DeadlockDetectedError:
                if attempt == ACK_TRIES - 1:
                    raise
        return [
            AckResult(
                accepted=True,
                released_gate=r["released"],
                open=bool(r["open"]),
                away=bool(r["away"]),
            )
            if r["deleted"]
            else AckResult(accepted=False)
            for r in rows
        ]

    async def pending(self, stream_id: str) -> dict[int, frozenset[str]]:
        """Event version -> the players who still owe its acknowledgement."""
        query = (
            select(pending_acks.c.version, pending_acks.c.player_id)
            .where(pending_acks.c.stream_id == stream_id)
            .order_by(pending_acks.c.version)
        )
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(query)).all()
        owed: dict[int, set[str]] = {}
        for version, player_id in rows:
            owed.setdefault(version, set()).add(player_id)
        return {version: frozenset(players) for version, players in owed.items()}

    async def pending_for_player(self, stream_id: str, player_id: str) -> list[int]:
        """The versions this player has not acknowledged yet, ascending."""
        query = (
            select(pending_acks.c.version)
            .where(pending_acks.c.stream_id == stream_id, pending_acks.c.player_id == player_id)
            .order_by(pending_acks.c.version)
        )
        async with self._autocommit.connect() as conn:
            return list((await conn.scalars(query)).all())

    async def addressed(self, stream_id: str, version: int, player_id: str) -> bool:
        """Whether the event at ``version`` was sent to the player (its ``metadata.to``)."""
        if version not in VERSIONS:
            return False
        query = select(events.c.metadata[TO].op("?")(player_id)).where(
            events.c.stream_id == stream_id,
            events.c.version == version,
            events.c.metadata.op("?")(SHOWN).is_not(True),
        )
        # an event whose addressees were shown versions of their own (``metadata.shown``)
        shown = select(events.c.version).where(
            events.c.stream_id == stream_id,
            events.c.metadata[SHOWN][player_id].as_integer() == version,
        )
        async with self._autocommit.connect() as conn:
            if await conn.scalar(query):
                return True
            return await conn.scalar(shown.limit(1)) is not None

    async def gate_open(self, stream_id: str, *, handled: Collection[int] = ()) -> bool:
        """True when no acknowledgement that holds the gate is owed for the stream (rows of
        ``gate_version`` :data:`NOT_GATING` are owed by away players and hold nothing).

        ``handled``: released gates whose follow-up the caller is looking for; if the game is
        not open, they are marked handled by the same statement (as
        :meth:`mark_gate_handled`: the release that opens the game takes their place), which
        saves a statement on every release that finds the game held by a newer gate.
        """
        if not handled:
            row = await self.hot.fetchrow(_GATE_OPEN, {"stream_id": stream_id})
            assert row is not None
            return bool(row[0])
        # the relaxed pool, as mark_gate_handled: a mark lost in a crash is sent again
        params = {"stream_id": stream_id, "versions": sorted(handled)}
        row = await self.relaxed.fetchrow(_GATE_OPEN_MARKING, params)
        assert row is not None
        return bool(row["open"])

    async def debtors(self, stream_id: str, gate: int = 2**31 - 1) -> set[str]:
        """The players who owe a gating acknowledgement of a gate up to ``gate``."""
        async with self._autocommit.connect() as conn:
            rows = await conn.scalars(_DEBTORS, {"stream_id": stream_id, "gate": gate})
            return {str(p) for p in rows}

    async def excuse(self, stream_id: str, players: Collection[str]) -> list[int]:
        """The players' owed acknowledgements stop holding the gate; returns the gates released.

        For away players: the rows stay (``gate_version`` :data:`NOT_GATING`) until they
        acknowledge them, so their sync still lists everything they missed; the acktracker's
        :meth:`ack` deletes such a row and counts no gate down. Each release is reported once,
        here or by an ack (the rows are locked first, gates counted down in ascending order).
        """
        if not players:
            return []
        released: list[int] = []
        async with self.engine.begin() as conn:
            counts = (
                await conn.execute(_EXCUSE, {"stream_id": stream_id, "players": sorted(players)})
            ).all()
            for gate_version, n in counts:
                remaining = await conn.scalar(
                    _RELEASE, {"stream_id": stream_id, "version": int(gate_version), "n": int(n)}
                )
                if remaining == 0:
                    released.append(int(gate_version))
        return released

    async def drop_pending(self, stream_id: str, player_id: str) -> list[int]:
        """Forget every acknowledgement the player owes; returns the gates this released.

        Like :meth:`ack`, each release is reported exactly once (by whoever removed the last
        pending row). Gates are decremented in ascending order, so concurrent drops cannot
        deadlock.
        """
        released: list[int] = []
        async with self.engine.begin() as conn:
            removed = await conn.scalars(
                delete(pending_acks)
                .where(pending_acks.c.stream_id == stream_id, pending_acks.c.player_id == player_id)
                .returning(pending_acks.c.gate_version)
            )
            counts = Counter(removed.all())
            for gate_version in sorted(counts):
                remaining = await conn.scalar(
                    _RELEASE,
                    {"stream_id": stream_id, "version": gate_version, "n": counts[gate_version]},
                )
                if remaining == 0:
                    released.append(gate_version)
        return released

    async def unhandled_releases(
        self, limit: int = 100, *, older_than: float = 0.0
    ) -> list[tuple[str, int]]:
        """Released gates whose follow-up has not been handled yet, oldest release first;
        with ``older_than``, only those released at least that many seconds ago (a release
        younger than that is most likely being handled right now)."""
        query = (
            select(gates.c.stream_id, gates.c.version)
            .where(gates.c.remaining == 0, gates.c.handled.is_(False))
            .order_by(gates.c.released_at, gates.c.stream_id, gates.c.version)
            .limit(limit)
        )
        if older_than > 0:
            since = func.now() - func.make_interval(0, 0, 0, 0, 0, 0, older_than)
            query = query.where(gates.c.released_at <= since)
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [(str(stream_id), int(version)) for stream_id, version in rows]

    async def mark_gate_handled(self, stream_id: str, version: int) -> None:
        """Mark the gate's follow-up as handled (see also ``Append.handled_gate``)."""
        # lost in a crash, the gate is found unhandled and its release sent again
        await self.relaxed.fetch(_MARK_HANDLED, {"stream_id": stream_id, "version": version})

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

    # ------------------------------------------------------------------ checkpoints

    async def checkpoint(self, name: str) -> int:
        """The position recorded under ``name``; 0 when none."""
        query = select(checkpoints.c.position).where(checkpoints.c.name == name)
        async with self._autocommit.connect() as conn:
            position = await conn.scalar(query)
        return 0 if position is None else int(position)

    @asynccontextmanager
    async def tracking(self, name: str) -> AsyncIterator[Tracking]:
        """A transaction with the tracking record ``name`` locked; see :class:`Tracking`.

        Commits when the block ends, rolls back (checkpoint included) when it raises.
        """
        async with self.engine.begin() as conn:
            position = await conn.scalar(_TRACK, {"name": name})
            yield Tracking(conn, name, int(position or 0))

    @asynccontextmanager
    async def tracking_many(self, names: Collection[str]) -> AsyncIterator[TrackingMany]:
        """:meth:`tracking` for several records in one transaction (a batch of projections),
        on a raw asyncpg connection of the relaxed pool: projections are derived data, and
        a commit lost in a crash loses their output and checkpoints together.

        The records are locked in name order, so two batches over the same names cannot
        deadlock; all of them commit, or roll back, together.
        """
        ordered = sorted(set(names))
        async with self.relaxed.connection() as conn, conn.transaction():
            rows = await conn.fetch(_TRACK_MANY.sql, *_TRACK_MANY.args({"names": ordered}))
            yield TrackingMany(conn, {str(r["name"]): int(r["position"]) for r in rows})
