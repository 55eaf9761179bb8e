"""The relay: committed events -> JetStream, in commit order, no gaps, no duplicates.

It tails the store's global log from its checkpoint and publishes each event on
``<root>.events.<game type>.<game>`` with ``Nats-Msg-Id`` = the event id, waiting for each
PubAck. The checkpoint advances after the broker has the events; a crash in between
republishes them and JetStream drops the duplicates (its duplicate window is two minutes,
far longer than a restart). The payload is the wire contract's event record
(``cardroom_wire.events``, docs/events.md).

With several shards (``cardroom_runtime.shards``) it tails each shard's log on its own, in
that shard's order, with that shard's checkpoint; two relays serialise per shard on that
checkpoint's lock, as on a single database. JetStream then carries every shard's events on
the same per-game subjects: each game's events are in its order, the games of different
shards interleave as they come.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime
from typing import Any

from cardroom_eventstore import EventStore, RecordedEvent
from cardroom_runtime.host import Service, ensure_events_stream
from cardroom_runtime.nats import connect
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import dumps
from cardroom_wire.events import EventRecord
from nats.aio.client import Client
from nats.js import JetStreamContext

log = logging.getLogger("cardroom.relay")

CHECKPOINT = "relay"  # one relay (or several, serialised by the tracking lock) per database
BATCH = 500
LINGER = 0.02  # seconds to wait after an append is notified, to publish what follows with it
PUBACK_TIMEOUT = 5.0  # seconds to wait for a batch's PubAcks before publishing it again
LAG_EVERY = 2.0  # seconds between two looks at how far behind the followers are


def event_payload(event: RecordedEvent) -> dict[str, Any]:
    """The event record (``cardroom_wire.events.EventRecord``) of one committed event."""
    return EventRecord.payload(
        event_id=str(event.event_id),
        position=event.position,
        game=event.stream_id,
        game_type=event.stream_type,
        version=event.version,
        type=event.type,
        data=event.data,
        metadata=event.metadata,
        recorded_at=event.recorded_at,
    )


class Relay(Service):
    name = "relay"
    background = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tasks: list[asyncio.Task[None]] = []
        self._lag_task: asyncio.Task[None] | None = None
        self._nc: Client | None = None
        self._js: JetStreamContext | None = None
        #: each shard's position: what JetStream holds of its log
        self.positions = [0] * len(self.shards)
        self._delay = self.rt.metrics.histogram(
            "cardroom_relay_delay_seconds",
            "From an event's commit until JetStream acknowledged its publication",
        )
        self._lag = self.rt.metrics.follower_lags()

    async def prepare(self) -> None:
        await ensure_events_stream(self.rt.nats_url, self.subjects)

    async def start(self) -> None:
        self._nc = await connect(self.rt.nats_url, "cardroom-relay", metrics=self.rt.metrics)
        self._js = self._nc.jetstream(publish_async_max_pending=BATCH)
        for shard, store in enumerate(self.shards.stores):
            self.positions[shard] = await store.checkpoint(CHECKPOINT)
            # listen now: a store the relay cannot listen to fails the start, not every poll
            await store.wait_for_append(timeout=0)
        self._tasks = [
            asyncio.create_task(self._run(shard), name=f"relay-{shard}")
            for shard in range(len(self.shards))
        ]
        self._lag_task = asyncio.create_task(self._watch_lag(), name="relay-lag")

    async def stop(self) -> None:
        await cancel_and_wait([*self._tasks, self._lag_task])
        if self._nc is not None:
            await self._nc.close()

    async def _run(self, shard: int) -> None:
        store = self.shards.stores[shard]
        while True:
            try:
                if await self.pump(shard) < BATCH:
                    await store.wait_for_append(timeout=1.0)
                    # let the appends of a busy moment gather: one read, one pipelined
                    # publish and one checkpoint for all of them, not one per event
                    await asyncio.sleep(LINGER)
            except asyncio.CancelledError:
                raise
            except Exception:
                # NATS or PostgreSQL away: nothing was checkpointed past what JetStream holds
                log.exception("relay: retrying")
                await asyncio.sleep(0.5)

    async def _watch_lag(self) -> None:
        while True:
            try:
                await self.measure_lag()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a figure missed; the next look tries again
                log.debug("relay: measuring the followers' lag failed: %r", exc)
            await asyncio.sleep(LAG_EVERY)

    async def measure_lag(self) -> dict[str, tuple[int, float]]:
        """Measure how far behind each follower is, in events and in seconds: this relay
        (every shard's log after its checkpoint: the events summed, the oldest one's age) and
        every durable consumer of the events stream (the projector's, analytics', an outside
        subscriber's: what JetStream has not yet had acknowledged). Ephemeral consumers are
        left out (their names are random)."""
        now = datetime.now(UTC)
        behind, age = 0, 0.0
        for store, position in zip(self.shards.stores, self.positions, strict=True):
            n, oldest = await store.behind(position)
            behind += n
            age = max(age, (now - oldest).total_seconds() if oldest else 0.0)
        lags = {"relay": (behind, age)}
        assert self._js is not None
        stream = self.subjects.events_stream
        for info in await self._js.consumers_info(stream):
            if not info.config.durable_name:
                continue
            pending = int(info.num_pending or 0) + int(info.num_ack_pending or 0)
            age = 0.0
            if pending:
                floor = info.ack_floor.stream_seq if info.ack_floor else 0
                age = await self._age(stream, (floor or 0) + 1, info.config.filter_subject, now)
            lags[info.config.durable_name] = (pending, age)
        self._lag.lags = lags
        return lags

    async def _age(self, stream: str, seq: int, subject: str | None, now: datetime) -> float:
        """Seconds since the commit of the first event at or after ``seq`` (of ``subject``)."""
        assert self._js is not None
        try:
            if subject:
                msg = await self._js.get_msg(stream, seq, subject=subject, next=True)
            else:
                msg = await self._js.get_msg(stream, seq)
            recorded = datetime.fromisoformat(json.loads(msg.data or b"{}")["recorded_at"])
        except Exception:  # purged meanwhile, or a server without next-by-subject
            return 0.0
        return max((now - recorded).total_seconds(), 0.0)

    async def pump(self, shard: int = 0) -> int:
        """Publish one batch of a shard's log; returns how many events it published."""
        store: EventStore = self.shards.stores[shard]
        events = await store.read_all(self.positions[shard], BATCH)
        if not events:
            return 0
        assert self._js is not None
        stream = self.subjects.events_stream
        # pipelined: every publish is written in order at once, then all PubAcks awaited
        acks = [
            await self._js.publish_async(
                self.subjects.events(event.stream_type, event.stream_id),
                dumps(event_payload(event)),
                stream=stream,
                headers={"Nats-Msg-Id": str(event.event_id)},
            )
            for event in events
        ]
        # PubAcks lost with a broken connection never come: give up soon and publish again
        # (JetStream drops the duplicates), instead of holding every game for long
        async with asyncio.timeout(PUBACK_TIMEOUT):
            await asyncio.gather(*acks)
        # a checkpoint lost in a crash only means publishing again, which JetStream
        # de-duplicates: no need to wait for the WAL flush
        async with store.tracking(CHECKPOINT, durable=False) as tracking:
            if tracking.position < events[-1].position:
                await tracking.advance(events[-1].position)
            # else another relay of this shard published them first (what this one published
            # again JetStream dropped): go on from its checkpoint
            self.positions[shard] = tracking.position
        now = datetime.now(UTC)
        for event in events:
            self._delay.observe((now - event.recorded_at).total_seconds())
        return len(events)
