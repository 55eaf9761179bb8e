"""The analytics service: an outside subscriber of the event stream.

It imports no other service and nothing of the engine or the event store: it reads the
documented event records (docs/events.md) from JetStream and keeps its own tables
(:mod:`cardroom_analytics.schema`): finished games, per-player results, openskill ratings
per game type, per game type statistics and durations.

**Exactly-once effects.** A durable pull consumer (``<root>-analytics``, explicit acks)
delivers the events. One batch (what one fetch returns, in stream order) is applied in one
PostgreSQL transaction together with the checkpoint, which is each game's last applied event
version (``analytics_games.version``): an event is applied only when it is its game's next
version; one at or below the checkpoint is a redelivery or a duplicate and is only
acknowledged; one further ahead is a gap (an earlier event is still on its way) and is
nak'ed with a delay so it comes back after the missing one. Acks go out after the commit: a
crash between the two redelivers events that are then recognised as duplicates. Batch
transactions take one advisory lock, so two analytics processes never interleave.

**One leader.** Several analytics processes stand by for each other, and one at a time
fetches: the one holding a session-level advisory lock (``db.try_lead``) on a connection of
its own. Two fetching from the one consumer would take turns at its single batch in flight
and split each game's events between them, so that most of them come early (a gap), wait and
come back, slower than a busy cardroom appends (bench/README.md has the figures). When the
leader dies its PostgreSQL session ends with it, and another process takes the lead within
:data:`LEAD_RETRY`; the dead one's batch comes back after the ack wait, before anything newer
(below).
The lead is about speed only: two leaders at once (a lock lost with a database restart,
say) still count every event once.

**Stream order.** Ratings depend on the order in which results are applied (each game's
update starts from the ratings the previous games left). The consumer allows one batch in
flight (``max_ack_pending`` = the batch size), and a leader that takes over from one that
left events unacknowledged (it died, or lost its lead) first waits until JetStream may
deliver them again, which it does before anything newer. Fetching at once, it would fill
the rest of the batch in flight with newer events (a dead leader's last fetch is seldom a
whole batch) and apply other games' results before the older ones. So even after a crash
the live tables are the fold of the stream in order, which is what ``cardroom rebuild``
computes, to the last bit of every float.

**Queries** (request/reply, ``{"ok": true, ...}`` or ``{"ok": false, "error": ...}``) on
``<root>.analytics.<verb>``: ``stats``, ``leaderboard``, ``game``, ``games``, ``player``
(see :mod:`cardroom_analytics.queries`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from cardroom_runtime.host import Asker, Service, ensure_events_stream
from cardroom_runtime.nats import connect
from cardroom_runtime.postgres import sqlalchemy_url
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import Subjects
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from . import db
from .queries import AnalyticsQuery, answer
from .records import BadRecord, Record

log = logging.getLogger("cardroom.analytics")

BATCH = 500  # events per fetch and transaction; CARDROOM_ANALYTICS_BATCH overrides it
ENV_BATCH = "CARDROOM_ANALYTICS_BATCH"
FETCH_TIMEOUT = 2.0
# seconds before JetStream redelivers an unacknowledged event: after a crash, the events the
# dead process had fetched come back after this, so it bounds how long analytics stands
# still after its leader dies. A batch commits in well under a second; one that takes longer
# than this is redelivered while it runs and its events come again as duplicates, which cost
# an ack each (CARDROOM_ANALYTICS_ACK_WAIT; read when the durable consumer is created)
ACK_WAIT = 10.0
ENV_ACK_WAIT = "CARDROOM_ANALYTICS_ACK_WAIT"
GAP_DELAY = 0.5  # seconds before a message that arrived ahead of a missing one comes back
RETRY_DELAY = 1.0  # after a failed batch (PostgreSQL away, ...)
LEAD_RETRY = 1.0  # seconds between a standby's tries to take the lead


def query_subject(subjects: Subjects, verb: str) -> str:
    return f"{subjects.root}.analytics.{verb}"


def durable_name(subjects: Subjects) -> str:
    return f"{subjects.root}-analytics"


class Analytics(Service):
    name = "analytics"
    background = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._engine: AsyncEngine | None = None
        self._nc: NatsClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._lead: AsyncConnection | None = None  # its session holds the lead
        self._stopping = False
        self.batch = max(1, int(os.environ.get(ENV_BATCH, "") or BATCH))
        self.applied = 0  # events applied by this process (for logs and tests)
        self.batches = 0
        self._delay = self.rt.metrics.histogram(
            "cardroom_analytics_delay_seconds",
            "From an event's commit until analytics committed what it changed",
        )

    @property
    def engine(self) -> AsyncEngine:
        assert self._engine is not None, "analytics not prepared"
        return self._engine

    def register(self) -> None:
        self.serve(
            query_subject(self.subjects, "*"),
            queue="analytics",
            title="analytics",
            model=AnalyticsQuery,
            handler=self.on_query,
            max_workers=8,
            empty_is_object=True,
        )

    async def prepare(self) -> None:
        await ensure_events_stream(self.rt.nats_url, self.subjects)
        self._engine = create_async_engine(
            sqlalchemy_url(self.rt.database_url), pool_size=4, max_overflow=4
        )

    async def start(self) -> None:
        self._nc = await connect(
            self.rt.nats_url, f"cardroom-analytics-{self.subjects.root}", metrics=self.rt.metrics
        )
        js = self._nc.jetstream()
        sub = await js.pull_subscribe(
            self.subjects.events_all,
            durable=durable_name(self.subjects),
            stream=self.subjects.events_stream,
            config=ConsumerConfig(
                deliver_policy=DeliverPolicy.ALL,
                ack_policy=AckPolicy.EXPLICIT,
                ack_wait=float(os.environ.get(ENV_ACK_WAIT, "") or ACK_WAIT),
                max_deliver=-1,
                # one batch in flight: after a crash the dead process's batch is redelivered
                # before anything newer, so events are applied in stream order (module docs)
                max_ack_pending=self.batch,
            ),
        )
        self._task = asyncio.create_task(self._run(sub), name="analytics")

    async def stop(self) -> None:
        self._stopping = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        # close the connection before waiting for the consumer: a cancelled pull fetch in
        # nats-py can stay pending until its subscription goes away
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.close()
            self._nc = None
        await cancel_and_wait([task])
        await self._drop_lead()
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None

    # -- the consumer ---------------------------------------------------------------------------
    @property
    def leading(self) -> bool:
        """Whether this process holds the lead (for tests and logs)."""
        return self._lead is not None

    async def _leading(self) -> bool:
        """Whether this process leads the consumer, taking the lead if nobody has it."""
        if self._lead is not None:
            return True
        try:
            conn = await self.engine.execution_options(isolation_level="AUTOCOMMIT").connect()
        except Exception:
            return False
        try:
            if await db.try_lead(conn, durable_name(self.subjects)):
                self._lead = conn
                log.info("analytics: leads the consumer")
                return True
        except Exception as exc:
            log.warning("analytics: could not try for the lead: %s", exc)
        await conn.close()
        return False

    async def _check_lead(self) -> None:
        """After a failed batch: a lead whose session has ended (PostgreSQL restarted, the
        connection broke) is lost, and taken again when it can be. Checked only then, since
        a database that went away fails the next batch first."""
        if self._lead is None:
            return
        try:
            await self._lead.execute(sa.text("SELECT 1"))
        except Exception as exc:
            log.warning("analytics: lost the lead: %s", exc)
            await self._drop_lead()

    async def _drop_lead(self) -> None:
        """Give the lead up: the connection is closed, not pooled, since a pooled session
        would keep holding the lock."""
        conn, self._lead = self._lead, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.invalidate()
            with contextlib.suppress(Exception):
                await conn.close()

    async def _run(self, sub: JetStreamContext.PullSubscription) -> None:
        while not self._stopping:
            led = self._lead is not None
            if not await self._leading():
                await asyncio.sleep(LEAD_RETRY)
                continue
            if not led:
                await self._after_predecessor(sub)
            try:
                msgs = await sub.fetch(self.batch, timeout=FETCH_TIMEOUT)
            except asyncio.CancelledError:
                raise
            except TimeoutError:
                continue
            except Exception as exc:  # NATS away: the consumer and its acks are durable
                if self._stopping:
                    return  # (the stop closed the connection under the fetch)
                log.warning("analytics: fetch failed: %s", exc)
                await asyncio.sleep(RETRY_DELAY)
                continue
            try:
                await self.handle(msgs)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("analytics: batch of %d failed; it will be redelivered", len(msgs))
                for msg in msgs:
                    with contextlib.suppress(Exception):
                        await msg.nak(delay=RETRY_DELAY)
                await self._check_lead()
                await asyncio.sleep(RETRY_DELAY)

    async def _after_predecessor(self, sub: JetStreamContext.PullSubscription) -> None:
        """A new leader's first fetch waits until what its predecessor fetched and never
        acknowledged can be delivered again: JetStream delivers those before anything newer,
        so they come first. Fetched at once, the free room of the batch in flight would hold
        newer events, other games' results among them, applied before the older ones."""
        try:
            info = await sub.consumer_info()
        except Exception as exc:  # NATS away: the fetch fails and is tried again
            log.warning("analytics: could not read the consumer: %s", exc)
            return
        if info.num_ack_pending:
            wait = float(info.config.ack_wait or ACK_WAIT) + GAP_DELAY
            log.info(
                "analytics: %d events held by the last leader; fetching in %.1f s",
                info.num_ack_pending,
                wait,
            )
            await asyncio.sleep(wait)

    async def handle(self, msgs: list[Msg]) -> None:
        """Apply one fetched batch in one transaction, then acknowledge it."""
        decoded: list[tuple[Record, Msg]] = []
        for msg in msgs:
            try:
                decoded.append((Record.decode(msg.data), msg))
            except BadRecord as exc:
                log.error("analytics: dropping a message on %s: %s", msg.subject, exc)
                with contextlib.suppress(Exception):
                    await msg.term()
        if not decoded:
            return
        # stream order, which is what a rebuild folds (not ``position``: with several event
        # store shards each has its own); a redelivered event then comes before the later
        # ones of its game
        decoded.sort(key=lambda pair: _stream_seq(pair[1]))
        records = [record for record, _ in decoded]
        accepted = [msg for _, msg in decoded]
        async with self.engine.begin() as conn:
            ledger = await db.load(conn, records)
            decisions = [ledger.apply(r) for r in records]
            await db.save(conn, ledger)
        self.applied += ledger.applied
        self.batches += 1
        now = datetime.now(UTC)
        for record, decision in zip(records, decisions, strict=True):
            if decision == "apply":  # not a duplicate's second coming
                self._delay.observe(max((now - record.recorded_at).total_seconds(), 0.0))
        for msg, record, decision in zip(accepted, records, decisions, strict=True):
            with contextlib.suppress(Exception):  # a lost ack: redelivered, then a duplicate
                if decision == "gap":
                    delivered = msg.metadata.num_delivered
                    if delivered in (10, 100, 1000):
                        log.warning(
                            "analytics: %s v%d still waits for v%d (delivered %d times)",
                            record.game,
                            record.version,
                            ledger.checkpoint(record.game) + 1,
                            delivered,
                        )
                    await msg.nak(delay=GAP_DELAY)
                else:
                    await msg.ack()

    # -- queries --------------------------------------------------------------------------------
    async def on_query(self, query: AnalyticsQuery, asker: Asker) -> dict[str, Any]:
        """An analytics query (``<root>.analytics.<verb>``; see :mod:`.queries`)."""
        return await answer(self.engine, asker.verb or "", query.root)


def _stream_seq(msg: Msg) -> int:
    return int(msg.metadata.sequence.stream)
