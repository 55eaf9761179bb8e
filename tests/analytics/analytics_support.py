"""Helpers of the analytics tests: games played in memory as event records, publishing them
on JetStream as the relay does, waiting for analytics."""

from __future__ import annotations

import asyncio
import json
import random
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from cardroom_analytics import Analytics
from cardroom_analytics.schema import game_types
from cardroom_engine import Game
from cardroom_engine.simulate import LocalGame, bots_chooser, play, random_chooser
from cardroom_eventstore import EventStore
from cardroom_runtime.host import Host
from cardroom_runtime.nats import connect
from cardroom_wire import Subjects
from sqlalchemy.ext.asyncio import AsyncEngine
from support.stack import ServiceProcess

T0 = datetime(2026, 1, 1, tzinfo=UTC)

NewDatabase = Callable[[], Awaitable[str]]
"""``await new_database()``: the URL of a new database at head (the fixture drops it)."""


def records_of(
    local: LocalGame,
    game_id: str,
    *,
    first_position: int = 1,
    start: datetime = T0,
    step: timedelta = timedelta(milliseconds=20),
) -> list[dict[str, Any]]:
    """A game played in memory, as the event records the relay would publish."""
    out: list[dict[str, Any]] = []
    for i, s in enumerate(local.steps):
        data = {k: v for k, v in s.event.items() if k != "type"}
        if s.event["type"] == "table.created":
            data["game"] = game_id
        out.append(
            {
                "event_id": str(uuid.uuid4()),
                "position": first_position + i,
                "game": game_id,
                "game_type": local.table.game.name,
                "version": s.version,
                "type": s.event["type"],
                "data": json.loads(json.dumps(data)),
                "metadata": {},
                "recorded_at": (start + i * step).isoformat(),
            }
        )
    return out


def simulate(
    game: Game[Any],
    seats: Sequence[str],
    seed: int,
    kinds: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
) -> LocalGame:
    if not kinds:
        return play(game, seats, random.Random(seed), config, random_chooser)
    # bots made first: a game that binds seats to keys needs their verify keys at the joins
    bots = {p: game.bots[kind](p) for p, kind in kinds.items()}
    keys = {p: k for p, b in bots.items() if isinstance(k := getattr(b, "verify_key", None), str)}
    chooser = bots_chooser(game, kinds, bots)
    return play(game, seats, random.Random(seed), config, chooser, keys=keys or None)


def tournament_records(
    game: Game[Any], players: Sequence[str], games: int, *, prefix: str = "t", seed: int = 0
) -> list[dict[str, Any]]:
    """``games`` games between bots named after their kind, seats rotating, one after the
    other in the global order."""
    kinds = {p: p.rsplit("-", 1)[0] for p in players}
    out: list[dict[str, Any]] = []
    for g in range(games):
        seats = [players[(g + i) % len(players)] for i in range(len(players))]
        local = simulate(game, seats, seed + g, kinds)
        out += records_of(
            local,
            f"{prefix}{g}",
            first_position=len(out) + 1,
            start=T0 + timedelta(minutes=g),
        )
    return out


async def publish(
    nats_url: str, subjects: Subjects, records: Sequence[dict[str, Any]], *, fresh_ids: bool = False
) -> None:
    """Publish records on the event stream as the relay does (``Nats-Msg-Id`` = event id;
    ``fresh_ids``: new ids, so JetStream keeps them as real duplicates)."""
    nc = await connect(nats_url, "analytics-test-publisher")
    try:
        for r in records:
            msg_id = str(uuid.uuid4()) if fresh_ids else r["event_id"]
            await nc.publish(
                subjects.events(r["game_type"], r["game"]),
                json.dumps(r).encode(),
                headers={"Nats-Msg-Id": msg_id},
            )
        await nc.flush()
    finally:
        await nc.close()


async def applied_events(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        value = await conn.scalar(sa.select(sa.func.coalesce(sa.func.sum(game_types.c.events), 0)))
    return int(value or 0)


async def wait_applied(engine: AsyncEngine, expected: int, timeout: float = 30) -> None:
    """Poll analytics' tables (observed from outside) until ``expected`` events are applied."""
    seen = 0
    async with asyncio.timeout(timeout):
        for _ in iter(int, 1):  # until it is reached
            seen = await applied_events(engine)
            if seen >= expected:
                break
            await asyncio.sleep(0.05)
    assert seen == expected, (seen, expected)


async def consumer_idle(nats_url: str, subjects: Subjects, durable: str) -> bool:
    """True when the durable consumer has delivered and been acked for everything."""
    nc = await connect(nats_url, "analytics-test-probe")
    try:
        info = await nc.jetstream().consumer_info(subjects.events_stream, durable)
        return info.num_pending == 0 and info.num_ack_pending == 0
    finally:
        await nc.close()


@dataclass
class AnalyticsRun:
    """Analytics (and optionally the rest of cardroom) on one database and subject root."""

    nats_url: str
    database_url: str
    subjects: Subjects
    engine: AsyncEngine
    host: Host | None = None
    store: EventStore | None = None

    @property
    def root(self) -> str:
        return self.subjects.root

    @property
    def analytics(self) -> Analytics:
        assert self.host is not None
        found = [s for s in self.host.services if isinstance(s, Analytics)]
        return found[0]


class AnalyticsProcess(ServiceProcess):
    """``python -m cardroom_analytics`` as its own OS process (to kill it with SIGKILL)."""

    def __init__(self, env: dict[str, str]) -> None:
        super().__init__("analytics", env, command=[sys.executable, "-m", "cardroom_analytics"])
