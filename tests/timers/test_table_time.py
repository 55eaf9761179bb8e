"""The engine's side of time and presence, pure: table options, deadlines, away and back,
the house's moves."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from cardroom_engine import AWAY, BACK, Rejection, Table, TableOptions, simulate
from support.highcard import GAME
from support.timedhighcard import GAME as TIMED


def _playing(config: dict[str, Any] | None = None, game: Any = GAME) -> simulate.LocalGame:
    return simulate.new_game(game, ["a", "b", "c"], random.Random(7), config or {})


def test_table_options_are_read_from_config_table_and_kept_out_of_the_game_config() -> None:
    local = _playing({"rounds": 2, "table": {"ack_timeout": 5, "turn_timeout": 12.5}})
    state = local.state
    assert state.options == TableOptions(ack_timeout=5, turn_timeout=12.5)
    assert state.config == {"rounds": 2, "max_value": 100}
    assert state.summary()["options"] == {"ack_timeout": 5.0, "turn_timeout": 12.5}
    default = _playing().state.options
    assert default.ack_timeout == 30.0
    assert default.turn_timeout is None


@pytest.mark.parametrize(
    "options",
    [
        {"ack_timeout": 0},
        {"ack_timeout": float("inf")},
        {"turn_timeout": 86_401},
        {"turn_time": 3},
        "fast",
        [1],
    ],
)
def test_bad_table_options(options: Any) -> None:
    with pytest.raises(Rejection) as exc:
        Table(GAME).create("g", "a", {"table": options})
    assert exc.value.code == "bad_config"
    assert exc.value.message.startswith("table")


def test_deadlines_name_the_game_deadline_and_the_turn_timeout() -> None:
    local = _playing({"think": 4, "table": {"turn_timeout": 9}}, game=TIMED)
    table, state = local.table, local.state
    assert table.movers(state) == ["a"]
    keys = {d.key: d for d in table.deadlines(state)}
    assert keys["game:turn:1:0"].seconds == 4
    # both dated by the last event every seat was told of, never by the private prompt
    assert state.moved_at < state.version
    assert keys["game:turn:1:0"].since == state.moved_at
    turn = keys[f"turn:{state.moved_at}"]
    assert (turn.seconds, turn.since) == (9, state.moved_at)
    # the game's deadline fires its on_timeout; the turn timeout lets the house play
    [(who, events)] = table.fire(state, "game:turn:1:0", random.Random(1))
    assert who is None
    assert events == [{"type": "highcard.folded", "player": "a"}]
    [(who, events)] = table.fire(state, f"turn:{state.moved_at}", random.Random(1))
    assert who == "a"
    assert events[0]["type"] in ("highcard.bet_placed", "highcard.folded")
    assert table.fire(state, "game:turn:7:7", random.Random(1)) == []  # stale
    assert table.fire(state, "turn:1", random.Random(1)) == []  # stale


def test_away_and_back_tell_the_others_and_do_not_move_the_turn_clock() -> None:
    local = _playing({"table": {"turn_timeout": 9}})
    table = local.table
    before = local.state
    assert table.mark_back(before, "b") == []  # not away
    assert table.mark_away(before, "zed") == []  # not seated
    local.apply(table.mark_away(before, "b"))
    away = local.state
    assert away.away == ("b",)
    assert table.mark_away(away, "b") == []  # already away
    assert local.steps[-1].notifications == {
        "a": {"type": "PlayerAway", "player": "b"},
        "c": {"type": "PlayerAway", "player": "b"},
    }
    assert away.moved_at == before.moved_at  # presence is not a move
    assert {d.key for d in table.deadlines(away)} == {d.key for d in table.deadlines(before)}
    local.apply(table.mark_back(away, "b"))
    assert local.state.away == ()
    assert local.steps[-1].event == {"type": BACK, "player": "b"}
    assert set(local.steps[-1].notifications) == {"a", "c"}
    # and replay reproduces it
    events = [json.loads(json.dumps(s.event)) for s in local.steps]
    assert table.replay(events) == local.state
    assert [e["type"] for e in events].count(AWAY) == 1


def test_house_moves_play_for_each_player_who_can_act() -> None:
    local = _playing()
    table, state = local.table, local.state
    moves = table.house_moves(state, ["a", "b", "c"], random.Random(3))
    # only a can act now (b and c wait for their turn, which a follow-up announces)
    assert [who for who, _ in moves] == ["a"]
    assert table.house_moves(state, ["b"], random.Random(3)) == []


class _Stubborn(type(GAME)):  # type: ignore[misc]
    """A game whose house_action is illegal: the house falls back to a legal action."""

    name = "stubborn"

    def house_action(self, state: Any, player: str, rng: random.Random) -> dict[str, Any]:
        return {"type": "bet", "amount": 99}


def test_an_illegal_house_action_falls_back_to_a_legal_one() -> None:
    local = simulate.new_game(_Stubborn(), ["a", "b"], random.Random(1))
    events = local.table.house_move(local.state, "a", random.Random(1))
    assert events == [{"type": "highcard.bet_placed", "player": "a", "amount": 1}]


def test_a_whole_game_played_by_the_house_finishes() -> None:
    rng = random.Random(5)
    local = _playing({"rounds": 3})
    while local.state.status == "playing":
        moves = local.table.house_moves(local.state, local.state.seats, rng)
        assert moves
        for _, events in moves:
            local.apply(events)
        local.settle(rng)
    assert local.outcome is not None
