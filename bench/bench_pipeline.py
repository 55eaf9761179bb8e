"""Pipeline benchmark: the latency of the whole service chain, beside its floor.

- latency: real games (take5 for 3 players, the 66 game for 2), one game at a time, played
  by the games' heuristic bots; each command is timed from its sending (the attempt the
  gamemaster accepted: an attempt answered "awaiting acks" is the game's pace, not the
  path's) until its reply and every notification of the events it appended have reached
  their addressees' handlers (which events it appended, and to whom they went, is read from
  the event store afterwards: its command id and addressees). At least
  ``BENCH_LATENCY_COMMANDS`` commands (1,000); p50, p99 and p99.9.
- floor: what the path cannot avoid, measured as the commands are: one single-statement
  insert on an autocommit asyncpg connection (an append is one statement) plus one NATS
  request/reply, sampled right before each command in the same loop (so at the same pace
  and on the same warm or cold CPU). Until 2026-11-27 the floor was a three-round-trip
  transaction (BEGIN, INSERT, COMMIT) plus a request/reply, sampled apart from the commands
  after a 2 ms pause each, beside a one-game-type latency (the test game): that floor is
  still printed ("old floor").

Target: p50 at most ``TARGET`` (1.5) times the floor's p50 (this run's figures beside it).

The services run as separate OS processes, as deployed. Throughput under many concurrent
games is bench_throughput.py.

Run alone: ``uv run --frozen python bench/bench_pipeline.py`` (env BENCH_LATENCY_COMMANDS).
It finds or starts PostgreSQL and NATS like the tests do, in a database and subject root of
its own. Results are printed and written as JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import nats
from cardroom_client import CardroomError, Client
from cardroom_engine import Bot, registry
from cardroom_eventstore import TO, EventStore
from cardroom_runtime.games import load_games
from cardroom_runtime.postgres import asyncpg_dsn
from cardroom_wire import Notification, new_id
from common import (
    Report,
    env_int,
    fresh_database,
    pct,
    pipeline,
    servers,
    start_watchdog,
    unique_name,
    verdict,
)


async def old_floor(
    database_url: str, nats_url: str, root: str, n: int, pause: float
) -> tuple[list[float], list[float]]:
    """The floor until 2026-11-27: one asyncpg transaction plus one NATS request/reply, n
    times after a pause of ``pause`` seconds each, and n times back to back."""
    floor = await Floor.open(database_url, nats_url, f"{root}.old")  # the same connections

    async def sample() -> float:
        t0 = time.perf_counter()
        async with floor.conn.transaction():
            await floor.conn.execute("INSERT INTO bench_floor (data) VALUES ($1)", '{"a": 1}')
        await floor.nc.request(floor.subject, b"{}", timeout=5)
        return time.perf_counter() - t0

    paced = []
    for _ in range(n):
        await asyncio.sleep(pause)
        paced.append(await sample())
    back_to_back = [await sample() for _ in range(n)]
    await floor.close()
    return paced, back_to_back


class Floor:
    """One floor sample: a single-statement insert, then a NATS request/reply."""

    def __init__(self, conn: Any, nc: Any, subject: str) -> None:
        self.conn, self.nc, self.subject = conn, nc, subject
        self.samples: list[float] = []

    @classmethod
    async def open(cls, database_url: str, nats_url: str, root: str) -> Floor:
        conn = await asyncpg.connect(asyncpg_dsn(database_url))
        await conn.execute("CREATE TABLE IF NOT EXISTS bench_floor (id bigserial, data jsonb)")
        nc = await nats.connect(nats_url)

        async def echo(msg: Any) -> None:
            await msg.respond(msg.data)

        await nc.subscribe(f"{root}.floor", cb=echo)
        return cls(conn, nc, f"{root}.floor")

    async def sample(self) -> None:
        t0 = time.perf_counter()
        await self.conn.execute("INSERT INTO bench_floor (data) VALUES ($1)", '{"a": 1}')
        await self.nc.request(self.subject, b"{}", timeout=5)
        self.samples.append(time.perf_counter() - t0)

    async def close(self) -> None:
        await self.nc.close()
        await self.conn.close()


@dataclass
class Sent:
    game: str
    command_id: str
    sent: float  # the accepted attempt's sending
    replied: float


@dataclass
class Driver:
    """Plays one game with heuristic bots, one command at a time, timing each."""

    floor: Floor
    arrivals: dict[str, list[float]] = field(default_factory=dict)  # player -> by seq
    sent: list[Sent] = field(default_factory=list)
    queue: asyncio.Queue[tuple[Client, Bot, Notification] | None] = field(
        default_factory=asyncio.Queue
    )

    def attach(self, client: Client, bot: Bot) -> None:
        arrived = self.arrivals.setdefault(client.player, [])

        async def handler(note: Notification) -> None:
            arrived.append(time.perf_counter())
            bot.observe(note.message)
            if note.message.get("type") == "GameOver":
                self.queue.put_nowait(None)

        async def after(note: Notification) -> None:
            if note.actions:
                self.queue.put_nowait((client, bot, note))

        client.on_notification(handler, after_ack=after)

    async def play(self, game: str, players: int, rng: random.Random) -> None:
        """Send the bots' commands one by one until the game is over."""
        over = 0
        while over == 0:
            item = await asyncio.wait_for(self.queue.get(), 60)
            if item is None:
                over += 1
                continue
            client, bot, note = item
            command = dict(bot.choose(note.view or {}, note.actions, rng))
            kind = str(command.pop("type"))
            command.pop("id", None)
            command_id = new_id("c")
            await self.floor.sample()
            while True:
                t0 = time.perf_counter()
                try:
                    await client.command(game, kind, command_id=command_id, **command)
                except CardroomError as exc:
                    if exc.code == "awaiting_acks":
                        await asyncio.sleep(0.002)
                        continue
                    break  # stale (the game moved on): not a timed command
                self.sent.append(Sent(game, command_id, t0, time.perf_counter()))
                break


async def latency(
    database_url: str,
    nats_url: str,
    root: str,
    store: EventStore,
    commands: int,
    prefix: str = "lat",
) -> tuple[list[float], dict[str, int], Floor]:
    """Real games one at a time until ``commands`` commands were timed; their latencies
    (players named ``prefix`` and a number: another run on the same stack, another prefix)."""
    floor = await Floor.open(database_url, nats_url, root)
    rng = random.Random(1)
    timed: list[float] = []
    per_type: dict[str, int] = {}
    g = 0
    try:
        while len(timed) < commands:
            game_type, players = GAMES[g % len(GAMES)]
            g += 1
            rules = registry.get(game_type)
            seats = [f"{prefix}{g}{chr(97 + i)}" for i in range(players)]
            clients = [await Client.connect(nats_url, p, subject_root=root) for p in seats]
            driver = Driver(floor)
            for c in clients:
                driver.attach(c, rules.bots["heuristic"](c.player))
            game = await clients[0].create(game_type, {}, seats=players)
            for c in clients[1:]:
                await c.join(game)
            await driver.play(game, players, rng)
            for c in clients:
                await c.close()
            got = await _latencies(store, game, driver)
            timed += got
            per_type[game_type] = per_type.get(game_type, 0) + len(got)
    except BaseException:
        await floor.close()
        raise
    return timed, per_type, floor


async def _latencies(store: EventStore, game: str, driver: Driver) -> list[float]:
    """Each command's latency: its reply and every notification of its events received.

    A player's notifications arrive in the order of the events addressed to it, so the
    n-th arrival of a player is the n-th event (by version) whose addressees include it."""
    records = await store.read_stream(game)
    nth: dict[str, int] = {}
    reached: dict[int, list[float]] = {}  # version -> its addressees' arrivals
    for r in records:
        for player in r.metadata.get(TO) or ():
            i = nth.get(player, 0)
            nth[player] = i + 1
            arrivals = driver.arrivals.get(player, [])
            if i < len(arrivals):
                reached.setdefault(r.version, []).append(arrivals[i])
    by_command: dict[str, list[int]] = {}
    for r in records:
        cid = r.metadata.get("command_id")
        if isinstance(cid, str):
            by_command.setdefault(cid, []).append(r.version)
    out = []
    for s in driver.sent:
        if s.game != game or s.command_id not in by_command:
            continue
        ends = [s.replied] + [t for v in by_command[s.command_id] for t in reached.get(v, [])]
        out.append(max(ends) - s.sent)
    return out


GAMES = [("take5", 3), ("sixtysix", 2)]
TARGET = 1.5  # p50 at most this many floors


async def main() -> None:
    start_watchdog()
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=env_int("BENCH_LATENCY_COMMANDS", 1000))
    parser.add_argument("--old-floor", type=int, default=env_int("BENCH_FLOOR", 300))
    args = parser.parse_args()

    report = Report("pipeline")
    report.sizes = {"commands": args.commands, "old_floor": args.old_floor}
    report.settings = {"games": [f"{g} x{n}" for g, n in GAMES]}
    load_games()
    root = unique_name("bench")
    async with servers() as services, fresh_database(services, "bench_pipeline") as (_, url):
        store = await EventStore.connect(url)
        try:
            async with pipeline(services, url, root, games=""):
                lat, per_type, floor = await latency(
                    url, services.nats_url, root, store, args.commands
                )
                await floor.close()
                old, old_b2b = await old_floor(url, services.nats_url, root, args.old_floor, 0.002)
        finally:
            await store.close()
        where = services.describe()

    fl = floor.samples
    f50, f99, f999 = (pct(fl, q) * 1e3 for q in (0.5, 0.99, 0.999))
    l50, l99, l999 = (pct(lat, q) * 1e3 for q in (0.5, 0.99, 0.999))
    o50 = statistics.median(old) * 1e3
    ratio = l50 / f50
    v = verdict(ratio, TARGET, at_most=True)
    report.data.update(
        {
            "where": where,
            "floor_ms": {"p50": f50, "p99": f99, "p999": f999, "n": len(fl)},
            "latency_ms": {"p50": l50, "p99": l99, "p999": l999, "n": len(lat)},
            "commands_per_type": per_type,
            "latency_over_floor": {"p50": ratio, "p99": l99 / f99, "p999": l999 / f999},
            "old_floor_ms": {
                "p50": o50,
                "back_to_back_p50": statistics.median(old_b2b) * 1e3,
                "n": len(old),
            },
            "latency_over_old_floor_p50": l50 / o50,
            "target": {"latency_over_floor_p50_at_most": TARGET, "verdict": v},
        }
    )
    report.line(
        f"floor (one-statement insert + NATS req/reply, before each command): "
        f"p50 {f50:.2f} ms  p99 {f99:.2f} ms  p99.9 {f999:.2f} ms"
    )
    report.line(
        f"command -> reply and all its notifications ({len(lat)} commands: "
        + ", ".join(f"{t} {n}" for t, n in per_type.items())
        + f"): p50 {l50:.2f} ms  p99 {l99:.2f} ms  p99.9 {l999:.2f} ms"
    )
    report.line(
        f"  ratio to the floor: p50 {ratio:.2f}x  p99 {l99 / f99:.2f}x  p99.9 {l999 / f999:.2f}x"
    )
    report.line(
        f"old floor (tx of 3 round trips + req/reply, after a 2 ms pause): p50 {o50:.2f} ms;"
        f" latency {l50 / o50:.2f}x that"
    )
    report.line(f"target latency p50 <= {TARGET}x floor: {v}")
    report.write()


if __name__ == "__main__":
    asyncio.run(main())
