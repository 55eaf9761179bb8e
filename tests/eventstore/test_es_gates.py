"""Acknowledgement gates: exactly-once release, refused acks, dropped players."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from datetime import timedelta

from cardroom_eventstore import AckResult, Append, EventStore, NewEvent
from cardroom_eventstore.schema import gates
from sqlalchemy import select, update


def ev(*addressees: str) -> NewEvent:
    return NewEvent(type="dealt", data={}, addressees=frozenset(addressees))


async def gate_rows(store: EventStore, stream_id: str) -> list[tuple[int, int, bool, bool]]:
    async with store.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(gates).where(gates.c.stream_id == stream_id).order_by(gates.c.version)
            )
        ).all()
    return [(r.version, r.remaining, r.released_at is not None, r.handled) for r in rows]


async def test_concurrent_acks_release_exactly_once(es_database_url: str) -> None:
    store = await EventStore.connect(es_database_url, pool_size=40, max_overflow=0)
    try:
        players = [f"p{i}" for i in range(40)]
        version = 0
        for round_ in range(5):
            # Two events per batch, every player addressed by both: 80 acks for one gate.
            batch = Append("g", "take5", version, [ev(*players), ev(*players)])
            recorded = await store.append(batch)
            version = recorded[-1].version
            acks = [(e.version, p) for e in recorded for p in players]
            random.Random(round_).shuffle(acks)
            results = await asyncio.gather(*(store.ack("g", v, p) for v, p in acks))
            assert all(r.accepted for r in results)
            released = [r.released_gate for r in results if r.released_gate is not None]
            assert released == [version], (round_, released)
            assert await store.gate_open("g")
            assert (version, 0, True, False) in await gate_rows(store, "g")
            # Acking again changes nothing and releases nothing.
            again = await asyncio.gather(*(store.ack("g", v, p) for v, p in acks[:10]))
            assert all(r == AckResult(accepted=False, released_gate=None) for r in again)
        assert len(await store.unhandled_releases()) == 5
    finally:
        await store.close()


async def test_last_two_acks_concurrently_many_times(store: EventStore) -> None:
    releases = 0
    for version in range(1, 31):
        await store.append(Append("g", "take5", version - 1, [ev("a", "b")]))
        first, second = await asyncio.gather(
            store.ack("g", version, "a"), store.ack("g", version, "b")
        )
        assert first.accepted
        assert second.accepted
        got = [r.released_gate for r in (first, second) if r.released_gate is not None]
        assert got == [version]
        releases += len(got)
    assert releases == 30


async def test_refused_acks_change_nothing(store: EventStore) -> None:
    await store.append(Append("g", "take5", 0, [ev("a", "b"), ev("a", "b", "c")]))
    before_pending = await store.pending("g")
    before_gates = await gate_rows(store, "g")
    assert before_pending == {1: frozenset({"a", "b"}), 2: frozenset({"a", "b", "c"})}
    assert before_gates == [(2, 5, False, False)]

    refused = [
        await store.ack("g", 99, "a"),  # unknown version
        await store.ack("g", 1, "c"),  # not an addressee of version 1
        await store.ack("g", 1, "zed"),  # not a player at all
        await store.ack("other", 1, "a"),  # unknown stream
    ]
    assert all(r == AckResult(accepted=False) for r in refused)
    assert await store.pending("g") == before_pending
    assert await gate_rows(store, "g") == before_gates

    assert await store.ack("g", 1, "a") == AckResult(accepted=True, released_gate=None)
    assert await store.ack("g", 1, "a") == AckResult(accepted=False)  # duplicate
    assert await store.pending("g") == {1: frozenset({"b"}), 2: frozenset({"a", "b", "c"})}
    assert await gate_rows(store, "g") == [(2, 4, False, False)]
    assert not await store.gate_open("g")

    for version, player in [(1, "b"), (2, "a"), (2, "b")]:
        assert await store.ack("g", version, player) == AckResult(accepted=True)
    assert await store.ack("g", 2, "c") == AckResult(accepted=True, released_gate=2, open=True)
    assert await store.ack("g", 2, "c") == AckResult(accepted=False)
    assert await store.gate_open("g")
    assert await store.pending("g") == {}
    assert await gate_rows(store, "g") == [(2, 0, True, False)]

    assert await store.unhandled_releases() == [("g", 2)]
    # the sweep's view: a release just made is being handled, one left for a while is lost
    assert await store.unhandled_releases(older_than=60) == []
    async with store.engine.begin() as conn:
        await conn.execute(
            update(gates)
            .where(gates.c.stream_id == "g")
            .values(released_at=gates.c.released_at - timedelta(seconds=61))
        )
    assert await store.unhandled_releases(older_than=60) == [("g", 2)]
    await store.mark_gate_handled("g", 2)
    assert await store.unhandled_releases() == []
    assert await store.unhandled_releases(older_than=60) == []
    assert await gate_rows(store, "g") == [(2, 0, True, True)]


async def test_concurrent_acks_and_excuses_release_exactly_once(es_database_url: str) -> None:
    store = await EventStore.connect(es_database_url, pool_size=30, max_overflow=0)
    try:
        rng = random.Random(7)
        players = [f"p{i}" for i in range(12)]
        version = 0
        for _ in range(10):
            events = [ev(*rng.sample(players, rng.randint(1, len(players)))) for _ in range(3)]
            recorded = await store.append(Append("g", "take5", version, events))
            version = recorded[-1].version
            owed = [
                (e.version, p) for e, n in zip(recorded, events, strict=True) for p in n.addressees
            ]
            dropped = set(rng.sample(players, 3))
            calls: list[Awaitable[AckResult | list[int]]] = [store.ack("g", v, p) for v, p in owed]
            calls += [store.excuse("g", [p]) for p in dropped]
            rng.shuffle(calls)
            results = await asyncio.gather(*calls)
            released: list[int] = []
            for result in results:
                if isinstance(result, AckResult):
                    if result.released_gate is not None:
                        released.append(result.released_gate)
                else:
                    assert isinstance(result, list)
                    released.extend(result)
            assert released == [version]
            assert await store.gate_open("g")
    finally:
        await store.close()


async def test_concurrent_ack_batches_release_exactly_once(es_database_url: str) -> None:
    """Batches of acks over many games, racing each other: each gate is released once."""
    store = await EventStore.connect(es_database_url)
    try:
        rng = random.Random(11)
        games = [f"g{i}" for i in range(20)]
        players = [f"p{i}" for i in range(6)]
        owed: list[tuple[str, int, str]] = []
        for game in games:
            await store.append(Append(game, "take5", 0, [ev(*players), ev(*players)]))
            owed += [(game, v, p) for v in (1, 2) for p in players]
        rng.shuffle(owed)
        batches = [owed[i : i + 7] for i in range(0, len(owed), 7)]
        results = await asyncio.gather(*(store.ack_many(b) for b in batches))
        released = sorted(
            (ack[0], r.released_gate)
            for batch, answers in zip(batches, results, strict=True)
            for ack, r in zip(batch, answers, strict=True)
            if r.released_gate is not None
        )
        assert released == [(game, 2) for game in sorted(games)]
        assert all(r.accepted for answers in results for r in answers)
        for game in games:
            assert await store.gate_open(game)
    finally:
        await store.close()


async def test_a_gate_check_marks_released_gates_handled_only_when_the_game_is_held(
    store: EventStore,
) -> None:
    await store.append(Append("g", "take5", 0, [ev("a")]))
    assert (await store.ack("g", 1, "a")).released_gate == 1
    await store.append(Append("g", "take5", 1, [ev("a")]))  # gate 2 holds the game
    assert not await store.gate_open("g", handled={1})
    assert await gate_rows(store, "g") == [(1, 0, True, True), (2, 1, False, False)]
    # open: the follow-up's append marks the gate, not the look
    assert (await store.ack("g", 2, "a")).released_gate == 2
    assert await store.gate_open("g", handled={2})
    assert await gate_rows(store, "g") == [(1, 0, True, True), (2, 0, True, False)]
    assert await store.unhandled_releases() == [("g", 2)]
