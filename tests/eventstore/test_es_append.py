"""Appends: optimistic concurrency, group commit, idempotent commands."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest
from cardroom_eventstore import (
    Append,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    EventStoreError,
    NewEvent,
    RecordedEvent,
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


async def test_append_and_read_back(store: EventStore) -> None:
    first = await store.append(Append("g1", "take5", 0, [ev(1), ev(2)]))
    second = await store.append(Append("g1", "take5", 2, [ev(3)]))
    other = await store.append(Append("g2", "sixtysix", 0, [ev(10)]))

    assert [e.version for e in first + second] == [1, 2, 3]
    positions = [e.position for e in first + second + other]
    assert positions == sorted(positions)
    assert len(set(positions)) == 4

    stored = await store.read_stream("g1")
    assert stored == first + second
    assert all(isinstance(e, RecordedEvent) for e in stored)
    assert stored[0].data == {"n": 1}
    assert stored[0].metadata == {"actor": "t", "to": []}  # sent to nobody
    assert stored[0].stream_type == "take5"
    assert stored[0].recorded_at.tzinfo is not None
    assert await store.read_stream("g1", from_version=2) == stored[1:]
    assert await store.read_stream("g1", from_version=2, to_version=2) == stored[1:2]
    assert await store.read_stream("nope") == []

    assert await store.stream_version("g1") == 3
    assert await store.stream_version("nope") == 0

    everything = await store.read_all()
    assert [e.event_id for e in everything] == [e.event_id for e in first + second + other]
    assert await store.read_all(after_position=first[1].position, limit=1) == second


async def test_conflicting_append_raises_and_writes_nothing(store: EventStore) -> None:
    await store.append(Append("g", "take5", 0, [ev(1, "a")]))
    for expected in (0, 2, 5):
        with pytest.raises(ConcurrencyError) as info:
            await store.append(Append("g", "take5", expected, [ev(9, "b")], command_id="c1"))
        assert (info.value.stream_id, info.value.expected, info.value.actual) == ("g", expected, 1)
        assert info.value.retryable
    with pytest.raises(ConcurrencyError) as missing:
        await store.append(Append("absent", "take5", 3, [ev(1)]))
    assert missing.value.actual == 0
    assert await store.stream_version("g") == 1
    assert await store.pending("g") == {1: frozenset({"a"})}
    assert await store.command_reply("g", "c1") is None
    assert await store.stream_version("absent") == 0


async def test_stream_type_mismatch_is_an_error(store: EventStore) -> None:
    await store.append(Append("g", "take5", 0, [ev(1)]))
    with pytest.raises(EventStoreError) as info:
        await store.append(Append("g", "papas", 1, [ev(2)]))
    assert not isinstance(info.value, ConcurrencyError)
    assert await store.stream_version("g") == 1


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


async def test_idempotent_commands(store: EventStore) -> None:
    await store.append(
        Append("g", "take5", 0, [ev(1, "a")], command_id="cmd-1", reply={"ok": True, "v": 1})
    )
    assert await store.command_reply("g", "cmd-1") == {"ok": True, "v": 1}
    assert await store.command_reply("g", "cmd-2") is None
    assert await store.command_reply("other", "cmd-1") is None

    with pytest.raises(DuplicateCommand) as info:
        await store.append(
            Append("g", "take5", 1, [ev(2, "b")], command_id="cmd-1", reply={"ok": False})
        )
    assert (info.value.stream_id, info.value.command_id) == ("g", "cmd-1")
    # Nothing of the duplicate was kept.
    assert await store.stream_version("g") == 1
    assert await store.pending("g") == {1: frozenset({"a"})}
    assert await store.command_reply("g", "cmd-1") == {"ok": True, "v": 1}
    assert len(await store.read_all()) == 1

    # The same command id on another stream is another command; no reply stores {}.
    await store.append(Append("h", "take5", 0, [ev(1)], command_id="cmd-1"))
    assert await store.command_reply("h", "cmd-1") == {}


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


async def test_a_duplicate_event_id_in_a_group_fails_alone(store: EventStore) -> None:
    taken = uuid.uuid4()
    await store.append(Append("g", "take5", 0, [NewEvent("x", {}, event_id=taken)]))
    for name in ("a", "b", "c"):
        await store.append(Append(name, "take5", 0, [ev(1)]))
    results = await store.append_group(
        [
            Append("a", "take5", 1, [ev(2)]),
            Append("b", "take5", 1, [NewEvent("x", {}, event_id=taken)]),
            Append("c", "take5", 1, [ev(2)]),
        ]
    )
    assert isinstance(results[0], list)
    assert isinstance(results[1], EventStoreError)
    assert isinstance(results[2], list)
    assert await store.stream_version("b") == 1
    assert await store.stream_version("c") == 2


async def test_append_group_one_statement_for_many_streams(store: EventStore) -> None:
    """append_group: appends to running games of many streams at once; a failing one fails
    alone and leaves nothing behind, the others leave everything."""
    for name in ("a", "old", "dup", "typed", "quiet"):
        await store.append(Append(name, "take5", 0, [ev(1, "p")], command_id="c"))
    await store.ack("quiet", 1, "p")  # released: its follow-up marks it handled
    batches = [
        Append("a", "take5", 1, [ev(2, "p"), ev(3, "p", "q")], command_id="a1", reply={"v": 3}),
        Append("old", "take5", 5, [ev(2, "p")]),  # stale: conflict
        Append("dup", "take5", 1, [ev(2, "p")], command_id="c"),  # a command seen before
        Append("typed", "papas", 1, [ev(2)]),  # not this stream's type
        Append("quiet", "take5", 1, [], handled_gate=1),  # nothing to say: only the mark
    ]
    results = await store.append_group(batches)
    first = results[0]
    assert isinstance(first, list)
    assert [(e.stream_id, e.version) for e in first] == [("a", 2), ("a", 3)]
    assert first[0].position < first[1].position
    assert isinstance(results[1], ConcurrencyError)
    assert results[1].actual == 1
    assert isinstance(results[2], DuplicateCommand)
    assert isinstance(results[3], EventStoreError)
    assert not isinstance(results[3], ConcurrencyError)
    assert results[4] == []

    assert await store.stream_version("a") == 3
    assert await store.pending("a") == {
        1: frozenset({"p"}),
        2: frozenset({"p"}),
        3: frozenset({"p", "q"}),
    }
    assert await store.command_reply("a", "a1") == {"v": 3}
    for name in ("old", "dup", "typed"):
        assert await store.stream_version(name) == 1
        assert await store.pending(name) == {1: frozenset({"p"})}
    assert await store.stream_version("quiet") == 1
    assert ("quiet", 1) not in await store.unhandled_releases()
    # the events are read back as appended, in the global log too
    assert [e.event_id for e in await store.read_stream("a", 2)] == [e.event_id for e in first]
    assert await store.append_group([]) == []
    with pytest.raises(ValueError, match="each at most once"):
        await store.append_group(
            [Append("a", "take5", 3, [ev(4)]), Append("a", "take5", 4, [ev(5)])]
        )


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
