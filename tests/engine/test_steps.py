"""The gamemaster's decisions around the rules (``cardroom_engine.steps``), with high card."""

from __future__ import annotations

import random

from cardroom_engine import AWAY, BACK, Event, Table, TableState, steps
from cardroom_wire import ErrorCode
from support.highcard import BET_PLACED, FOLDED, GAME, TURN_STARTED

TABLE = Table(GAME)


def playing(seats: tuple[str, ...] = ("a", "b")) -> TableState:
    """A started table of ``seats``, dealt, nobody's turn announced yet."""
    rng = random.Random(1)
    state = TABLE.replay(TABLE.create("g", seats[0], {}, seats=len(seats)))
    for player in seats[1:]:
        state = TABLE.evolve_many(state, TABLE.join(state, player, rng))
    assert state.status == "playing"
    return state


def fold(state: TableState, events: list[Event]) -> TableState:
    return TABLE.evolve_many(state, events)


def prompted(state: TableState) -> TableState:
    """Follow-ups until a player is prompted to act."""
    rng = random.Random(2)
    while not TABLE.movers(state):
        state = fold(state, TABLE.follow_up(state, rng))
    return state


def test_an_outsider_is_refused_only_once_the_table_has_started() -> None:
    lobby = TABLE.replay(TABLE.create("g", "a", {}, seats=3))
    assert not steps.outsider(lobby, "z")  # it may still join
    state = playing()
    assert steps.outsider(state, "z")
    assert not steps.outsider(state, "a")


def test_next_moves_is_the_follow_up_while_the_game_has_one() -> None:
    state = playing()
    moves = steps.next_moves(TABLE, state, random.Random(3))
    assert [(who, [e["type"] for e in events]) for who, events in moves] == [(None, [TURN_STARTED])]


def test_next_moves_plays_for_an_away_mover_and_waits_for_a_present_one() -> None:
    state = prompted(playing())
    mover = TABLE.movers(state)[0]
    assert steps.next_moves(TABLE, state, random.Random(4)) == []  # the game waits for them
    away = fold(state, TABLE.mark_away(state, mover))
    moves = steps.next_moves(TABLE, away, random.Random(4))
    assert len(moves) == 1
    player, events = moves[0]
    assert player == mover
    assert events[0]["player"] == mover
    assert events[0]["type"] in (BET_PLACED, FOLDED)


def test_mark_late_away_marks_each_late_seat_once_in_seat_order() -> None:
    state = playing(("a", "b", "c"))
    events = steps.mark_late_away(TABLE, state, {"c", "a", "stranger"})
    assert events == [{"type": AWAY, "player": "a"}, {"type": AWAY, "player": "c"}]
    after = fold(state, events)
    assert after.away == ("a", "c")
    assert steps.mark_late_away(TABLE, after, {"a", "c"}) == []  # away already


def test_mark_late_away_outside_play_changes_nothing() -> None:
    lobby = TABLE.replay(TABLE.create("g", "a", {}, seats=3))
    assert steps.mark_late_away(TABLE, lobby, {"a"}) == []


def test_a_command_from_an_away_player_takes_the_seat_back_then_is_decided() -> None:
    state = prompted(playing())
    mover = TABLE.movers(state)[0]
    away = fold(state, TABLE.mark_away(state, mover))
    decided = steps.decide_command(
        TABLE, away, mover, {"type": "bet", "amount": 2}, random.Random(5), gate_open=True
    )
    assert decided.rejection is None
    assert decided.back == [{"type": BACK, "player": mover}]
    assert decided.events == [{"type": BET_PLACED, "player": mover, "amount": 2}]
    # the batch folds in order: back first, then the bet
    assert fold(away, decided.back + decided.events).away == ()


def test_a_refused_command_from_an_away_player_still_takes_the_seat_back() -> None:
    state = prompted(playing())
    mover = TABLE.movers(state)[0]
    other = next(p for p in state.seats if p != mover)
    away = fold(state, TABLE.mark_away(state, other))
    decided = steps.decide_command(
        TABLE, away, other, {"type": "bet", "amount": 1}, random.Random(6), gate_open=True
    )
    assert decided.back == [{"type": BACK, "player": other}]
    assert decided.events == []
    assert decided.rejection is not None
    assert decided.rejection.code == ErrorCode.NOT_YOUR_TURN


def test_a_present_players_command_has_no_back_and_a_closed_gate_refuses_it() -> None:
    state = prompted(playing())
    mover = TABLE.movers(state)[0]
    decided = steps.decide_command(
        TABLE, state, mover, {"type": "bet", "amount": 1}, random.Random(7), gate_open=False
    )
    assert decided.back == []
    assert decided.rejection is not None
    assert decided.rejection.code == ErrorCode.AWAITING_ACKS
