"""Recovery benchmark: after a SIGKILL of each service under load, how long until every game
in play moves again.

Every service runs as its own OS process, as deployed (gamemaster, relay, projector,
acktracker, timers, analytics), on a fresh database. BENCH_RECOVERY_TABLES tables (default 12)
play real games at once, a mix of take5 (4 bots), the 66 game (2) and papas (3); each table
starts a new game when its game ends, so the load stays while the services are killed.

For each service in turn (BENCH_RECOVERY_SERVICES, default all six; BENCH_RECOVERY_ROUNDS
rounds, default 1): the games in play are those with an event in the last second; the
service is killed (SIGKILL) and started again at once, as a supervisor with a restart
policy would (the new process's start-up counts in the figure); then, for each of those
games, the time from the kill to its next committed event, both on the database's clock.
The figure is the slowest game's; a game with no event within BENCH_RECOVERY_WAIT seconds
(default 30) is reported as stalled.

Beside it, measured the same way in the same run: the same wait from an instant when nothing
is killed (the floor: how long the slowest game takes to move anyway).

Target (issue "Benchmarks a skeptic accepts"): every game moves again within 2 s of any single
service being killed. Reported PASS/MISS, not asserted.
Run alone: ``BENCH_RECOVERY_TABLES=6 uv run --frozen python bench/bench_recovery.py``.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import asyncpg
from cardroom_runtime.games import load_games
from cardroom_runtime.postgres import asyncpg_dsn
from common import (
    MIX,
    Report,
    Tables,
    env_float,
    env_int,
    env_list,
    fresh_database,
    servers,
    service_env,
    start_watchdog,
    unique_name,
    verdict,
)
from support.stack import ServiceProcess

SERVICES = ("gamemaster", "acktracker", "relay", "projector", "timers", "analytics")
TARGET_SECONDS = 2.0
ACTIVE_WITHIN = 1.0  # a game with an event this recently is in play

_IN_PLAY = """
SELECT DISTINCT e.stream_id FROM events e
WHERE e.recorded_at > $1::timestamptz - make_interval(secs => $2)
  AND NOT EXISTS (SELECT 1 FROM events f
                  WHERE f.stream_id = e.stream_id AND f.type = 'table.finished')
"""
_NEXT = """
SELECT stream_id, min(recorded_at) FROM events
WHERE stream_id = ANY($1::text[]) AND recorded_at > $2::timestamptz
GROUP BY stream_id
"""


async def _now(db: asyncpg.Connection[Any]) -> datetime:
    value: datetime = await db.fetchval("SELECT clock_timestamp()")
    return value


async def _wait_moved(
    db: asyncpg.Connection[Any], games: list[str], since: datetime, wait: float
) -> dict[str, float | None]:
    """Seconds from ``since`` to each game's next event (None: none within ``wait``)."""
    moved: dict[str, float | None] = dict.fromkeys(games)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        rows = await db.fetch(_NEXT, games, since)
        for game, at in rows:
            moved[game] = (at - since).total_seconds()
        if all(v is not None for v in moved.values()):
            break
        await asyncio.sleep(0.05)  # polling the database: the figure is read from its clock
    return moved


async def _in_play(db: asyncpg.Connection[Any], at: datetime) -> list[str]:
    return [r[0] for r in await db.fetch(_IN_PLAY, at, ACTIVE_WITHIN)]


async def _measure(
    db: asyncpg.Connection[Any], action: Any, wait: float
) -> tuple[int, float | None, int]:
    """(games in play, the slowest one's seconds to move, stalled games) around ``action``."""
    at = await _now(db)
    games = await _in_play(db, at)
    await action()
    moved = await _wait_moved(db, games, at, wait)
    stalled = sum(1 for v in moved.values() if v is None)
    times = [v for v in moved.values() if v is not None]
    return len(games), (max(times) if times else None), stalled


async def main() -> None:
    start_watchdog()
    load_games()  # the bots play the real games
    tables_n = env_int("BENCH_RECOVERY_TABLES", 12)
    rounds = env_int("BENCH_RECOVERY_ROUNDS", 1)
    wait = env_float("BENCH_RECOVERY_WAIT", 30.0)
    chosen = env_list("BENCH_RECOVERY_SERVICES", SERVICES)
    report = Report("recovery")
    report.sizes = {"tables": tables_n, "rounds": rounds}
    report.settings = {"services": chosen, "mix": [m[0] for m in MIX], "wait_s": wait}
    async with servers() as services, fresh_database(services, "benchrec") as (_, url):
        root = unique_name("brec")
        env = service_env(services, url, root, "support.highcard:GAME")
        procs = {name: ServiceProcess(name, env) for name in SERVICES}
        db = await asyncpg.connect(asyncpg_dsn(url))
        tables = Tables(services.nats_url, root, tables_n, prefix="rc")
        try:
            await asyncio.gather(*(p.start() for p in procs.values()))
            tables.start()
            # warm-up: every table has a game in play
            deadline = time.monotonic() + 120
            while len(await _in_play(db, await _now(db))) < tables_n:
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)

            async def nothing() -> None:
                return None

            floors: list[float] = []
            results: dict[str, list[dict[str, Any]]] = {}
            for _ in range(rounds):
                n, slowest, stalled = await _measure(db, nothing, wait)
                if slowest is not None:
                    floors.append(slowest)
                report.line(f"floor (nothing killed): {n} games, slowest {slowest} s")
                for name in chosen:
                    proc = procs[name]

                    async def kill_and_restart(proc: ServiceProcess = proc) -> None:
                        proc.kill()
                        await proc.start()

                    t0 = time.perf_counter()
                    n, slowest, stalled = await _measure(db, kill_and_restart, wait)
                    entry = {
                        "games": n,
                        "slowest_s": slowest,
                        "stalled": stalled,
                        "restart_s": round(time.perf_counter() - t0, 3),
                    }
                    results.setdefault(name, []).append(entry)
                    report.line(
                        f"kill {name:<10}: {n} games in play; every game moved again after "
                        f"{'-' if slowest is None else f'{slowest:.2f}'} s"
                        f"{f' ({stalled} STALLED)' if stalled else ''}"
                    )
                    await asyncio.sleep(2.0)  # the load settles before the next kill
        finally:
            await tables.stop()
            await db.close()
            for p in procs.values():
                p.stop()
    worst = {
        name: max(float("inf") if e["stalled"] else e["slowest_s"] or 0.0 for e in entries)
        for name, entries in results.items()
    }
    overall = max(worst.values()) if worst else float("inf")
    floor = max(floors) if floors else None
    v = verdict(overall, TARGET_SECONDS, at_most=True)
    report.line(
        f"recovery: slowest {overall:.2f} s after a kill (floor {floor} s with nothing "
        f"killed); target <= {TARGET_SECONDS} s: {v}"
    )
    report.line(f"tables: {tables.finished} games finished, {tables.failed} creations retried")
    report.data.update(
        recovery_s=worst,
        recovery_max_s=overall,
        floor_s=floor,
        kills=results,
        games_finished=tables.finished,
        target={"recovery_at_most_s": TARGET_SECONDS, "verdict": v},
    )
    report.write()


if __name__ == "__main__":
    asyncio.run(main())
