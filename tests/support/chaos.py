"""Helpers of the chaos tests: service processes that are killed and started again many times,
and a table runner that keeps bots playing while that happens."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardroom_client import Client
from cardroom_eventstore import EventStore
from cardroom_runtime.shards import Shards
from support.players import Seat, check_stream, listener, recorded_bot, replayed
from support.stack import ServiceProcess, contiguous, projected


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


class ChaosProcess(ServiceProcess):
    """A service process whose output goes to ``<log_dir>/<label>.log`` across restarts
    (``label``: the service's name, or which of its instances this is)."""

    def __init__(
        self, name: str, env: dict[str, str], log_dir: Path, label: str | None = None
    ) -> None:
        super().__init__(name, env, log_path=log_dir / f"{label or name}.log")
        self.label = label or name


@dataclass
class Table:
    game: str
    seats: list[Seat]


@dataclass
class TableRunner:
    """Keeps ``concurrency`` tables of bots playing until told to stop starting new ones."""

    nats_url: str
    root: str
    game_type: str
    config: dict[str, Any]
    players: int = 2
    concurrency: int = 10
    client_timeout: float = 3.0
    tables: list[Table] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    #: the games every seat has seen end, by their table's index in :attr:`tables`
    finished: set[int] = field(default_factory=set)
    _n: int = 0

    async def client(self, player: str) -> Client:
        return await Client.connect(
            self.nats_url, player, subject_root=self.root, timeout=self.client_timeout
        )

    async def play_one(self, finish_timeout: float) -> None:
        n = self._n
        self._n += 1
        names = [f"t{n}p{i}" for i in range(self.players)]
        seats = [recorded_bot(await self.client(p)) for p in names]
        # the lobby is answered by the gamemaster, which may be down right now: try again
        first = seats[0].client
        game = await _retry(lambda: first.create(self.game_type, self.config, seats=len(seats)))
        table = Table(game, seats)
        index = len(self.tables)
        self.tables.append(table)
        for seat in seats:
            assert seat.bot is not None
            seat.bot.watch(game, self.game_type)
        for seat in seats[1:]:
            await _retry(lambda s=seat: s.client.join(game), already="already_seated")
        try:
            async with asyncio.timeout(finish_timeout):
                for seat in seats:
                    assert seat.bot is not None
                    await seat.bot.finished[game].wait()
            self.finished.add(index)
        finally:
            await close_bots(seats)

    async def silent(self, game_type: str, config: dict[str, Any]) -> tuple[str, list[Seat]]:
        """A table of players who acknowledge everything and never act (not one of
        :attr:`tables`: only its deadlines move it)."""
        names = [f"s{self._n}p{i}" for i in range(self.players)]
        self._n += 1
        seats = [listener(await self.client(p)) for p in names]
        first = seats[0].client
        game = await _retry(lambda: first.create(game_type, config, seats=len(seats)))
        for seat in seats[1:]:
            await _retry(lambda s=seat: s.client.join(game), already="already_seated")
        return game, seats

    async def run(self, keep_going: Callable[[], bool], finish_timeout: float) -> None:
        running: set[asyncio.Task[None]] = set()

        def done(task: asyncio.Task[None]) -> None:
            running.discard(task)
            if not task.cancelled() and task.exception() is not None:
                self.errors.append(task.exception())  # type: ignore[arg-type]

        while keep_going():
            while len(running) < self.concurrency and keep_going():
                task = asyncio.create_task(self.play_one(finish_timeout))
                running.add(task)
                task.add_done_callback(done)
            await asyncio.sleep(0.05)
        if running:
            await asyncio.wait(running)


async def close_bots(seats: list[Seat], timeout: float = 10) -> None:
    """Close the seats' bots and clients, in bounded time: a close that hangs (a client
    whose server was killed under it) must not hang the test, and the game is over by then
    anyway."""
    closing = [asyncio.ensure_future(s.bot.close()) for s in seats if s.bot is not None]
    if closing:
        await asyncio.wait(closing, timeout=timeout)


async def _retry(call: Callable[[], Any], already: str | None = None, tries: int = 60) -> Any:
    from cardroom_client import CardroomError

    for attempt in range(tries):
        try:
            return await call()
        except CardroomError as exc:
            if already is not None and exc.code == already:
                return None  # a lost answer: the first attempt did it
            if exc.code not in ("unavailable", "conflict", "internal") or attempt == tries - 1:
                raise
        await asyncio.sleep(0.25)
    return None


async def verify(stores: EventStore | Shards, tables: list[Table]) -> dict[str, int]:
    """Every game finished; contiguous versions; no command twice; every client got every
    notification exactly once and in order (each game read from its shard, given the
    shards). Returns some counts."""
    counts = {"games": 0, "events": 0, "notifications": 0, "away": 0, "house": 0}
    for table in tables:
        store = stores.of(table.game) if isinstance(stores, Shards) else stores
        records = await store.read_stream(table.game)
        check_stream(records)
        state = await replayed(store, table.game)
        assert state.status == "finished", (table.game, state.status)
        counts["games"] += 1
        counts["events"] += len(records)
        counts["away"] += sum(r.type == "table.away" for r in records)
        counts["house"] += sum(bool(r.metadata.get("house")) for r in records)
        await projected(store, table.game)
        for seat in table.seats:
            seqs = seat.recorder.seqs(table.game)
            assert contiguous(seqs), (table.game, seat.player, seqs)
            stored = await store.last_seq(table.game, seat.player)
            assert seqs[-1] == stored, (table.game, seat.player, seqs[-1], stored)
            counts["notifications"] += len(seqs)
    return counts


def shuffled_kills(names: list[str], per_service: int, rng: random.Random) -> list[str]:
    plan = [name for name in names for _ in range(per_service)]
    rng.shuffle(plan)
    return plan


async def diagnose(stores: EventStore | Shards, tables: list[Table]) -> str:
    """What the unfinished games are waiting for (for a failing test's message)."""
    from sqlalchemy import text

    lines: list[str] = []
    for table in tables:
        store = stores.of(table.game) if isinstance(stores, Shards) else stores
        records = await store.read_stream(table.game)
        for seat in table.seats:
            seen = seat.recorder.seen.get(table.game, [])
            if any(n.message.get("type") == "GameOver" for n in seen):
                continue
            stored = await store.last_seq(table.game, seat.player)
            feed = seat.client._feeds.get(table.game)
            state = (
                None
                if feed is None
                else (feed.last_seq, feed.syncing, sorted(feed.held), feed.queue.qsize())
            )
            lines.append(
                f"{seat.player} in {table.game}: saw {len(seen)} of {stored}; "
                f"feed (last_seq, syncing, held, queued) {state}"
            )
        if records and records[-1].type == "table.finished":
            continue
        lines.append(f"game {table.game}: version {len(records)}")
        for r in records[-4:]:
            lines.append(f"  v{r.version} {r.type} {r.data} {r.metadata}")
        lines.append(f"  pending {await store.pending(table.game)}")
        async with store.engine.connect() as conn:
            for query in (
                "SELECT version, remaining, released_at IS NOT NULL, handled FROM gates "
                "WHERE stream_id = :g ORDER BY version DESC LIMIT 3",
                "SELECT key, version, due_at, fired_at FROM deadlines WHERE game_id = :g",
                "SELECT version, active FROM deadline_versions WHERE game_id = :g",
            ):
                rows = (await conn.execute(text(query), {"g": table.game})).all()
                lines.append(f"  {query.split()[1:4]} {[tuple(r) for r in rows]}")
        for seat in table.seats:
            seen = seat.recorder.seen.get(table.game, [])
            last = [(n.seq, n.version, n.message.get("type")) for n in seen[-3:]]
            lines.append(f"  {seat.player} saw {len(seen)}: {last}")
    return "\n".join(lines)


def task_stacks(limit: int = 60) -> str:
    """The stacks of this loop's tasks (for a failing test's message)."""
    import io

    out = io.StringIO()
    for task in list(asyncio.all_tasks())[:limit]:
        out.write(f"--- {task.get_name()}\n")
        task.print_stack(limit=12, file=out)
    return out.getvalue()
