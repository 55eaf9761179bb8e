"""Tracking records: a projection's writes and its checkpoint commit (or not) together."""

from __future__ import annotations

import asyncio
import time

import pytest
from cardroom_eventstore import Append, EventStore, NewEvent
from sqlalchemy import Column, Integer, MetaData, Table, Text, func, select, text

projection_metadata = MetaData()
views = Table(
    "test_views",
    projection_metadata,
    Column("position", Integer, primary_key=True),
    Column("body", Text, nullable=False),
)


class Boom(Exception):
    pass


async def project(store: EventStore, name: str, fail_at: int | None = None) -> int:
    """Apply every new event to ``test_views``; raise Boom before committing if asked."""
    async with store.tracking(name) as tracking:
        new = await store.read_all(after_position=tracking.position)
        for event in new:
            await tracking.conn.execute(
                views.insert().values(position=event.position, body=event.type)
            )
        if new:
            await tracking.advance(new[-1].position)
        if fail_at is not None and any(e.position >= fail_at for e in new):
            raise Boom
        return len(new)


async def view_count(store: EventStore) -> int:
    async with store.engine.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(views)) or 0)


@pytest.fixture
async def projected(store: EventStore) -> EventStore:
    async with store.engine.begin() as conn:
        await conn.run_sync(projection_metadata.create_all)
    return store


async def test_checkpoint_advances_with_the_projection(projected: EventStore) -> None:
    store = projected
    assert await store.checkpoint("views") == 0
    assert await project(store, "views") == 0
    assert await store.checkpoint("views") == 0

    recorded = await store.append(
        Append("g", "take5", 0, [NewEvent(f"e{i}", {}) for i in range(5)])
    )
    assert await project(store, "views") == 5
    assert await store.checkpoint("views") == recorded[-1].position
    assert await view_count(store) == 5
    assert await project(store, "views") == 0  # nothing new: exactly once

    # The body fails after writing and advancing: neither the writes nor the checkpoint stay.
    more = await store.append(Append("g", "take5", 5, [NewEvent("late", {})]))
    with pytest.raises(Boom):
        await project(store, "views", fail_at=more[0].position)
    assert await store.checkpoint("views") == recorded[-1].position
    assert await view_count(store) == 5

    # The retry applies the event exactly once.
    assert await project(store, "views") == 1
    assert await store.checkpoint("views") == more[0].position
    assert await view_count(store) == 6
    assert await store.checkpoint("another") == 0


async def test_checkpoint_never_goes_back(projected: EventStore) -> None:
    async with projected.tracking("t") as tracking:
        await tracking.advance(10)
        with pytest.raises(ValueError, match="back"):
            await tracking.advance(9)
        await tracking.advance(10)
    assert await projected.checkpoint("t") == 10


async def test_two_trackers_of_one_name_serialize(projected: EventStore) -> None:
    store = projected
    entered_second = asyncio.Event()
    seen_by_second: list[int] = []

    async def second() -> None:
        async with store.tracking("views") as tracking:
            seen_by_second.append(tracking.position)
            entered_second.set()

    async with store.tracking("views") as first:
        assert first.position == 0
        task = asyncio.create_task(second())
        # Wait (by polling the server, not by sleeping a fixed time) until the second tracker
        # is blocked on the first one's row lock.
        deadline = time.monotonic() + 20
        async with store.engine.connect() as conn:
            while True:
                waiting = await conn.scalar(
                    text(
                        "SELECT count(*) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                    )
                )
                # pg_stat_activity is a snapshot taken once per transaction: end it, or
                # every later poll sees the first one's picture
                await conn.rollback()
                if waiting:
                    break
                assert time.monotonic() < deadline, "second tracker never blocked"
                await asyncio.sleep(0.01)
        assert not entered_second.is_set()
        await first.advance(42)
    await task
    assert seen_by_second == [42]


async def test_many_tracking_records_commit_or_roll_back_together(store: EventStore) -> None:
    """tracking_many: several checkpoints in one transaction with the writes made on it."""
    async with store.tracking_many(["b", "a"]) as tracking:
        assert tracking.positions == {"a": 0, "b": 0}
        await tracking.conn.execute("CREATE TABLE test_many (name text)")
        await tracking.advance({"a": 3, "b": 5})
    assert (await store.checkpoint("a"), await store.checkpoint("b")) == (3, 5)

    async def fail_after_writing() -> None:
        async with store.tracking_many(["a", "b", "c"]) as tracking:
            assert tracking.positions == {"a": 3, "b": 5, "c": 0}
            await tracking.conn.execute("INSERT INTO test_many VALUES ('lost')")
            await tracking.advance({"a": 4, "c": 1})
            raise Boom

    with pytest.raises(Boom):
        await fail_after_writing()
    assert (await store.checkpoint("a"), await store.checkpoint("c")) == (3, 0)
    async with store.engine.connect() as conn:
        assert await conn.scalar(text("SELECT count(*) FROM test_many")) == 0

    async with store.tracking_many(["a"]) as tracking:
        with pytest.raises(ValueError, match="cannot go back"):
            await tracking.advance({"a": 2})


async def test_a_tracking_transaction_waits_for_the_wal_flush_unless_told_not_to(
    store: EventStore,
) -> None:
    async with store.tracking("durable") as tracking:
        assert await tracking.conn.scalar(text("SHOW synchronous_commit")) == "on"
        await tracking.advance(1)
    async with store.tracking("relaxed", durable=False) as relaxed:
        assert await relaxed.conn.fetchval("SHOW synchronous_commit") == "off"
        await relaxed.advance(2)
    # the relaxed commit is the relaxed pool's alone: the engine's connections wait
    async with store.engine.connect() as conn:
        assert await conn.scalar(text("SHOW synchronous_commit")) == "on"
    assert await store.checkpoint("durable") == 1
    assert await store.checkpoint("relaxed") == 2
