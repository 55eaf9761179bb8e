"""One player's bad item never fails another's: a batch of acks or appends (of many players and
games) that the database refuses is written again item by item, so only the bad item fails;
an ack of a version no column can hold is refused without the database."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import asyncpg
import pytest
from cardroom_eventstore import AckResult, Append, EventStore, EventStoreError, NewEvent
from cardroom_eventstore.hot import Batcher, unreachable
from cardroom_gamemaster.session import append_shard

# -- the Batcher alone --------------------------------------------------------------------------


class Scripted:
    """A ``run`` whose first batch waits until told to go on (so that the items submitted
    meanwhile form one batch), and that fails a batch holding an item of ``fail``."""

    def __init__(self, fail: dict[int, Exception]) -> None:
        self.fail = fail
        self.batches: list[list[int]] = []
        self.go = asyncio.Event()
        self.started = asyncio.Event()

    async def run(self, items: list[int]) -> list[int]:
        self.batches.append(items)
        self.started.set()
        await self.go.wait()
        for item in items:
            if item in self.fail:
                raise self.fail[item]
        return [i * 10 for i in items]


async def one_batch(rec: Scripted, items: list[int]) -> list[int | BaseException]:
    """Submit 0 (written at once, alone), then ``items`` while it is being written: they go
    together in the next batch. The results of ``items``."""
    batcher: Batcher[int, int] = Batcher(rec.run, 100)
    first = asyncio.create_task(batcher.submit(0))
    await rec.started.wait()
    waiting = [asyncio.create_task(batcher.submit(i)) for i in items]
    await asyncio.sleep(0)  # let them queue
    rec.go.set()
    assert await first == 0
    results = await asyncio.gather(*waiting, return_exceptions=True)
    await batcher.close()
    return results


async def test_a_refused_batch_is_written_item_by_item() -> None:
    rec = Scripted({3: ValueError("bad item")})
    results = await one_batch(rec, [1, 2, 3, 4])
    assert results[:2] == [10, 20]
    assert results[3] == 40
    assert isinstance(results[2], ValueError)
    assert rec.batches == [[0], [1, 2, 3, 4], [1], [2], [3], [4]]


async def test_an_unreachable_database_fails_the_whole_batch_at_once() -> None:
    down = ConnectionRefusedError("no database")
    rec = Scripted({3: down})
    results = await one_batch(rec, [1, 2, 3, 4])
    assert results == [down] * 4
    assert rec.batches == [[0], [1, 2, 3, 4]]  # no item alone: each would fail the same way


async def test_items_after_one_that_met_an_unreachable_database_are_not_tried() -> None:
    down = asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed")
    rec = Scripted({2: ValueError("bad item"), 3: down})
    results = await one_batch(rec, [1, 2, 3, 4])
    assert results[0] == 10
    assert isinstance(results[1], ValueError)
    assert results[2:] == [down, down]
    assert rec.batches == [[0], [1, 2, 3, 4], [1], [2], [3]]


def test_unreachable_tells_a_lost_database_from_a_refused_statement() -> None:
    assert unreachable(ConnectionResetError())
    assert unreachable(asyncpg.exceptions.CannotConnectNowError("starting up"))
    wrapped = EventStoreError("event not appended")
    wrapped.__cause__ = asyncpg.exceptions.ConnectionDoesNotExistError("closed")
    assert unreachable(wrapped)
    assert not unreachable(asyncpg.exceptions.DataError("value out of int32 range"))
    assert not unreachable(asyncpg.exceptions.UntranslatableCharacterError("\\u0000"))
    assert not unreachable(ValueError("bad item"))


# -- acks on PostgreSQL -------------------------------------------------------------------------

GAMES = [f"g{i}" for i in range(5)]


def ev(*addressees: str) -> NewEvent:
    return NewEvent(type="dealt", data={}, addressees=frozenset(addressees))


class Recording:
    """Wraps a batch function; records the size of every batch it is given."""

    def __init__(self, run: Callable[[list[object]], Awaitable[list[object]]]) -> None:
        self.run_ = run
        self.sizes: list[int] = []

    async def run(self, items: list[object]) -> list[object]:
        self.sizes.append(len(items))
        return await self.run_(items)


async def batched(run: Recording, items: list[object]) -> list[object | BaseException]:
    """Submit every item at once: the first is written alone at once, the others wait for it
    and go together in one batch."""
    batcher: Batcher[object, object] = Batcher(run.run, 100)
    try:
        tasks = [asyncio.create_task(batcher.submit(item)) for item in items]
        return await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await batcher.close()


async def test_a_bad_ack_in_a_batch_fails_alone(store: EventStore) -> None:
    for game in GAMES:
        await store.append(Append(game, "take5", 0, [ev("a", "b")]))
    good = [(game, 1, "a") for game in GAMES] + [(game, 1, "b") for game in GAMES[1:]]
    # a player id PostgreSQL cannot store as text: the statement of the whole batch fails
    bad = ("g0", 1, "b\x00")
    run = Recording(store.ack_many)
    items = [good[0], *good[1:5], bad, *good[5:]]
    results = await batched(run, items)
    # the first alone, the others' batch that failed, then each of those alone
    assert run.sizes == [1, len(items) - 1] + [1] * (len(items) - 1)
    assert isinstance(results[5], asyncpg.exceptions.DataError)
    answers = results[:5] + results[6:]
    assert all(isinstance(r, AckResult) and r.accepted for r in answers), answers
    for game in GAMES[1:]:
        assert await store.pending(game) == {}  # both acks of the other games counted
    assert await store.pending("g0") == {1: frozenset({"b"})}  # only the bad one's is owed
    released = [(ack[0], r.released_gate) for ack, r in zip(good, answers, strict=True)]
    assert [(g, v) for g, v in released if v is not None] == [(g, 1) for g in GAMES[1:]]


@pytest.mark.parametrize("version", [2**31, 2**63 - 1, -(2**31) - 1])
async def test_an_ack_of_a_version_no_column_holds_is_an_unknown_version(
    store: EventStore, version: int
) -> None:
    for game in GAMES:
        await store.append(Append(game, "take5", 0, [ev("a")]))
    assert await store.ack("g0", version, "a") == AckResult(accepted=False)
    assert not await store.addressed("g0", version, "a")
    acks = [(game, 1, "a") for game in GAMES[1:]]
    answers = await store.ack_many([acks[0], ("g0", version, "a"), *acks[1:]])
    assert answers[1] == AckResult(accepted=False)
    assert all(r.accepted and r.released_gate == 1 for r in answers[:1] + answers[2:])
    # and batched with other players' acks: the same, nothing written twice
    await store.append(Append("h", "take5", 0, [ev("a", "b")]))
    run = Recording(store.ack_many)
    results = await batched(run, [("h", 1, "a"), ("g0", version, "a"), ("h", 1, "b")])
    assert results == [
        AckResult(accepted=True),
        AckResult(accepted=False),
        AckResult(accepted=True, released_gate=1, open=True),
    ]
    assert run.sizes == [1, 2]
    assert await store.pending("g0") == {1: frozenset({"a"})}


# -- appends on PostgreSQL ----------------------------------------------------------------------


async def gamemaster_run(store: EventStore, batches: list[Append]) -> list[object]:
    """What the gamemaster's group commit runs on one shard."""
    return list(await append_shard(store, batches))


BAD_APPENDS = {
    # text PostgreSQL's jsonb refuses (a NUL character): refused by the server
    "nul": lambda game: Append(game, "take5", 1, [NewEvent("said", {"text": "a\x00b"})]),
    # a version no column holds: refused by the driver before anything is sent
    "int32": lambda game: Append(game, "take5", 2**31, [ev("a")]),
    # data the store cannot serialise: refused before the statement is built
    "object": lambda game: Append(game, "take5", 1, [NewEvent("said", {"x": object()})]),
}


@pytest.mark.parametrize("kind", sorted(BAD_APPENDS))
async def test_a_bad_append_in_a_group_commit_fails_alone(store: EventStore, kind: str) -> None:
    games = [*GAMES, "bad"]
    for game in games:
        await store.append(Append(game, "take5", 0, [NewEvent("created", {})]))
    good = [Append(game, "take5", 1, [ev("a", "b"), ev("a")]) for game in GAMES]
    bad = BAD_APPENDS[kind]("bad")
    run = Recording(lambda items: gamemaster_run(store, items))
    results = await batched(run, [good[0], *good[1:3], bad, *good[3:]])
    assert run.sizes == [1, len(good)]  # the group failed inside the store, which went on alone
    assert isinstance(results[3], EventStoreError)
    answers = results[:3] + results[4:]
    for game, answer in zip(GAMES, answers, strict=True):
        assert isinstance(answer, list), answer
        assert [(e.stream_id, e.version) for e in answer] == [(game, 2), (game, 3)]
        assert await store.stream_version(game) == 3
        assert await store.pending(game) == {2: frozenset({"a", "b"}), 3: frozenset({"a"})}
    assert await store.stream_version("bad") == 1  # nothing of it was written
    assert await store.pending("bad") == {}
    # and called directly, the group commit answers each append on its own
    again = await store.append_group(
        [
            Append("g0", "take5", 3, [ev("a")]),
            BAD_APPENDS[kind]("bad"),
            Append("g1", "take5", 3, [ev("b")]),
        ]
    )
    assert [type(r) for r in again] == [list, EventStoreError, list]
    assert await store.stream_version("g0") == await store.stream_version("g1") == 4


async def test_the_group_commit_raises_when_the_database_is_unreachable(
    store: EventStore,
) -> None:
    for game in GAMES[:2]:
        await store.append(Append(game, "take5", 0, [NewEvent("created", {})]))
    # the same database, but its hot statements go where nothing listens
    away = EventStore(store.engine, {**store.connect_args, "port": 1})
    try:
        with pytest.raises(ConnectionRefusedError):
            await away.append_group([Append(g, "take5", 1, [ev("a")]) for g in GAMES[:2]])
    finally:
        await away.hot.close()
    assert await store.stream_version(GAMES[0]) == 1
