"""Durable deadlines: stored with the state that sets them, fired once by the timers service,
stale timeouts ignored, a restart of the timers service (SIGKILL) loses none, and an
evaluation skipped by a crash is found and made again."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import nats
import pytest
import sqlalchemy as sa
from cardroom_engine import registry
from cardroom_timers import ManualClock, Timers
from cardroom_wire import Notification
from support.players import check_stream, listener, replayed
from support.stack import ServiceProcess, contiguous, wait_until
from support.timedhighcard import EveryonePrompted, turn_key
from support.timedstack import MakeStack, TimedStack


async def _deadlines(stack: TimedStack, game: str) -> list[dict[str, Any]]:
    async with stack.store.engine.connect() as conn:
        rows = await conn.execute(
            sa.text("SELECT * FROM deadlines WHERE game_id = :g ORDER BY key"), {"g": game}
        )
        return [dict(r._mapping) for r in rows]


async def _request(stack: TimedStack, subject: str, payload: dict[str, Any]) -> dict[str, Any]:
    # as a service asks: from the services' inbox prefix (a player's would not be answered)
    nc = await nats.connect(stack.nats_url)
    try:
        reply = await nc.request(
            f"{stack.root}.internal.{subject}", json.dumps(payload).encode(), timeout=10
        )
    finally:
        await nc.close()
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


async def _silent_table(
    stack: TimedStack, config: dict[str, Any], game_type: str = "timedhighcard"
) -> tuple[str, list[Any]]:
    """Two players who acknowledge everything and never act."""
    seats = [listener(await stack.client(p)) for p in ("ann", "ben")]
    game = await seats[0].client.create(game_type, config, seats=2)
    await seats[1].client.join(game)
    return game, seats


def _timeouts(records: list[Any]) -> list[str]:
    return [r.metadata["timeout"] for r in records if "timeout" in r.metadata]


async def test_a_game_deadline_fires_once_per_key_and_the_game_finishes(
    timed_stack: TimedStack,
) -> None:
    stack = timed_stack
    game, seats = await _silent_table(stack, {"rounds": 2, "think": 0.2})
    await wait_until(lambda: _over(seats[0].recorder.seen.get(game, [])), timeout=60)
    records = await stack.store.read_stream(game)
    check_stream(records)
    fired = _timeouts(records)
    # two rounds, two turns each: every turn ended by its own deadline, each key once
    assert len(fired) == 4
    assert Counter(fired).most_common(1)[0][1] == 1, fired
    assert all(r.type == "highcard.folded" for r in records if "timeout" in r.metadata)
    assert (await replayed(stack.store, game)).status == "finished"
    for seat in seats:
        assert contiguous(seat.recorder.seqs(game))
    # nothing left to fire for a finished game
    await wait_until(lambda: _no_unfired(stack, game))


def _over(notes: list[Notification]) -> bool:
    return any(n.message["type"] == "GameOver" for n in notes)


async def _no_unfired(stack: TimedStack, game: str) -> bool:
    return all(row["fired_at"] is not None for row in await _deadlines(stack, game))


async def test_stale_timeouts_change_nothing(timed_stack: TimedStack) -> None:
    stack = timed_stack
    game, _ = await _silent_table(stack, {"rounds": 1, "think": 3600})
    await wait_until(lambda: _has_row(stack, game, "game:turn:1:0"))
    version = await stack.store.stream_version(game)
    # a key the game does not have, an old version, a version from the future
    for payload in (
        {"game": game, "version": version, "key": "game:turn:9:9"},
        {"game": game, "version": version - 1, "key": "game:turn:1:0"},
        {"game": game, "version": version + 5, "key": "game:turn:1:0"},
    ):
        answer = await _request(stack, "timeout", payload)
        assert answer == {"ok": True, "result": "stale", "version": version}, answer
    assert await stack.store.stream_version(game) == version
    # the right one, sent twice (a resend after a lost answer): applied once
    right = {"game": game, "version": version, "key": "game:turn:1:0"}
    first, second = [await _request(stack, "timeout", right) for _ in range(2)]
    assert first["result"] == "fired"
    assert second["result"] == "stale"
    records = await stack.store.read_stream(game)
    assert _timeouts(records) == ["game:turn:1:0"]
    # malformed requests between services are refused cleanly
    for bad in ({"game": game}, {"game": "a.b", "version": 1, "key": "k"}, {"version": "1"}):
        answer = await _request(stack, "timeout", bad)
        assert answer["ok"] is False
        assert answer["error"]["code"] in ("bad_request", "bad_id")


async def _has_row(stack: TimedStack, game: str, key: str) -> bool:
    return any(r["key"] == key for r in await _deadlines(stack, game))


async def test_a_deadline_survives_a_timers_restart(make_stack: MakeStack) -> None:
    stack = await make_stack(timers=None)  # the timers service runs as its own process
    timers = ServiceProcess("timers", stack.env)
    await timers.start()
    try:
        game, _ = await _silent_table(stack, {"rounds": 1, "think": 2.0})
        await wait_until(lambda: _has_row(stack, game, "game:turn:1:0"))
        timers.kill()  # SIGKILL, before the deadline is due
        rows = {r["key"]: r for r in await _deadlines(stack, game)}
        assert rows["game:turn:1:0"]["fired_at"] is None
        version = await stack.store.stream_version(game)
        await timers.start()  # a new process: everything it knows is in the database
        await wait_until(lambda: _timed_out(stack, game, "game:turn:1:0"), timeout=60)
        records = await stack.store.read_stream(game)
        assert _timeouts(records)[:1] == ["game:turn:1:0"]
        assert records[version].type == "highcard.folded"
        assert records[version].version == version + 1
        assert Counter(_timeouts(records))["game:turn:1:0"] == 1
        assert timers.starts == 2
    finally:
        timers.stop()


async def _timed_out(stack: TimedStack, game: str, key: str) -> bool:
    return key in _timeouts(await stack.store.read_stream(game))


async def test_an_evaluation_lost_in_a_crash_is_made_again(timed_stack: TimedStack) -> None:
    """The gamemaster appends, then dies before writing the deadlines: the timers service
    sees the stream past its evaluated version and asks for the evaluation again."""
    stack = timed_stack
    game, _ = await _silent_table(stack, {"rounds": 1, "think": 3600})
    await wait_until(lambda: _has_row(stack, game, "game:turn:1:0"))
    version = await stack.store.stream_version(game)
    async with stack.store.engine.begin() as conn:  # what the crash leaves behind
        await conn.execute(sa.text("DELETE FROM deadlines WHERE game_id = :g"), {"g": game})
        await conn.execute(
            sa.text("UPDATE deadline_versions SET version = version - 1 WHERE game_id = :g"),
            {"g": game},
        )
    await wait_until(lambda: _has_row(stack, game, "game:turn:1:0"), timeout=30)
    rows = await _deadlines(stack, game)
    assert {r["version"] for r in rows} == {version}
    timers = stack.service(Timers)
    assert isinstance(timers, Timers)
    assert timers.reconciled >= 1


async def test_a_manual_clock_drives_the_turn_timeout(make_stack: MakeStack) -> None:
    """A 60 second turn timeout, without waiting 60 seconds: the timers service's clock is
    moved by hand. Before the deadline nothing fires; after it the house plays."""
    clock = ManualClock()

    class ManualTimers(Timers):
        pass

    ManualTimers.clock = clock
    stack = await make_stack(timers=ManualTimers)
    timers = stack.service(ManualTimers)
    assert isinstance(timers, ManualTimers)
    config = {"rounds": 1, "table": {"turn_timeout": 60, "ack_timeout": 3600}}
    game, seats = await _silent_table(stack, config, game_type="highcard")

    def prompted() -> bool:
        return any(n.actions for n in seats[0].recorder.seen.get(game, []))

    await wait_until(prompted)
    await wait_until(lambda: _has_key_prefix(stack, game, "turn:"))
    version = await stack.store.stream_version(game)
    (row,) = [r for r in await _deadlines(stack, game) if r["key"].startswith("turn:")]
    clock.advance((row["due_at"] - clock.now()).total_seconds() - 1)  # a second before
    await timers.tick()  # looks now: nothing is due yet
    assert timers.results == {}
    assert await stack.store.stream_version(game) == version
    clock.advance(2)
    await wait_until(lambda: _house_moved(stack, game), timeout=30)
    records = await stack.store.read_stream(game)
    house = [r for r in records if r.metadata.get("house")]
    assert house[0].metadata["actor"] == "ann"
    assert house[0].version == version + 1
    assert not any(r.type == "table.away" for r in records)


async def test_lateness_leaves_out_the_wait_for_a_closed_gate(
    make_stack: MakeStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt's deadline falls due while a seat holds the prompt's gate: the timers are
    answered ``deferred`` again and again until the seat acknowledges. The lateness they
    report counts from the gate's opening, so it is well under that wait (counted from the
    due time, it would be more than the wait itself)."""
    game_type = EveryonePrompted()
    monkeypatch.setitem(registry._games, game_type.name, game_type)  # for this test only
    stack = await make_stack()
    timers = stack.service(Timers)
    assert isinstance(timers, Timers)
    ann = listener(await stack.client("ann"))
    ben = await stack.client("ben")
    hold = asyncio.Event()

    async def slow(note: Notification) -> None:  # the ack goes once this returns
        if note.message.get("type") == "Prompted":
            await hold.wait()

    ben.on_notification(slow)
    config = {"think": 0.2, "rounds": 1, "table": {"ack_timeout": 3600}}
    game = await ann.client.create(game_type.name, config, seats=2)
    await ben.join(game)
    # each deferral is tried again after a growing pause (0.1, 0.2, ... 2 s, the timers'
    # clock): eight of them are more than seven seconds of a closed gate past the due time
    await wait_until(lambda: timers.results.get("deferred", 0) >= 8, timeout=60)
    hold.set()
    await wait_until(lambda: _finished(stack, game), timeout=30)

    records = await stack.store.read_stream(game)
    prompt = next(r for r in records if r.type == "highcard.turn_prompted")
    async with stack.store.engine.connect() as conn:
        opened = await conn.scalar(
            sa.text("SELECT released_at FROM gates WHERE stream_id = :g AND version = :v"),
            {"g": game, "v": prompt.version},
        )
    assert opened is not None
    waited = (opened - prompt.recorded_at).total_seconds() - config["think"]
    assert waited > 7
    registry_ = timers.rt.metrics.registry
    count = registry_.get_sample_value("cardroom_deadline_lateness_seconds_count")
    late = registry_.get_sample_value("cardroom_deadline_lateness_seconds_sum")
    applied = timers.results.get("fired", 0) + timers.results.get("nothing", 0)
    assert count == applied >= 2  # ann's deadline, deferred; then ben's, never held
    assert late is not None
    assert late < waited - 1, (late, waited)  # what is left: the timers' own pauses


async def _finished(stack: TimedStack, game: str) -> bool:
    return any(r.type == "table.finished" for r in await stack.store.read_stream(game))


async def _has_key_prefix(stack: TimedStack, game: str, prefix: str) -> bool:
    return any(r["key"].startswith(prefix) for r in await _deadlines(stack, game))


async def _house_moved(stack: TimedStack, game: str) -> bool:
    return any(r.metadata.get("house") for r in await stack.store.read_stream(game))


def test_turn_key_names_the_turn() -> None:
    from support.highcard import State

    state = State(seats=("a", "b"), rounds=1, max_value=9, round=2, acted=("a",))
    assert turn_key(state) == "turn:2:1"
