"""Appends: optimistic concurrency, group commit, idempotent commands."""

from __future__ import annotations

import asyncio
import random

import pytest
from cardroom_eventstore import (
    Append,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    NewEvent,
)
from cardroom_eventstore.schema import commands, gates, pending_acks
from sqlalchemy import Table, func, select


def ev(n: int, *addressees: str, kind: str = "played") -> NewEvent:
    return NewEvent(
        type=kind, data={"n": n}, metadata={"actor": "t"}, addressees=frozenset(addressees)
    )


async def count(store: EventStore, table: Table, stream_id: str) -> int:
    async with store.engine.connect() as conn:
        value = await conn.scalar(
            select(func.count()).select_from(table).where(table.c.stream_id == stream_id)
        )
    return int(value or 0)


async def test_concurrent_appenders_exactly_one_wins(es_database_url: str) -> None:
    store = await EventStore.connect(es_database_url, pool_size=25, max_overflow=0)
    try:
        for round_ in range(5):
            expected = await store.stream_version("hot")
            attempts = [Append("hot", "take5", expected, [ev(i), ev(i + 100)]) for i in range(20)]
            results = await asyncio.gather(
                *(store.append(a) for a in attempts), return_exceptions=True
            )
            winners = [r for r in results if isinstance(r, list)]
            losers = [r for r in results if isinstance(r, BaseException)]
            assert len(winners) == 1, (round_, results)
            assert len(losers) == 19
            assert all(isinstance(e, ConcurrencyError) for e in losers), losers
            assert all(e.actual == expected + 2 for e in losers if isinstance(e, ConcurrencyError))
            assert [e.version for e in winners[0]] == [expected + 1, expected + 2]

        # Every loser retries (reload, decide again) until it gets in: versions stay contiguous.
        async def retrying(i: int) -> None:
            while True:
                version = await store.stream_version("hot")
                try:
                    await store.append(Append("hot", "take5", version, [ev(i)]))
                    return
                except ConcurrencyError:
                    continue

        await asyncio.gather(*(retrying(i) for i in range(20)))
        stored = await store.read_stream("hot")
        assert [e.version for e in stored] == list(range(1, 5 * 2 + 20 + 1))
        assert await store.stream_version("hot") == len(stored)
        positions = [e.position for e in stored]
        assert positions == sorted(positions)
    finally:
        await store.close()


async def test_concurrent_creators_of_one_stream(store: EventStore) -> None:
    results = await asyncio.gather(
        *(store.append(Append("new", "take5", 0, [ev(i)])) for i in range(15)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, list) for r in results) == 1
    assert all(isinstance(r, ConcurrencyError) for r in results if not isinstance(r, list))
    assert await store.stream_version("new") == 1


async def test_append_writes_pending_acks_and_one_gate(store: EventStore) -> None:
    await store.append(Append("g", "take5", 0, [ev(1, "a", "b"), ev(2), ev(3, "b", "c")]))
    assert await store.pending("g") == {1: frozenset({"a", "b"}), 3: frozenset({"b", "c"})}
    assert await store.pending_for_player("g", "b") == [1, 3]
    assert await store.pending_for_player("g", "z") == []
    assert not await store.gate_open("g")
    async with store.engine.connect() as conn:
        rows = (await conn.execute(select(gates).where(gates.c.stream_id == "g"))).all()
        gate_versions = set(
            await conn.scalars(
                select(pending_acks.c.gate_version).where(pending_acks.c.stream_id == "g")
            )
        )
    assert [(r.version, r.remaining, r.released_at, r.handled) for r in rows] == [
        (3, 4, None, False)
    ]
    assert gate_versions == {3}

    # A batch without addressees opens no gate.
    await store.append(Append("quiet", "take5", 0, [ev(1), ev(2)]))
    assert await store.gate_open("quiet")
    assert await count(store, gates, "quiet") == 0


async def test_empty_append_only_marks_the_gate_handled(store: EventStore) -> None:
    await store.append(Append("g", "take5", 0, [ev(1, "a")]))
    assert (await store.ack("g", 1, "a")).released_gate == 1
    assert await store.unhandled_releases() == [("g", 1)]
    with pytest.raises(ConcurrencyError):
        await store.append(Append("g", "take5", 0 + 5, [], handled_gate=1))
    assert await store.unhandled_releases() == [("g", 1)]
    assert await store.append(Append("g", "take5", 1, [], handled_gate=1)) == []
    assert await store.unhandled_releases() == []
    assert await store.stream_version("g") == 1
    assert await store.read_all() == await store.read_stream("g")

    with pytest.raises(ValueError, match="handled_gate"):
        Append("g", "take5", 1, [])
    with pytest.raises(ValueError, match="expected_version"):
        Append("g", "take5", -1, [ev(1)])


async def test_follow_up_append_marks_gate_handled(store: EventStore) -> None:
    await store.append(Append("g", "take5", 0, [ev(1, "a", "b")]))
    await store.ack("g", 1, "a")
    assert (await store.ack("g", 1, "b")).released_gate == 1
    await store.append(Append("g", "take5", 1, [ev(2, "a")], handled_gate=1))
    assert await store.unhandled_releases() == []
    assert await store.pending("g") == {2: frozenset({"a"})}


async def test_concurrent_duplicate_commands(store: EventStore) -> None:
    await store.append(Append("g", "take5", 0, [ev(0)]))
    results = await asyncio.gather(
        *(
            store.append(Append("g", "take5", 1, [ev(i)], command_id="same", reply={"i": i}))
            for i in range(10)
        ),
        return_exceptions=True,
    )
    assert sum(isinstance(r, list) for r in results) == 1
    assert all(
        isinstance(r, (ConcurrencyError, DuplicateCommand))
        for r in results
        if not isinstance(r, list)
    )
    assert await store.stream_version("g") == 2
    assert await count(store, commands, "g") == 1


async def test_append_groups_race_single_appends(store: EventStore) -> None:
    """Groups and single appends of the same streams at once: one winner per stream and
    version, and the global log stays in commit order (the reader's race test covers the
    order; here every stream's versions are contiguous)."""
    names = [f"r{i}" for i in range(6)]
    for name in names:
        await store.append(Append(name, "take5", 0, [ev(0, "p")]))
    for round_ in range(8):
        versions = {name: await store.stream_version(name) for name in names}
        rng = random.Random(round_)
        calls = []
        for _ in range(3):
            order = rng.sample(names, len(names))  # every stream, in another order
            calls.append(
                store.append_group([Append(n, "take5", versions[n], [ev(1)]) for n in order])
            )
        calls += [store.append(Append(n, "take5", versions[n], [ev(2)])) for n in names[:2]]
        await asyncio.gather(*calls, return_exceptions=True)
        for name in names:
            assert await store.stream_version(name) == versions[name] + 1
    for name in names:
        records = await store.read_stream(name)
        assert [r.version for r in records] == list(range(1, len(records) + 1))
