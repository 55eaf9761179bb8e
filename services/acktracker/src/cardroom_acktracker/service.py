"""The ack tracker: records acknowledgements and releases each gate exactly once.

An ack names the event version it acknowledges. The store removes the pending row and counts the
gate down under a row lock, so the last of several concurrent acks, and only it, releases the
gate. Acks that arrive while a statement is being written wait and go together in the next one
(``EventStore.ack_many``): a quiet table waits for nothing, a busy room writes one statement for
many acks. The release is then handed to a gamemaster; the gate's protocol (who releases,
who follows up, what is sent again and when) is specified in ``cardroom_runtime.gate``, whose
:class:`~cardroom_runtime.gate.Releases` this service drives.

While the database is away an ack is answered ``unavailable``, which the client SDK retries
(an ``internal`` answer would lose the ack, and the player would be marked away).

The sweep also resends notifications whose gating ack is overdue (``RESEND_AFTER``): a
notification can be lost on its way (the gamemaster died between storing and publishing it,
or the player's connection was being re-established when it went out), and then the game
would wait for an ack that cannot come until the ack timeout marks the player away. Clients
drop what they have already handled (by ``seq``) and acknowledge it again. Each notification
backs off on its own (the waits double up to ``RESEND_CAP``): a player who is there answers
the first resend, and one who is not would otherwise be sent everything owed every sweep
for as long as the table waits. A finished game's are resent ``FINISHED_RESENDS`` times at
most, then stay for a sync.

And it deletes stored notifications that nobody owes an acknowledgement for any more (the
projector stores only owed ones, but one acknowledged while it was being stored stays behind):
the ``notifications`` table holds what is owed, the event log the history.

In a game that signs its transitions (Macaua) an ack carries the player's signature of the
transition, or its rejection of it; it is kept (``cardroom_eventstore.signatures``) before
the ack counts, and only while the ack is owed. The gamemaster checks them before it moves
the game on: this service knows no game's rules or keys.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from cardroom_eventstore import AckResult, EventStore
from cardroom_eventstore.gates import Released
from cardroom_eventstore.hot import Batcher
from cardroom_eventstore.readmodels import StoredNotification
from cardroom_eventstore.signatures import Signed
from cardroom_runtime import tracing
from cardroom_runtime.gate import RELEASE_GRACE, SWEEP_SECONDS, Releases
from cardroom_runtime.host import Asker, Service
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import (
    Ack,
    AckReply,
    Back,
    ErrorCode,
    Resend,
    WireError,
    dumps,
)

log = logging.getLogger("cardroom.acktracker")

ACK_BATCH = 500  # acks per statement at most
RESEND_AFTER = 2.0  # seconds a gating ack may be overdue before its notification is resent
RESEND_CAP = 60.0  # the longest wait between two resends of one notification
# A finished game's notifications are still resent a few times: the last one tells the
# result, and a player who lost it on the way (a gamemaster that died before publishing, a
# reconnect) and is still there should learn it without asking; nothing waits on them any
# more, so after that they are only listed by a sync.
FINISHED_RESENDS = 3
RESEND_LIMIT = 500  # notifications per sweep


@dataclass(frozen=True)
class ResendPolicy:
    """When overdue notifications are resent (see ``EventStore.claim_resends``)."""

    after: float = RESEND_AFTER
    cap: float = RESEND_CAP
    finished: int = FINISHED_RESENDS
    limit: int = RESEND_LIMIT


class AckTracker(Service):
    name = "acktracker"
    #: Seconds between sweeps, and the resends' policy (a subclass may set others).
    sweep_seconds: ClassVar[float] = SWEEP_SECONDS
    resend_policy: ClassVar[ResendPolicy] = ResendPolicy()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sweeper: asyncio.Task[None] | None = None
        self._batcher: Batcher[tuple[str, int, str], AckResult] | None = None
        metrics = self.rt.metrics
        self._acked = metrics.counter(
            "cardroom_acks",
            "Acknowledgements, by outcome",
            ["outcome"],
            known=[("accepted",), ("duplicate",), ("refused",)],
        )
        self.releases = Releases(self.rt)
        self._resent = metrics.counter(
            "cardroom_notifications_resent", "Notifications resent because their ack was overdue"
        )

    @property
    def _acks(self) -> Batcher[tuple[str, int, str], AckResult]:
        # acks that arrive while a batch is being written go together in the next statement
        if self._batcher is None:
            self._batcher = Batcher(self._ack_shards, ACK_BATCH)
        return self._batcher

    async def _ack_shards(self, acks: list[tuple[str, int, str]]) -> list[AckResult]:
        """One statement per shard that has acks in the batch, at once."""
        return await self.shards.scatter(acks, _game_of, _ack_many)

    def register(self) -> None:
        self.serve(
            self.subjects.ack_all,
            queue="acktracker",
            title="acks",
            model=Ack,
            handler=self.on_ack,
            max_workers=64,
        )
        self.listen(
            self.subjects.resend,
            queue="acktracker",
            title="resend",
            model=Resend,
            listener=self.on_resend,
            max_workers=1,
        )

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep(), name="ack-sweeper")

    async def stop(self) -> None:
        if self._batcher is not None:
            await self._batcher.close()
        await cancel_and_wait([self._sweeper])

    async def on_ack(self, ack: Ack, asker: Asker) -> dict[str, Any]:
        """A player acknowledges what it was sent at ``ack.version``
        (``<root>.ack.<game>.<player>``)."""
        game, player = asker.seat
        if ack.signature is not None or ack.reject is not None:
            if ack.signature is not None and ack.reject is not None:
                raise WireError(ErrorCode.BAD_REQUEST, "an ack signs or rejects, not both")
            rejection = ack.reject.model_dump() if ack.reject is not None else None
            signed = Signed(ack.signature, rejection)
            await self.store_of(game).record_signature(game, ack.version, player, signed)
        tracing.tag("cardroom.version", ack.version)
        result = await self._acks.submit((game, ack.version, player))
        if not result.accepted:
            # tell apart a repeated ack (harmless) from one that names nothing
            store = self.store_of(game)
            if await store.addressed(game, ack.version, player):
                self._acked.labels("duplicate").inc()
                return AckReply(version=ack.version, duplicate=True).body()
            self._acked.labels("refused").inc()
            if await store.stream_version(game) == 0:
                raise WireError(ErrorCode.UNKNOWN_GAME, f"no game {game!r}")
            # one answer whether the version exists or not: comparing it with the table's own
            # version would let a player search out how many events it was not told of
            raise WireError(
                ErrorCode.NOT_ADDRESSEE, f"version {ack.version} has nothing for you to ack"
            )
        if result.away:  # an away player acknowledges: they are back
            try:
                await self.rt.tell(self.subjects.back, Back(game=game, player=player))
            except Exception:  # their next sync or command marks them back
                log.debug("back of %s in %s not sent", player, game, exc_info=True)
        self._acked.labels("accepted").inc()
        tracing.tag("cardroom.released", result.released_gate is not None)
        if result.released_gate is not None:
            if isinstance(result, Released):
                self.releases.count(result.game_type, result.waited)
            else:
                self.releases.count(None, None)
            # the ack is durable now: hand the release on and answer (if the release is lost,
            # the gate stays unhandled in the store and the sweep sends it again)
            await self.releases.send(game, result.released_gate, is_open=result.open)
        return AckReply(version=ack.version).body()

    async def _sweep(self) -> None:
        # the first sweep at once, and every unhandled release in it however young: a
        # predecessor killed between releasing a gate and sending the release left it unsent
        grace = 0.0
        while True:
            try:
                await self.releases.resend_unhandled(grace)
                await self.resend_overdue()
                for store in self.shards.stores:
                    await store.delete_acknowledged()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("release sweep failed; retrying")
            grace = RELEASE_GRACE
            await asyncio.sleep(self.sweep_seconds)

    async def on_resend(self, resend: Resend, asker: Asker) -> None:
        """A gamemaster started: the notifications its predecessor appended and died before
        publishing would wait for the sweep to find them overdue; send every owed one now."""
        try:
            await self.resend_overdue(owed_for=0.0)
        except Exception:  # the sweep sends them once they are overdue
            log.warning("resend at a gamemaster's start failed", exc_info=True)

    async def resend_overdue(self, *, owed_for: float | None = None) -> int:
        """Publish again the stored notifications whose gating ack is overdue (``owed_for``:
        owed that many seconds instead of the policy's ``after``) and whose next resend is due
        (their next one is scheduled as they are read)."""
        policy = self.resend_policy
        sent = 0
        for store in self.shards.stores:
            notes = await store.claim_resends(
                first=policy.after,
                cap=policy.cap,
                finished=policy.finished,
                limit=policy.limit,
                owed_for=owed_for,
            )
            sent += await self._publish(notes)
        self._resent.inc(sent)
        if sent:
            log.info("resent %d overdue notification(s)", sent)
        return sent

    async def _publish(self, notes: Iterable[StoredNotification]) -> int:
        """Publish stored notifications on their players' subjects; returns how many."""
        sent = 0
        traced = tracing.enabled()
        for note in notes:
            subject = self.subjects.player(note.player_id, note.game_id)
            if traced:  # a resend starts a trace of its own: whoever acks it continues it
                with tracing.span(
                    "notification resend",
                    {"cardroom.game": note.game_id, "cardroom.player": note.player_id},
                    kind=tracing.SpanKind.PRODUCER,
                ):
                    await self.rt.broker.connection.publish(
                        subject, dumps(note.payload), headers=tracing.headers()
                    )
            else:
                await self.rt.broker.publish(dumps(note.payload), subject)
            sent += 1
        return sent


def _game_of(ack: tuple[str, int, str]) -> str:
    return ack[0]


async def _ack_many(store: EventStore, acks: list[tuple[str, int, str]]) -> list[AckResult]:
    return await store.ack_many(acks)
