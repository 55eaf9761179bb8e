"""The global order: a tailing reader never skips an event that commits late.

Concurrent writers append thousands of events (mixed streams, mixed batch sizes, group
commits, retried conflicts, deliberately rolled-back appends, append statements whose
transaction lingers between taking their positions and committing) while a reader tails
``read_all`` from its checkpoint, waking on LISTEN/NOTIFY. After the writers finish and the
reader drains, the reader must have seen every committed event exactly once, in strictly
increasing position order, and nothing of a rolled-back transaction.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
import uuid

from cardroom_eventstore import (
    Append,
    ConcurrencyError,
    EventStore,
    EventStoreError,
    NewEvent,
    RecordedEvent,
)
from cardroom_eventstore.appends import _Prepared
from cardroom_eventstore.appends import recorded as recorded_events

WRITERS = 6
EVENTS_PER_WRITER = 850
SHARED_STREAMS = ["shared-0", "shared-1", "shared-2"]


class Rollback(Exception):
    pass


async def test_global_order_race_reader_sees_every_committed_event_once(
    es_database_url: str,
) -> None:
    writer_store = await EventStore.connect(es_database_url, pool_size=WRITERS + 2, max_overflow=0)
    reader_store = await EventStore.connect(es_database_url, pool_size=2, max_overflow=0)
    committed: dict[uuid.UUID, RecordedEvent] = {}
    rolled_back: set[uuid.UUID] = set()
    seen: list[RecordedEvent] = []
    seen_while_writing = 0
    writers_done = asyncio.Event()
    # A new workload every run; the seed shows in the captured output of a failure.
    seed = random.randrange(2**32)
    print(f"race seed {seed}")

    def new_events(rng: random.Random, size: int) -> list[NewEvent]:
        return [
            NewEvent(
                type=rng.choice(["played", "took", "dealt"]),
                data={"card": rng.randint(1, 104)},
                addressees=frozenset(rng.sample(["a", "b", "c", "d"], rng.randint(0, 4))),
            )
            for _ in range(size)
        ]

    def remember(events: list[RecordedEvent]) -> int:
        for event in events:
            committed[event.event_id] = event
        return len(events)

    async def writer(w: int) -> None:
        rng = random.Random(seed + w)
        own = {f"w{w}-s{k}": 0 for k in range(6)}
        written = 0
        while written < EVENTS_PER_WRITER:
            stream = rng.choice(list(own))
            events = new_events(rng, rng.randint(1, 10))
            roll = rng.random()
            if roll < 0.05:
                # Rolled back after taking positions: a duplicated event id aborts the insert.
                twin = NewEvent("twin", {}, event_id=events[0].event_id)
                try:
                    await writer_store.append(Append(stream, "take5", own[stream], [*events, twin]))
                except EventStoreError:
                    rolled_back.update(e.event_id for e in events)
                else:
                    raise AssertionError("a duplicated event id was appended")
            elif roll < 0.15:
                # Lingering transactions: hold the positions (and the append lock) for a while
                # before committing, or roll back after all.
                batch = Append(stream, "take5", own[stream], events)
                fail = rng.random() < 0.4
                prepared = _Prepared.of(batch)
                try:
                    async with writer_store.hot.connection() as conn, conn.transaction():
                        rows = await conn.fetch(
                            prepared.statement.sql,
                            *prepared.statement.args(prepared.one_params()),
                        )
                        await asyncio.sleep(rng.random() * 0.003)
                        if fail:
                            raise Rollback
                except Rollback:
                    rolled_back.update(e.event_id for e in events)
                else:
                    own[stream] += len(events)
                    written += remember(recorded_events(batch, rows))
            elif roll < 0.3:
                # Appends one after the other over several of the writer's streams (and one
                # stale one, which fails alone).
                names = rng.sample(list(own), 3)
                batches = [
                    Append(n, "take5", own[n], new_events(rng, rng.randint(1, 4))) for n in names
                ]
                batches.append(Append(names[0], "take5", own[names[0]], new_events(rng, 1)))
                results = await writer_store.append_each(batches)
                assert isinstance(results[-1], ConcurrencyError)
                for name, result in zip(names, results, strict=False):
                    assert isinstance(result, list), result
                    own[name] += len(result)
                    written += remember(result)
                rolled_back.update(e.event_id for e in batches[-1].events)
            elif roll < 0.38 and sum(v > 0 for v in own.values()) >= 2:
                # A one-statement group commit of appends to running streams.
                names = rng.sample([n for n in own if own[n] > 0], 2)
                batches = [
                    Append(n, "take5", own[n], new_events(rng, rng.randint(1, 4))) for n in names
                ]
                for name, result in zip(
                    names, await writer_store.append_group(batches), strict=True
                ):
                    assert isinstance(result, list), result
                    own[name] += len(result)
                    written += remember(result)
            elif roll < 0.45:
                # Streams shared by all writers: conflicts, reload, retry.
                shared = rng.choice(SHARED_STREAMS)
                while True:
                    version = await writer_store.stream_version(shared)
                    try:
                        recorded = await writer_store.append(
                            Append(shared, "take5", version, events)
                        )
                    except ConcurrencyError:
                        continue
                    written += remember(recorded)
                    break
            else:
                recorded = await writer_store.append(Append(stream, "take5", own[stream], events))
                own[stream] += len(events)
                written += remember(recorded)

    async def reader() -> None:
        nonlocal seen_while_writing
        checkpoint = await reader_store.checkpoint("race-reader")
        while True:
            finished = writers_done.is_set()  # before reading: a later empty read means drained
            batch = await reader_store.read_all(checkpoint, limit=500)
            for event in batch:
                assert event.position > checkpoint, "positions must strictly increase"
                checkpoint = event.position
                seen.append(event)
            if not finished:
                seen_while_writing = len(seen)
            if not batch:
                if finished:
                    return
                await reader_store.wait_for_append(0.5)

    started = time.monotonic()
    try:
        reading = asyncio.create_task(reader())
        await asyncio.gather(*(writer(w) for w in range(WRITERS)))
        writers_done.set()
        await asyncio.wait_for(reading, timeout=120)
    finally:
        await writer_store.close()
        await reader_store.close()
    elapsed = time.monotonic() - started

    ids = [e.event_id for e in seen]
    assert len(committed) >= WRITERS * EVENTS_PER_WRITER >= 5000
    assert len(ids) == len(set(ids)), "an event was read twice"
    assert set(ids) == set(committed), (
        f"missed {len(set(committed) - set(ids))}, unexpected {len(set(ids) - set(committed))}"
    )
    assert not rolled_back & set(ids)
    positions = [e.position for e in seen]
    assert all(a < b for a, b in itertools.pairwise(positions))
    assert positions[-1] > len(positions), "rolled-back transactions should leave gaps"
    assert seen_while_writing > 0, "the reader should tail while the writers write"
    for event in seen:
        assert committed[event.event_id].position == event.position

    # Per stream, versions are contiguous and follow the global order.
    by_stream: dict[str, list[int]] = {}
    for event in seen:
        by_stream.setdefault(event.stream_id, []).append(event.version)
    for versions in by_stream.values():
        assert versions == list(range(1, len(versions) + 1))
    print(f"{len(seen)} events, {len(rolled_back)} rolled back, {elapsed:.2f}s")
