"""Pipeline benchmark: the latency of the whole service chain, beside its floor.

- floor: one asyncpg transaction (an insert) plus one NATS request/reply, measured here, as
  the commands are sent: each sample after a pause (``BENCH_FLOOR_PAUSE``, 2 ms), since every
  command of a game comes after one (the players' acks, the follow-ups). Also printed: the
  same samples back to back, which is cheaper on a virtual machine, as no command is: a CPU
  that runs nothing halts, and waking it costs each hop (a ``SELECT 1`` round trip here:
  0.06 ms back to back, 0.2 ms after 0.5 ms or more of idling; the whole floor 0.55-0.65 ms
  back to back, 0.8-1.0 ms after a pause of 0.5 ms to 5 ms);
- latency: from a command sent until every addressee's handler has its notification (one
  game at a time, so nothing queues), p50 and p99. Target: p50 at most 3x the floor.

The services run as separate OS processes, as deployed. Throughput under many concurrent
games is bench_throughput.py.

Run alone: ``uv run --frozen python bench/bench_pipeline.py`` (env BENCH_LATENCY_GAMES,
BENCH_FLOOR). It finds or starts PostgreSQL and NATS like the tests do, in a database and
subject root of its own. Results are printed and written as JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import asyncpg
import nats
from cardroom_client import Client
from cardroom_runtime.games import load_games
from cardroom_runtime.postgres import asyncpg_dsn
from cardroom_wire import Notification
from common import (
    Report,
    env_float,
    env_int,
    fresh_database,
    pct,
    pipeline,
    servers,
    start_watchdog,
    unique_name,
    verdict,
)


async def floor(
    database_url: str, nats_url: str, root: str, n: int, pause: float
) -> tuple[list[float], list[float]]:
    """One asyncpg transaction plus one NATS request/reply, n times after a pause of
    ``pause`` seconds each, and n times back to back."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    await conn.execute("CREATE TABLE IF NOT EXISTS bench_floor (id bigserial, data jsonb)")
    nc = await nats.connect(nats_url)

    async def echo(msg: Any) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(f"{root}.floor", cb=echo)

    async def sample() -> float:
        t0 = time.perf_counter()
        async with conn.transaction():
            await conn.execute("INSERT INTO bench_floor (data) VALUES ($1)", '{"a": 1}')
        await nc.request(f"{root}.floor", b"{}", timeout=5)
        return time.perf_counter() - t0

    paced = []
    for _ in range(n):
        await asyncio.sleep(pause)
        paced.append(await sample())
    back_to_back = [await sample() for _ in range(n)]
    await nc.close()
    await conn.close()
    return paced, back_to_back


class _Watch:
    """Notes when each event version has reached both players, and queues prompts."""

    def __init__(self) -> None:
        self.arrived: dict[int, set[str]] = {}
        self.waiters: dict[int, asyncio.Event] = {}
        self.delivered: dict[int, float] = {}  # version -> when its last addressee had it
        self.prompts: asyncio.Queue[tuple[Client, Notification] | None] = asyncio.Queue()

    def attach(self, client: Client) -> None:
        async def handler(note: Notification) -> None:
            self.arrived.setdefault(note.version, set()).add(note.player)
            if len(self.arrived[note.version]) == 2 and note.version in self.waiters:
                # delivered: the player's handler has it (what the client does next, its
                # ack, and this task's wait to be woken are not the pipeline's latency)
                self.delivered[note.version] = time.perf_counter()
                self.waiters[note.version].set()
            if note.message.get("type") == "GameOver":
                self.prompts.put_nowait(None)

        async def after(note: Notification) -> None:
            if note.actions:
                self.prompts.put_nowait((client, note))

        client.on_notification(handler, after_ack=after)


async def latency(nats_url: str, root: str, games: int) -> list[float]:
    """Command -> every addressee has its notification, measured on scripted games."""
    samples: list[float] = []
    for g in range(games):
        clients = [
            await Client.connect(nats_url, p, subject_root=root) for p in (f"lat{g}a", f"lat{g}b")
        ]
        watch = _Watch()
        for c in clients:
            watch.attach(c)
        game = await clients[0].create("highcard", {"rounds": 3}, seats=2)
        await clients[1].join(game)
        while True:
            prompt = await asyncio.wait_for(watch.prompts.get(), 30)
            if prompt is None:  # game over
                break
            client, note = prompt
            expected = note.version + 1  # the bet both players are told of
            watch.waiters[expected] = asyncio.Event()
            t0 = time.perf_counter()
            await client.send(game, {"type": "bet", "amount": 1})
            await watch.waiters[expected].wait()
            samples.append(watch.delivered[expected] - t0)
        for c in clients:
            await c.close()
    return samples


async def main() -> None:
    start_watchdog()
    parser = argparse.ArgumentParser()
    # 30 games, 180 commands: with 60 a single stalled command moved the p99 by 100x
    parser.add_argument("--latency-games", type=int, default=env_int("BENCH_LATENCY_GAMES", 30))
    parser.add_argument("--floor", type=int, default=env_int("BENCH_FLOOR", 300))
    parser.add_argument("--floor-pause", type=float, default=env_float("BENCH_FLOOR_PAUSE", 0.002))
    args = parser.parse_args()

    report = Report("pipeline")
    report.sizes = {"latency_games": args.latency_games, "floor": args.floor}
    report.settings = {"floor_pause_s": args.floor_pause}
    load_games("support.highcard:GAME")
    root = unique_name("bench")
    async with servers() as services, fresh_database(services, "bench_pipeline") as (_, url):
        async with pipeline(services, url, root):
            fl, fl_b2b = await floor(url, services.nats_url, root, args.floor, args.floor_pause)
            lat = await latency(services.nats_url, root, args.latency_games)
        where = services.describe()

    floor_p50, floor_p99 = statistics.median(fl) * 1e3, pct(fl, 0.99) * 1e3
    b2b_p50, b2b_p99 = statistics.median(fl_b2b) * 1e3, pct(fl_b2b, 0.99) * 1e3
    lat_p50, lat_p99 = statistics.median(lat) * 1e3, pct(lat, 0.99) * 1e3
    ratio = lat_p50 / floor_p50
    report.data.update(
        {
            "where": where,
            "floor_ms": {
                "p50": floor_p50,
                "p99": floor_p99,
                "n": len(fl),
                "pause_s": args.floor_pause,
            },
            "floor_back_to_back_ms": {"p50": b2b_p50, "p99": b2b_p99, "n": len(fl_b2b)},
            "latency_over_back_to_back_floor_p50": lat_p50 / b2b_p50,
            "latency_ms": {"p50": lat_p50, "p99": lat_p99, "n": len(lat)},
            "latency_over_floor_p50": ratio,
            "target": {
                "latency_over_floor_p50_at_most": 3.0,
                "verdict": verdict(ratio, 3.0, at_most=True),
            },
        }
    )
    report.line(
        f"floor (asyncpg tx + NATS req/reply): p50 {floor_p50:.2f} ms  p99 {floor_p99:.2f} ms"
        f"  (each after a {args.floor_pause * 1e3:g} ms pause, as commands come)"
    )
    report.line(
        f"  the same back to back:             p50 {b2b_p50:.2f} ms  p99 {b2b_p99:.2f} ms"
        f"  (latency {lat_p50 / b2b_p50:.1f}x that)"
    )
    report.line(
        f"command -> all notifications:       p50 {lat_p50:.2f} ms  p99 {lat_p99:.2f} ms"
        f"  ({ratio:.1f}x floor at p50; {len(lat)} commands)"
    )
    report.line(f"target latency p50 <= 3x floor: {verdict(ratio, 3.0, at_most=True)}")
    report.write()


if __name__ == "__main__":
    asyncio.run(main())
