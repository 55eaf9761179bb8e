"""Footprint benchmark: the resident memory of every service process with many games in play.

Every service runs as its own OS process, as deployed (gamemaster, relay, projector,
acktracker, timers, analytics), on a fresh database. Two players open BENCH_FOOTPRINT_GAMES
games (default 1000) of real games at once, a mix of take5, the 66 game and papas, each
started and left in play (the players acknowledge everything and make no move, so every
game stays open, as at a busy moment when players think). Then each process's resident set
(``VmRSS``) is read, beside the same process's resident set before any game was opened
(its floor: what the process holds for itself), and the difference per game is reported.

Target (issue "Benchmarks a skeptic accepts"): the gamemaster holds at most 20 KiB per game
in play; the others are reported.
Run alone: ``BENCH_FOOTPRINT_GAMES=200 uv run --frozen python bench/bench_footprint.py``.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import asyncpg
from cardroom_client import Client
from cardroom_runtime.games import load_games
from cardroom_runtime.postgres import asyncpg_dsn
from cardroom_wire import Notification
from common import (
    Report,
    env_int,
    fresh_database,
    servers,
    service_env,
    start_watchdog,
    unique_name,
    verdict,
)
from support.stack import ServiceProcess

SERVICES = ("gamemaster", "relay", "projector", "acktracker", "timers", "analytics")
MIX: list[tuple[str, dict[str, Any]]] = [
    ("take5", {"win_score": 66}),
    ("sixtysix", {}),
    ("papas", {}),
]
TARGET_KIB = 20.0  # the gamemaster's bytes per game in play
CONCURRENCY = 16  # tables opened at once
_OWED = "SELECT count(*) FROM pending_acks"


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


async def _quiet(db: asyncpg.Connection[Any], timeout: float = 120) -> None:
    """Until every notification is acknowledged (nothing owed: the services are idle)."""
    async with asyncio.timeout(timeout):
        while await db.fetchval(_OWED):  # noqa: ASYNC110 - a count in another process's database
            await asyncio.sleep(0.2)


async def main() -> None:
    start_watchdog()
    load_games()
    games_n = env_int("BENCH_FOOTPRINT_GAMES", 1000)
    report = Report("footprint")
    report.sizes = {"games": games_n}
    report.settings = {"mix": [m[0] for m in MIX], "players": 2}
    async with servers() as services, fresh_database(services, "benchfp") as (_, url):
        root = unique_name("bfp")
        env = service_env(services, url, root, "support.highcard:GAME")
        # one player opens every table here, 16 at a time, and the lobby's count of its
        # waiting tables lags behind the joins: the limit guards against players, not this
        env["CARDROOM_OPEN_TABLES"] = "0"
        procs = {name: ServiceProcess(name, env) for name in SERVICES}
        db = await asyncpg.connect(asyncpg_dsn(url))
        players: list[Client] = []
        try:
            await asyncio.gather(*(p.start() for p in procs.values()))
            pids = {n: p.proc.pid for n, p in procs.items() if p.proc is not None}
            for name in ("fpa", "fpb"):
                client = await Client.connect(services.nats_url, name, subject_root=root)

                async def listen(note: Notification) -> None:
                    return None  # acknowledged by the SDK once handled; no move

                client.on_notification(listen)
                players.append(client)
            await asyncio.sleep(1.0)  # the services settle after their start
            before = {n: rss_bytes(pid) for n, pid in pids.items()}
            a, b = players
            limit = asyncio.Semaphore(CONCURRENCY)
            kinds = itertools.cycle(MIX)

            async def open_table(game_type: str, config: dict[str, Any]) -> str:
                async with limit:
                    game = await a.create(game_type, config, seats=2)
                    await b.join(game)
                    return game

            opened = await asyncio.gather(*(open_table(*next(kinds)) for _ in range(games_n)))
            await _quiet(db)
            playing = await db.fetchval(
                "SELECT count(*) FROM streams s WHERE NOT EXISTS (SELECT 1 FROM events e"
                " WHERE e.stream_id = s.stream_id AND e.type = 'table.finished')"
            )
            after = {n: rss_bytes(pid) for n, pid in pids.items()}
        finally:
            await asyncio.gather(*(c.close() for c in players), return_exceptions=True)
            await db.close()
            for p in procs.values():
                p.stop()
    per_game = {n: (after[n] - before[n]) / 1024 / max(len(opened), 1) for n in after}
    for name in SERVICES:
        report.line(
            f"{name:<11} {before[name] / 2**20:7.1f} MiB idle -> {after[name] / 2**20:7.1f} MiB"
            f" with {playing} games in play: {per_game[name]:6.1f} KiB a game"
        )
    v = verdict(per_game["gamemaster"], TARGET_KIB, at_most=True)
    report.line(f"gamemaster: {per_game['gamemaster']:.1f} KiB a game; target <= {TARGET_KIB}: {v}")
    report.data.update(
        games_in_play=playing,
        rss_idle_bytes=before,
        rss_bytes=after,
        kib_per_game=per_game,
        target={"gamemaster_kib_per_game_at_most": TARGET_KIB, "verdict": v},
    )
    report.write()


if __name__ == "__main__":
    asyncio.run(main())
