"""Pipeline benchmark: latency and throughput of the whole service chain, beside their floor.

- floor: one asyncpg transaction (an insert) plus one NATS request/reply, measured here;
- latency: from a command sent to all of its notifications delivered to every addressee
  (one game at a time, so nothing queues);
- throughput: events appended per second while many bot games play at once.

Run with ``make bench`` (or ``uv run python bench/bench_pipeline.py --games 200``). It finds
or starts PostgreSQL and NATS like the tests do, in a database and subject root of its own.
Results are printed and written as JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the high-card test game

import asyncpg  # noqa: E402
import nats  # noqa: E402
from cardroom_bots import play_table  # noqa: E402
from cardroom_client import Client  # noqa: E402
from cardroom_runtime import migrate  # noqa: E402
from cardroom_runtime.discovery import discover  # noqa: E402
from cardroom_runtime.games import load_games  # noqa: E402
from cardroom_runtime.postgres import asyncpg_dsn, create_database, drop_database  # noqa: E402
from cardroom_wire import Notification  # noqa: E402
from support.stack import ServiceProcess  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def floor(database_url: str, nats_url: str, root: str, n: int) -> list[float]:
    """One asyncpg transaction plus one NATS request/reply, n times."""
    conn = await asyncpg.connect(asyncpg_dsn(database_url))
    await conn.execute("CREATE TABLE IF NOT EXISTS bench_floor (id bigserial, data jsonb)")
    nc = await nats.connect(nats_url)

    async def echo(msg: Any) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(f"{root}.floor", cb=echo)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        async with conn.transaction():
            await conn.execute("INSERT INTO bench_floor (data) VALUES ($1)", '{"a": 1}')
        await nc.request(f"{root}.floor", b"{}", timeout=5)
        times.append(time.perf_counter() - t0)
    await nc.close()
    await conn.close()
    return times


class _Watch:
    """Notes when each event version has reached both players, and queues prompts."""

    def __init__(self) -> None:
        self.arrived: dict[int, set[str]] = {}
        self.waiters: dict[int, asyncio.Event] = {}
        self.prompts: asyncio.Queue[tuple[Client, Notification] | None] = asyncio.Queue()

    def attach(self, client: Client) -> None:
        async def handler(note: Notification) -> None:
            self.arrived.setdefault(note.version, set()).add(note.player)
            if len(self.arrived[note.version]) == 2 and note.version in self.waiters:
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
            samples.append(time.perf_counter() - t0)
        for c in clients:
            await c.close()
    return samples


async def throughput(
    nats_url: str, root: str, store_url: str, games: int
) -> tuple[float, int, float]:
    conn = await asyncpg.connect(asyncpg_dsn(store_url))
    before = await conn.fetchval("SELECT count(*) FROM events")
    t0 = time.perf_counter()
    await asyncio.gather(
        *(
            play_table(
                nats_url,
                "highcard",
                [f"tp{i}a", f"tp{i}b"],
                subject_root=root,
                config={"rounds": 3},
                timeout=600,
            )
            for i in range(games)
        )
    )
    elapsed = time.perf_counter() - t0
    after = await conn.fetchval("SELECT count(*) FROM events")
    await conn.close()
    return (after - before) / elapsed, after - before, elapsed


async def _watchdog(seconds: float) -> None:
    """Print what every task waits on if the run takes far too long (diagnosis only)."""
    await asyncio.sleep(seconds)
    print(f"still running after {seconds:.0f} s; pending tasks:", file=sys.stderr)
    for task in asyncio.all_tasks():
        task.print_stack(limit=4, file=sys.stderr)


async def main() -> None:
    asyncio.get_running_loop().create_task(
        _watchdog(float(os.environ.get("BENCH_WATCHDOG", "600")))
    )
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=200, help="concurrent bot games")
    parser.add_argument("--latency-games", type=int, default=10)
    parser.add_argument("--floor", type=int, default=300)
    args = parser.parse_args()

    load_games("support.highcard:GAME")
    services = await discover()
    root = "bench" + secrets.token_hex(3)
    name = f"{root}_db"
    database_url = await create_database(services.database_admin_url, name)
    try:
        await migrate.upgrade_async(database_url)
        # the pipeline's services as separate processes, as deployed (2 cores to share)
        env = {
            **os.environ,
            "CARDROOM_DATABASE_URL": database_url,
            "CARDROOM_NATS_URL": services.nats_url,
            "CARDROOM_SUBJECT_ROOT": root,
            "CARDROOM_GAMES": "support.highcard:GAME",
            "PYTHONPATH": str(ROOT / "tests"),
        }
        procs = [ServiceProcess(n, env) for n in ("gamemaster", "relay", "projector", "acktracker")]
        await asyncio.gather(*(p.start() for p in procs))
        try:
            fl = await floor(database_url, services.nats_url, root, args.floor)
            lat = await latency(services.nats_url, root, args.latency_games)
            tps, events, elapsed = await throughput(
                services.nats_url, root, database_url, args.games
            )
        finally:
            for p in procs:
                p.stop()
    finally:
        await drop_database(services.database_admin_url, name)
        await services.aclose()

    floor_p50, floor_p99 = statistics.median(fl) * 1e3, pct(fl, 0.99) * 1e3
    lat_p50, lat_p99 = statistics.median(lat) * 1e3, pct(lat, 0.99) * 1e3
    floor_rate = 1 / statistics.median(fl)
    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "where": services.describe(),
        "floor_ms": {"p50": floor_p50, "p99": floor_p99, "n": len(fl)},
        "latency_ms": {"p50": lat_p50, "p99": lat_p99, "n": len(lat)},
        "latency_over_floor_p50": lat_p50 / floor_p50,
        "throughput": {
            "games": args.games,
            "events": events,
            "seconds": elapsed,
            "events_per_second": tps,
            "floor_transactions_per_second_serial": floor_rate,
        },
    }
    print(f"floor (asyncpg tx + NATS req/reply): p50 {floor_p50:.2f} ms  p99 {floor_p99:.2f} ms")
    print(
        f"command -> all notifications:       p50 {lat_p50:.2f} ms  p99 {lat_p99:.2f} ms"
        f"  ({lat_p50 / floor_p50:.1f}x floor at p50; {len(lat)} commands)"
    )
    print(
        f"throughput, {args.games} concurrent bot games: {tps:.0f} events/s "
        f"({events} events in {elapsed:.1f} s); floor serial rate {floor_rate:.0f} tx/s"
    )
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"pipeline-{result['when']}.json"
    path.write_text(json.dumps(result, indent=2))
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    asyncio.run(main())
