"""The event store's contract, asserted alike on PostgreSQL (``EventStore``) and in memory
(``InMemoryEventStore``): appends and their errors, the log, gates, command replies,
checkpoints, deadlines, the read models' reads and transition signatures. What only a real
server proves (concurrent writers, commit order, generic plans, an unreachable database) is
tested against PostgreSQL alone, beside this."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import pytest
from cardroom_eventstore import (
    AckResult,
    Append,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    EventStoreError,
    NewEvent,
    readmodels,
)
from cardroom_eventstore.deadlines import Due
from cardroom_eventstore.interface import Store
from cardroom_eventstore.memory import InMemoryEventStore
from cardroom_eventstore.readmodels import SPECTATOR, StoredNotification, StoredView
from cardroom_eventstore.signatures import Signed


@pytest.fixture(params=["postgres", "memory"])
async def es(
    request: pytest.FixtureRequest,
    es_fresh_store: Callable[[], AbstractAsyncContextManager[EventStore]],
) -> AsyncIterator[Store]:
    if request.param == "memory":
        yield InMemoryEventStore()
        return
    async with es_fresh_store() as store:
        yield store


def ev(n: Any, *to: str, **shown: int) -> NewEvent:
    return NewEvent("played", {"n": n}, {"actor": "t"}, frozenset(to), shown=shown)


def to(*addressees: str) -> NewEvent:
    return NewEvent(type="dealt", data={}, addressees=frozenset(addressees))


def private(*addressees: str) -> NewEvent:
    """An event told to some seats only: its acks hold no gate."""
    return NewEvent(type="dealt", data={}, addressees=frozenset(addressees), holds=False)


class Wanted(NamedTuple):
    key: str
    seconds: float
    since: int


async def test_appends_read_back_in_order(es: Store) -> None:
    first = await es.append(Append("g1", "take5", 0, [ev(1, "b", "a"), ev((2, 3))]))
    other = await es.append(Append("g2", "papas", 0, [ev(10)]))
    second = await es.append(Append("g1", "take5", 2, [ev(4)]))
    assert [e.version for e in first + second] == [1, 2, 3]
    positions = [e.position for e in first + other + second]
    assert positions == sorted(positions)
    assert len(set(positions)) == 4
    stored = await es.read_stream("g1")
    assert [e.event_id for e in stored] == [e.event_id for e in first + second]
    assert stored[0].metadata == {"actor": "t", "to": ["a", "b"]}
    assert stored[1].data == {"n": [2, 3]}  # as JSON gives it back
    assert stored[0].stream_type == "take5"
    assert stored[0].recorded_at.tzinfo is not None
    assert [e.version for e in await es.read_stream("g1", 2)] == [2, 3]
    assert [e.version for e in await es.read_stream("g1", 2, 2)] == [2]
    assert await es.read_stream("nope") == []
    assert await es.stream_version("g1") == 3
    assert await es.stream_version("nope") == 0
    everything = await es.read_all()
    assert [e.event_id for e in everything] == [e.event_id for e in first + other + second]
    after = await es.read_all(after_position=first[1].position, limit=1)
    assert [e.event_id for e in after] == [other[0].event_id]
    count, oldest = await es.behind(first[0].position)
    assert count == 3
    assert oldest == first[1].recorded_at
    assert await es.behind(second[0].position) == (0, None)


async def test_what_the_database_refuses_fails_alone_in_a_group(es: Store) -> None:
    names = ("a", "old", "dup", "typed", "quiet")
    for name in names:
        await es.append(Append(name, "take5", 0, [ev(1)]))
    taken = (await es.read_stream("a"))[0].event_id
    refused = await es.append_group(
        [
            Append("a", "take5", 1, [ev(2)]),
            Append("old", "take5", 1, [NewEvent("x", {}, event_id=taken)]),  # recorded before
            Append("dup", "take5", 1, [NewEvent("said", {"text": "a\x00b"})]),  # NUL in jsonb
            Append("typed", "take5", 2**31, [ev(2)]),  # no integer column holds it
            Append("quiet", "take5", 1, [NewEvent("said", {"x": object()})]),  # not JSON
        ]
    )
    assert isinstance(refused[0], list)
    assert all(type(r) is EventStoreError for r in refused[1:]), refused
    assert [await es.stream_version(n) for n in names] == [2, 1, 1, 1, 1]


async def test_append_each_makes_new_streams_one_by_one(es: Store) -> None:
    await es.append(Append("old", "take5", 0, [ev(1)]))
    results = await es.append_each(
        [
            Append("a", "take5", 0, [ev(1, "p")]),
            Append("old", "take5", 0, [ev(1)]),
            Append("b", "take5", 0, [NewEvent("said", {"x": object()})]),
            Append("a", "take5", 1, [ev(2)]),  # after the first: the same stream again
        ]
    )
    assert isinstance(results[0], list)
    assert isinstance(results[3], list)
    assert isinstance(results[1], ConcurrencyError)
    assert type(results[2]) is EventStoreError
    assert await es.stream_version("a") == 2
    assert await es.stream_version("b") == 0


async def test_the_last_ack_releases_the_gate_once(es: Store) -> None:
    await es.append(Append("g", "take5", 0, [ev(1, "a", "b"), ev(2, "b")]))
    assert await es.pending("g") == {1: frozenset({"a", "b"}), 2: frozenset({"b"})}
    assert await es.pending_for_player("g", "b") == [1, 2]
    assert not await es.gate_open("g")
    assert await es.debtors("g") == {"a", "b"}
    assert await es.ack("g", 1, "a") == AckResult(accepted=True)
    assert await es.ack("g", 1, "a") == AckResult(accepted=False)  # once
    assert await es.ack("g", 9, "a") == AckResult(accepted=False)
    assert await es.ack("g", 2**31, "a") == AckResult(accepted=False)  # no column holds it
    assert await es.ack("g", 1, "b") == AckResult(accepted=True)
    assert await es.ack("g", 2, "b") == AckResult(accepted=True, released_gate=2, open=True)
    assert await es.gate_open("g")
    assert await es.pending("g") == {}
    assert await es.unhandled_releases() == [("g", 2)]
    assert await es.unhandled_releases(older_than=60) == []
    await es.mark_gate_handled("g", 2)
    assert await es.unhandled_releases() == []
    # a follow-up append marks the gate it follows up
    await es.append(Append("g", "take5", 2, [ev(3, "a")]))
    assert await es.ack("g", 3, "a") == AckResult(accepted=True, released_gate=3, open=True)
    await es.append(Append("g", "take5", 3, [ev(4)], handled_gate=3))
    assert await es.unhandled_releases() == []


async def test_a_release_under_an_older_gate_leaves_the_game_held(es: Store) -> None:
    await es.append(Append("g", "take5", 0, [ev(1, "a", "b")]))
    await es.append(Append("g", "take5", 1, [ev(2, "c")]))
    assert await es.ack("g", 2, "c") == AckResult(accepted=True, released_gate=2, open=False)
    assert not await es.gate_open("g", handled=[2])  # held: the release is marked handled
    assert await es.unhandled_releases() == []
    assert await es.debtors("g", gate=1) == {"a", "b"}
    assert await es.debtors("g", gate=0) == set()


async def test_addressed_follows_the_versions_shown(es: Store) -> None:
    await es.append(Append("g", "papas", 0, [ev(1, "a", "b"), ev(2, "a", b=1)]))
    assert await es.addressed("g", 1, "a")
    assert await es.addressed("g", 1, "b")
    assert not await es.addressed("g", 1, "c")
    assert not await es.addressed("g", 2, "b")  # b was shown it as its version 1
    assert await es.pending("g") == {1: frozenset({"a", "b"}), 2: frozenset({"a"})}
    assert not await es.addressed("g", 2**31, "a")


async def test_waiting_for_an_append(es: Store) -> None:
    assert not await es.wait_for_append(0.01)  # starts listening; nothing since
    await es.append(Append("g", "take5", 0, [ev(1)]))
    assert await es.wait_for_append(5)
    assert not await es.wait_for_append(0.01)


async def _advance_then_fail(es: Store, name: str, position: int) -> None:
    """A projection that advances its checkpoint and then fails: nothing of it stays."""

    async def projection() -> None:
        async with es.tracking(name) as record:
            await record.advance(position)
            raise RuntimeError("the projection failed")

    with pytest.raises(RuntimeError, match="the projection failed"):
        await projection()


async def test_a_checkpoint_moves_with_its_block(es: Store) -> None:
    assert await es.checkpoint("p:a") == 0
    async with es.tracking("p:a") as record:
        assert record.position == 0
        await record.advance(5)
    assert await es.checkpoint("p:a") == 5
    await _advance_then_fail(es, "p:a", 9)
    assert await es.checkpoint("p:a") == 5
    async with es.tracking("p:a") as record:
        with pytest.raises(ValueError, match="cannot go back"):
            await record.advance(4)
    async with es.tracking("p:b") as record:
        await record.advance(2)
    async with es.tracking("q:c") as record:
        await record.advance(1)
    assert await es.checkpoints("p:") == [("p:a", 5), ("p:b", 2)]


async def test_deadlines_are_claimed_once_and_fired_once(es: Store) -> None:
    created = await es.append(Append("g", "take5", 0, [ev(1)]))
    t = created[0].recorded_at
    deadlines = es.deadlines
    turn = [Wanted("turn:1", 30, 1)]
    assert await deadlines.write("g", 1, active=True, wanted=turn, ack_timeout=5) == t + timedelta(
        seconds=30
    )
    assert await deadlines.claim(t + timedelta(seconds=29), t + timedelta(seconds=34), 10) == []
    claimed = await deadlines.claim(t + timedelta(seconds=31), t + timedelta(seconds=36), 10)
    assert claimed == [Due("g", "turn:1", 1)]
    assert claimed[0].due_at == t + timedelta(seconds=30)
    assert await deadlines.claim(t + timedelta(seconds=32), t + timedelta(seconds=37), 10) == []
    assert await deadlines.next_due() == t + timedelta(seconds=36)  # the lease
    await deadlines.retry_at(claimed[0], t + timedelta(seconds=40))
    assert await deadlines.next_due() == t + timedelta(seconds=40)
    await deadlines.mark_fired("g", "turn:1", 1)
    assert await deadlines.next_due() is None
    # kept while still wanted: its due time and its firing
    again = await deadlines.write("g", 1, active=True, wanted=turn, ack_timeout=None)
    assert again is None
    assert await deadlines.claim(t + timedelta(hours=1), t + timedelta(hours=2), 10) == []


async def test_time_left_is_the_earliest_clock_of_the_kinds_asked_while_the_gate_is_open(
    es: Store,
) -> None:
    await es.append(Append("g", "take5", 0, [ev(1)]))
    deadlines = es.deadlines
    wanted = [Wanted("turn:1", 30, 1), Wanted("game:w", 10, 1)]
    await deadlines.write("g", 1, active=True, wanted=wanted, ack_timeout=5)
    both = await deadlines.time_left("g", 1, kinds=["turn", "game"], gated="turn")
    assert both is not None
    assert 8 < both <= 10
    turn = await deadlines.time_left("g", 1, kinds=["turn"], gated="turn")
    assert turn is not None
    assert 28 < turn <= 30
    assert await deadlines.time_left("g", 2, kinds=["turn"], gated="turn") is None  # not now
    # a held gate: no clock runs (and the ack timeout is never one, whatever is asked)
    await es.append(Append("g", "take5", 1, [ev(2, "a")]))
    held = [Wanted("turn:2", 30, 2)]
    await deadlines.write("g", 2, active=True, wanted=held, ack_timeout=5)
    kinds = ["turn", "game", "acks"]
    assert await deadlines.time_left("g", 2, kinds=kinds, gated="turn") is None
    await es.ack("g", 2, "a")
    opened = await deadlines.time_left("g", 2, kinds=kinds, gated="turn")
    assert opened is not None
    assert 28 < opened <= 30
    # deadlines written before the last event every seat was told of may be a past turn's;
    # an event told to some seats only (the table's moved_at stays at 2) changes nothing
    await es.append(Append("g", "take5", 2, [ev(3)]))
    assert await deadlines.time_left("g", 3, kinds=kinds, gated="turn") is None
    after = await deadlines.time_left("g", 2, kinds=kinds, gated="turn")
    assert after is not None
    assert after <= opened
    assert opened - after < 1


async def test_a_turn_runs_from_the_opening_of_the_gate_after_it() -> None:
    clock = [datetime(2030, 1, 1, tzinfo=UTC)]
    es = InMemoryEventStore(now=lambda: clock[0])
    await es.append(Append("g", "take5", 0, [ev(1, "a")]))
    clock[0] += timedelta(seconds=8)  # the gate opens 8 s after the turn's event
    await es.ack("g", 1, "a")
    await es.deadlines.write("g", 1, active=True, wanted=[Wanted("turn:1", 30, 1)], ack_timeout=5)
    clock[0] += timedelta(seconds=2)
    left = await es.deadlines.time_left("g", 1, kinds=["turn"], gated="turn")
    assert left == 28
    game = await es.deadlines.time_left("g", 1, kinds=["game"], gated="turn")
    assert game is None


async def test_deadlines_follow_the_gates_and_never_go_back(es: Store) -> None:
    created = await es.append(Append("g", "take5", 0, [ev(1, "a")]))
    t = created[0].recorded_at
    deadlines = es.deadlines
    due = await deadlines.write("g", 1, active=True, wanted=[], ack_timeout=5)
    assert due == t + timedelta(seconds=5)
    claimed = await deadlines.claim(t + timedelta(seconds=6), t + timedelta(seconds=9), 10)
    assert claimed == [Due("g", "acks:1", 1)]
    await deadlines.mark_fired("g", "acks:1", 7)  # another version's: nothing
    assert await deadlines.next_due() == t + timedelta(seconds=9)
    # the stream moves on without an evaluation: the game is lagging until one
    later = await es.append(Append("g", "take5", 1, [ev(2)]))
    cutoff = later[0].recorded_at + timedelta(seconds=1)
    assert await deadlines.lagging(cutoff, 10) == ["g"]
    assert await deadlines.lagging(later[0].recorded_at - timedelta(seconds=1), 10) == []
    assert await es.ack("g", 1, "a") == AckResult(accepted=True, released_gate=1, open=True)
    assert await deadlines.write("g", 2, active=True, wanted=[], ack_timeout=5) is None
    assert await deadlines.next_due() is None  # the ack timeout went with its gate
    assert await deadlines.lagging(cutoff, 10) == []
    # an older evaluation changes nothing
    turn = [Wanted("turn:1", 1, 1)]
    assert await deadlines.write("g", 1, active=True, wanted=turn, ack_timeout=None) is None
    assert await deadlines.next_due() is None
    assert await deadlines.claim(t + timedelta(hours=1), t + timedelta(hours=2), 10) == []
    await deadlines.write("g", 2, active=False, wanted=[], ack_timeout=None)
    await es.append(Append("g", "take5", 2, [ev(3)]))
    assert await deadlines.lagging(t + timedelta(days=365), 10) == []  # inactive


async def test_a_release_says_whether_the_game_is_open(es: Store) -> None:
    """``open``: no gating ack at all is owed once the gate is released (an older gate that
    still waits, such as one a presence change was appended over, keeps the game closed)."""
    await es.append(Append("g", "take5", 0, [to("a", "b")]))
    await es.append(Append("g", "take5", 1, [to("c")]))
    assert await es.ack("g", 2, "c") == AckResult(accepted=True, released_gate=2, open=False)
    assert not await es.gate_open("g")
    assert await es.ack("g", 1, "a") == AckResult(accepted=True)
    assert await es.ack("g", 1, "b") == AckResult(accepted=True, released_gate=1, open=True)
    assert await es.gate_open("g")


async def test_excused_acks_stay_owed_but_hold_no_gate(es: Store) -> None:
    await es.append(Append("g", "take5", 0, [to("a", "away"), to("away")]))
    await es.append(Append("g", "take5", 2, [to("a", "away")]))
    assert await es.debtors("g") == {"a", "away"}
    assert await es.debtors("g", gate=2) == {"a", "away"}
    assert await es.ack("g", 1, "a") == AckResult(accepted=True)
    # the first gate waits only for the away player: excusing them releases it, once
    assert await es.excuse("g", ["away"]) == [2]
    assert await es.excuse("g", ["away"]) == []
    assert await es.debtors("g") == {"a"}
    assert not await es.gate_open("g")  # gate 3 still waits for a
    # what the away player missed is still owed to them, so their sync lists it
    assert await es.pending_for_player("g", "away") == [1, 2, 3]
    # (the away player's acks are still owed, but hold nothing: the game is open)
    assert await es.ack("g", 3, "a") == AckResult(accepted=True, released_gate=3, open=True)
    assert await es.gate_open("g")
    # back, they acknowledge what they missed: owed while away (so they are back), that
    # counts no gate down a second time
    for version in (1, 2, 3):
        assert await es.ack("g", version, "away") == AckResult(accepted=True, away=True)
    assert await es.pending_for_player("g", "away") == []
    assert sorted(await es.unhandled_releases()) == [("g", 2), ("g", 3)]
    assert await es.excuse("g", []) == []


async def test_a_batch_that_holds_nothing_owes_its_acks_and_times_them_with_the_next_gate(
    es: Store,
) -> None:
    """A batch of events told to some seats only (``NewEvent.holds`` false): its acks are
    owed (a sync lists them, an ack is no away player's) but no gate waits, and no ack
    timeout runs from them (a silent seat's away mark would date them): the next gate that
    holds times them with its own. Unless the game waits for their addressee (``waited``:
    a prompt to the player whose turn it is), whose silence would stall it."""
    await es.append(Append("g", "take5", 0, [to("a", "b")]))
    assert await es.ack("g", 1, "a") == AckResult(accepted=True)
    assert await es.ack("g", 1, "b") == AckResult(accepted=True, released_gate=1, open=True)
    await es.append(Append("g", "take5", 1, [private("b"), private("b")]))
    assert await es.gate_open("g")  # nobody is held
    assert await es.pending("g") == {2: frozenset({"b"}), 3: frozenset({"b"})}
    assert await es.pending_for_player("g", "b") == [2, 3]
    assert await es.debtors("g") == {"b"}
    assert await es.debtors("g", gate=2) == set()
    assert await es.deadlines.write("g", 3, active=True, wanted=[], ack_timeout=5) is None
    assert (
        await es.deadlines.write("g", 3, active=True, wanted=[], ack_timeout=5, waited=["a"])
        is None
    )
    private_at = (await es.read_stream("g", 2))[0].recorded_at
    waiting = await es.deadlines.write("g", 3, active=True, wanted=[], ack_timeout=5, waited=["b"])
    assert waiting == private_at + timedelta(seconds=5)
    # a held gate after it: released by its own acks alone, and its timeout is the private
    # acks' too, from its own event
    held = await es.append(Append("g", "take5", 3, [to("a")]))
    assert not await es.gate_open("g")
    due = await es.deadlines.write("g", 4, active=True, wanted=[], ack_timeout=5)
    assert due is not None
    assert due >= held[0].recorded_at + timedelta(seconds=5)
    assert await es.deadlines.claim(due, due, 10) == [Due("g", "acks:4", 4)]
    assert await es.debtors("g", gate=4) == {"a", "b"}
    assert await es.ack("g", 2, "b") == AckResult(accepted=True)
    assert await es.ack("g", 4, "a") == AckResult(accepted=True, released_gate=4, open=True)
    # excusing an owed ack of such a batch releases nothing
    assert await es.excuse("g", ["b"]) == []
    assert await es.pending_for_player("g", "b") == [3]
    assert sorted(await es.unhandled_releases()) == [("g", 1), ("g", 4)]
    # the same in a group commit
    for game in ("h", "i"):
        await es.append(Append(game, "take5", 0, [to()]))
    grouped = [Append("h", "take5", 1, [private("x")]), Append("i", "take5", 1, [to("y")])]
    await es.append_group(grouped)
    assert await es.gate_open("h")
    assert not await es.gate_open("i")
    assert await es.debtors("h") == {"x"}
    assert await es.ack("g", 3, "b") == AckResult(accepted=True, away=True)  # (excused)
    assert await es.ack("h", 2, "x") == AckResult(accepted=True)


async def test_an_event_that_holds_nothing_holds_no_gate_beside_one_that_does(es: Store) -> None:
    """An event told to some seats only (``NewEvent.holds`` false) in a batch with one told to
    every seat: the gate waits for the latter's acks alone, so the others do not see it held
    until the former's addressee acknowledges; that ack is owed and timed all the same."""
    for game, group in (("g", False), ("h", True)):
        await es.append(Append(game, "take5", 0, [to()]))
        mixed = Append(game, "take5", 1, [to("a", "b"), private("b")])
        if group:
            (written,) = await es.append_group([mixed])
            assert not isinstance(written, EventStoreError), written
        else:
            await es.append(mixed)
        assert not await es.gate_open(game)
        assert await es.pending(game) == {2: frozenset({"a", "b"}), 3: frozenset({"b"})}
        assert await es.ack(game, 2, "a") == AckResult(accepted=True)
        # the event told to every seat is acknowledged: the gate opens, b's private ack owed
        assert await es.ack(game, 2, "b") == AckResult(accepted=True, released_gate=3, open=True)
        assert await es.debtors(game) == {"b"}
        assert await es.ack(game, 3, "b") == AckResult(accepted=True)
        assert await es.pending(game) == {}


async def test_when_the_gate_after_a_version_opened(es: Store) -> None:
    """``opened_since``: the newest release of a gate of that version or later (a turn's
    players can act from then on), None while none was."""
    await es.append(Append("g", "take5", 0, [to("a")]))
    assert await es.opened_since("g", 1) is None  # held
    await es.ack("g", 1, "a")
    first = await es.opened_since("g", 1)
    assert first is not None
    await es.append(Append("g", "take5", 1, [to("a")]))
    assert await es.opened_since("g", 2) is None
    assert await es.opened_since("g", 1) == first
    await es.ack("g", 2, "a")
    second = await es.opened_since("g", 1)
    assert second is not None
    assert second >= first
    assert await es.opened_since("g", 2) == second
    assert await es.opened_since("g", 3) is None


async def test_acks_in_one_batch_answer_as_one_after_the_other(es: Store) -> None:
    """ack_many: the results of acks made one by one in that order, in one statement (but
    ``open`` as of the batch's commit)."""
    await es.append(Append("g", "take5", 0, [to("a", "b")]))
    await es.append(Append("g", "take5", 1, [to("c")]))
    await es.append(Append("h", "take5", 0, [to("a")]))
    acks = [
        ("g", 2, "c"),  # releases gate 2; gate 1 waits, but is opened by the same batch
        ("g", 1, "a"),
        ("g", 1, "a"),  # the same again: refused (acknowledged just before)
        ("g", 1, "zed"),  # not an addressee
        ("h", 1, "a"),  # releases h's only gate: open
        ("g", 1, "b"),  # releases gate 1: nothing else held, open
        ("nope", 1, "a"),  # unknown stream
    ]
    assert await es.ack_many(acks) == [
        AckResult(accepted=True, released_gate=2, open=True),
        AckResult(accepted=True),
        AckResult(accepted=False),
        AckResult(accepted=False),
        AckResult(accepted=True, released_gate=1, open=True),
        AckResult(accepted=True, released_gate=1, open=True),
        AckResult(accepted=False),
    ]
    assert await es.pending("g") == {}
    assert await es.gate_open("g")
    assert await es.gate_open("h")
    assert sorted(await es.unhandled_releases()) == [("g", 1), ("g", 2), ("h", 1)]
    assert await es.ack_many([]) == []
    # an ack owed while away (excused: it holds nothing) says so
    await es.append(Append("m", "take5", 0, [to("a", "away")]))
    assert await es.excuse("m", ["away"]) == []
    assert await es.ack_many([("m", 1, "away"), ("m", 1, "a")]) == [
        AckResult(accepted=True, away=True),
        AckResult(accepted=True, released_gate=1, open=True),
    ]
    # a release while an older gate still waits is not open
    await es.append(Append("k", "take5", 0, [to("a", "b")]))
    await es.append(Append("k", "take5", 1, [to("c")]))
    assert await es.ack_many([("k", 2, "c"), ("k", 1, "a")]) == [
        AckResult(accepted=True, released_gate=2, open=False),
        AckResult(accepted=True),
    ]


async def test_conflicting_append_raises_and_writes_nothing(es: Store) -> None:
    await es.append(Append("g", "take5", 0, [ev(1, "a")]))
    for expected in (0, 2, 5):
        with pytest.raises(ConcurrencyError) as info:
            await es.append(Append("g", "take5", expected, [ev(9, "b")], command_id="c1"))
        assert (info.value.stream_id, info.value.expected, info.value.actual) == ("g", expected, 1)
        assert info.value.retryable
    with pytest.raises(ConcurrencyError) as missing:
        await es.append(Append("absent", "take5", 3, [ev(1)]))
    assert missing.value.actual == 0
    assert await es.stream_version("g") == 1
    assert await es.pending("g") == {1: frozenset({"a"})}
    assert await es.command_reply("g", "c1") is None
    assert await es.stream_version("absent") == 0


async def test_stream_type_mismatch_is_an_error(es: Store) -> None:
    await es.append(Append("g", "take5", 0, [ev(1)]))
    with pytest.raises(EventStoreError) as info:
        await es.append(Append("g", "papas", 1, [ev(2)]))
    assert not isinstance(info.value, ConcurrencyError)
    assert await es.stream_version("g") == 1


async def test_idempotent_commands(es: Store) -> None:
    await es.append(
        Append("g", "take5", 0, [ev(1, "a")], command_id="cmd-1", reply={"ok": True, "v": 1})
    )
    assert await es.command_reply("g", "cmd-1") == {"ok": True, "v": 1}
    assert await es.command_reply("g", "cmd-2") is None
    assert await es.command_reply("other", "cmd-1") is None

    with pytest.raises(DuplicateCommand) as info:
        await es.append(
            Append("g", "take5", 1, [ev(2, "b")], command_id="cmd-1", reply={"ok": False})
        )
    assert (info.value.stream_id, info.value.command_id) == ("g", "cmd-1")
    # Nothing of the duplicate was kept.
    assert await es.stream_version("g") == 1
    assert await es.pending("g") == {1: frozenset({"a"})}
    assert await es.command_reply("g", "cmd-1") == {"ok": True, "v": 1}
    assert len(await es.read_all()) == 1

    # The same command id on another stream is another command; no reply stores {}.
    await es.append(Append("h", "take5", 0, [ev(1)], command_id="cmd-1"))
    assert await es.command_reply("h", "cmd-1") == {}


async def test_append_group_one_statement_for_many_streams(es: Store) -> None:
    """append_group: appends to running games of many streams at once; a failing one fails
    alone and leaves nothing behind, the others leave everything."""
    for name in ("a", "old", "dup", "typed", "quiet"):
        await es.append(Append(name, "take5", 0, [ev(1, "p")], command_id="c"))
    await es.ack("quiet", 1, "p")  # released: its follow-up marks it handled
    batches = [
        Append("a", "take5", 1, [ev(2, "p"), ev(3, "p", "q")], command_id="a1", reply={"v": 3}),
        Append("old", "take5", 5, [ev(2, "p")]),  # stale: conflict
        Append("dup", "take5", 1, [ev(2, "p")], command_id="c"),  # a command seen before
        Append("typed", "papas", 1, [ev(2)]),  # not this stream's type
        Append("quiet", "take5", 1, [], handled_gate=1),  # nothing to say: only the mark
    ]
    results = await es.append_group(batches)
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

    assert await es.stream_version("a") == 3
    assert await es.pending("a") == {
        1: frozenset({"p"}),
        2: frozenset({"p"}),
        3: frozenset({"p", "q"}),
    }
    assert await es.command_reply("a", "a1") == {"v": 3}
    for name in ("old", "dup", "typed"):
        assert await es.stream_version(name) == 1
        assert await es.pending(name) == {1: frozenset({"p"})}
    assert await es.stream_version("quiet") == 1
    assert ("quiet", 1) not in await es.unhandled_releases()
    # the events are read back as appended, in the global log too
    assert [e.event_id for e in await es.read_stream("a", 2)] == [e.event_id for e in first]
    assert await es.append_group([]) == []
    with pytest.raises(ValueError, match="each at most once"):
        await es.append_group([Append("a", "take5", 3, [ev(4)]), Append("a", "take5", 4, [ev(5)])])


async def project(
    es: Store,
    notes: list[StoredNotification],
    views: list[StoredView],
    summaries: list[dict[str, Any]],
) -> None:
    """Write the read models as the projector's batch does (no projector runs in memory)."""
    if isinstance(es, InMemoryEventStore):
        es.write_read_models(notes, views, summaries)
        return
    assert isinstance(es, EventStore)
    async with es.tracking_many(["projector"]) as tracking:
        await readmodels.write_batch(tracking.conn, notes, views, summaries)


async def test_read_models_read_as_the_projector_left_them(es: Store) -> None:
    await es.append(Append("g", "take5", 0, [ev(1, "a", "b"), ev(2, "a")]))
    await es.ack("g", 1, "b")  # acknowledged before the projector came: not stored
    views = [
        StoredView("g", "a", 2, {"hand": [1, 2]}, [{"type": "play"}], 2),
        StoredView("g", SPECTATOR, 2, {"hands": 2}, [], 0),
    ]
    await project(
        es,
        [
            StoredNotification("g", "a", 1, 1, {"seq": 1, "cards": (1, 2)}),
            StoredNotification("g", "a", 2, 2, {"seq": 2}),
            StoredNotification("g", "b", 1, 1, {"seq": 1}),
        ],
        views,
        [
            {"game": "g", "game_type": "take5", "status": "playing", "version": 2},
            {"game": "h", "game_type": "papas", "status": "finished", "version": 9},
        ],
    )
    assert await es.view("g", "a") == views[0]
    assert await es.view("g", SPECTATOR) == views[1]
    assert await es.view("g", "zed") is None
    stored = await es.notifications_for_versions("g", "a", [2, 1])
    assert [(n.seq, n.payload) for n in stored] == [
        (1, {"seq": 1, "cards": [1, 2]}),
        (2, {"seq": 2}),
    ]
    assert await es.notifications_for_versions("g", "b", [1]) == []
    assert await es.notifications_for_versions("g", "a", []) == []
    assert sorted(t["game"] for _, t in await es.list_tables()) == ["g", "h"]
    assert [t for _, t in await es.list_tables("papas")] == [
        {"game": "h", "game_type": "papas", "status": "finished", "version": 9}
    ]
    assert [t["game"] for _, t in await es.list_tables(status="playing")] == ["g"]
    assert len(await es.list_tables(limit=1)) == 1
    assert await es.delete_acknowledged() == 0
    await es.ack("g", 1, "a")
    assert await es.delete_acknowledged() == 1
    assert [n.seq for n in await es.notifications_for_versions("g", "a", [1, 2])] == [2]


async def test_a_creators_tables_waiting_for_players_are_counted(es: Store) -> None:
    def table(game: str, creator: str, status: str = "lobby") -> dict[str, Any]:
        return {
            "game": game,
            "game_type": "take5",
            "status": status,
            "creator": creator,
            "version": 1,
        }

    before = datetime.now(UTC) - timedelta(minutes=1)
    await project(
        es,
        [],
        [],
        [table("g1", "ann"), table("g2", "ann"), table("g3", "ann", "playing"), table("g4", "bo")],
    )
    assert await es.waiting_tables("ann", before) == 2
    assert await es.waiting_tables("bo", before) == 1
    assert await es.waiting_tables("cy", before) == 0
    assert await es.waiting_tables("ann", datetime.now(UTC) + timedelta(minutes=1)) == 0


async def test_transition_signatures_are_kept_once_while_owed(es: Store) -> None:
    await es.append(Append("g", "macaua", 0, [ev(1, "a", "b"), ev(2, "a")]))
    assert await es.record_signature("g", 1, "a", Signed("sig", None))
    assert not await es.record_signature("g", 1, "a", Signed("another", None))  # once
    assert await es.record_signature("g", 1, "b", Signed(None, {"code": "bad", "at": (1,)}))
    assert not await es.record_signature("g", 1, "c", Signed("x", None))  # not owed by c
    await es.ack("g", 2, "a")
    assert not await es.record_signature("g", 2, "a", Signed("late", None))  # no longer owed
    assert await es.signatures_since("g", 0, 2) == {
        (1, "a"): Signed("sig", None),
        (1, "b"): Signed(None, {"code": "bad", "at": [1]}),
    }
    assert await es.signatures_since("g", 1, 2) == {}
    assert await es.signatures_since("other", 0, 2) == {}
