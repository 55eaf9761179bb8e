"""Latency under load: the pipeline benchmark's timed commands while background games carry
a given share of the peak throughput measured in the same run, beside the floor sampled the
same way.

Every service runs as its own OS process (gamemaster, relay, projector, acktracker, timers,
analytics) with NATS as deployed (a nats-server of its own, JetStream fsync on every write:
``BENCH_LOAD_NATS=shared`` uses the server found instead), on a fresh database. Phases:

- idle: the timed commands alone (bench_pipeline's loop: real games one at a time, take5 for
  3 and the 66 game for 2 with heuristic bots, each command timed from its sending until its
  reply and every notification of its events reached their addressees, one floor sample, a
  single-statement insert plus a NATS request/reply, right before each command);
  ``BENCH_LOAD_COMMANDS`` commands (default 500).
- peak: ``BENCH_LOAD_TABLES`` tables (default 200) of take5 (4), the 66 game (2) and papas (3)
  with random bots, each playing games one after another as fast as the system answers;
  after ``BENCH_LOAD_WARMUP`` seconds (default 5), the events committed over
  ``BENCH_LOAD_PEAK_SECONDS`` (default 20) per second (the commit rate, database clock) is
  the peak, and the events per command (distinct command ids) in that window convert a
  share of it into commands. ``BENCH_LOAD_PEAK`` (events/s) passes a peak in instead (e.g.
  from bench_throughput's run on the same machine): the phase then only measures the events
  per command (a short ``BENCH_LOAD_PEAK_SECONDS`` will do), and its own rate is printed
  beside.
- each level of ``BENCH_LOAD_LEVELS`` (default 0.5,0.8): the same tables, every bot command
  paced so that all of them together send at most level x peak / (events per command)
  commands a second (evenly spaced); after the warm-up, the timed commands as in the idle
  phase, while the commit rate over exactly that stretch is measured (printed as the share
  of the peak the background tables achieved, and with the timed games' events: a pace the
  tables cannot reach shows as a lower share).

Between phases the tables stop and the run waits until the relay and the projector have
every event, so that no backlog of one phase loads the next.

Target (issue "Benchmarks a skeptic accepts"): at 50% of the peak, p99 at most 4x the floor's
p99, both sampled in that phase (the floor under the same load: what the path cannot avoid
then); the ratio to the idle floor's p99 is printed beside it.
Run alone: ``BENCH_LOAD_TABLES=10 BENCH_LOAD_COMMANDS=50 BENCH_LOAD_PEAK_SECONDS=5 uv run
--frozen python bench/bench_load.py``.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import asyncpg
from bench_pipeline import latency
from bench_throughput import CAUGHT_UP
from cardroom_eventstore import EventStore
from cardroom_runtime import heap
from cardroom_runtime.games import load_games
from cardroom_runtime.postgres import asyncpg_dsn
from common import (
    DEPLOYED,
    Fleet,
    Report,
    Tables,
    deployed_nats,
    env_float,
    env_int,
    env_list,
    fresh_database,
    pct,
    pipeline,
    servers,
    start_watchdog,
    unique_name,
    verdict,
)

TARGET_P99_OVER_FLOOR = 4.0  # at TARGET_LEVEL of the peak
TARGET_LEVEL = 0.5

# events committed in a window: all, distinct commands, and the background tables' alone
# (tables whose creator's name starts with "bg"; the timed games' are the rest)
_WINDOW = """
SELECT count(*), count(DISTINCT e.metadata ->> 'command_id'),
       count(*) FILTER (WHERE c.creator LIKE 'bg%')
FROM events e
LEFT JOIN (SELECT stream_id, data ->> 'creator' AS creator FROM events
           WHERE type = 'table.created') c ON c.stream_id = e.stream_id
WHERE e.recorded_at > $1 AND e.recorded_at <= $2
"""


async def _clock(db: asyncpg.Connection[Any]) -> datetime:
    value: datetime = await db.fetchval("SELECT clock_timestamp()")
    return value


async def _rate(
    db: asyncpg.Connection[Any], t0: datetime, t1: datetime
) -> tuple[float, float, float]:
    """Between ``t0`` and ``t1``: events committed per second, events per command, and the
    background tables' events per second."""
    row = await db.fetchrow(_WINDOW, t0, t1)
    events, commands, background = (row[0], row[1], row[2]) if row is not None else (0, 0, 0)
    seconds = (t1 - t0).total_seconds()
    per_command = events / commands if commands else float("nan")
    return events / seconds, per_command, background / seconds


async def _caught_up(db: asyncpg.Connection[Any], timeout: float = 600) -> float:
    """Seconds until the relay and the projector have every event."""
    t0 = time.perf_counter()
    async with asyncio.timeout(timeout):
        while not await db.fetchval(CAUGHT_UP):  # noqa: ASYNC110 - other processes' progress
            await asyncio.sleep(0.1)
    return time.perf_counter() - t0


def _figures(timed: list[float], floor: list[float]) -> dict[str, Any]:
    lat = {f"p{k}": pct(timed, q) * 1e3 for k, q in (("50", 0.5), ("99", 0.99), ("999", 0.999))}
    fl = {f"p{k}": pct(floor, q) * 1e3 for k, q in (("50", 0.5), ("99", 0.99), ("999", 0.999))}
    return {
        "latency_ms": {**lat, "n": len(timed)},
        "floor_ms": {**fl, "n": len(floor)},
        "p50_over_floor": lat["p50"] / fl["p50"],
        "p99_over_floor": lat["p99"] / fl["p99"],
    }


async def main() -> None:
    start_watchdog()
    heap.settle()  # this process may play hundreds of bots (as bench_throughput settles it)
    load_games()
    commands = env_int("BENCH_LOAD_COMMANDS", 500)
    tables_n = env_int("BENCH_LOAD_TABLES", 200)
    warmup = env_float("BENCH_LOAD_WARMUP", 5.0)
    peak_seconds = env_float("BENCH_LOAD_PEAK_SECONDS", 20.0)
    given_peak = env_float("BENCH_LOAD_PEAK", 0.0)
    levels = [float(x) for x in env_list("BENCH_LOAD_LEVELS", ["0.5", "0.8"])]
    own_nats = env_list("BENCH_LOAD_NATS", ["deployed"])[0] != "shared"
    procs = env_int("BENCH_LOAD_BOT_PROCS", 1 if tables_n < 500 else 2)
    report = Report("load")
    report.sizes = {"commands": commands, "tables": tables_n, "peak_seconds": peak_seconds}
    report.settings = {
        "levels": levels,
        "nats": "own, sync_interval always" if own_nats else "shared",
        "services": list(DEPLOYED),
        "bot_procs": procs,
        "warmup_s": warmup,
        "peak_given": given_peak or None,
    }
    phases: dict[str, dict[str, Any]] = {}
    root = unique_name("bload")
    async with (
        servers() as found,
        deployed_nats(found, own=own_nats) as services,
        fresh_database(found, "bench_load") as (_, url),
    ):
        store = await EventStore.connect(url)
        db = await asyncpg.connect(asyncpg_dsn(url))
        try:
            async with pipeline(services, url, root, games="", names=DEPLOYED):

                async def timed(prefix: str) -> dict[str, Any]:
                    lat, per_type, floor = await latency(
                        url, services.nats_url, root, store, commands, prefix=prefix
                    )
                    await floor.close()
                    return {**_figures(lat, floor.samples), "commands_per_type": per_type}

                def fleet(rate: float | None) -> Fleet:
                    tables = Tables(services.nats_url, root, tables_n, prefix=f"bg{len(phases)}")
                    return Fleet(tables, rate=rate, procs=procs, stagger=2.0 / tables_n)

                report.line(f"load: idle, {commands} timed commands ...")
                phases["idle"] = await timed("idle")
                report.line(f"load: peak, {tables_n} tables unpaced for {peak_seconds} s ...")
                bg = fleet(None)
                await bg.start()
                await asyncio.sleep(warmup)
                t0 = await _clock(db)
                await asyncio.sleep(peak_seconds)
                t1 = await _clock(db)
                await bg.finish(drain=False)
                measured, per_command, _ = await _rate(db, t0, t1)
                phases["peak"] = {
                    "events_per_second": measured,
                    "events_per_command": per_command,
                    "followers_catch_up_s": await _caught_up(db),
                }
                peak = given_peak or measured
                for level in levels:
                    rate = level * peak / per_command
                    report.line(
                        f"load: {level:.0%} of {peak:.0f} events/s ({rate:.0f} commands/s) ..."
                    )
                    bg = fleet(rate)
                    await bg.start()
                    await asyncio.sleep(warmup)
                    t0 = await _clock(db)
                    got = await timed(f"l{int(level * 100)}")
                    t1 = await _clock(db)
                    await bg.finish(drain=False)
                    achieved, level_per_command, background = await _rate(db, t0, t1)
                    phases[f"{level:g}"] = {
                        **got,
                        "level": level,
                        "commands_per_second_paced": rate,
                        "events_per_second": achieved,
                        "background_events_per_second": background,
                        "share_of_peak": background / peak,
                        "share_of_peak_with_timed": achieved / peak,
                        "events_per_command": level_per_command,
                        "followers_catch_up_s": await _caught_up(db),
                    }
        finally:
            await db.close()
            await store.close()
    idle = phases["idle"]
    for name, ph in phases.items():
        if "latency_ms" not in ph:
            continue
        lat, fl = ph["latency_ms"], ph["floor_ms"]
        ph["p99_over_idle_floor"] = lat["p99"] / idle["floor_ms"]["p99"]
        load = (
            "no load"
            if name == "idle"
            else f"background {ph['share_of_peak']:.0%} of peak"
            f" ({ph['background_events_per_second']:.0f} events/s;"
            f" {ph['share_of_peak_with_timed']:.0%} with the timed games')"
        )
        report.line(
            f"  {name:>4}: {load}: latency p50 {lat['p50']:.2f} ms p99 {lat['p99']:.2f} ms"
            f" p99.9 {lat['p999']:.2f} ms | floor p50 {fl['p50']:.2f} p99 {fl['p99']:.2f} ms"
            f" -> p50 {ph['p50_over_floor']:.2f}x, p99 {ph['p99_over_floor']:.2f}x"
            f" (p99 over the idle floor's {ph['p99_over_idle_floor']:.2f}x)"
        )
    pk = phases["peak"]
    report.line(
        f"  peak: {pk['events_per_second']:.0f} events/s committed by {tables_n} tables"
        f" ({pk['events_per_command']:.2f} events a command; the followers caught up"
        f" {pk['followers_catch_up_s']:.1f} s after the tables stopped)"
        + (f"; the peak held: {peak:.0f}, given" if given_peak else "")
    )
    judged = phases.get(f"{TARGET_LEVEL:g}")
    ratio = judged["p99_over_floor"] if judged else float("inf")
    v = verdict(ratio, TARGET_P99_OVER_FLOOR, at_most=True)
    report.line(
        f"  at {TARGET_LEVEL:.0%} of peak: p99 {ratio:.2f}x the floor's p99;"
        f" target <= {TARGET_P99_OVER_FLOOR:.0f}x: {v}"
    )
    report.data.update(
        peak_events_per_second=peak,
        phases=phases,
        target={
            "level": TARGET_LEVEL,
            "p99_over_floor_at_most": TARGET_P99_OVER_FLOOR,
            "verdict": v,
        },
    )
    report.write()


if __name__ == "__main__":
    asyncio.run(main())
