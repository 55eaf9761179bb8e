"""The timers service without servers: its deadlines in an ``InMemoryEventStore``, the
gamemaster a fake broker that answers each timeout as told."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any, NamedTuple

from cardroom_eventstore import Append, InMemoryEventStore, NewEvent
from cardroom_eventstore.deadlines import Due
from cardroom_eventstore.memory import InMemoryDeadlines
from cardroom_runtime.host import Runtime
from cardroom_timers import ManualClock, Timers
from cardroom_wire.subjects import Subjects


class Wanted(NamedTuple):
    key: str
    seconds: float
    since: int


@dataclass
class Gamemaster:
    """A broker whose every request is a timeout the gamemaster answers ``result``."""

    result: str = "fired"
    due: float | None = None  # with "later"
    ready: float | None = None  # with "fired": when a gate held it back until
    asked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def request(self, body: bytes, subject: str, timeout: float) -> Any:
        self.asked.append((subject, json.loads(body)))
        answer: dict[str, Any] = {"ok": True, "result": self.result}
        if self.due is not None:
            answer["due"] = self.due
        if self.ready is not None:
            answer["ready"] = self.ready
        return SimpleNamespace(body=json.dumps(answer).encode())


class Watched(InMemoryDeadlines):
    """The store's deadlines, telling a test when the timers service recorded an answer."""

    def __init__(self, store: InMemoryEventStore) -> None:
        super().__init__(store)
        self.store = store
        self.recorded = 0
        self._changed = asyncio.Event()

    async def mark_fired(self, game: str, key: str, version: int) -> None:
        await super().mark_fired(game, key, version)
        self._record()

    async def retry_at(self, due: Due, at: datetime) -> None:
        await super().retry_at(due, at)
        self._record()

    def _record(self) -> None:
        self.recorded += 1
        self._changed.set()

    async def settled(self, answers: int) -> None:
        """Until ``answers`` answers are recorded (the timers service sends in tasks)."""
        async with asyncio.timeout(5):
            while self.recorded < answers:
                self._changed.clear()
                await self._changed.wait()


async def started() -> tuple[Watched, Gamemaster, Timers, ManualClock]:
    """A game whose turn times out 30 s after its first event, on a clock the test moves."""
    clock = ManualClock()

    class ManualTimers(Timers):
        pass

    ManualTimers.clock = clock
    store = InMemoryEventStore(now=clock.now)
    deadlines = store.deadlines = Watched(store)
    gamemaster = Gamemaster()
    rt = Runtime(Subjects("unit"), gamemaster, store, "nats://-", "postgresql://-")  # type: ignore[arg-type]
    await store.append(Append("g", "take5", 0, [NewEvent("take5.dealt", {})]))
    turn = [Wanted("turn:1", 30, 1)]
    await deadlines.write("g", 1, active=True, wanted=turn, ack_timeout=None)
    return deadlines, gamemaster, ManualTimers(rt), clock


async def test_a_due_deadline_is_sent_once_and_marked_fired() -> None:
    deadlines, gamemaster, timers, clock = await started()
    clock.advance(10)
    assert await timers.tick() == timers.poll_seconds
    assert gamemaster.asked == []
    clock.advance(21)
    await timers.tick()
    await deadlines.settled(1)
    # with the timers' own clock, which a turn counted from a gate's opening is judged by
    timeout = {"game": "g", "version": 1, "key": "turn:1", "at": clock.now().timestamp()}
    assert gamemaster.asked == [("unit.internal.timeout", timeout)]
    assert timers.results == {"fired": 1}
    assert await deadlines.next_due() is None
    clock.advance(60)
    await timers.tick()  # fired: never again
    assert len(gamemaster.asked) == 1


async def test_a_deferred_deadline_is_tried_again_soon() -> None:
    deadlines, gamemaster, timers, clock = await started()
    gamemaster.result = "deferred"
    clock.advance(31)
    await timers.tick()
    await deadlines.settled(1)
    retry = await deadlines.next_due()
    assert retry is not None
    assert timedelta(0) < retry - clock.now() <= timedelta(seconds=2)
    await timers.tick()  # not yet
    assert len(gamemaster.asked) == 1
    clock.advance((retry - clock.now()).total_seconds())
    gamemaster.result = "fired"
    await timers.tick()
    await deadlines.settled(2)
    assert timers.results == {"deferred": 1, "fired": 1}
    assert await deadlines.next_due() is None


async def test_a_deadline_answered_later_is_tried_again_when_it_says() -> None:
    """A turn whose players could act only once a gate opened after it began runs from
    then: the gamemaster names when it is due, and it is sent again then, not before."""
    deadlines, gamemaster, timers, clock = await started()
    gamemaster.result = "later"
    clock.advance(31)
    gamemaster.due = (clock.now() + timedelta(seconds=20)).timestamp()
    await timers.tick()
    await deadlines.settled(1)
    retry = await deadlines.next_due()
    assert retry is not None
    assert abs((retry - clock.now()).total_seconds() - 20) < 0.01
    clock.advance(19)
    await timers.tick()  # not yet
    assert len(gamemaster.asked) == 1
    clock.advance(1)
    gamemaster.result, gamemaster.due = "fired", None
    await timers.tick()
    await deadlines.settled(2)
    assert timers.results == {"later": 1, "fired": 1}
    assert await deadlines.next_due() is None


def lateness(timers: Timers) -> tuple[float, float]:
    """The lateness histogram's count and sum."""
    registry = timers.rt.metrics.registry
    name = "cardroom_deadline_lateness_seconds"
    count = registry.get_sample_value(f"{name}_count")
    total = registry.get_sample_value(f"{name}_sum")
    assert count is not None
    assert total is not None
    return count, total


async def test_lateness_counts_from_the_opening_of_the_gate_that_deferred_it() -> None:
    """A deadline due while its gate is closed waits for the players, not for this service:
    deferred for a minute, then applied 0.5 s after the gate opened, it was 0.5 s late."""
    deadlines, gamemaster, timers, clock = await started()
    due = clock.now() + timedelta(seconds=30)
    gamemaster.result = "deferred"
    clock.advance(31)
    await timers.tick()
    await deadlines.settled(1)
    clock.advance(60)  # the gate stays closed; then it opens, and the retry comes
    opened = clock.now()
    clock.advance(0.5)
    gamemaster.result, gamemaster.ready = "fired", opened.timestamp()
    await timers.tick()
    await deadlines.settled(2)
    assert timers.results == {"deferred": 1, "fired": 1}
    count, total = lateness(timers)
    assert count == 1
    assert abs(total - 0.5) < 1e-6, total
    assert (clock.now() - due).total_seconds() > 60  # what it counted before: the deferral


async def test_a_late_firing_counts_from_the_due_time() -> None:
    """Applied 20 s after its due time with its gate open since before then (the ``ready``
    the gamemaster names is earlier), a deadline was 20 s late: this service's delay."""
    deadlines, gamemaster, timers, clock = await started()
    gamemaster.ready = clock.now().timestamp()  # the gate opened before the due time
    clock.advance(50)
    await timers.tick()
    await deadlines.settled(1)
    count, total = lateness(timers)
    assert count == 1
    assert abs(total - 20) < 1e-6, total


async def test_a_game_left_behind_is_reconciled() -> None:
    deadlines, gamemaster, timers, clock = await started()
    await deadlines.store.append(Append("g", "take5", 1, [NewEvent("played", {})]))  # unseen
    assert await timers.recover() == 0  # within the grace
    clock.advance(timers.recover_grace + 1)
    assert await timers.recover() == 1
    assert gamemaster.asked == [("unit.internal.reconcile", {"game": "g"})]
