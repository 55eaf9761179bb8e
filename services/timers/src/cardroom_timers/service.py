"""The timers service: fires the games' durable deadlines, once each.

The gamemaster writes each game's deadlines after every append (tables of migration 0004,
read and written through :mod:`cardroom_eventstore.deadlines`):
``deadlines`` (game, key, the version it belongs to, due_at, fired_at) and
``deadline_versions`` (the version they were evaluated for). This service

- claims due rows (``claimed_until``, a lease, so several instances share the work and a
  crash mid-request only delays a row by the lease) and sends the gamemaster
  ``<root>.internal.timeout`` ``{"game", "version", "key"}``;
- on the answer ``fired`` or ``nothing`` marks the row fired (the gamemaster marks it too,
  before it answers) and observes its lateness (``cardroom_deadline_lateness_seconds``),
  counted from its due time or from the ``ready`` time the answer names (when a closed gate,
  or a turn counted from a gate's opening, held it back), whichever is later: so it measures
  this service's own delay, not the players' acknowledgements; ``stale`` means the game
  moved past that version (the gamemaster has re-written the game's deadlines); ``deferred``
  means the gate is closed (someone has not seen the last update yet), so the row is tried
  again after a short, growing delay;
  ``later`` (a turn timeout, whose players could act only once a gate opened after the turn
  began) names when it is due, and the row is tried again then; no answer, and the lease
  runs out and the row is sent again;
- finds games whose stream has moved past their evaluated version for longer than a grace
  period (a gamemaster died between an append and writing the deadlines) and asks the
  gamemaster to evaluate them again (``<root>.internal.reconcile``).

A timeout carries the version it belongs to, and its effect is an append that expects that
version: resending it after a lost answer, or after a restart of either service, can never
apply it twice. Everything lives in the database, so a restart of this service loses nothing.

It sleeps until the earliest due row (at most ``poll_seconds``); the gamemaster's hint
``<root>.internal.deadlines`` ``{"game", "due"}`` wakes it for a deadline earlier than that.
Its clock is injectable (:class:`~cardroom_timers.clock.ManualClock` in tests).
"""

from __future__ import annotations

import asyncio
import logging
import math
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from cardroom_eventstore.deadlines import RECOVER_GRACE, Due
from cardroom_runtime.host import Asker, Service
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import DeadlineHint, Reconcile, Timeout

from .clock import Clock, SystemClock

log = logging.getLogger("cardroom.timers")


_RESULTS = frozenset({"fired", "nothing", "stale", "deferred", "later", "unanswered", "refused"})


class Timers(Service):
    name = "timers"
    background = True

    clock: ClassVar[Clock] = SystemClock()
    poll_seconds: ClassVar[float] = 1.0  # longest sleep without looking at the table
    lease_seconds: ClassVar[float] = 5.0  # a claimed row is sent again after this
    request_timeout: ClassVar[float] = 4.0
    recover_seconds: ClassVar[float] = 5.0  # how often to look for skipped evaluations
    # a stream this long past its evaluation is lagging (well past the gamemaster's debounce)
    recover_grace: ClassVar[float] = RECOVER_GRACE
    batch: ClassVar[int] = 100
    concurrency: ClassVar[int] = 32

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wake = asyncio.Event()
        self._planned = math.inf  # when the loop looks next (epoch seconds)
        self._tasks: list[asyncio.Task[None]] = []
        self._sending: set[asyncio.Task[None]] = set()
        self._limit = asyncio.Semaphore(self.concurrency)
        self._deferrals: dict[Due, int] = {}
        # what happened, for logs and tests
        self.results: dict[str, int] = {}
        self.reconciled = 0
        metrics = self.rt.metrics
        self._deadlines = metrics.counter(
            "cardroom_deadlines",
            "Deadlines sent to the gamemaster, by its answer (fired, nothing, stale, deferred, "
            "later) or by what went wrong (unanswered, refused)",
            ["result"],
            known=[(result,) for result in sorted(_RESULTS)],
        )
        self._lateness = metrics.histogram(
            "cardroom_deadline_lateness_seconds",
            "From when a deadline could first fire (its due time, or the opening of the gate "
            "that deferred it, whichever is later) until the gamemaster applied it",
        )

    def register(self) -> None:
        self.listen(
            self.subjects.deadline_hint,
            queue="",  # no group: a hint wakes every timers process (each claims its share)
            title="deadlines",
            model=DeadlineHint,
            listener=self.on_hint,
            max_workers=1,
        )

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._run(), name="timers"),
            asyncio.create_task(self._recover_loop(), name="timers-recover"),
        ]

    async def stop(self) -> None:
        await cancel_and_wait([*self._tasks, *self._sending])

    async def on_hint(self, hint: DeadlineHint, asker: Asker) -> None:
        """A gamemaster wrote a deadline due at ``hint.due``: look sooner than planned."""
        if hint.due < self._planned:
            self._wake.set()

    # -- firing --------------------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            self._wake = wake = asyncio.Event()
            started = self.clock.now()
            try:
                wait = await self.tick(started)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("timers: retrying")
                wait = 1.0
            until = started + timedelta(seconds=wait)
            self._planned = until.timestamp()
            await self.clock.sleep_until(until, wake)

    async def tick(self, now: datetime | None = None) -> float:
        """Send every row due at ``now`` (default: the clock's now); returns how long after
        ``now`` the next one is due (at most ``poll_seconds``)."""
        now = now or self.clock.now()
        lease = now + timedelta(seconds=self.lease_seconds)
        full = False
        soonest: datetime | None = None
        for store in self.shards.stores:  # each shard's deadlines are its own rows
            claimed = await store.deadlines.claim(now, lease, self.batch)
            if claimed:
                log.debug("%d deadline(s) due at %s", len(claimed), now)
            for due in claimed:
                task = asyncio.create_task(self._send(due))
                self._sending.add(task)
                task.add_done_callback(self._sending.discard)
            if len(claimed) == self.batch:
                full = True
            elif not full:
                upcoming = await store.deadlines.next_due()
                if upcoming is not None and (soonest is None or upcoming < soonest):
                    soonest = upcoming
        if full:
            return 0.0
        if soonest is None:
            return self.poll_seconds
        return min(max((soonest - now).total_seconds(), 0.0), self.poll_seconds)

    async def _send(self, due: Due) -> None:
        async with self._limit:
            try:
                answer = await self.rt.ask(
                    self.subjects.timeout,
                    Timeout(
                        game=due.game,
                        version=due.version,
                        key=due.key,
                        at=self.clock.now().timestamp(),
                    ),
                    self.request_timeout,
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # no gamemaster now: the lease runs out, it goes again
                self._count("unanswered")
                log.warning("timeout %s not delivered: %s", due, exc)
                return
            if not answer.get("ok"):
                self._count("refused")
                log.warning("timeout %s refused: %s", due, answer.get("error"))
                return
            result = str(answer.get("result"))
            log.debug("timeout %s: %s", due, result)
            self._count(result)
            try:
                await self._settle(due, result, answer.get("due"), answer.get("ready"))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("recording the result of %s", due)

    async def _settle(
        self, due: Due, result: str, later: object = None, ready: object = None
    ) -> None:
        if result == "later" and isinstance(later, int | float) and math.isfinite(later):
            # a turn counted from the gate's opening: tried again then (never sooner than a
            # short pause, whatever the answer says, so that a wrong one cannot spin)
            at = max(datetime.fromtimestamp(later, UTC), self.clock.now() + timedelta(seconds=0.05))
            await self.store_of(due.game).deadlines.retry_at(due, at)
            self._wake.set()
            return
        if result == "deferred":
            tries = self._deferrals.get(due, 0) + 1
            if len(self._deferrals) > 10_000:
                self._deferrals.clear()
            self._deferrals[due] = tries
            at = self.clock.now() + timedelta(seconds=min(0.05 * 2**tries, 2.0))
            await self.store_of(due.game).deadlines.retry_at(due, at)
            self._wake.set()  # look again at the new time
            return
        self._deferrals.pop(due, None)
        if result in ("fired", "nothing"):
            if due.due_at is not None:
                self._lateness.observe(self.lateness(due.due_at, ready))
            await self.store_of(due.game).deadlines.mark_fired(due.game, due.key, due.version)
        # "stale": the gamemaster has re-written the game's deadlines already

    def lateness(self, due_at: datetime, ready: object = None) -> float:
        """Seconds this service took to apply a deadline: from when it could first fire
        (``due_at``, or ``ready``, the Unix time the gamemaster says a closed gate or a turn
        counted from a gate's opening held it back until, whichever is later) until now. The
        time a gate deferred it is the game waiting for its players, not this service late."""
        start = due_at
        if isinstance(ready, int | float) and math.isfinite(ready):
            start = max(start, datetime.fromtimestamp(ready, UTC))
        return max((self.clock.now() - start).total_seconds(), 0.0)

    def _count(self, result: str) -> None:
        self.results[result] = self.results.get(result, 0) + 1
        if result in _RESULTS:  # the gamemaster's answer is not trusted to name a series
            self._deadlines.labels(result).inc()

    # -- recovery ------------------------------------------------------------------------------
    async def _recover_loop(self) -> None:
        never = asyncio.Event()
        while True:
            try:
                await self.recover()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("timers: looking for lagging games failed; retrying")
            await self.clock.sleep_until(
                self.clock.now() + timedelta(seconds=self.recover_seconds), never
            )

    async def recover(self) -> int:
        """Ask for a new evaluation of every game whose deadlines a crash left behind."""
        cutoff = self.clock.now() - timedelta(seconds=self.recover_grace)
        games: list[str] = []
        for store in self.shards.stores:
            games += await store.deadlines.lagging(cutoff, self.batch)
        if games:
            await asyncio.gather(*(self._reconcile(g) for g in games))
        return len(games)

    async def _reconcile(self, game: str) -> None:
        async with self._limit:
            try:
                answer = await self.rt.ask(
                    self.subjects.reconcile, Reconcile(game=game), self.request_timeout
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("reconcile of %s not delivered: %s", game, exc)
                return
            if answer.get("ok"):
                self.reconciled += 1
                log.info("reconciled %s", game)
