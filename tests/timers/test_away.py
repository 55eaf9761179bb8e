"""Away players: a player who stops acknowledging is marked away after the ack timeout, the
gate stops waiting for them, the house plays for them, the others are told; when they come
back (a sync, an ack or a command) they receive everything they missed, in order, once, and
play again. A player who acknowledges but does not act is played by the house after the turn
timeout, without being marked away."""

from __future__ import annotations

from typing import Any

import pytest
from cardroom_client import CardroomError
from cardroom_eventstore import RecordedEvent
from cardroom_wire import Notification
from support.players import Seat, check_stream, gone, listener, recorded_bot, replayed
from support.stack import contiguous, projected, wait_until
from support.timedstack import TimedStack


def _types(notes: list[Notification]) -> list[tuple[str, Any]]:
    return [
        (n.message["type"], n.message.get("player"))
        for n in notes
        if n.message["type"] in ("PlayerAway", "PlayerBack")
    ]


async def _stream(stack: TimedStack, game: str) -> list[RecordedEvent]:
    return await stack.store.read_stream(game)


async def _has(stack: TimedStack, game: str, test: Any) -> bool:
    return any(test(r) for r in await _stream(stack, game))


def _over(seat: Seat, game: str) -> bool:
    return any(n.message["type"] == "GameOver" for n in seat.recorder.seen.get(game, []))


async def test_an_absent_player_is_played_by_the_house_and_takes_the_seat_back(
    timed_stack: TimedStack,
) -> None:
    stack = timed_stack
    ann, ben, cat = [recorded_bot(await stack.client(p)) for p in ("ann", "ben", "cat")]
    config = {"rounds": 6, "table": {"ack_timeout": 2.0}}
    game = await ann.client.create("highcard", config, seats=3)
    for seat in (ann, ben, cat):
        assert seat.bot is not None
        seat.bot.watch(game, "highcard")
    await ben.client.join(game)
    await cat.client.join(game)

    # cat's browser closes after the first few updates
    await wait_until(lambda: len(cat.recorder.seen.get(game, [])) >= 2)
    await gone(cat)
    dropped_at = cat.recorder.seqs(game)[-1]

    # marked away once the ack timeout has passed; the game goes on without waiting
    await wait_until(lambda: _has(stack, game, lambda r: r.type == "table.away"), timeout=30)
    await wait_until(
        lambda: _has(stack, game, lambda r: r.metadata.get("house")), timeout=30
    )  # the house has played for cat
    for seat in (ann, ben):
        await wait_until(lambda s=seat: ("PlayerAway", "cat") in _types(s.recorder.seen[game]))

    # cat comes back on a new connection; the app remembers what it handled
    back = recorded_bot(await stack.client("cat"), cat.recorder)
    assert back.bot is not None
    back.bot.watch(game, "highcard")
    back.client._feed(game).last_seq = dropped_at
    await back.client.follow(game)
    await wait_until(lambda: all(_over(s, game) for s in (ann, ben, back)), timeout=120)

    records = await _stream(stack, game)
    check_stream(records)
    assert (await replayed(stack.store, game)).status == "finished"
    presence = [
        (r.type, r.data["player"], r.version)
        for r in records
        if r.type in ("table.away", "table.back")
    ]
    assert [(t, p) for t, p, _ in presence] == [("table.away", "cat"), ("table.back", "cat")]
    away_at, back_at = presence[0][2], presence[1][2]
    house = [r for r in records if r.metadata.get("house")]
    assert house, "the house played while cat was away"
    assert all(r.metadata["actor"] == "cat" for r in house)
    assert all(away_at < r.version < back_at for r in house)
    # after coming back, cat plays its own moves again
    assert any(
        r.metadata.get("actor") == "cat" and r.metadata.get("command_id") and r.version > back_at
        for r in records
    )
    # cat received every notification exactly once, in order, including those it missed
    seqs = cat.recorder.seqs(game)
    assert contiguous(seqs), str(seqs)
    await projected(stack.store, game)
    assert seqs[-1] == await stack.store.last_seq(game, "cat")
    assert _types(cat.recorder.seen[game]) == []  # nobody tells cat about cat
    for seat in (ann, ben):
        assert contiguous(seat.recorder.seqs(game))
        assert _types(seat.recorder.seen[game]) == [("PlayerAway", "cat"), ("PlayerBack", "cat")]
    # everything owed has been acknowledged, the missed notifications included
    await wait_until(lambda: _nothing_pending(stack, game))


async def _nothing_pending(stack: TimedStack, game: str) -> bool:
    return await stack.store.pending(game) == {}


async def test_a_silent_player_is_played_by_the_house_after_the_turn_timeout(
    timed_stack: TimedStack,
) -> None:
    stack = timed_stack
    ann = recorded_bot(await stack.client("ann"))
    ben = listener(await stack.client("ben"))  # acknowledges everything, never acts
    config = {"rounds": 2, "table": {"turn_timeout": 0.3}}
    game = await ann.client.create("highcard", config, seats=2)
    assert ann.bot is not None
    ann.bot.watch(game, "highcard")
    await ben.client.join(game)
    await wait_until(lambda: _over(ann, game) and _over(ben, game), timeout=60)
    records = await _stream(stack, game)
    check_stream(records)
    house = [r for r in records if r.metadata.get("house")]
    assert len(house) == 2  # one bet or fold of ben's per round
    assert {r.metadata["actor"] for r in house} == {"ben"}
    assert all(r.metadata["timeout"].startswith("turn:") for r in house)
    assert not any(r.type in ("table.away", "table.back") for r in records)
    assert {r.metadata["actor"] for r in records if r.metadata.get("command_id")} == {"ann"}
    assert contiguous(ben.recorder.seqs(game))


async def _ben_away(stack: TimedStack) -> str:
    """ann (a bot) and ben play; ben leaves without a word and is marked away; the game id."""
    ann = recorded_bot(await stack.client("ann"))
    ben = listener(await stack.client("ben"))
    game = await ann.client.create("highcard", {"rounds": 50, "table": {"ack_timeout": 1}}, seats=2)
    assert ann.bot is not None
    ann.bot.watch(game, "highcard")
    await ben.client.join(game)
    await wait_until(lambda: bool(ben.recorder.seen.get(game)))
    await gone(ben)  # without a word
    await wait_until(lambda: _has(stack, game, lambda r: r.type == "table.away"), timeout=30)
    return game


async def test_a_command_from_an_away_player_takes_the_seat_back(timed_stack: TimedStack) -> None:
    stack = timed_stack
    game = await _ben_away(stack)
    # ben is back with a command, on a connection that neither syncs nor acknowledges
    again = await stack.client("ben")
    code = "ok"
    try:
        await again.command(game, "fold")
    except CardroomError as exc:  # not ben's turn right now: still, ben is back
        code = exc.code
    assert code in ("ok", "not_your_turn", "awaiting_acks")
    records = await _stream(stack, game)
    backs = [r for r in records if r.type == "table.back"]
    assert len(backs) == 1
    assert backs[0].data == {"player": "ben"}
    assert backs[0].metadata["actor"] == "ben"
    state = await replayed(stack.store, game)
    assert state.away == ()


async def test_an_ack_of_what_was_missed_takes_the_seat_back(timed_stack: TimedStack) -> None:
    """An away player who acknowledges a notification owed while away is back (the
    acktracker tells the gamemaster); other acks tell it nothing."""
    stack = timed_stack
    game = await _ben_away(stack)
    owed = await stack.store.pending_for_player(game, "ben")
    assert owed
    # ben acknowledges one of them on a connection that neither syncs nor acts
    again = await stack.client("ben")
    await again.ack(game, owed[-1])
    await wait_until(lambda: _has(stack, game, lambda r: r.type == "table.back"), timeout=10)
    records = await _stream(stack, game)
    assert [r.data for r in records if r.type == "table.back"] == [{"player": "ben"}]
    assert (await replayed(stack.store, game)).away == ()


@pytest.mark.parametrize(
    "options",
    [{"ack_timeout": 0}, {"turn_timeout": -1}, {"nope": 1}, 5, {"ack_timeout": "soon"}],
)
async def test_bad_table_options_are_refused(timed_stack: TimedStack, options: Any) -> None:
    ann = await timed_stack.client("ann")
    with pytest.raises(CardroomError) as exc:
        await ann.create("highcard", {"table": options}, seats=2)
    assert exc.value.code == "bad_config"
    assert exc.value.message.startswith("table")
