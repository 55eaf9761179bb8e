"""Replay benchmark: events per second to rebuild the projector's read models from a stored
log, beside a raw scan of the events table measured in the same run.

The log: BENCH_REPLAY_GAMES whole games (default 100) of each real game type, played in
memory with random legal moves (gamesim.py), appended through ``EventStore.append_each``
into a fresh database (one ``Append`` per game with every event's addressees and the
gamemaster's metadata: one statement per game). Macaua, whose games are long and slow to
play, gets BENCH_REPLAY_MACAUA_GAMES (default 2); a game that does not play is skipped with
its reason. The players then acknowledge what they were sent (``EventStore.ack_many``),
except each game's last decision (the end, or where a game stands): those notifications are
still owed, so the rebuild builds and stores them (the read model holds only owed ones, see
migration 0005). Each game's projector checkpoint is set to its last version, as if the
projector had projected everything.

- rebuild: ``cardroom rebuild projector``'s code path,
  ``cardroom.projector_rebuild.rebuild_projector(store, repair=True)`` over every game: per
  chunk of games (``plan_chunks``: 5,000 events or more, a sixteenth of a worker's share
  of a large log), one transaction that locks their checkpoints and
  reads their live rows and owed acks (one statement each); a worker process (one per core;
  a chunk more than workers is in flight, so reads and writes overlap the folds) reads
  their events on its own connection (one statement), folds each game with
  ``cardroom_projector.project_events``, compares in memory,
  and replaces the rows of the games that differ (one delete per table, one insert per kind
  of row). ``BENCH_REPLAY_ROUNDS`` rounds (default 5) of: the raw scan, then a rebuild from
  empty read models (emptied with TRUNCATE before every round but the first; every game is
  written). The headline is the median round's ratio: the machine's speed drifts within
  minutes, and a round's scan and rebuild run one right after the other. The first round
  also opens the pools' connections (the process's first rebuild). Then, once: a rebuild
  over the rows of the last round (the operator's verify case, rows equal, nothing
  written), and the same folded in this one process (the figure without the workers).
- floor (the rebuild's reads alone): the rebuild's own statement (the same columns, the same
  per-game order), over the same chunks of games, by as many worker processes as the
  rebuild forks (each on a connection of its own, started as the rebuild starts its pool),
  every row fetched and nothing else done, timed from the pool's start to the last chunk.
  Until 2026-11-27 the floor was one connection's ``SELECT * FROM events ORDER BY
  position`` (the "raw scan", still printed beside): fewer processes than the rebuild and
  other columns, so it was not what the rebuild's reads cost at best.
- the split (a profile in figures, one process): reading every game's events through
  ``EventStore.read_stream`` + ``event_payload`` alone, and ``project_events`` alone, in
  memory, per game type. BENCH_REPLAY_PROFILE=1 also prints cProfile's top functions of the
  first round's rebuild, which then folds in this process.
- size: ``BENCH_REPLAY_EVENTS`` (default 0: the played log as it is) grows the log to at least
  that many events (1,000,000 for the issue's figure) by copying the played games under new
  stream ids in SQL (``copy_log``: events, streams, owed acks, gates and checkpoints; the
  events' contents stay the played games', ``table.created`` names its copy), instead of
  playing a million events in memory for minutes.
- peak memory: one more rebuild from empty read models, after the timed rounds, while a
  thread samples every 50 ms the proportional set size (PSS) of this process and every
  process under it (the rebuild's workers, forked: a shared page counts once in all) and
  reads each one's own peak resident set (``VmHWM``). Apart from the timed rounds, since the
  sampler shares this process with the rebuild's coordinator.

Target: rebuild at least 0.3x the floor (reported PASS/MISS, not asserted).
Run alone: ``BENCH_REPLAY_GAMES=10 BENCH_REPLAY_MACAUA_GAMES=0 uv run --frozen python
bench/bench_replay.py``.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import io
import os
import pstats
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import asyncpg
import sqlalchemy as sa
from cardroom_eventstore import Append, EventStore, NewEvent
from cardroom_eventstore.log import HISTORIES
from cardroom_projector import project_events
from cardroom_projector.service import checkpoint_name
from cardroom_relay import event_payload
from cardroom_runtime.postgres import asyncpg_dsn
from common import (
    Report,
    env_int,
    fresh_database,
    median_round,
    servers,
    start_watchdog,
    verdict,
)
from gamesim import Played, load_real_games, play_timed, seats_for, try_game

from cardroom.projector_rebuild import ProjectorReport, rebuild_projector

TARGET_OVER_SCAN = 0.3


def make_log(report: Report, per_type: int, macaua: int, players: int) -> list[Played]:
    games: list[Played] = []
    for name in load_real_games():
        n = macaua if name == "macaua" else per_type
        if n <= 0:
            report.line(f"  {name}: not in the log (0 games asked)")
            continue
        game, why = try_game(name, players)
        if game is None:
            report.line(f"  {name}: skipped: {why}")
            continue
        seats = seats_for(game, players)
        for i in range(n):
            games.append(play_timed(game, seats, seed=i + 1, game_id=f"{name}-{i}"))
    return games


async def append_log(store: EventStore, games: list[Played]) -> int:
    appends = []
    for p in games:
        events = [
            NewEvent(e["type"], {k: v for k, v in e.items() if k != "type"}, meta, addressees)
            for decision in p.decisions
            for e, meta, addressees in decision
        ]
        appends.append(Append(p.game_id, p.game_type, 0, events))
    for result in await store.append_each(appends):
        if isinstance(result, Exception):
            raise result
    for a in appends:
        async with store.tracking(checkpoint_name(a.stream_id)) as tracking:
            await tracking.advance(a.last_version)
    # the players acknowledged what they were sent, except the last decision's notifications
    # (the end of the game, or where it stands): those are still owed, and stored
    acks: list[tuple[str, int, str]] = []
    for p in games:
        version = 0
        for i, decision in enumerate(p.decisions):
            for _, _, addressees in decision:
                version += 1
                if i < len(p.decisions) - 1:
                    acks += [(p.game_id, version, player) for player in sorted(addressees)]
    for i in range(0, len(acks), 5000):
        await store.ack_many(acks[i : i + 5000])
    return sum(len(a.events) for a in appends)


async def scan(url: str) -> tuple[float, int]:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    # at its best, like the rebuild: without the collector's passes over this process's heap
    # (the whole log played in memory), which otherwise make the floor slower by up to 2x
    gc.disable()
    gc.freeze()
    try:
        t0 = time.perf_counter()
        rows = await conn.fetch("SELECT * FROM events ORDER BY position")
        return time.perf_counter() - t0, len(rows)
    finally:
        gc.unfreeze()
        gc.enable()
        await conn.close()


def _scan_chunk(games: list[str], done: list[int]) -> int:
    """In a worker process of the floor's pool: one chunk's rows, as the rebuild reads them."""
    from cardroom import projector_rebuild as pr

    if pr._worker_db is None:
        raise RuntimeError("not in a worker process started by _start_worker")
    loop, conn = pr._worker_db
    return len(loop.run_until_complete(conn.fetch(HISTORIES.sql, games, done)))


async def parallel_scan(store: EventStore) -> tuple[float, int, int]:
    """The floor: the rebuild's reads alone (see the module docs); seconds, rows, workers."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from cardroom import projector_rebuild as pr

    async with store.engine.connect() as conn:
        found = (
            await conn.execute(sa.text("SELECT stream_id, version FROM streams ORDER BY stream_id"))
        ).all()
    workers = pr.default_workers()
    planned = pr.plan_chunks([(str(g), int(v)) for g, v in found], workers)
    chunks = [([g for g, _ in chunk], [v for _, v in chunk]) for chunk in planned]
    n = min(workers, len(chunks)) if len(chunks) > 1 else 0
    gc.disable()
    gc.freeze()
    try:
        t0 = time.perf_counter()
        if n == 0:
            conn = await asyncpg.connect(**store.connect_args)
            try:
                rows = 0
                for games, done in chunks:
                    rows += len(await conn.fetch(HISTORIES.sql, games, done))
            finally:
                await conn.close()
            return time.perf_counter() - t0, rows, 0
        executor = ProcessPoolExecutor(
            n,
            mp_context=multiprocessing.get_context("fork"),
            initializer=pr._start_worker,
            initargs=(store.connect_args,),
        )
        try:
            loop = asyncio.get_running_loop()
            counts = await asyncio.gather(
                *(loop.run_in_executor(executor, _scan_chunk, g, d) for g, d in chunks)
            )
        finally:
            executor.shutdown(wait=True)
        return time.perf_counter() - t0, sum(counts), n
    finally:
        gc.unfreeze()
        gc.enable()


async def split(store: EventStore, games: list[Played]) -> dict[str, Any]:
    """Where a rebuild's time goes: reading the streams, and projecting them in memory."""
    t0 = time.perf_counter()
    payloads: dict[str, list[dict[str, Any]]] = {}
    for p in games:
        payloads[p.game_id] = [event_payload(e) for e in await store.read_stream(p.game_id)]
    read_s = time.perf_counter() - t0
    owed = {
        g: {(v, player) for v, players in (await store.pending(g)).items() for player in players}
        for g in payloads
    }
    per_type: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for game, records in payloads.items():
        t0 = time.perf_counter()
        project_events(None, records, spectator=False, owed=owed[game])
        acc = per_type[records[0]["game_type"]]
        acc[0] += time.perf_counter() - t0
        acc[1] += len(records)
    return {
        "read_streams_seconds": read_s,
        "project_seconds": sum(v[0] for v in per_type.values()),
        "project_per_type": {
            t: {"seconds": s, "events": int(n), "events_per_second": n / s}
            for t, (s, n) in sorted(per_type.items())
        },
    }


async def copy_log(url: str, target: int) -> tuple[int, int]:
    """Copies of every played game under new stream ids (``<id>~<k>``: events, stream,
    owed acks, gates, projector checkpoint), whole copies of the log until it holds at least
    ``target`` events; the events' contents stay the played games' (an event that names its
    game, ``table.created``, names the copy). In SQL, one statement
    per table and copy: far faster than playing and appending as many games. Returns
    (events, copies)."""
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        played = int(await conn.fetchval("SELECT count(*) FROM events"))
        copies = max(0, -(-target // played) - 1) if played else 0
        originals = [r[0] for r in await conn.fetch("SELECT stream_id FROM streams")]
        for k in range(1, copies + 1):
            tail = f"~{k}"
            async with conn.transaction():
                await conn.execute(
                    "INSERT INTO events (stream_id, stream_type, version, event_id, type, data,"
                    " metadata) SELECT stream_id || $2, stream_type, version, gen_random_uuid(),"
                    " type, CASE WHEN data ? 'game' THEN jsonb_set(data, '{game}',"
                    " to_jsonb(stream_id || $2)) ELSE data END, metadata FROM events"
                    " WHERE stream_id = ANY($1::text[])"
                    " ORDER BY position",
                    originals,
                    tail,
                )
                await conn.execute(
                    "INSERT INTO streams (stream_id, stream_type, version) SELECT"
                    " stream_id || $2, stream_type, version FROM streams"
                    " WHERE stream_id = ANY($1::text[])",
                    originals,
                    tail,
                )
                await conn.execute(
                    "INSERT INTO pending_acks (stream_id, version, player_id, gate_version)"
                    " SELECT stream_id || $2, version, player_id, gate_version FROM pending_acks"
                    " WHERE stream_id = ANY($1::text[])",
                    originals,
                    tail,
                )
                await conn.execute(
                    "INSERT INTO gates (stream_id, version, remaining, released_at, handled)"
                    " SELECT stream_id || $2, version, remaining, released_at, handled FROM gates"
                    " WHERE stream_id = ANY($1::text[])",
                    originals,
                    tail,
                )
                await conn.execute(
                    "INSERT INTO checkpoints (name, position) SELECT name || $2, position"
                    " FROM checkpoints WHERE name = ANY($1::text[])",
                    [checkpoint_name(g) for g in originals],
                    tail,
                )
        await conn.execute("ANALYZE")
        return int(await conn.fetchval("SELECT count(*) FROM events")), copies
    finally:
        await conn.close()


def _proc_value(path: str, key: str) -> int:
    """A ``key: N kB`` line of a /proc file, in bytes (0: the process is gone)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _descendants(root: int) -> list[int]:
    """``root`` and every process under it (read from /proc/*/stat)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, ppid in parents.items() if ppid in frontier]
        found += frontier
    return found


class PeakMemory:
    """Samples, every ``interval`` seconds in a thread, the memory of this process and every
    process under it (the rebuild's workers): the largest sum of proportional set sizes
    (``Pss``: a page shared by n processes counts 1/n in each, so forked workers' shared
    pages are not counted twice) and of resident sets, and each process's own peak
    (``VmHWM``, kept by the kernel, so no sample misses it)."""

    def __init__(self, interval: float = 0.05, exclude: Sequence[int | None] = ()) -> None:
        self.interval = interval
        self.exclude = {p for p in exclude if p is not None}  # servers this process started
        self.pss = 0
        self.rss = 0
        self.hwm: dict[int, int] = {}
        self.processes = 0
        self.start_pss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="peak-memory")

    def _sample(self) -> int:
        pids = [p for p in _descendants(os.getpid()) if p not in self.exclude]
        self.processes = max(self.processes, len(pids))
        pss = sum(_proc_value(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids)
        self.pss = max(self.pss, pss)
        self.rss = max(self.rss, sum(_proc_value(f"/proc/{p}/status", "VmRSS:") for p in pids))
        for p in pids:
            self.hwm[p] = max(self.hwm.get(p, 0), _proc_value(f"/proc/{p}/status", "VmHWM:"))
        return pss

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> PeakMemory:
        self.start_pss = self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict[str, Any]:
        me = os.getpid()
        return {
            "peak_pss_bytes": self.pss,
            "peak_rss_bytes": self.rss,
            "pss_before_bytes": self.start_pss,
            "processes": self.processes,
            "hwm_bytes_this_process": self.hwm.get(me, 0),
            "hwm_bytes_workers": sorted(v for p, v in self.hwm.items() if p != me),
            "sampled_every_s": self.interval,
        }


async def clear_read_models(url: str) -> None:
    """Empty the projector's read models, as before the first rebuild of a new database."""
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await conn.execute("TRUNCATE notifications, views, tables")
    finally:
        await conn.close()


async def main() -> None:
    start_watchdog()
    per_type = env_int("BENCH_REPLAY_GAMES", 100)
    macaua = env_int("BENCH_REPLAY_MACAUA_GAMES", 2)
    players = env_int("BENCH_REPLAY_PLAYERS", 2)
    rounds = max(1, env_int("BENCH_REPLAY_ROUNDS", 5))
    target_events = env_int("BENCH_REPLAY_EVENTS", 0)
    profile = os.environ.get("BENCH_REPLAY_PROFILE", "") not in ("", "0")
    report = Report("replay")
    report.sizes = {
        "games_per_type": per_type,
        "macaua_games": macaua,
        "players": players,
        "rounds": rounds,
        "target_events": target_events,
    }
    report.settings = {"profile": profile}
    report.line(f"replay: making the log ({per_type} games per type, macaua {macaua}) ...")
    games = await asyncio.to_thread(make_log, report, per_type, macaua, players)
    measured: list[tuple[float, int, ProjectorReport]] = []  # per round: floor s, rows, rebuild
    raw: list[float] = []  # per round: the raw scan's seconds (the floor until 2026-11-27)
    floor_workers = 0
    async with servers() as services, fresh_database(services, "bench_replay") as (_, url):
        store = await EventStore.connect(url)
        try:
            events = await append_log(store, games)
            played, copies = events, 0
            if target_events > events:
                report.line(f"  copying the {events} played events up to {target_events} ...")
                t0 = time.perf_counter()
                events, copies = await copy_log(url, target_events)
                report.line(
                    f"  log: {events} events ({copies} copies of the played games under new"
                    f" stream ids, {time.perf_counter() - t0:.0f} s)"
                )
            profiler = cProfile.Profile() if profile else None
            for r in range(rounds):
                if r:
                    await clear_read_models(url)
                raw_s, raw_rows = await scan(url)
                raw.append(raw_s)
                scan_s, scanned, floor_workers = await parallel_scan(store)
                if raw_rows != scanned:
                    raise RuntimeError(f"the scans read {raw_rows} and {scanned} rows")
                profiled = profiler if r == 0 else None
                if profiled is not None:
                    profiled.enable()
                # profiled: in this process, or the profile shows only the waits on the workers
                first = await rebuild_projector(
                    store, repair=True, workers=0 if profiled is not None else None
                )
                if profiled is not None:
                    profiled.disable()
                measured.append((scan_s, scanned, first))
            # once more from empty, its memory sampled (apart from the timed rounds: the
            # sampler's thread shares this process with the rebuild's coordinator)
            await clear_read_models(url)
            with PeakMemory(exclude=(services.postgres_pid, services.nats_pid)) as memory:
                sampled = await rebuild_projector(store, repair=True)
            second = await rebuild_projector(store)
            single = await rebuild_projector(store, workers=0)
            parts = await split(store, games)
        finally:
            await store.close()
    if any(n != events for _, n, _ in measured):
        raise RuntimeError(f"the scans read {[n for _, n, _ in measured]}, {events} appended")
    if second.differences or single.differences:
        diffs = second.differences + single.differences
        raise RuntimeError(f"rebuild differs from itself: {diffs[:5]}")
    ratios = [scan_s / first.seconds for scan_s, _, first in measured]
    # the median round (a round's rebuild and its scan ran one right after the other)
    scan_s, _, first = measured[median_round(ratios)]
    ratio = scan_s / first.seconds
    scan_rate = events / scan_s
    rate1, rate2 = events / first.seconds, events / second.seconds
    rate3 = events / single.seconds
    v = verdict(ratio, TARGET_OVER_SCAN)
    types = sorted({p.game_type for p in games})
    copied = f", {copies} copies of each: {len(games) * (copies + 1)} games" if copies else ""
    report.line(f"  log: {events} events of {len(games)} games played{copied} ({', '.join(types)})")
    for i, (s_, _, f_) in enumerate(measured, start=1):
        report.line(
            f"  round {i}: scan {events / s_:9.0f} events/s ({s_:.3f} s), then rebuild from"
            f" empty {events / f_.seconds:9.0f} events/s ({f_.seconds:.2f} s):"
            f" {s_ / f_.seconds:.3f}x"
        )
    report.line(
        f"  rebuild (empty read models): {rate1:9.0f} events/s ({first.seconds:.2f} s, "
        f"{first.rows} rows, {first.workers} worker processes; the median round)"
    )
    report.line(f"  rebuild (verify over live):  {rate2:9.0f} events/s ({second.seconds:.2f} s)")
    report.line(f"  the same in one process:     {rate3:9.0f} events/s ({single.seconds:.2f} s)")
    report.line(
        f"  floor, the rebuild's reads:  {scan_rate:9.0f} events/s ({scan_s:.3f} s, "
        f"{floor_workers} worker processes, the same statement and chunks)"
    )
    raw_s = raw[median_round(ratios)]
    report.line(
        f"  the raw scan (floor until 2026-11-27): {events / raw_s:9.0f} events/s ({raw_s:.3f} s);"
        f" rebuild/raw scan {raw_s / first.seconds:.3f}x"
    )
    report.line(
        f"  rebuild/scan, median of {len(ratios)} round(s): {ratio:.3f}x"
        f" ({', '.join(f'{x:.3f}' for x in ratios)}; target >= {TARGET_OVER_SCAN}x: {v})"
    )
    report.line(
        f"  split, one process in memory: read_stream {parts['read_streams_seconds']:.2f} s, "
        f"project_events {parts['project_seconds']:.2f} s"
    )
    for t, d in parts["project_per_type"].items():
        report.line(f"    project_events {t:9s} {d['events_per_second']:9.0f} events/s")
    mem = memory.figures()
    mib = 2**20
    report.line(
        f"  peak memory of a rebuild from empty ({sampled.seconds:.2f} s, {mem['processes']}"
        f" processes: this one and its workers): PSS {mem['peak_pss_bytes'] / mib:.0f} MiB"
        f" (this process's before it {mem['pss_before_bytes'] / mib:.0f} MiB, the played log"
        f" included), RSS {mem['peak_rss_bytes'] / mib:.0f} MiB; each process's own peak"
        f" (VmHWM): this one {mem['hwm_bytes_this_process'] / mib:.0f} MiB, workers "
        + ", ".join(f"{b / mib:.0f}" for b in mem["hwm_bytes_workers"])
        + " MiB"
    )
    report.sizes.update({"games": len(games), "events": events})
    report.settings["workers"] = first.workers
    report.data.update(
        {
            "games": len(games),
            "game_types": types,
            "events": events,
            "events_played": played,
            "copies": copies,
            "memory": {**mem, "rebuild_seconds": sampled.seconds},
            "rounds": len(measured),
            "rebuild_empty": {
                "seconds": first.seconds,
                "events_per_second": rate1,
                "rows": first.rows,
            },
            "rebuild_empty_seconds_by_round": [f_.seconds for _, _, f_ in measured],
            "rebuild_verify": {"seconds": second.seconds, "events_per_second": rate2},
            "rebuild_verify_one_process": {"seconds": single.seconds, "events_per_second": rate3},
            "workers": first.workers,
            "scan": {
                "seconds": [s_ for s_, _, _ in measured],
                "events_per_second": scan_rate,
                "workers": floor_workers,
                "what": "the rebuild's statement and chunks, as many processes",
            },
            "raw_scan": {"seconds": raw, "rebuild_over_raw_scan": raw_s / first.seconds},
            "rebuild_over_scan": ratio,
            "rebuild_over_scan_by_round": ratios,
            "split": parts,
            "target": {"rebuild_over_scan_at_least": TARGET_OVER_SCAN, "verdict": v},
        }
    )
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
        report.line(out.getvalue())
    report.write()


if __name__ == "__main__":
    asyncio.run(main())
