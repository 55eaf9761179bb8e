"""The turn clock a sync tells (``SyncReply.turn_due_in_ms``): mid-turn it is the time the
turn really has left, as the gamemaster will fire its deadline, the same for every seat; it
tells nothing of when a seat acknowledged or will be marked away, nor when an event told to
some seats only happened."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from cardroom_client import Client
from cardroom_wire import Notification, SyncReply
from support.highcard import TURN_PROMPTED
from support.players import Seat, listener
from support.stack import wait_until
from support.timedstack import TimedStack

TURN = 20.0  # seconds: long enough that no turn ends while a test looks at it


async def _sync(seat: Seat, game: str) -> SyncReply:
    reply = await seat.client.follow(game)  # (asks again while the projector catches up)
    assert reply is not None
    return reply


async def _expected_due(stack: TimedStack, game: str) -> tuple[datetime, datetime]:
    """The turn's due time as the gamemaster fires it (the later of its event and the
    opening of the newest gate after it, plus the timeout), and the database's clock now."""
    async with stack.store.engine.connect() as conn:
        row = (
            await conn.execute(
                sa.text(
                    """
SELECT d.due_at + GREATEST(interval '0', (
           SELECT max(g.released_at) FROM gates g
           WHERE g.stream_id = d.game_id AND g.version >= e.version) - e.recorded_at),
       clock_timestamp()
FROM deadlines d
JOIN events e ON e.stream_id = d.game_id
 AND e.version = CAST(split_part(d.key, ':', 2) AS integer)
WHERE d.game_id = :g AND d.key LIKE 'turn:%'
"""
                ),
                {"g": game},
            )
        ).one()
    return row[0], row[1]


async def _keys(stack: TimedStack, game: str) -> set[str]:
    async with stack.store.engine.connect() as conn:
        rows = await conn.scalars(
            sa.text("SELECT key FROM deadlines WHERE game_id = :g AND fired_at IS NULL"),
            {"g": game},
        )
        return {str(k) for k in rows}


async def _gate_open(stack: TimedStack, game: str) -> bool:
    return await stack.store.gate_open(game)


async def _told(stack: TimedStack, who: Seat, game: str, mover: bool = False) -> int:
    """Once a sync of ``who`` tells a turn clock: its milliseconds, checked within a second
    of the deadline row as the gamemaster fires it (``mover``: ``who`` has actions)."""

    async def told() -> bool:
        return (await _sync(who, game)).turn_due_in_ms is not None

    await wait_until(told)
    reply = await _sync(who, game)
    due, now = await _expected_due(stack, game)
    expected = (due - now).total_seconds() * 1000
    assert bool(reply.actions) or not mover
    assert reply.turn_due_in_ms is not None
    assert expected - 1000 <= reply.turn_due_in_ms <= expected + 1000
    return reply.turn_due_in_ms


async def test_a_sync_mid_turn_tells_every_seat_the_time_the_turn_has_left(
    timed_stack: TimedStack,
) -> None:
    stack = timed_stack
    ann, ben = [listener(await stack.client(p)) for p in ("ann", "ben")]
    config = {"rounds": 1, "table": {"turn_timeout": TURN, "ack_timeout": 3600}}
    game = await ann.client.create("highcard", config, seats=2)
    await ben.client.join(game)

    def prompted(seat: Seat) -> bool:
        return any(n.actions for n in seat.recorder.seen.get(game, []))

    await wait_until(lambda: prompted(ann) or prompted(ben))
    mover, other = (ann, ben) if prompted(ann) else (ben, ann)

    async def turn_ran_a_while() -> bool:
        left = (await _sync(mover, game)).turn_due_in_ms
        return left is not None and left < (TURN - 1.5) * 1000

    # the clock runs: a sync a while into the turn is told less than the full time
    await wait_until(turn_ran_a_while)
    started = time.monotonic()
    mine = await _sync(mover, game)
    theirs = await _sync(other, game)
    between = (time.monotonic() - started) * 1000
    due, now = await _expected_due(stack, game)
    expected = (due - now).total_seconds() * 1000
    assert mine.turn_due_in_ms is not None
    assert theirs.turn_due_in_ms is not None
    assert 0 < mine.turn_due_in_ms < (TURN - 1.5) * 1000
    # as the deadline the gamemaster wrote and the gate's opening say (read just after)
    assert expected - 1000 <= mine.turn_due_in_ms <= expected + 1000, (mine, expected)
    # the seat not to move is told the same clock, not one of its own
    assert mine.actions
    assert not theirs.actions
    assert abs(mine.turn_due_in_ms - theirs.turn_due_in_ms) <= between + 50


async def test_a_silent_seat_tells_nothing_of_its_ack_timeout(timed_stack: TimedStack) -> None:
    """ben never acknowledges: while his ack holds the gate no turn clock runs and the sync
    says none (the ack timeout that will mark him away is never shown); once he is away the
    turn's clock starts from the gate's opening, for ann as for every seat."""
    stack = timed_stack
    ann = listener(await stack.client("ann"))
    ben_client: Client = await stack.client("ben")
    release = asyncio.Event()

    async def never(note: Notification) -> None:
        await release.wait()  # holds every ack until the test ends

    ben_client.on_notification(never)
    ack_timeout = 4.0
    config = {"rounds": 1, "table": {"turn_timeout": TURN, "ack_timeout": ack_timeout}}
    game = await ann.client.create("highcard", config, seats=2)
    try:
        await ben_client.join(game)
        await wait_until(lambda: bool(ann.recorder.seen.get(game)))

        async def ack_deadline_written() -> bool:
            return any(k.startswith("acks:") for k in await _keys(stack, game))

        await wait_until(ack_deadline_written)
        assert not await _gate_open(stack, game)
        reply = await _sync(ann, game)
        assert reply.turn_due_in_ms is None, reply.turn_due_in_ms
        assert not await _gate_open(stack, game)  # (the reply was made while it was held)

        # ben is marked away, his acks stop holding the game: a turn clock starts from then
        async def away() -> bool:
            return any(r.type == "table.away" for r in await stack.store.read_stream(game))

        await wait_until(away, timeout=30)

        left = await _told(stack, ann, game)
        # counted from the gate's opening when ben was marked away, not from the turn's event
        assert left > (TURN - ack_timeout / 2) * 1000
    finally:
        release.set()


async def test_a_turn_held_by_a_slow_acknowledgement_runs_from_the_gates_opening(
    timed_stack: TimedStack,
) -> None:
    """ben takes a few seconds (well within his ack timeout) to acknowledge that ann's turn
    began: ann could not act before, so her clock runs from then, as the gamemaster fires
    it, and the sync says so rather than counting from the turn's event."""
    stack = timed_stack
    ann = listener(await stack.client("ann"))
    ben = listener(await stack.client("ben"))
    release = asyncio.Event()
    record = ben.recorder

    async def slow(note: Notification) -> None:
        if note.message.get("type") == "Turn":
            await release.wait()
        await record(note)

    ben.client.on_notification(slow)
    config = {"rounds": 1, "table": {"turn_timeout": TURN, "ack_timeout": 3600}}
    game = await ann.client.create("highcard", config, seats=2)
    try:
        await ben.client.join(game)

        async def turn_began_a_while_ago() -> bool:
            async with stack.store.engine.connect() as conn:
                age = await conn.scalar(
                    sa.text(
                        "SELECT EXTRACT(EPOCH FROM clock_timestamp() - recorded_at) FROM events"
                        " WHERE stream_id = :g AND type = 'highcard.turn_started'"
                    ),
                    {"g": game},
                )
            return age is not None and age > 3

        await wait_until(turn_began_a_while_ago)  # the clock advances while ben holds on
        assert (await _sync(ann, game)).turn_due_in_ms is None  # the gate is held: no turn yet
    finally:
        release.set()

    left = await _told(stack, ann, game, mover=True)
    # counted from the gate's opening: more than the turn's event leaves (under TURN - 3 s)
    assert left > (TURN - 2) * 1000


async def test_a_game_deadline_begun_by_a_private_event_dates_only_a_public_one(
    timed_stack: TimedStack,
) -> None:
    """timedhighcard's own deadline begins at the prompt, an event told to the player to
    move only. Counted from it, the moment it fires (and a sync's count) would tell the
    others when the prompt came; it counts from the last event every seat was told of, and
    every seat's sync tells the same time."""
    stack = timed_stack
    ann, ben = [listener(await stack.client(p)) for p in ("ann", "ben")]
    config: dict[str, Any] = {"rounds": 1, "think": 60, "table": {"ack_timeout": 3600}}
    game = await ann.client.create("timedhighcard", config, seats=2)
    await ben.client.join(game)

    async def game_deadline_written() -> bool:
        return any(k.startswith("game:") for k in await _keys(stack, game))

    await wait_until(game_deadline_written)
    await wait_until(lambda: _gate_open(stack, game))
    async with stack.store.engine.connect() as conn:
        dated = await conn.scalar(
            sa.text(
                """
SELECT e.type FROM deadlines d JOIN events e ON e.stream_id = d.game_id
 AND e.recorded_at = d.due_at - make_interval(secs => 60)
WHERE d.game_id = :g AND d.key LIKE 'game:%'
"""
            ),
            {"g": game},
        )
        types = await conn.scalars(
            sa.text("SELECT type FROM events WHERE stream_id = :g ORDER BY version"), {"g": game}
        )
        assert TURN_PROMPTED in list(types)
    assert dated is not None  # an event's time, plus the 60 s to think
    assert dated != TURN_PROMPTED
    before = time.monotonic()
    told = [(await _sync(seat, game)).turn_due_in_ms for seat in (ann, ben)]
    between = (time.monotonic() - before) * 1000
    assert None not in told, told
    assert 0 < told[0] <= 60_000
    assert abs(told[0] - told[1]) <= between + 50, told  # (the server's rounding)
