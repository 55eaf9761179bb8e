"""The ack gate, service side: the protocol, its timing and its metrics, in one place.

A gate holds a game until every present addressee of one appended batch has acknowledged
its notification (DESIGN.md, principle 3). Its rows are the event store's
(:mod:`cardroom_eventstore.gates`); the two services that move it meet here:

1. The gamemaster appends a batch with its addressees: the same statement writes one
   pending ack per addressee and the gate counting them. It publishes the notifications.
   An away addressee's ack is excused at once (it stays owed, for its sync, but holds
   nothing), so a gate of away players only is released by the gamemaster itself. An
   event told to some seats only (``TableState.left_out``) holds no gate, even beside
   events told to every seat (``NewEvent.holds``), and a batch of such events only has none
   at all: their acks are owed and resent, but nobody's move waits for them, since the
   seats left out would see the game held by what they were not told (in papas: that
   somebody passed). Nor are they timed by themselves: the ack timeout runs from the next
   gate that holds, else the moment a silent seat is marked away would tell the others
   when its private event happened; but for the players the game waits for (a prompt to
   the one whose turn it is), whose silence would stall it, since no gate comes then.
   After a batch without a gate the game moves on at once, as after a batch of away
   players only.
2. The acktracker, the owner of acknowledgements, records each ack
   (``EventStore.ack_many``); the one that brings the gate to zero releases it, exactly
   once, and the acktracker publishes a :class:`~cardroom_wire.Release`
   (:meth:`Releases.send`). An ack owed while away also says the player is back
   (:class:`~cardroom_wire.Back`).
3. A gamemaster follows the release up under the game's lock and marks the gate handled:
   in the follow-up's own append, in the gate check that finds the game held by a newer
   gate, or, when there is nothing to follow up, in the game's next append or at the latest
   :data:`MARK_DELAY` later by a statement of its own (:meth:`Follower.mark_later`).
4. Every :data:`SWEEP_SECONDS` the acktracker sends again every release still unhandled
   :data:`RELEASE_GRACE` after it was released (:meth:`Releases.resend_unhandled`): the
   gamemaster may have died, or the release been lost with NATS. Handling a release twice
   changes nothing (the follow-up is decided from the current state).
5. A service that starts does not wait for the sweep: a gamemaster follows up every release
   unhandled at that moment (:meth:`Follower.unhandled`; they were sent while no gamemaster
   listened, or died with its predecessor), and an acktracker's first sweep runs at once and
   sends again every unhandled release, however young (its predecessor may have released a
   gate and died before sending the release). A game is then held for the restart, not for
   the restart and :data:`RELEASE_GRACE` and a sweep.

Why the acktracker keeps acks rather than the gamemaster: acks are N per transition and
need no game state, so they scale apart from the games' locks and the gamemaster's event
loop; the gamemaster needs only the one message that releases a gate. The price is the
release message and the handled marks that let the sweep find a lost one.

Who sends and who receives each message is fixed: :class:`Releases` is imported by the
acktracker only, :class:`Follower` by the gamemaster only.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cardroom_wire import Release

from . import tracing
from .metrics import Counter, Histogram, Metrics

if TYPE_CHECKING:
    from cardroom_eventstore import EventStore

    from .host import Runtime

log = logging.getLogger("cardroom.gate")

#: Seconds between two sweeps of the acktracker (releases left unhandled, overdue
#: notifications).
SWEEP_SECONDS = 2.0
#: A release is sent again once it has been unhandled this long. A younger one is most
#: likely being handled at that very moment: resending it would make the gamemaster look at
#: the game again for nothing.
RELEASE_GRACE = 2.0
#: A released gate with nothing to follow up is marked handled by the game's next append if
#: it comes within this many seconds (usually the command the game now waits for, whose
#: statement marks it at no cost), else by a statement of its own. It must be well inside
#: :data:`RELEASE_GRACE`, or the sweep would resend releases that were handled.
MARK_DELAY = RELEASE_GRACE / 4
#: Releases a sweep sends again at most.
RESEND_LIMIT = 200

if not MARK_DELAY < RELEASE_GRACE:  # pragma: no cover (a constant's edit)
    raise AssertionError("a handled mark must be written before the sweep resends")

#: A gate waits from a fraction of a millisecond (bots on one machine) to its ack timeout.
WAIT_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
)


def wait_seconds(metrics: Metrics) -> Histogram:
    """``cardroom_gate_wait_seconds{game_type}``: from a gate's notifications (its append's
    commit) to its last acknowledgement, per gate released by an ack."""
    return metrics.histogram(
        "cardroom_gate_wait_seconds",
        "Time from a gate's notifications to its last acknowledgement",
        ["game_type"],
        buckets=WAIT_BUCKETS,
    )


def acks_owed(metrics: Metrics) -> Counter:
    """``cardroom_acks_owed_total{game_type}``: acknowledgements owed by appends (one per
    notification); ``cardroom_acks_total{outcome="accepted"}`` counts those paid, so the
    difference is what players still owe."""
    return metrics.counter(
        "cardroom_acks_owed",
        "Acknowledgements owed: one per notification appended",
        ["game_type"],
    )


class Releases:
    """The acktracker's side: sending releases, and sending again those left unhandled."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.released = rt.metrics.counter(
            "cardroom_gates_released", "Gates released by their last acknowledgement"
        )
        self.wait = wait_seconds(rt.metrics)

    def count(self, game_type: str | None, waited: float | None) -> None:
        """A gate was released by an ack (the store reports each release once)."""
        self.released.inc()
        if game_type is not None and waited is not None:
            self.wait.labels(game_type).observe(max(waited, 0.0))

    async def send(self, game: str, version: int, *, is_open: bool = False) -> None:
        """Tell a gamemaster to follow up a released gate (published: whether one handled
        it is in the store, and the sweep sends every unhandled release again)."""
        release = Release(game=game, version=version, open=True if is_open else None)
        subject = self.rt.subjects.release
        try:
            if not tracing.enabled():
                await self.rt.tell(subject, release)
                return
            # the last ack's trace goes on to the follow-up (a resent release starts its own)
            with tracing.span(
                "release",
                {"cardroom.game": game, "cardroom.version": version},
                kind=tracing.SpanKind.PRODUCER,
            ):
                await self.rt.tell(subject, release, headers=tracing.headers())
        except Exception as exc:  # NATS away: the sweep sends it again
            log.warning("release %s@%s not sent: %s", game, version, exc)

    async def resend_unhandled(self, grace: float = RELEASE_GRACE) -> int:
        """Send again the releases unhandled for ``grace`` seconds (0: every unhandled one,
        as a starting acktracker does), every shard's; returns how many."""
        sent = 0
        for store in self.rt.shards.stores:
            unhandled = await store.unhandled_releases(limit=RESEND_LIMIT, older_than=grace)
            for game, version in unhandled:
                await self.send(game, version)
            sent += len(unhandled)
        return sent


@dataclass
class GameGate:
    """What one gamemaster knows of one cached game's gate."""

    #: The version at which the gate was seen open: gates close only by appending, so it is
    #: still open while the game is at that version (a stale cache fails its append on the
    #: version check and reloads).
    open_at: int = -1
    #: Released gates followed up here and not marked handled in the store yet.
    unmarked: set[int] = field(default_factory=set)
    marking: bool = False  # a delayed mark is waiting

    def piggyback(self) -> int | None:
        """A gate the next append marks handled with its own statement, if any."""
        return max(self.unmarked) if self.unmarked else None


class Follower:
    """The gamemaster's side: whether a game's gate is open, and the handled marks."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.owed = acks_owed(rt.metrics)
        self._marking: set[asyncio.Task[None]] = set()

    def store(self, game: str) -> EventStore:
        return self.rt.shards.of(game)

    async def is_open(
        self, gate: GameGate, game: str, version: int, handled: set[int] | None = None
    ) -> bool:
        """Whether every present addressee of the game's last batch has acknowledged it.

        ``handled``: released gates whose follow-up the caller looks for. When the store is
        asked and the game is not open, it marks them handled with the same statement (the
        release that opens the game moves it on) and they are taken out of the set.
        """
        if gate.open_at == version:
            return True
        is_open = await self.store(game).gate_open(game, handled=handled or ())
        if is_open:
            gate.open_at = version
        elif handled:
            handled.clear()
        return is_open

    async def unhandled(self) -> list[tuple[str, int]]:
        """Every release unhandled now, however young (``(game, version)``, the oldest first,
        :data:`RESEND_LIMIT` at most): what a starting gamemaster follows up at once. One being
        handled by another gamemaster at that moment is looked at twice, which changes
        nothing. Every shard's, each shard's oldest first."""
        out: list[tuple[str, int]] = []
        for store in self.rt.shards.stores:
            out += await store.unhandled_releases(limit=RESEND_LIMIT)
        return out

    def mark_later(self, gate: GameGate, game: str, handled: set[int]) -> None:
        """Mark ``handled`` gates that found nothing to follow up: by the game's next append
        within :data:`MARK_DELAY`, else by a statement of their own, off the game's lock. A
        mark lost in a crash only means the sweep sends the release again."""
        gate.unmarked.update(handled)
        if gate.marking or not gate.unmarked:
            return
        gate.marking = True

        async def mark() -> None:
            await asyncio.sleep(MARK_DELAY)
            gate.marking = False
            versions = sorted(gate.unmarked)
            try:
                for version in versions:
                    await self.store(game).mark_gate_handled(game, version)
                    gate.unmarked.discard(version)
            except Exception:
                log.warning("gates %s of %s not marked handled; the sweep resends", versions, game)

        task = asyncio.create_task(mark())
        self._marking.add(task)
        task.add_done_callback(self._marking.discard)

    def running(self) -> list[asyncio.Task[None]]:
        """Cancel the marks still waiting (the sweep resends those releases) and return
        them, to be waited for."""
        for task in self._marking:
            task.cancel()
        return [t for t in self._marking if not t.done()]


__all__ = [
    "MARK_DELAY",
    "RELEASE_GRACE",
    "SWEEP_SECONDS",
    "WAIT_BUCKETS",
    "Follower",
    "GameGate",
    "Releases",
    "acks_owed",
    "wait_seconds",
]
