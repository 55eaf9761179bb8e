"""The relay: committed events -> JetStream, in commit order, no gaps, no duplicates.

It tails the store's global log from its checkpoint and publishes each event on
``<root>.events.<game type>.<game>`` with ``Nats-Msg-Id`` = the event id, waiting for each
PubAck. The checkpoint advances after the broker has the events; a crash in between
republishes them and JetStream drops the duplicates (its duplicate window is two minutes,
far longer than a restart). The payload is the documented event schema (docs/events.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from cardroom_eventstore import RecordedEvent
from cardroom_runtime.host import Service, ensure_events_stream
from cardroom_runtime.nats import connect
from cardroom_wire import dumps
from nats.aio.client import Client
from nats.js import JetStreamContext

log = logging.getLogger("cardroom.relay")

CHECKPOINT = "relay"  # one relay (or several, serialised by the tracking lock) per database
BATCH = 500
LINGER = 0.02  # seconds to wait after an append is notified, to publish what follows with it
PUBACK_TIMEOUT = 5.0  # seconds to wait for a batch's PubAcks before publishing it again


def event_payload(event: RecordedEvent) -> dict[str, Any]:
    """The public schema of one event on the JetStream stream."""
    return {
        "event_id": str(event.event_id),
        "position": event.position,
        "game": event.stream_id,
        "game_type": event.stream_type,
        "version": event.version,
        "type": event.type,
        "data": event.data,
        "metadata": event.metadata,
        "recorded_at": event.recorded_at.isoformat(),
    }


class Relay(Service):
    name = "relay"
    background = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._task: asyncio.Task[None] | None = None
        self._nc: Client | None = None
        self._js: JetStreamContext | None = None
        self.position = 0
        self._delay = self.rt.metrics.histogram(
            "cardroom_relay_delay_seconds",
            "From an event's commit until JetStream acknowledged its publication",
        )

    async def prepare(self) -> None:
        await ensure_events_stream(self.rt.nats_url, self.subjects)

    async def start(self) -> None:
        self._nc = await connect(self.rt.nats_url, "cardroom-relay")
        self._js = self._nc.jetstream(publish_async_max_pending=BATCH)
        self.position = await self.store.checkpoint(CHECKPOINT)
        # listen now: a store the relay cannot listen to fails the start, not every poll
        await self.store.wait_for_append(timeout=0)
        self._task = asyncio.create_task(self._run(), name="relay")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._nc is not None:
            await self._nc.close()

    async def _run(self) -> None:
        while True:
            try:
                if await self.pump() < BATCH:
                    await self.store.wait_for_append(timeout=1.0)
                    # let the appends of a busy moment gather: one read, one pipelined
                    # publish and one checkpoint for all of them, not one per event
                    await asyncio.sleep(LINGER)
            except asyncio.CancelledError:
                raise
            except Exception:
                # NATS or PostgreSQL away: nothing was checkpointed past what JetStream holds
                log.exception("relay: retrying")
                await asyncio.sleep(0.5)

    async def pump(self) -> int:
        """Publish one batch; returns how many events it published."""
        events = await self.store.read_all(self.position, BATCH)
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
        async with self.store.tracking(CHECKPOINT) as tracking:
            # a checkpoint lost in a crash only means publishing again, which JetStream
            # de-duplicates: no need to wait for the WAL flush
            await tracking.conn.execute(sa.text("SET LOCAL synchronous_commit = off"))
            await tracking.advance(events[-1].position)
        self.position = events[-1].position
        now = datetime.now(UTC)
        for event in events:
            self._delay.observe((now - event.recorded_at).total_seconds())
        return len(events)
