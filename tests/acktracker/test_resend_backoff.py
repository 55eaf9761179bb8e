"""The acktracker's resends of overdue notifications, on real PostgreSQL and NATS: each
unacknowledged notification is resent after longer and longer waits, up to a cap; a finished
game's are resent a bounded number of times, then never again (they stay for a sync).

The tracker runs with small constants (``QuickTracker``) so that the waits take a fraction of
a second; every notification a player is sent is recorded with the time it arrived."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import nats
import orjson
import pytest
from cardroom_acktracker import AckTracker
from cardroom_acktracker.service import ResendPolicy
from cardroom_bots import BotPlayer
from cardroom_gamemaster import Gamemaster
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from cardroom_wire import Notification
from cardroom_wire.subjects import Subjects
from sqlalchemy import text
from support.stack import Stack, wait_until

load_games("support.highcard:GAME")

POLICY = ResendPolicy(after=0.2, cap=0.8, finished=2)
EARLY = 0.05  # a resend may arrive this much before its wait is over (delivery jitter)
# and this much after (sweeps every 0.05 s, on a shared machine): less than the cap, so that a
# wait that doubled past the cap still fails
LATE = 0.7

_counter = itertools.count()


class QuickTracker(AckTracker):
    sweep_seconds = 0.05
    resend_policy = POLICY

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.swept: list[float] = []  # when each sweep's resends were done

    async def resend_overdue(self) -> int:
        started = time.monotonic()
        sent = await super().resend_overdue()
        self.swept.append(started)
        return sent


@dataclass
class Received:
    """Every notification sent to some players, with when it arrived (monotonic time)."""

    times: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    types: dict[tuple[str, int], str] = field(default_factory=dict)

    async def record(self, msg: Any) -> None:
        note = orjson.loads(msg.data)
        key = (note["player"], note["seq"])
        self.times.setdefault(key, []).append(time.monotonic())
        self.types[key] = note["message"]["type"]


@dataclass
class TrackedStack(Stack):
    host: Host | None = None
    received: Received = field(default_factory=Received)

    @property
    def tracker(self) -> QuickTracker:
        assert self.host is not None
        return next(s for s in self.host.services if isinstance(s, QuickTracker))


@pytest.fixture
async def tracked(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> AsyncIterator[TrackedStack]:
    database_url = await fresh_database(migrated=True)
    root = f"{subject_root}r{next(_counter)}"
    host = Host(
        [Gamemaster, Relay, Projector, QuickTracker],
        nats_url=nats_url,
        database_url=database_url,
        subject_root=root,
    )
    listener = await nats.connect(nats_url)
    await host.start()
    stack = TrackedStack(nats_url, database_url, root, host.store, host=host)
    try:
        await listener.subscribe(f"{root}.player.*.*", cb=stack.received.record)
        await listener.flush()
        yield stack
    finally:
        # a handler below never returns: closing its client is bounded
        closing = asyncio.ensure_future(stack.close_clients())
        await asyncio.wait([closing], timeout=15)
        await listener.close()
        await host.stop()


async def never_returns(note: Notification) -> None:
    await asyncio.Event().wait()


async def row(stack: Stack, game: str, player: str, seq: int) -> tuple[int, bool] | None:
    """The stored notification's (resends, never resent again), None when not stored."""
    async with stack.store.engine.connect() as conn:
        found = (
            await conn.execute(
                text(
                    "SELECT resends, resend_at = 'infinity' FROM notifications"
                    " WHERE game_id = :game AND player_id = :player AND seq = :seq"
                ),
                {"game": game, "player": player, "seq": seq},
            )
        ).first()
    return None if found is None else (int(found[0]), bool(found[1]))


def expected_wait(resends: int) -> float:
    """The wait after a notification's ``resends``-th resend."""
    return min(POLICY.after * 2**resends, POLICY.cap)


async def test_resends_of_an_unacknowledged_notification_back_off_up_to_a_cap(
    tracked: TrackedStack,
) -> None:
    alice, bob = await tracked.client("alice"), await tracked.client("bob")
    for client in (alice, bob):
        client.on_notification(never_returns)  # nobody acknowledges anything
    game = await alice.create("highcard", {"rounds": 1}, seats=2)
    await bob.join(game)
    times = tracked.received.times
    await wait_until(lambda: len(times.get(("alice", 1), [])) >= 7, timeout=30)
    arrived = times[("alice", 1)]
    assert tracked.received.types[("alice", 1)] == "GameStarted"
    # the gamemaster's send, then the first resend once the stored notification is overdue
    assert arrived[1] - arrived[0] >= POLICY.after - EARLY
    gaps = [b - a for a, b in itertools.pairwise(arrived[1:7])]
    expected = [expected_wait(k) for k in range(1, 6)]
    assert expected == [0.4, 0.8, 0.8, 0.8, 0.8]  # doubling, then capped
    assert POLICY.cap + LATE < 2 * POLICY.cap
    for gap, wait in zip(gaps, expected, strict=True):
        assert wait - EARLY <= gap <= wait + LATE, (gaps, expected)
    # a running game's notification goes on being resent past a finished game's bound
    stored = await row(tracked, game, "alice", 1)
    assert stored is not None
    assert stored[0] >= 6 > POLICY.finished
    assert not stored[1]


async def test_a_finished_games_notifications_are_resent_a_bounded_number_of_times(
    tracked: TrackedStack,
) -> None:
    a, b = await tracked.client("alice"), await tracked.client("bob")
    alice, bob = BotPlayer(a), BotPlayer(b)
    observe = bob._observe

    async def bob_never_acknowledges_the_end(note: Notification) -> None:
        if note.message.get("type") == "GameOver":
            await asyncio.Event().wait()
        await observe(note)

    b.on_notification(bob_never_acknowledges_the_end, after_ack=bob._act)
    game = await a.create("highcard", {"rounds": 1}, seats=2)
    for bot in (alice, bob):
        bot.watch(game, "highcard")
    await b.join(game)
    async with asyncio.timeout(60):
        await alice.finished[game].wait()
    received = tracked.received

    def bobs_end() -> int | None:
        types = received.types.items()
        return next((s for (p, s), t in types if p == "bob" and t == "GameOver"), None)

    await wait_until(lambda: bobs_end() is not None)
    last = bobs_end()
    assert last is not None
    # the gamemaster's send and the bounded resends, after which the row says "never again"
    await wait_until(lambda: len(received.times[("bob", last)]) >= 1 + POLICY.finished)

    async def stopped() -> bool:
        return await row(tracked, game, "bob", last) == (POLICY.finished, True)

    await wait_until(stopped, timeout=30)
    # sweeps go on well past the time another resend would have been due: none is sent
    arrived = received.times[("bob", last)]
    quiet_until = arrived[-1] + 3 * POLICY.cap
    await wait_until(lambda: tracked.tracker.swept[-1] > quiet_until, timeout=30)
    assert len(received.times[("bob", last)]) == 1 + POLICY.finished
    gaps = [y - x for x, y in itertools.pairwise(arrived[1:])]
    assert all(gap >= expected_wait(k + 1) - EARLY for k, gap in enumerate(gaps)), gaps
    # still owed, so still listed for a sync
    assert await tracked.store.pending_for_player(game, "bob") != []
    sync = await b.request(Subjects(tracked.root).sync(game, "bob"), {"type": "sync"})
    assert [n["seq"] for n in sync["notifications"]] == [last]
