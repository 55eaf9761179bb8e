"""``cardroom rebuild projector``: the projector's read models rebuilt from the first event
with the projector's own code (:func:`cardroom_projector.project_events`), compared with the
live rows, and replaced by the rebuilt ones with ``repair``.

Games are taken in chunks (:data:`CHUNK` games, or about :data:`CHUNK_EVENTS` events). A
chunk is one transaction that locks the chunk's projector checkpoints (the live projector
waits for them, so the rebuild goes exactly up to each checkpoint), reads the live rows and
the acknowledgements still owed (one statement each), reads the events up to each checkpoint
(one statement), folds each game, compares in memory, and replaces the rows of the games
that differ (one delete per table, one insert per kind of row).

The fold of a chunk (decoding the events, ``project_events``, the comparison) is pure CPU
work and the rest is waiting on PostgreSQL, so several chunks are in flight at once and their
folds run in worker processes (``workers``, default one per core; ``CARDROOM_REBUILD_WORKERS``;
0 folds in this process). A worker reads its chunk's events itself, on a connection of its
own (they are committed and never change), so that they do not cross a pipe. The workers
are forked, so they know every game this process has registered; where ``fork`` is not
available the fold runs in this process. The garbage collector waits while a rebuild runs:
its full passes over the heap cost more than the folds, which make no reference cycles.

Only the notifications still owed an acknowledgement are part of the model (see migration
0005): the fold counts every notification for ``seq`` (from the events' ``metadata.to``) but
builds only the owed ones.
"""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing
import multiprocessing.util
import os
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from cardroom_eventstore import EventStore
    from cardroom_eventstore.readmodels import StoredNotification, StoredView
    from cardroom_projector import Entry

PROJECTOR_TABLES = ("notifications", "views", "tables")

#: Games per transaction at most, and events per transaction about (a chunk closes once it
#: holds this many): chunks of like work keep the worker processes equally busy. Each chunk
#: costs about 7 ms of CPU besides its events (its statements, a worker's round trip): at
#: 2,000 events a quarter of a rebuild, at 5,000 an eighth (bench/README.md).
CHUNK = 100
CHUNK_EVENTS = 5000

_LIVE_SQL = {
    # the owed ones: an acknowledged row the acktracker's sweep has not deleted yet is not
    # part of the model (nothing reads it); a repair deletes it with the rest
    "notifications": (
        "SELECT n.game_id, n.player_id, n.seq, n.version, CAST(n.payload AS text) AS payload"
        " FROM notifications n JOIN pending_acks p ON p.stream_id = n.game_id"
        " AND p.version = n.version AND p.player_id = n.player_id"
        " WHERE n.game_id = ANY($1::text[])"
    ),
    "views": (
        "SELECT game_id, player_id, version, CAST(view AS text) AS view,"
        " CAST(actions AS text) AS actions, seq FROM views WHERE game_id = ANY($1::text[])"
    ),
    "tables": (
        "SELECT game_id, game_type, status, CAST(summary AS text) AS summary, version"
        " FROM tables WHERE game_id = ANY($1::text[])"  # not updated_at: when, not what
    ),
}
_JSON_COLUMNS = frozenset({"payload", "view", "actions", "summary"})

# Each game's events up to its checkpoint, one row per event with its JSON as text: a range
# of the (stream_id, version) index per game (LATERAL; without its ORDER BY the planner
# turns this into a join that scans the whole events table for every chunk). The rows of a
# game come in version order; the fold sorts them anyway (one pass over rows in order)
# rather than have PostgreSQL sort the whole chunk again. Building one JSON array per game
# in PostgreSQL instead (json_agg) cost the server about twice the CPU of a raw scan of the
# same rows, and on a small machine the server's CPU is the folds' (bench/README.md,
# "Session 7").
_HISTORY_SQL = """
SELECT d.game, h.stream_type, h.version, h.type, h.data, h.sent_to
FROM unnest(CAST($1 AS text[]), CAST($2 AS integer[])) AS d(game, done)
CROSS JOIN LATERAL (
  SELECT e.stream_type, e.version, e.type, CAST(e.data AS text) AS data,
         CAST(e.metadata -> 'to' AS text) AS sent_to
  FROM events e WHERE e.stream_id = d.game AND e.version <= d.done
  ORDER BY e.version
) AS h
"""

Rows = dict[str, dict[tuple[Any, ...], dict[str, Any]]]
#: per game: its type and its events as (version, type, data as JSON, metadata.to as JSON)
History = dict[str, tuple[str, list[tuple[int, str, str, str | None]]]]


async def _read_history(conn: Any, games: list[str], done: dict[str, int]) -> History:
    history: History = {}
    for game, stream_type, version, type_, data, sent_to in await conn.fetch(
        _HISTORY_SQL, games, [done[g] for g in games]
    ):
        if game not in history:
            history[game] = (stream_type, [])
        history[game][1].append((version, type_, data, sent_to))
    return history


# A worker process reads its chunks' events on a connection of its own: they are committed
# and never change (each game's up to its checkpoint, which the parent holds locked), and
# sending them from the parent through the pool's pipe (about 100 bytes of JSON per event)
# cost more CPU in both processes than the read itself (bench/README.md, "Session 7").
_worker_db: tuple[asyncio.AbstractEventLoop, Any] | None = None


def _start_worker(connect_args: dict[str, Any]) -> None:
    """A worker process's start: its connection, opened while the parent reads its first
    chunk's rows."""
    global _worker_db
    import asyncpg

    # forked from inside the parent's running loop, which Python 3.11 does not forget in the
    # child (3.12 does): this process runs a loop of its own
    asyncio.events._set_running_loop(None)
    loop = asyncio.new_event_loop()
    _worker_db = (loop, loop.run_until_complete(asyncpg.connect(**connect_args)))
    # a pool's worker leaves through multiprocessing's exit, which runs these
    multiprocessing.util.Finalize(None, _close_worker, exitpriority=10)


def _worker_history(games: list[str], done: dict[str, int]) -> History:
    if _worker_db is None:
        raise RuntimeError("not in a worker process started by _start_worker")
    loop, conn = _worker_db
    return loop.run_until_complete(_read_history(conn, games, done))


def _close_worker() -> None:
    global _worker_db
    if _worker_db is not None:
        loop, conn = _worker_db
        _worker_db = None
        loop.run_until_complete(conn.close())
        loop.close()


@dataclass
class ProjectorReport:
    tables: tuple[str, ...]
    games: int = 0
    rows: int = 0
    differences: list[str] = field(default_factory=list)
    replaced: int = 0  # games whose rebuilt rows were committed
    seconds: float = 0.0
    workers: int = 0  # processes that folded the games (0: this one)

    @property
    def equal(self) -> bool:
        return not self.differences


@dataclass
class _Job:
    """What a worker needs to fold one chunk: plain values (they cross a process boundary)."""

    games: list[str]
    tables: tuple[str, ...]
    repair: bool
    live: dict[str, list[tuple[Any, ...]]]  # table -> rows as read (JSON as text)
    live_columns: dict[str, list[str]]
    owed: dict[str, set[tuple[int, str]]]  # per game, (version, player) still owed an ack
    done: dict[str, int]  # per game, its last version projected (its checkpoint)
    # per game: its type and its events (:data:`_HISTORY_SQL`'s rows); None: the worker
    # reads them itself
    history: History | None = None


@dataclass
class _Folded:
    games: int = 0
    rows: int = 0
    differences: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)
    replaced: int = 0
    notes: list[StoredNotification] = field(default_factory=list)
    views: list[StoredView] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)


def _key(table: str, row: dict[str, Any]) -> tuple[Any, ...]:
    if table == "notifications":
        return (row["player_id"], row["seq"])
    if table == "views":
        return (row["player_id"],)
    return (row["game_id"],)


def _as_stored(value: Any) -> Any:
    """What ``value`` reads back as from a jsonb column (tuples become lists, and so on)."""
    return _loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


def _loads(text: str | bytes) -> Any:
    # orjson: a third of the standard library's time, most of a fold's decoding; it refuses
    # integers beyond 64 bits, which the standard library reads
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _rebuilt_rows(
    game: str,
    game_type: str,
    entries: list[Entry],
    tables: Sequence[str],
    live: Rows,
    owed: set[tuple[int, str]],
) -> tuple[Rows, list[StoredNotification], list[StoredView], list[dict[str, Any]]]:
    """The projector's rows of one game, rebuilt from its events with the projector's code
    (the notifications: those of the ``owed`` acknowledgements); also in the shape
    ``readmodels.write_batch`` stores. The JSON values are made to read as they would from
    the database only where there are live rows to compare them with (against none, every
    row differs anyway)."""
    from cardroom_projector import project_log

    def _same_json(value: Any) -> Any:
        return _as_stored(value) if compare else value

    rows: Rows = {t: {} for t in tables}
    notes: list[StoredNotification] = []
    views: list[StoredView] = []
    summaries: list[dict[str, Any]] = []
    if not entries:
        return rows, notes, views, summaries
    proj, projected, seat_views = project_log(None, game_type, entries, spectator=False, owed=owed)
    compare = False
    if "notifications" in tables:
        compare = bool(live.get("notifications"))
        for item in projected:
            for n in item.notes:
                notes.append(n)
                row = {
                    "game_id": game,
                    "player_id": n.player_id,
                    "seq": n.seq,
                    "version": n.version,
                    "payload": _same_json(n.payload),
                }
                rows["notifications"][_key("notifications", row)] = row
    if "views" in tables:
        compare = bool(live.get("views"))
        for v in seat_views:
            views.append(v)
            row = {
                "game_id": game,
                "player_id": v.player_id,
                "version": v.version,
                "view": _same_json(v.view),
                "actions": _same_json(v.actions),
                "seq": v.seq,
            }
            rows["views"][_key("views", row)] = row
    if "tables" in tables:
        compare = bool(live.get("tables"))
        summary = proj.state.summary()
        summaries.append(summary)
        row = {
            "game_id": game,
            "game_type": summary["game_type"],
            "status": summary["status"],
            "summary": _same_json(summary),
            "version": summary["version"],
        }
        rows["tables"][_key("tables", row)] = row
    return rows, notes, views, summaries


def _diff(game: str, live: Rows, rebuilt: Rows) -> list[str]:
    found: list[str] = []
    for table in sorted(live):
        a, b = live[table], rebuilt.get(table, {})
        for key in sorted(set(a) | set(b), key=repr):
            if a.get(key) != b.get(key):
                which = "only live" if key not in b else "only rebuilt" if key not in a else None
                if which is None:
                    cols = sorted(c for c in a[key] if a[key][c] != b[key].get(c))
                    which = "differs in " + ", ".join(cols)
                found.append(f"{table} {game} {key}: {which}")
    return found


def fold(job: _Job) -> _Folded:
    """Rebuild and compare one chunk of games: CPU work on plain values, so that it can
    run in a worker process (which first reads the chunk's events on its own connection)."""
    # Nothing a fold allocates forms cycles, and the collector's full passes over the heap a
    # worker inherits from its parent cost more than the fold itself.
    gc.disable()
    try:
        return _fold(job)
    finally:
        gc.enable()


def _fold(job: _Job) -> _Folded:
    live: dict[str, Rows] = {g: {t: {} for t in job.tables} for g in job.games}
    for table, records in job.live.items():
        columns = job.live_columns[table]
        for record in records:
            row = {
                k: _loads(v) if k in _JSON_COLUMNS else v
                for k, v in zip(columns, record, strict=True)
            }
            live[row["game_id"]][table][_key(table, row)] = row
    read = job.history
    if read is None:
        read = _worker_history(job.games, job.done)
    history: dict[str, tuple[str, list[Entry]]] = {g: ("", []) for g in job.games}
    addressees: dict[str, list[str]] = {}  # a few distinct lists, read only: parsed once
    for game, (game_type, events) in read.items():
        entries: list[Entry] = []
        for version, type_, text, sent_to in events:
            data = _loads(text)
            data["type"] = type_  # {**data, "type": type_} without the copy: data is ours
            to = None
            if sent_to is not None:
                to = addressees.get(sent_to)
                if to is None:
                    to = addressees[sent_to] = _loads(sent_to)
            entries.append((version, data, to))
        entries.sort(key=itemgetter(0))  # in order already (one pass): _HISTORY_SQL
        history[game] = (game_type, entries)
    out = _Folded()
    for g in job.games:
        rebuilt, notes, views, summaries = _rebuilt_rows(
            g, *history[g], job.tables, live[g], job.owed[g]
        )
        out.games += 1
        out.rows += sum(len(rows) for rows in rebuilt.values())
        diffs = _diff(g, live[g], rebuilt)
        out.differences += diffs
        if diffs and not job.repair:
            continue
        out.replaced += 1
        if diffs:
            out.replace.append(g)
            out.notes += notes
            out.views += views
            out.summaries += summaries
    return out


def default_workers() -> int:
    configured = os.environ.get("CARDROOM_REBUILD_WORKERS", "").strip()
    if configured:
        return max(0, int(configured))
    return os.cpu_count() or 1


async def rebuild_projector(
    store: EventStore,
    *,
    tables: Sequence[str] = PROJECTOR_TABLES,
    game: str | None = None,
    repair: bool = False,
    workers: int | None = None,
) -> ProjectorReport:
    """Rebuild the projector's read models of every game it has projected (or one) from the
    first event with the projector's code, and compare them with the live rows.

    A game whose rebuilt rows differ from its live rows is reported, and its rows are
    replaced by the rebuilt ones only with ``repair``; a game whose rows are equal keeps them
    (they are what the rebuild would write).
    """
    import sqlalchemy as sa
    from cardroom_eventstore.schema import checkpoints
    from cardroom_projector.service import checkpoint_name

    began = time.perf_counter()
    report = ProjectorReport(tuple(tables))
    prefix = checkpoint_name("")
    async with store.engine.connect() as conn:
        query = sa.select(checkpoints.c.name, checkpoints.c.position).where(
            checkpoints.c.name.startswith(prefix)
        )
        if game is not None:
            query = query.where(checkpoints.c.name == checkpoint_name(game))
        found = sorted((await conn.execute(query)).all())
    chunks: list[list[str]] = []
    size = CHUNK_EVENTS  # a projector checkpoint is the game's version: its events
    for name, position in found:
        if size >= CHUNK_EVENTS or len(chunks[-1]) >= CHUNK:
            chunks.append([])
            size = 0
        chunks[-1].append(name[len(prefix) :])
        size += int(position)
    wanted = default_workers() if workers is None else workers
    # forking costs a few milliseconds: worth it only when there is more than one chunk
    n = min(wanted, len(chunks)) if len(chunks) > 1 else 0
    if "fork" not in multiprocessing.get_all_start_methods():
        n = 0
    executor: Executor | None = None
    if n:
        executor = ProcessPoolExecutor(
            n,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_start_worker,
            initargs=(store.connect_args,),
        )
    report.workers = n
    # one chunk more than workers in flight: its rows are read while the others fold
    slots = asyncio.Semaphore(n + 1 if n else 1)

    async def one(chunk: list[str]) -> None:
        async with slots:
            await _rebuild_chunk(store, chunk, tuple(tables), repair, report, executor)

    # The collector's full passes over this process's heap (and a forked worker's copy of
    # it) cost more than the rows read here, which form no cycles: it waits until the end.
    collecting = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        await asyncio.gather(*(one(c) for c in chunks))
    finally:
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        gc.unfreeze()
        if collecting:
            gc.enable()
    report.seconds = time.perf_counter() - began
    return report


async def _rebuild_chunk(
    store: EventStore,
    games: list[str],
    tables: tuple[str, ...],
    repair: bool,
    report: ProjectorReport,
    executor: Executor | None,
) -> None:
    from cardroom_eventstore import readmodels
    from cardroom_projector.service import checkpoint_name

    async with store.tracking_many([checkpoint_name(g) for g in games]) as tracking:
        conn = tracking.conn
        live: dict[str, list[tuple[Any, ...]]] = {}
        columns: dict[str, list[str]] = {}
        for table in tables:
            assert table in _LIVE_SQL, table  # a known name, safe in the statements below
            records = await conn.fetch(_LIVE_SQL[table], games)
            live[table] = [tuple(r) for r in records]
            columns[table] = list(records[0].keys()) if records else []
        owed = await readmodels.owed(conn, games)
        done = {g: tracking.positions[checkpoint_name(g)] for g in games}
        job = _Job(games, tables, repair, live, columns, owed, done)
        if executor is None:
            job.history = await _read_history(conn, games, done)
            folded = fold(job)
        else:
            folded = await asyncio.get_running_loop().run_in_executor(executor, fold, job)
        report.games += folded.games
        report.rows += folded.rows
        report.differences += folded.differences
        report.replaced += folded.replaced
        if folded.replace:
            for table in tables:
                await conn.execute(
                    f"DELETE FROM {table} WHERE game_id = ANY($1::text[])", folded.replace
                )
            await readmodels.write_batch(conn, folded.notes, folded.views, folded.summaries)
