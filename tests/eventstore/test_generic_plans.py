"""The hot statements run with generic plans (``cardroom_eventstore.hot``): each must still
find its rows by index on a large database, whatever the values bound at run time."""

from __future__ import annotations

import asyncio
import re
import uuid
from types import ModuleType
from typing import Any

import asyncpg
import pytest
from cardroom_eventstore import EventStore, appends, deadlines, gates, log, readmodels, tracking
from cardroom_eventstore.hot import GENERIC_PLANS, Statement
from cardroom_eventstore.store import RELAXED_POOL_SIZE

# Every table a hot statement touches, big enough that a scan of one costs far more than an
# index lookup (planned on statistics, so the table is analysed after it is filled).
_FILL = """
INSERT INTO streams (stream_id, stream_type, version)
SELECT 'g' || i, 'highcard', 10 FROM generate_series(1, 10000) i;
INSERT INTO events (stream_id, stream_type, version, event_id, type, data, metadata)
SELECT 'g' || i, 'highcard', v, gen_random_uuid(), 'BetPlaced', '{"amount": 1}',
       '{"to": ["a", "b"]}'
FROM generate_series(1, 10000) i, generate_series(1, 10) v;
INSERT INTO gates (stream_id, version, remaining, released_at, handled)
SELECT 'g' || i, v, 0, now(), true FROM generate_series(1, 10000) i, generate_series(1, 10) v;
INSERT INTO pending_acks (stream_id, version, player_id, gate_version)
SELECT 'g' || i, 11, p, 11 FROM generate_series(1, 5000) i, unnest(ARRAY['a', 'b']) p;
INSERT INTO commands (stream_id, command_id, reply)
SELECT 'g' || i, 'c' || v, '{}' FROM generate_series(1, 10000) i, generate_series(1, 5) v;
INSERT INTO checkpoints (name, position)
SELECT 'projector:g' || i, 1 FROM generate_series(1, 10000) i;
INSERT INTO notifications (game_id, player_id, seq, version, payload)
SELECT 'g' || i, p, 5, 11, '{}' FROM generate_series(1, 5000) i, unnest(ARRAY['a', 'b']) p;
INSERT INTO views (game_id, player_id, version, view, actions, seq)
SELECT 'g' || i, p, 10, '{}', '[]', 5 FROM generate_series(1, 10000) i, unnest(ARRAY['a', 'b']) p;
INSERT INTO tables (game_id, game_type, status, summary, version)
SELECT 'g' || i, 'highcard', 'playing', '{}', 10 FROM generate_series(1, 10000) i;
INSERT INTO deadline_versions (game_id, version, active)
SELECT 'g' || i, 10, i % 10 = 0 FROM generate_series(1, 10000) i;
INSERT INTO deadlines (game_id, key, version, due_at)
SELECT 'g' || i, 'turn', 10, now() + interval '1 hour' FROM generate_series(1, 10000) i
"""

_ID = str(uuid.uuid4())
# A value for every parameter name of the hot statements (a new name fails the test below
# until it is given one here). Names that are an array in one statement and a scalar in
# another have both forms (``_ARRAYS``).
_SAMPLE: dict[str, Any] = {
    "stream_id": "g5",
    "stream_type": "highcard",
    "expected": 10,
    "new_version": 11,
    "command_id": "cx",
    "reply": "{}",
    "gate": 11,
    "ack_versions": [11, 11],
    "ack_players": ["a", "b"],
    "ack_gates": [11, -11],
    "holding": 1,
    "handled_gate": 10,
    "versions": [11],
    "event_ids": [_ID],
    "types": ["BetPlaced"],
    "data": ["{}"],
    "metadata": ["{}"],
    "stream_ids": ["g5", "g6"],
    "stream_types": ["highcard", "highcard"],
    "new_versions": [11, 11],
    "command_ids": ["cx", None],
    "replies": ["{}", None],
    "handled": [None, 10],
    "ack_of": [1, 1],
    "event_of": [1, 2],
    "streams": ["g5", "g7"],
    "players": ["a", "b"],
    "version": 11,
    "player_id": "a",
    "games": ["g5", "g6"],
    "seqs": [6, 6],
    "payloads": ["{}", "{}"],
    "views": ["{}", "{}"],
    "actions": ["[]", "[]"],
    "game_types": ["highcard", "highcard"],
    "statuses": ["playing", "playing"],
    "summaries": ["{}", "{}"],
    "names": ["projector:g5", "projector:g6"],
    "positions": [5, 6],
    "game": "g5",
    "active": True,
    "keys": ["turn"],
    "secs": [30.0],
    "since": [10],
    "ack_timeout": 60.0,
    "waited": ["a"],
    "key": "turn",
    "upto": [10, 10],
}
_ARRAYS: dict[str, Any] = {
    "expected": [10, 10],
    "versions": [11, 11],
    "event_ids": [_ID, str(uuid.uuid4())],
    "types": ["BetPlaced", "BetPlaced"],
    "data": ["{}", "{}"],
    "metadata": ["{}", "{}"],
}
_MODULES: tuple[ModuleType, ...] = (appends, log, gates, tracking, readmodels, deadlines)


def _statements(module: ModuleType) -> list[tuple[str, Statement]]:
    """The module's statements: its Statements, and those of its dicts of them."""
    short = module.__name__.rsplit(".", 1)[-1]
    found: list[tuple[str, Statement]] = []
    for name, value in vars(module).items():
        if isinstance(value, Statement):
            found.append((f"{short}.{name}", value))
        elif isinstance(value, dict):
            found += [
                (f"{short}.{name}[{key}]", v)
                for key, v in value.items()
                if isinstance(v, Statement)
            ]
    return found


_STATEMENTS = [named for module in _MODULES for named in _statements(module)]
# a sequential scan of a table (a CTE or a function's rows are scanned too; those are fine)
_TABLES = (
    "streams|events|gates|pending_acks|commands|checkpoints|notifications|views|tables"
    "|deadlines|deadline_versions"
)
_SEQ_SCAN = re.compile(rf"Seq Scan on ({_TABLES})\b")
_INDEX_SCAN = re.compile(r"(Bitmap Index Scan|Index Scan|Index Only Scan)( Backward)? (on|using) ")


def _whole_reads(plan: list[str]) -> list[str]:
    """The plan's reads of more than the rows asked for: a table scanned, an index read
    without a condition (a whole table hashed through its index), a game's events found by
    the game alone (every event of the game read for one of them)."""
    found = [line.strip() for line in plan if _SEQ_SCAN.search(line)]
    for line, after in zip(plan, [*plan[1:], ""], strict=True):
        if not _INDEX_SCAN.search(line):
            continue
        if "Index Cond" not in after:
            found.append(f"{line.strip()} (no condition)")
        elif "uq_events_stream_id_version" in line and "version" not in after:
            found.append(f"{line.strip()} {after.strip()}")
    return found


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        items = ",".join("NULL" if v is None else '"' + str(v) + '"' for v in value)
        return "'{" + items + "}'"
    return "'" + str(value).replace("'", "''") + "'"


def test_every_hot_statement_is_checked() -> None:
    names = {name for name, _ in _STATEMENTS}
    assert {
        "appends._APPEND_ONE",
        "gates._ACK_MANY",
        "deadlines._WRITE",
        "log.HISTORIES",
        "readmodels._LIVE[views]",
    } <= names
    assert len(names) >= 15


async def test_the_hot_pools_plan_generically_without_scans(store: EventStore) -> None:
    for pool in (store.hot, store.relaxed):
        async with pool.connection() as conn:
            assert await conn.fetchval("SHOW plan_cache_mode") == "force_generic_plan"
            assert await conn.fetchval("SHOW enable_seqscan") == "off"
    assert GENERIC_PLANS == {"plan_cache_mode": "force_generic_plan", "enable_seqscan": "off"}


@pytest.mark.parametrize("tables", ["empty", "filled"])
async def test_generic_plans_use_the_indexes(store: EventStore, tables: str) -> None:
    """On a large analysed database, and on the empty one a new deployment's services prepare
    their statements on (and keep those plans until their tables are next analysed)."""
    found: dict[str, str] = {}
    async with store.hot.connection() as conn:  # (its plans are generic: the test above)
        if tables == "filled":
            await conn.execute(_FILL)
            await conn.execute("ANALYZE")
        for name, statement in _STATEMENTS:
            await conn.execute(f"PREPARE checked AS {statement.sql}")
            try:
                plan = await _plan(conn, statement)
            finally:
                await conn.execute("DEALLOCATE checked")
            if whole := _whole_reads(plan):
                found[name] = "reads more than it asks for: " + "; ".join(whole)
                found[name] += "\n" + "\n".join(plan)
    assert not found, "\n\n".join(f"{name}: {why}" for name, why in found.items())


async def _plan(conn: Any, statement: Statement) -> list[str]:
    """The plan of ``checked`` (the statement) for the sample values."""
    error: Exception | None = None
    for values in (_SAMPLE, {**_SAMPLE, **_ARRAYS}):
        args = ", ".join(_literal(v) for v in statement.args(values))
        try:
            rows = await conn.fetch(f"EXPLAIN EXECUTE checked({args})")
        except asyncpg.PostgresError as exc:  # a name that is an array here: the other sample
            error = exc
            continue
        return [row[0] for row in rows]
    raise AssertionError(f"no sample binds: {error}")


@pytest.mark.parametrize("size", [2, 8])
async def test_the_hot_pools_hold_at_most_their_size(database_url: str, size: int) -> None:
    """An operator bounds the store's own connections (``CARDROOM_DB_HOT_POOL``): however
    many hot statements run at once, they share that many connections, and the relaxed
    pool never more."""
    store = await EventStore.connect(database_url, hot_pool_size=size)
    try:
        for pool in (store.hot, store.relaxed):
            backends: set[int] = set()

            async def one(pool: Any = pool, backends: set[int] = backends) -> None:
                async with pool.connection() as conn:
                    # held long enough that every statement runs beside the others
                    backends.add(await conn.fetchval("SELECT pg_backend_pid() FROM pg_sleep(0.05)"))

            await asyncio.gather(*(one() for _ in range(12)))
            allowed = size if pool is store.hot else min(size, RELAXED_POOL_SIZE)
            assert len(backends) == allowed, (pool.name, backends)
    finally:
        await store.close()
