"""Throughput benchmark: sustained transitions (events appended) per second while many bot
games play at once through the whole pipeline, beside a peer and a limit on the same
PostgreSQL, writing the very same events.

- ours, as deployed (the default): BENCH_GAMES tables at once (default 200), a mix of take5
  (4 bots, to 66 points), the 66 game (2) and papas (3), each table playing games one after
  another (``BENCH_TP_BOTS`` bots, default random) for ``BENCH_TP_SECONDS`` (default 20; the
  issue's figure: 60, ``make bench-full``), then stopped where it stands; every service its
  own OS process (gamemaster, relay, projector, acktracker, timers, analytics: the followers
  at their lower CPU priority, as deployed) on a fresh database, and a nats-server of the
  benchmark's own whose JetStream fsyncs every write (``sync_interval: always``, as in
  deploy/nats/nats.conf). The bots play in this process, or in ``BENCH_TP_BOT_PROCS``
  processes (default 1, 2 from 500 tables: a thousand tables' bots are more than one event
  loop keeps up with), started before the clock. Counted as the peer is: every event of the
  commands the bots sent until they were stopped (an append whose statement began before
  the stop, on the database's clock), over the time from the first event's commit to the
  moment every one of them was also relayed and projected (both read on the database's
  clock). After the stop the bots' clients, until they have closed (the stop waits up to
  30 s for them), still acknowledge what arrives, so games follow up at a rate that tapers
  off; the games left in play go on once their acks time out (the house plays the away
  seats). Those events are printed, not counted, and the peer does not write them. Until
  2026-11-27 (second change) the count ran until the stop had returned, so it took in that
  tail and its time (30 s in every round of that day); until 2026-11-28 the moment every
  counted event was projected was looked for only once the stop had returned, so a slow
  stop still lengthened the span. The followers' checkpoints are now read every 50 ms from
  the stop on; the count until the stop returned is printed beside ("until the stop
  returned").
  Until 2026-11-27 ours was counted over the 10th-90th percentile window of the commit
  times, stretched by the followers' catch-up, and the peer over its whole wall time (a
  like-for-like count is 10-17% lower for ours); that count is still printed ("window").
- ours, as until 2026-11-27: ``BENCH_GAME=highcard BENCH_TP_SECONDS=0
  BENCH_TP_STACK=pipeline``: one game of the test game per two-seat table, the four pipeline
  services only, the NATS server found (JetStream's default sync). ``BENCH_GAME`` names one
  game type for two-seat tables (config ``BENCH_GAME_CONFIG``), ``mix`` (default) the mix;
  ``BENCH_TP_STACK`` is ``deployed`` (default) or ``pipeline``.
- peer: the ``eventsourcing`` library (its POSTGRES persistence, ``Application`` with the
  default ``PostgresApplicationRecorder``), in its default configuration and in its fastest
  (``POSTGRES_ENABLE_DB_FUNCTIONS``: inserts through its stored functions, without its
  table lock), each in another fresh database: one aggregate per game
  of ours, the same number of events per aggregate and the same event data (the first event
  is the aggregate's ``Created``), each ``app.save()`` appending one single event in its own
  transaction. Concurrency: BENCH_PEER_THREADS (default 16) threads, each owning a share of
  the aggregates and advancing them round-robin, one event per save; the library's pool is
  sized to the threads (``POSTGRES_POOL_SIZE``), no overflow.
- limit: batched raw inserts of the same rows into an events-like table (same columns,
  identity position, unique (stream, version)) with asyncpg: BENCH_LIMIT_BATCH rows (default
  1000) per ``INSERT ... SELECT FROM unnest(...)``, one transaction per batch, one connection.

Rounds: ours then the peer (on ours' events of that round), BENCH_ROUNDS times (default 3);
the figure held against the target is the median of the rounds' ratios (this machine's
speed drifts within minutes; one pair was a coin toss).

Target: ours at least 2x the peer in its fastest configuration (reported PASS/MISS, not
asserted); the ratio to its default one is printed beside.
Run alone: ``BENCH_GAMES=10 BENCH_TP_SECONDS=5 BENCH_ROUNDS=1 uv run --frozen python
bench/bench_throughput.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import statistics
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from cardroom_runtime import heap
from cardroom_runtime.discovery import Services
from cardroom_runtime.postgres import asyncpg_dsn
from common import (
    DEPLOYED,
    MIX,
    PIPELINE,
    Fleet,
    Report,
    Tables,
    cpu_seconds,
    deployed_nats,
    env_float,
    env_int,
    fresh_database,
    median_round,
    pipeline,
    servers,
    start_watchdog,
    unique_name,
    verdict,
)
from sqlalchemy.engine import make_url

TARGET_OVER_PEER = 2.0


@dataclass(frozen=True)
class Row:
    stream_id: str
    stream_type: str
    version: int
    type: str
    data: str  # JSON text
    metadata: str
    recorded_at: datetime


@dataclass
class Ours:
    games: int
    events: int
    seconds: float
    sustained: float
    rows: list[Row]
    cpu: dict[str, float]
    catch_up: float  # seconds after the last game ended until relay and projector caught up
    window: float  # seconds between the 10th and 90th percentile commits (the sustained span)
    span: float  # from the first event's commit until every counted one was relayed and projected
    finished: int  # games played to their end
    uncounted: int  # events after the bots stopped
    uncounted_house: int  # of those, the house's moves for away seats
    # from the first commit until the bots' stop had returned, or everything was projected if
    # later: the span until 2026-11-28, when the catch-up was looked for after the stop only
    span_until_stop: float

    @property
    def wall_rate(self) -> float:
        return self.events / self.seconds

    @property
    def pipeline_rate(self) -> float:
        """Events per second until the followers (relay, projector) had them all too."""
        return self.events / (self.seconds + self.catch_up)

    @property
    def window_rate(self) -> float:
        """The count until 2026-11-27: the sustained commit rate, stretched by the
        followers' backlog."""
        return self.sustained * self.window / (self.window + self.catch_up)

    @property
    def rate(self) -> float:
        """The figure held against the target, counted as the peer's: every event over the
        time from the first commit until every event was relayed and projected."""
        return self.events / self.span


def sustained_rate(
    times: list[datetime], low: float = 0.1, high: float = 0.9
) -> tuple[float, float]:
    """Events per second between two percentiles of the commit times, and that span (s)."""
    ordered = sorted(times)
    if len(ordered) < 10:
        span = (ordered[-1] - ordered[0]).total_seconds()
        return (len(ordered) / span if span > 0 else float("nan")), span
    i, j = int(low * len(ordered)), int(high * len(ordered))
    span = (ordered[j] - ordered[i]).total_seconds()
    return ((j - i) / span if span > 0 else float("nan")), span


# The relay has published every event and the projector has projected every game.
CAUGHT_UP = """
SELECT (SELECT coalesce(max(position), 0) FROM events)
       <= (SELECT coalesce(max(position), 0) FROM checkpoints WHERE name = 'relay')
   AND NOT EXISTS (
       SELECT 1 FROM streams s LEFT JOIN checkpoints c ON c.name = 'projector:' || s.stream_id
       WHERE coalesce(c.position, 0) < s.version)
"""

# What the followers must have for the events up to a position: the relay's checkpoint, and
# each game's version the projector must reach.
# The events the bots' commands made before they stopped (an append's ``recorded_at`` is its
# statement's start: a command in flight at the stop counts).
STOPPED = """
SELECT coalesce(max(position), 0) FROM events WHERE recorded_at <= $1
"""
COUNTED = """
SELECT stream_id, max(version) AS version FROM events WHERE position <= $1 GROUP BY stream_id
"""
CHECKPOINTS = (
    "SELECT name, position FROM checkpoints WHERE name = 'relay' OR name LIKE 'projector:%'"
)


async def caught_up(conn: asyncpg.Connection, last: int, versions: dict[str, int]) -> bool:
    """The relay has published every event up to position ``last`` and the projector has
    projected each game up to its version in ``versions``."""
    return covers({r["name"]: r["position"] for r in await conn.fetch(CHECKPOINTS)}, last, versions)


def covers(at: dict[str, int], last: int, versions: dict[str, int]) -> bool:
    """Whether checkpoints ``at`` have every event up to ``last`` relayed and projected."""
    if at.get("relay", 0) < last:
        return False
    return all(at.get(f"projector:{g}", 0) >= v for g, v in versions.items())


class Checkpoints:
    """The followers' checkpoints, read every 50 ms from the bots' stop on, with the
    database's clock: when the counted events were all relayed and projected is then known
    even if the stop itself takes longer (its tables' clients closing)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[tuple[Any, dict[str, int]]] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        conn = await asyncpg.connect(asyncpg_dsn(self.url))
        try:
            while True:
                async with conn.transaction():  # the clock and the rows of one snapshot
                    now = await conn.fetchval("SELECT clock_timestamp()")
                    rows = await conn.fetch(CHECKPOINTS)
                self.seen.append((now, {r["name"]: r["position"] for r in rows}))
                await asyncio.sleep(0.05)
        finally:
            await conn.close()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def first_covering(self, last: int, versions: dict[str, int]) -> Any:
        """The first moment seen at which every counted event was relayed and projected, or
        None (not yet, when the watch stopped)."""
        for when, at in self.seen:
            if covers(at, last, versions):
                return when
        return None


async def backend_cpu(conn: asyncpg.Connection, dbname: str) -> dict[int, float]:
    """CPU seconds so far of every PostgreSQL backend connected to ``dbname`` (same host)."""
    pids = await conn.fetch("SELECT pid FROM pg_stat_activity WHERE datname = $1", dbname)
    return {r["pid"]: cpu_seconds(r["pid"]) for r in pids}


@dataclass(frozen=True)
class Setup:
    """How ours runs (the knobs; see the module docs)."""

    games: int  # tables playing at once
    mix: list[tuple[str, int, dict[str, Any]]]  # table i plays mix[i % len(mix)]
    seconds: float  # each table plays games one after another this long (0: one game)
    stack: str  # "deployed" (six services, NATS fsync always) or "pipeline" (the old four)
    bots: str  # the bots' kind
    bot_procs: int  # processes playing the bots
    stagger: float  # seconds between two tables' starts


async def ours(services: Services, setup: Setup) -> Ours:
    root = unique_name("benchtp")
    deployed = setup.stack == "deployed"
    names = DEPLOYED if deployed else PIPELINE
    async with (
        deployed_nats(services, own=deployed) as nats_services,
        fresh_database(services, "bench_tp_ours") as (dbname, url),
    ):
        watcher = await asyncpg.connect(asyncpg_dsn(services.database_admin_url))
        try:
            async with pipeline(nats_services, url, root, names=names) as stack:
                tables = Tables(
                    nats_services.nats_url,
                    root,
                    setup.games,
                    setup.mix,
                    prefix="tp",
                    kind=setup.bots,
                )
                fleet = Fleet(tables, procs=setup.bot_procs, stagger=setup.stagger)
                cpu0 = stack.cpu()
                pg0 = await backend_cpu(watcher, dbname)
                await fleet.start()
                t0 = time.perf_counter()
                stopped_at = None
                checkpoints = Checkpoints(url)
                if setup.seconds > 0:
                    await asyncio.sleep(setup.seconds)  # the run's length: the tables play on
                    # the bots stop now: what they sent before this is the load counted. Until
                    # their clients have closed they still acknowledge what arrives and games
                    # follow up on it, at a rate that tapers off: not the load measured.
                    stopped_at = await watcher.fetchval("SELECT clock_timestamp()")
                    checkpoints.start()
                # a timed run ends its tables at once (a long game's tail would be a load
                # that tapers off); one game each is played to its end
                try:
                    played = await fleet.finish(drain=setup.seconds <= 0)
                finally:
                    await checkpoints.stop()
                elapsed = time.perf_counter() - t0
                for what in ("failed", "lost_processes"):
                    if played.get(what):
                        print(f"  bots: {played[what]:.0f} {what.replace('_', ' ')}", flush=True)
                # the relay and the projector follow the games (lower CPU priority): their
                # work is only done once they have every event, and their CPU counts in full.
                # Counted: the events committed until the bots stopped. The games left in
                # play go on without them once their acks time out (the house plays the away
                # seats): not the load measured, and a span that waited for it would end when
                # the last of those games did.
                follower = await asyncpg.connect(asyncpg_dsn(url))
                try:
                    closed = int(
                        await follower.fetchval("SELECT coalesce(max(position), 0) FROM events")
                    )
                    last = closed
                    if stopped_at is not None:
                        last = int(await follower.fetchval(STOPPED, stopped_at))
                    versions = {
                        r["stream_id"]: r["version"] for r in await follower.fetch(COUNTED, last)
                    }
                    # seen while the bots stopped, or else from now on (another process's
                    # progress, seen in the database)
                    caught_up_at = checkpoints.first_covering(last, versions)
                    while caught_up_at is None:
                        if await caught_up(follower, last, versions):
                            caught_up_at = await follower.fetchval("SELECT clock_timestamp()")
                            break
                        await asyncio.sleep(0.05)
                    stop_returned_at = await follower.fetchval("SELECT clock_timestamp()")
                finally:
                    await follower.close()
                catch_up = time.perf_counter() - t0 - elapsed
                cpu = {k: v - cpu0[k] for k, v in stack.cpu().items()}
                cpu["bench"] += played.get("cpu_seconds", 0.0)  # bots in child processes
                pg1 = await backend_cpu(watcher, dbname)
        finally:
            await watcher.close()
        # backends that ended during the run are missed (the services keep their pools open)
        cpu["postgres"] = sum(v - pg0.get(pid, 0.0) for pid, v in pg1.items() if v == v)
        conn = await asyncpg.connect(asyncpg_dsn(url))
        try:
            records = await conn.fetch(
                "SELECT stream_id, stream_type, version, type, data::text AS data,"
                " metadata::text AS metadata, recorded_at FROM events WHERE position <= $1"
                " ORDER BY position",
                last,
            )
            after, house = await conn.fetchrow(  # type: ignore[misc]  # (one row, always)
                "SELECT count(*), count(*) FILTER (WHERE metadata ? 'house') FROM events"
                " WHERE position > $1",
                last,
            )
        finally:
            await conn.close()
    rows = [Row(**dict(r)) for r in records]
    rate, window = sustained_rate([r.recorded_at for r in rows])
    first = min(r.recorded_at for r in rows)
    span = (caught_up_at - first).total_seconds()
    span_until_stop = (max(caught_up_at, stop_returned_at) - first).total_seconds()
    finished = int(played.get("finished", 0))
    return Ours(
        setup.games,
        len(rows),
        elapsed,
        rate,
        rows,
        cpu,
        catch_up,
        window,
        span,
        finished,
        after,
        house,
        span_until_stop,
    )


# -- the peer: the eventsourcing library ----------------------------------------------------------


@functools.cache
def _game_log() -> Any:
    """The peer's aggregate class, made once: eventsourcing registers a class's topic for the
    whole process, and refuses a second class of the same name (the next round's)."""
    from eventsourcing.domain import Aggregate, event

    class GameLog(Aggregate):
        def __init__(self, kind: str, data: dict[str, Any]) -> None:
            self.count = 1

        @event("Happened")
        def happened(self, kind: str, data: dict[str, Any]) -> None:
            self.count += 1

    return GameLog


def peer(
    services: Services, dbname: str, rows: list[Row], threads: int, fast: bool = False
) -> tuple[float, Any]:
    """Append ``rows`` with eventsourcing, one event per save; returns the seconds it took and
    the application (to close once its backends' CPU time is read)."""
    from eventsourcing.application import Application

    GameLog = _game_log()
    url = make_url(services.database_admin_url)
    app: Any = Application(
        env={
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": dbname,
            "POSTGRES_HOST": url.host or "127.0.0.1",
            "POSTGRES_PORT": str(url.port or 5432),
            "POSTGRES_USER": url.username or "postgres",
            "POSTGRES_PASSWORD": url.password or "",
            "POSTGRES_POOL_SIZE": str(threads),
            "POSTGRES_MAX_OVERFLOW": "0",
            "POSTGRES_MAX_WAITING": "0",
            "POSTGRES_ENABLE_DB_FUNCTIONS": "y" if fast else "no",
        }
    )
    streams: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for r in rows:
        streams[r.stream_id].append((r.type, json.loads(r.data)))
    games = list(streams.values())
    shares = [games[i::threads] for i in range(threads)]
    errors: list[BaseException] = []

    def work(share: list[list[tuple[str, dict[str, Any]]]]) -> None:
        try:
            start.wait()
            aggregates: list[Any] = [None] * len(share)  # GameLog or None
            step = 0
            while True:
                moved = False
                for i, events in enumerate(share):
                    if step >= len(events):
                        continue
                    kind, data = events[step]
                    agg = aggregates[i]
                    if agg is None:
                        agg = aggregates[i] = GameLog(kind, data)
                    else:
                        agg.happened(kind, data)
                    app.save(agg)
                    moved = True
                if not moved:
                    return
                step += 1
        except BaseException as exc:  # reported by the caller
            errors.append(exc)

    shares = [s for s in shares if s]
    start = threading.Barrier(len(shares) + 1)
    workers = [threading.Thread(target=work, args=(s,), daemon=True) for s in shares]
    for w in workers:
        w.start()
    start.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - t0
    if errors:
        app.close()
        raise errors[0]
    return elapsed, app


async def peer_count(services: Services, dbname: str) -> int:
    url = make_url(services.database_admin_url).set(database=dbname)
    conn = await asyncpg.connect(asyncpg_dsn(url.render_as_string(hide_password=False)))
    try:
        tables = await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        counts = {
            t["table_name"]: await conn.fetchval(f'SELECT count(*) FROM "{t["table_name"]}"')
            for t in tables
        }
    finally:
        await conn.close()
    return max(counts.values(), default=0)


# -- the limit: batched raw inserts -------------------------------------------------------------

LIMIT_TABLE = """
CREATE TABLE limit_events (
    position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_id text NOT NULL,
    stream_type text NOT NULL,
    version integer NOT NULL,
    event_id uuid NOT NULL UNIQUE,
    type text NOT NULL,
    data jsonb NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (stream_id, version)
)
"""

LIMIT_INSERT = """
INSERT INTO limit_events (stream_id, stream_type, version, event_id, type, data, metadata)
SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::uuid[], $5::text[],
                     $6::jsonb[], $7::jsonb[])
"""


async def limit(url: str, rows: list[Row], batch: int) -> float:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await conn.execute(LIMIT_TABLE)
        batches = [rows[i : i + batch] for i in range(0, len(rows), batch)]
        args = [
            (
                [r.stream_id for r in b],
                [r.stream_type for r in b],
                [r.version for r in b],
                [uuid.uuid4() for _ in b],
                [r.type for r in b],
                [r.data for r in b],
                [r.metadata for r in b],
            )
            for b in batches
        ]
        t0 = time.perf_counter()
        for a in args:
            async with conn.transaction():
                await conn.execute(LIMIT_INSERT, *a)
        elapsed = time.perf_counter() - t0
        stored = await conn.fetchval("SELECT count(*) FROM limit_events")
        if stored != len(rows):
            raise RuntimeError(f"limit: {stored} rows stored, {len(rows)} inserted")
    finally:
        await conn.close()
    return elapsed


async def peer_round(
    services: Services, o: Ours, threads: int, batch: int, with_limit: bool, fast: bool = False
) -> tuple[float, float, float | None]:
    """The peer (in its fastest configuration with ``fast``) writing the events ``o``
    committed: (seconds, CPU seconds, and the limit's seconds when asked, on the same
    database)."""
    async with fresh_database(services, "bench_tp_peer", migrate=False) as (name, url):
        watcher = await asyncpg.connect(asyncpg_dsn(services.database_admin_url))
        try:
            own0, pg0 = cpu_seconds(), await backend_cpu(watcher, name)
            peer_s, app = await asyncio.to_thread(peer, services, name, o.rows, threads, fast)
            own1, pg1 = cpu_seconds(), await backend_cpu(watcher, name)
            app.close()
        finally:
            await watcher.close()
        peer_cpu = own1 - own0 + sum(v - pg0.get(p, 0.0) for p, v in pg1.items() if v == v)
        stored = await peer_count(services, name)
        if stored < o.events:
            raise RuntimeError(f"peer stored {stored} events, expected {o.events}")
        limit_s = await limit(url, o.rows, batch) if with_limit else None
    return peer_s, peer_cpu, limit_s


async def main() -> None:
    start_watchdog()
    # this process plays every bot (400 connections by default): its collector is settled as
    # the services' are (cardroom_runtime.heap), so that the load it puts on the machine's
    # two cores is the players' work, not full passes over the benchmark's own imports
    heap.settle()
    games = env_int("BENCH_GAMES", 200)
    game_type = os.environ.get("BENCH_GAME", "mix").strip() or "mix"
    if game_type == "mix":
        mix = MIX
        config: dict[str, Any] = {}
    else:  # one game type at two-seat tables: the benchmark until 2026-11-27 (highcard)
        config = json.loads(os.environ.get("BENCH_GAME_CONFIG", '{"rounds": 3}'))
        if game_type != "highcard" and "BENCH_GAME_CONFIG" not in os.environ:
            config = {}
        mix = [(game_type, 2, config)]
    setup = Setup(
        games=games,
        mix=mix,
        seconds=env_float("BENCH_TP_SECONDS", 20.0),
        stack=os.environ.get("BENCH_TP_STACK", "deployed").strip() or "deployed",
        bots=os.environ.get("BENCH_TP_BOTS", "random").strip() or "random",
        bot_procs=env_int("BENCH_TP_BOT_PROCS", 1 if games < 500 else 2),
        stagger=env_float("BENCH_TP_STAGGER", 2.0 / games),
    )
    if setup.stack not in ("deployed", "pipeline"):
        raise SystemExit(f"BENCH_TP_STACK: deployed or pipeline, not {setup.stack!r}")
    threads = env_int("BENCH_PEER_THREADS", 16)
    batch = env_int("BENCH_LIMIT_BATCH", 1000)
    rounds = max(1, env_int("BENCH_ROUNDS", 3))
    report = Report("throughput")
    report.sizes = {"games": games, "rounds": rounds, "seconds": setup.seconds}
    report.settings = {
        "game": game_type,
        "mix": [f"{g} x{n}" for g, n, _ in mix],
        "config": config,
        "stack": setup.stack,
        "nats": "own, sync_interval always" if setup.stack == "deployed" else "shared",
        "bots": setup.bots,
        "bot_procs": setup.bot_procs,
        "peer_threads": threads,
        "limit_batch": batch,
    }
    from cardroom_runtime.games import load_games

    load_games("support.highcard:GAME")
    # ours, the peer's seconds and CPU seconds (default), the same in its fastest configuration
    measured: list[tuple[Ours, float, float, float, float]] = []
    limit_s = float("nan")
    async with servers() as services:
        report.line(
            f"throughput: {games} tables at once of {', '.join(report.settings['mix'])}"
            f" ({setup.bots} bots; "
            + (
                f"each plays games for {setup.seconds:.0f} s"
                if setup.seconds > 0
                else "one game each, played to its end"
            )
            + f"), {setup.stack} services, NATS {report.settings['nats']}; {rounds} round(s)"
            " of ours then the peer ..."
        )
        for r in range(rounds):
            o = await ours(services, setup)
            peer_s, peer_cpu, lim = await peer_round(
                services, o, threads, batch, with_limit=r == rounds - 1
            )
            fast_s, fast_cpu, _ = await peer_round(services, o, threads, batch, False, fast=True)
            if lim is not None:
                limit_s = lim
            measured.append((o, peer_s, peer_cpu, fast_s, fast_cpu))
            per_k = {k: 1000 * v / o.events for k, v in o.cpu.items()}
            report.line(
                f"  round {r + 1}: ours {o.rate:6.0f} events/s ({o.events} events of "
                f"{o.finished} games over "
                f"{o.span:.1f} s, first commit to all projected; {o.uncounted} after the bots"
                f" stopped not counted ({o.uncounted_house} the house's); until the stop"
                f" returned {o.events / o.span_until_stop:.0f}; window count "
                f"{o.window_rate:.0f}), peer fastest {o.events / fast_s:5.0f} events/s: "
                f"{o.rate * fast_s / o.events:.2f}x; peer default {o.events / peer_s:5.0f}: "
                f"{o.rate * peer_s / o.events:.2f}x"
            )
            report.line(
                "           CPU ms per event: "
                + ", ".join(f"{k} {v:.1f}" for k, v in per_k.items())
                + f"; ours {1000 * sum(o.cpu.values()) / o.events:.1f}, "
                f"peer {1000 * peer_cpu / o.events:.1f} (default), "
                f"{1000 * fast_cpu / o.events:.1f} (fastest)"
            )
    ratios = [o.rate * fast_s / o.events for o, _, _, fast_s, _ in measured]
    default_ratios = [o.rate * peer_s / o.events for o, peer_s, _, _, _ in measured]
    window_ratios = [o.window_rate * peer_s / o.events for o, peer_s, _, _, _ in measured]
    over_peer = statistics.median(ratios)
    # the round whose ratio is the median stands for the run in the figures below
    o, peer_s, peer_cpu, fast_s, fast_cpu = measured[median_round(ratios)]
    peer_rate = o.events / peer_s
    limit_rate = measured[-1][0].events / limit_s
    over_limit = measured[-1][0].rate / limit_rate
    report.line(
        f"  (the machine's {os.cpu_count()} cores give {1000 * (os.cpu_count() or 1)} CPU ms per "
        "second; ours runs the whole pipeline with its bots, the peer and the limit only append)"
    )
    report.line(
        f"  limit: {limit_rate:8.0f} events/s (asyncpg, {batch} rows per insert, "
        f"{limit_s:.2f} s); ours/limit {over_limit:.3f}x (last round)"
    )
    v = verdict(over_peer, TARGET_OVER_PEER)
    report.line(
        f"  ours/peer (fastest), median of {len(ratios)} round(s): {over_peer:.2f}x "
        f"({', '.join(f'{x:.2f}' for x in ratios)}; target >= {TARGET_OVER_PEER:.0f}x: {v})"
    )
    report.line(
        f"  ours/peer (default): {statistics.median(default_ratios):.2f}x; the count until "
        f"2026-11-27 (ours' window against the default peer): "
        f"{statistics.median(window_ratios):.2f}x"
    )
    report.sizes["events"] = o.events
    report.data.update(
        {
            "game_type": game_type,
            "config": config,
            "games": games,
            "games_played": o.finished,
            "events": o.events,
            "rounds": [
                {
                    "ours_events_per_second_held_against_target": mo.rate,
                    "ours_events_per_second_sustained": mo.sustained,
                    "ours_events_per_second_wall": mo.wall_rate,
                    "ours_cpu_seconds_by_process": mo.cpu,
                    "followers_catch_up_seconds": mo.catch_up,
                    "peer_events_per_second": mo.events / ps,
                    "peer_cpu_seconds": pc,
                    "ours_over_peer_default": mo.rate * ps / mo.events,
                    "peer_fastest_events_per_second": mo.events / fs,
                    "peer_fastest_cpu_seconds": fc,
                    "ours_over_peer": mo.rate * fs / mo.events,
                    "ours_window_over_peer_default": mo.window_rate * ps / mo.events,
                }
                for mo, ps, pc, fs, fc in measured
            ],
            "ours": {
                "events_per_second_sustained": o.sustained,
                "events_per_second_wall": o.wall_rate,
                "followers_catch_up_seconds": o.catch_up,
                "events_per_second_pipeline": o.pipeline_rate,
                "events_per_second_held_against_target": o.rate,
                "span_seconds": o.span,
                "span_until_stop_seconds": o.span_until_stop,
                "uncounted_events": o.uncounted,
                "uncounted_house_events": o.uncounted_house,
                "events_per_second_window_count": o.window_rate,
                "seconds": o.seconds,
                "cpu_seconds_by_process": o.cpu,
            },
            "peer": {
                "library": "eventsourcing",
                "how": "Application, POSTGRES persistence, one aggregate per game, one event "
                "per save (own transaction), threads advancing their aggregates round-robin",
                "threads": threads,
                "events_per_second": peer_rate,
                "seconds": peer_s,
                "cpu_seconds": peer_cpu,
                "fastest": {
                    "env": {"POSTGRES_ENABLE_DB_FUNCTIONS": "y"},
                    "events_per_second": o.events / fast_s,
                    "seconds": fast_s,
                    "cpu_seconds": fast_cpu,
                },
            },
            "limit": {
                "how": "asyncpg INSERT ... SELECT FROM unnest, one transaction per batch",
                "batch": batch,
                "events_per_second": limit_rate,
                "seconds": limit_s,
            },
            "ours_over_peer": over_peer,
            "ours_over_peer_by_round": ratios,
            "ours_over_peer_default": statistics.median(default_ratios),
            "ours_window_over_peer_default": statistics.median(window_ratios),
            "ours_over_limit": over_limit,
            "target": {"ours_over_peer_at_least": TARGET_OVER_PEER, "verdict": v},
        }
    )
    report.write()


if __name__ == "__main__":
    asyncio.run(main())
