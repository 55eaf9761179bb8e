"""``cardroom rebuild projector``: the projector's read models rebuilt from the first event
with the projector's own code (:func:`cardroom_projector.project_events`), compared with the
live rows, and replaced by the rebuilt ones with ``repair``.

Games are taken in chunks (:func:`plan_chunks`: of :data:`CHUNK_EVENTS` events or more). A
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
available the fold runs in this process. A game of a type this process has no rules for
cannot be folded: the games are planned and their types checked before the first chunk
(:class:`UnknownGameTypes`, on every shard before any), so such a game refuses the whole
rebuild with nothing written rather than failing in a worker with some chunks replaced.
The garbage collector waits while a rebuild runs: its full passes over the heap cost more
than the folds, which make no reference cycles.

Only the notifications still owed an acknowledgement are part of the model (see migration
0005): the fold counts every notification for ``seq`` (from the events' ``metadata.to``) but
builds only the owed ones. A table's row of the lobby listing is its summary as of the last
event that changed the listing (``Projection.listing``), which is what the live projector
wrote then, not the summary of the game's latest state.

With several shards (``cardroom_runtime.shards``) each shard's read models are its own
games', rebuilt from that shard's events (:func:`rebuild_shards`), one shard after another.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import multiprocessing.util
import os
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cardroom_eventstore import readmodels
from cardroom_eventstore.jsontext import json_value
from cardroom_eventstore.log import History, read_histories
from cardroom_eventstore.readmodels import PROJECTOR_TABLES as PROJECTOR_TABLES
from cardroom_wire import dumps

if TYPE_CHECKING:
    from cardroom_eventstore import EventStore
    from cardroom_eventstore.readmodels import StoredNotification, StoredView
    from cardroom_projector import Entry


#: Games per transaction at most, and events per transaction at least (a chunk closes once
#: it holds this many, or :data:`CHUNKS_PER_WORKER` chunks' share of the whole, whichever is
#: more): chunks of like work keep the worker processes equally busy, and each chunk costs
#: about 7 ms of CPU besides its events (its statements, a worker's round trip), so a large
#: rebuild takes larger chunks (bench/README.md).
CHUNK = 1000
CHUNK_EVENTS = 5000
#: Chunks per worker process a large rebuild is cut into: enough that the last one's fold,
#: which nothing overlaps, is short, and few enough that their fixed costs are small.
CHUNKS_PER_WORKER = 16

_JSON_COLUMNS = frozenset({"payload", "view", "actions", "summary"})

Rows = dict[str, dict[tuple[Any, ...], dict[str, Any]]]
# A worker process reads its chunks' events on a connection of its own: they are committed
# and never change (each game's up to its checkpoint, which the parent holds locked), and
# sending them from the parent through the pool's pipe (about 100 bytes of JSON per event)
# costs more CPU in both processes than the read itself (bench/README.md, "the rebuild's
# CPU": the pipe). The worker is forked from inside the parent's running loop; asyncio
# ties a running loop to the process that runs it, so the worker runs a loop of its own.
_worker_db: tuple[asyncio.AbstractEventLoop, Any] | None = None


def _start_worker(connect_args: dict[str, Any]) -> None:
    """A worker process's start: its connection, opened while the parent reads its first
    chunk's rows."""
    global _worker_db
    import asyncpg

    loop = asyncio.new_event_loop()
    _worker_db = (loop, loop.run_until_complete(asyncpg.connect(**connect_args)))
    # a pool's worker leaves through multiprocessing's exit, which runs these
    multiprocessing.util.Finalize(None, _close_worker, exitpriority=10)


def _worker_history(done: dict[str, int]) -> History:
    if _worker_db is None:
        raise RuntimeError("not in a worker process started by _start_worker")
    loop, conn = _worker_db
    return loop.run_until_complete(read_histories(conn, done))


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
    # per game: its type and its events (``read_histories``, decoded); None: the worker
    # reads them itself
    history: History | None = None


@dataclass
class _Folded:
    games: int = 0
    rows: int = 0
    differences: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)
    replaced: int = 0
    # the rows of the games in ``replace``, made where they were folded: as text, they
    # cross from a worker process for a fraction of what their values cost to pickle
    write: readmodels.Rows | None = None


def _key(table: str, row: dict[str, Any]) -> tuple[Any, ...]:
    if table == "notifications":
        return (row["player_id"], row["seq"])
    if table == "views":
        return (row["player_id"],)
    return (row["game_id"],)


def _as_stored(value: Any) -> Any:
    """What ``value`` reads back as from a jsonb column (tuples become lists, and so on)."""
    return json_value(dumps(value))


def _rebuilt_rows(
    game: str,
    game_type: str,
    entries: Sequence[Entry],
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
        # the summary as of the last event that changed the listing, as the projector keeps
        # it (a table in play is not rewritten on every move)
        summary = proj.listing if proj.listing is not None else proj.state.summary()
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
                k: json_value(v) if k in _JSON_COLUMNS else v
                for k, v in zip(columns, record, strict=True)
            }
            live[row["game_id"]][table][_key(table, row)] = row
    read = job.history
    if read is None:
        read = _worker_history(job.done)
    history: History = {g: ("", []) for g in job.games}
    history.update(read)
    out = _Folded()
    notes: list[StoredNotification] = []
    views: list[StoredView] = []
    summaries: list[dict[str, Any]] = []
    for g in job.games:
        rebuilt, game_notes, game_views, game_summaries = _rebuilt_rows(
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
            notes += game_notes
            views += game_views
            summaries += game_summaries
    if out.replace:
        out.write = readmodels.batch_rows(notes, views, summaries)
    return out


class UnknownGameTypes(Exception):
    """Games to rebuild whose type this process has no rules for (``types``: each such type
    and how many of the games are of it): they cannot be folded, so nothing is rebuilt."""

    def __init__(self, types: dict[str, int]) -> None:
        self.types = dict(sorted(types.items()))
        super().__init__("no rules for game type(s) " + ", ".join(map(repr, self.types)))


async def planned_games(store: EventStore, game: str | None = None) -> list[tuple[str, int]]:
    """The games the rebuild folds (every game the projector has projected, or ``game`` if
    it has), each with its projector checkpoint (its events)."""
    from cardroom_projector.service import checkpoint_name

    prefix = checkpoint_name("")
    if game is None:
        found = await store.checkpoints(prefix)
    else:
        found = [c for c in await store.checkpoints(checkpoint_name(game)) if c[0] == prefix + game]
    return [(name[len(prefix) :], int(p)) for name, p in found]


async def unknown_game_types(store: EventStore, games: Sequence[str]) -> dict[str, int]:
    """The types of ``games`` that have no rules in this process, with how many games each."""
    from cardroom_engine import registry

    types = await store.stream_types(games)
    return {t: n for t, n in types.items() if t not in registry}


async def rebuild_shards(
    urls: Sequence[str],
    *,
    tables: Sequence[str] = PROJECTOR_TABLES,
    game: str | None = None,
    repair: bool = False,
    workers: int | None = None,
) -> list[tuple[int, ProjectorReport]]:
    """:func:`rebuild_projector` on every shard of ``urls`` (with ``game``, on its shard
    only): ``(shard, report)`` each, in shard order.

    Every shard's games are planned and their types checked before any is folded: a game
    this process has no rules for raises :class:`UnknownGameTypes` with nothing written on
    any shard (else ``repair`` would have replaced the rows of some shards and not others).
    """
    from cardroom_eventstore import EventStore
    from cardroom_runtime.shards import shard_index

    shards = range(len(urls)) if game is None else [shard_index(game)]
    stores: dict[int, EventStore] = {}
    plans: dict[int, list[tuple[str, int]]] = {}
    try:
        unknown: dict[str, int] = {}
        for shard in shards:
            if shard >= len(urls):  # the game names a shard there is not: no such game
                continue
            store = stores[shard] = await EventStore.connect(urls[shard])
            plans[shard] = await planned_games(store, game)
            for t, n in (await unknown_game_types(store, [g for g, _ in plans[shard]])).items():
                unknown[t] = unknown.get(t, 0) + n
        if unknown:
            raise UnknownGameTypes(unknown)
        out: list[tuple[int, ProjectorReport]] = []
        for shard in shards:
            if shard not in stores:
                out.append((shard, ProjectorReport(tuple(tables))))
                continue
            report = await rebuild_projector(
                stores[shard],
                tables=tables,
                game=game,
                repair=repair,
                workers=workers,
                planned=plans[shard],
            )
            out.append((shard, report))
        return out
    finally:
        for store in stores.values():
            await store.close()


def plan_chunks(games: Sequence[tuple[str, int]], workers: int) -> list[list[tuple[str, int]]]:
    """``(game, events)`` cut into the rebuild's chunks, in order (see :data:`CHUNK`)."""
    total = sum(events for _, events in games)
    least = max(CHUNK_EVENTS, total // (max(workers, 1) * CHUNKS_PER_WORKER))
    chunks: list[list[tuple[str, int]]] = []
    size = least
    for game, events in games:
        if size >= least or len(chunks[-1]) >= CHUNK:
            chunks.append([])
            size = 0
        chunks[-1].append((game, events))
        size += events
    return chunks


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
    planned: Sequence[tuple[str, int]] | None = None,
) -> ProjectorReport:
    """Rebuild the projector's read models of every game it has projected (or one) from the
    first event with the projector's code, and compare them with the live rows.

    A game whose rebuilt rows differ from its live rows is reported, and its rows are
    replaced by the rebuilt ones only with ``repair``; a game whose rows are equal keeps them
    (they are what the rebuild would write). ``planned``: the games to fold, as
    :func:`planned_games` found them and checked (default: found and checked here); a game
    whose type has no rules here raises :class:`UnknownGameTypes` before anything is read
    or written, rather than failing in a worker halfway through.
    """
    began = time.perf_counter()
    report = ProjectorReport(tuple(tables))
    if planned is None:
        planned = await planned_games(store, game)
        unknown = await unknown_game_types(store, [g for g, _ in planned])
        if unknown:
            raise UnknownGameTypes(unknown)
    wanted = default_workers() if workers is None else workers
    # a projector checkpoint is the game's version: its events
    chunks = [[game for game, _ in chunk] for chunk in plan_chunks(planned, wanted)]
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
    from cardroom_projector.service import checkpoint_name

    async with store.tracking_many([checkpoint_name(g) for g in games]) as tracking:
        conn = tracking.conn
        live: dict[str, list[tuple[Any, ...]]] = {}
        columns: dict[str, list[str]] = {}
        for table in tables:
            columns[table], live[table] = await readmodels.live_rows(conn, table, games)
        owed = await readmodels.owed(conn, games)
        done = {g: tracking.positions[checkpoint_name(g)] for g in games}
        job = _Job(games, tables, repair, live, columns, owed, done)
        if executor is None:
            job.history = await read_histories(conn, done)
            folded = fold(job)
        else:
            folded = await asyncio.get_running_loop().run_in_executor(executor, fold, job)
        report.games += folded.games
        report.rows += folded.rows
        report.differences += folded.differences
        report.replaced += folded.replaced
        if folded.write is not None:  # (made exactly when some game is replaced)
            await readmodels.delete_games(conn, tables, folded.replace)
            await readmodels.write_rows(conn, folded.write)
