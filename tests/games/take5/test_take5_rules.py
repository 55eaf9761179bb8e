"""take5 rules: the deck, placement, the sixth card, choosing, rounds, the end, config."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from cardroom_engine import Deadline, Rejection, Table
from cardroom_engine.simulate import play
from cardroom_games.take5 import GAME, Take5Config, game_is_over, standard_bull
from cardroom_games.take5.placement import target_row
from pydantic import ValidationError
from take5_support import (
    apply_all,
    card,
    game_state,
    make_state,
    play_cmd,
    settle,
)

RNG = random.Random(7)


def play_all(state: Any, faces: list[int]) -> Any:
    """Every seat plays its face (seat order); returns the state after the reveal."""
    for seat, face in enumerate(faces):
        state = apply_all(state, GAME.decide(state, state.seats[seat], play_cmd(face), RNG))
    return state


# -- the deck ---------------------------------------------------------------------------------


def test_standard_deck_has_171_bull_heads() -> None:
    bulls = [standard_bull(face) for face in range(1, 105)]
    assert sum(bulls) == 171
    assert Counter(bulls) == {1: 76, 2: 9, 3: 10, 5: 8, 7: 1}
    assert standard_bull(55) == 7
    assert [standard_bull(f) for f in (11, 44, 99)] == [5, 5, 5]
    assert [standard_bull(f) for f in (10, 50, 100)] == [3, 3, 3]
    assert [standard_bull(f) for f in (5, 65, 95)] == [2, 2, 2]
    assert Take5Config().bull_values()[1:] == tuple(bulls)


def test_each_round_deals_a_fresh_full_deck() -> None:
    local = play(GAME, ["a", "b", "c"], random.Random(3))
    deals = [s.event for s in local.steps if s.event["type"] == "take5.dealt"]
    assert len(deals) >= 2
    for number, deal in enumerate(deals, start=1):
        assert deal["round"] == number
        faces = [f for hand in deal["hands"].values() for f in hand] + deal["rows"]
        assert len(faces) == 3 * 10 + 4
        assert len(set(faces)) == len(faces)
        assert all(1 <= f <= 104 for f in faces)
        assert all(len(hand) == 10 for hand in deal["hands"].values())


# -- placement --------------------------------------------------------------------------------


def test_target_row_is_the_closest_row_below() -> None:
    rows = [(10,), (20,), (30,), (40,)]
    assert target_row(rows, 25) == 1
    assert target_row(rows, 41) == 3
    assert target_row(rows, 11) == 0
    assert target_row(rows, 5) is None
    assert target_row([(10, 38), (20,), (30,), (40,)], 39) == 0


def test_cards_are_revealed_and_placed_in_ascending_order() -> None:
    state = make_state([(10,), (20,), (30,), (40,)], [(45, 1), (21, 2), (33, 3)])
    state = play_all(state, [45, 21, 33])
    assert state.phase == "resolve"
    assert state.revealed == ((21, 1), (33, 2), (45, 0))
    state, events = settle(state, RNG)
    placed = [(e["face"], e["row"]) for e in events if e["type"] == "take5.card_placed"]
    assert placed == [(21, "B"), (33, "C"), (45, "D")]
    assert state.rows == ((10,), (20, 21), (30, 33), (40, 45))
    assert events[-1]["type"] == "take5.turn_started"
    assert state.phase == "play"
    assert state.turn == 2
    assert state.scores == (0, 0, 0)


def test_the_lower_card_resolves_first_on_the_same_row() -> None:
    state = make_state([(10,), (20,), (30,), (40,)], [(42, 1), (41, 2)])
    state = play_all(state, [42, 41])
    state, _ = settle(state, RNG)
    assert state.rows[3] == (40, 41, 42)


# -- the sixth card ---------------------------------------------------------------------------


def test_the_sixth_card_takes_the_row() -> None:
    full = (20, 22, 25, 26, 27)  # 3 + 5 + 2 + 1 + 1 = 12 bull heads
    state = make_state([(10,), full, (30,), (40,)], [(28, 1), (35, 2)], scores=(4, 0))
    state = play_all(state, [28, 35])
    state, events = settle(state, RNG)
    taken = [e for e in events if e["type"] == "take5.row_taken"]
    assert len(taken) == 1
    assert taken[0]["player"] == "a"
    assert taken[0]["stack"] == list(full)
    assert taken[0]["bulls"] == 12
    assert taken[0]["chosen"] is False
    assert events[-1] == taken[0]  # the taken message is its own gate
    assert state.rows[1] == (28,)
    assert state.scores == (16, 0)
    notes = GAME.notify(state, taken[0], state)
    assert set(notes) == {"a", "b"}
    assert notes["b"] == {
        "type": "taken",
        "data": {"id": 0, "stack": [card(f) for f in full]},
    }
    state, events = settle(state, RNG)  # after the acks: 35 joins row C, next turn
    assert [e["type"] for e in events] == ["take5.card_placed", "take5.turn_started"]
    assert state.rows[2] == (30, 35)


def test_stack_size_is_configurable() -> None:
    state = make_state(
        [(10, 11), (20,), (30,), (40,)], [(12, 1), (13, 2)], config={"stack_size": 2}
    )
    state = play_all(state, [12, 13])
    state, events = settle(state, RNG)
    assert events[-1]["type"] == "take5.row_taken"
    assert events[-1]["stack"] == [10, 11]
    assert state.scores == (3 + 5, 0)
    state, events = settle(state, RNG)
    assert state.rows[0] == (12, 13)


def test_a_card_after_a_take_joins_the_new_row() -> None:
    full = (20, 21, 22, 23, 24)
    state = make_state([(10,), full, (30,), (40,)], [(25, 1), (26, 2)])
    state = play_all(state, [25, 26])
    state, events = settle(state, RNG)
    assert events[-1]["player"] == "a"
    state, events = settle(state, RNG)
    assert state.rows[1] == (25, 26)
    assert state.scores == (3 + 1 + 5 + 1 + 1, 0)


# -- choosing ---------------------------------------------------------------------------------


def test_a_card_below_every_row_makes_its_player_choose() -> None:
    state = make_state([(10, 11), (20,), (30,), (55,)], [(3, 1), (56, 2), (12, 3)])
    state = play_all(state, [3, 56, 12])
    state, events = settle(state, RNG)
    assert events == [{"type": "take5.choice_requested", "player": "a", "face": 3}]
    assert state.phase == "choose"
    notes = GAME.notify(state, events[0], state)
    assert list(notes) == ["a"]  # only the chooser is asked
    assert notes["a"]["type"] == "choose_request"
    assert notes["a"]["data"]["A"] == [card(10), card(11)]
    assert GAME.deadline(state) == Deadline(30.0, "choose:1:1")
    assert GAME.actions(state, "b") == []
    assert [a["data"] for a in GAME.actions(state, "a")] == ["A", "B", "C", "D"]
    with pytest.raises(Rejection) as refused:
        GAME.decide(state, "b", {"type": "choose_response", "data": "A"}, RNG)
    assert refused.value.code == "not_your_turn"
    # a chooser may take any row, here the one with 55 (7 bull heads)
    taken = GAME.decide(state, "a", {"type": "choose_response", "data": "D"}, RNG)
    assert taken == [
        {
            "type": "take5.row_taken",
            "player": "a",
            "face": 3,
            "row": "D",
            "stack": [55],
            "bulls": 7,
            "chosen": True,
        }
    ]
    state = apply_all(state, taken)
    assert state.scores == (7, 0, 0)
    assert state.rows == ((10, 11), (20,), (30,), (3,))
    state, events = settle(state, RNG)
    # 12 goes on A (11 is the closest below), 56 on C (30 closest below 56, D is 3)
    assert [(e["face"], e["row"]) for e in events if e["type"] == "take5.card_placed"] == [
        (12, "A"),
        (56, "C"),
    ]


def test_at_most_one_choice_per_turn_in_random_games() -> None:
    for seed in range(12):
        local = play(GAME, ["a", "b", "c", "d", "e"], random.Random(seed))
        per_turn = Counter(
            (game_state(s_state).round, game_state(s_state).turn)
            for s_state, step in _states(local)
            if step.event["type"] == "take5.choice_requested"
        )
        assert all(count == 1 for count in per_turn.values())


def _states(local: Any) -> Any:
    table = local.table
    state = None
    for step in local.steps:
        state = table.evolve(state, step.event)
        yield state, step


# -- rounds and the end -----------------------------------------------------------------------


def test_game_is_over_rule() -> None:
    assert not game_is_over([65, 10, 0], 66)  # everyone below
    assert game_is_over([66, 10, 0], 66)  # reached, lowest unique
    assert game_is_over([70, 3, 4], 66)
    assert not game_is_over([70, 3, 3], 66)  # reached, but the lowest is tied
    assert not game_is_over([70, 70], 66)
    assert game_is_over([70, 71], 66)
    assert not game_is_over([10, 40, 40], 66)


def _last_turn(scores: tuple[int, ...]) -> Any:
    """The last turn of a round with 2-card hands (turn_count 2), cards about to be placed."""
    state = make_state(
        [(10,), (20,), (30,), (40,)],
        [(41,), (42,), (43,)],
        scores=scores,
        turn=2,
        config={"turn_count": 2},
    )
    return play_all(state, [41, 42, 43])


def test_the_game_ends_when_someone_reached_win_score_and_the_lowest_is_unique() -> None:
    state, events = settle(_last_turn((70, 12, 30)), RNG)
    assert events[-1] == {
        "type": "take5.game_ended",
        "rounds": 1,
        "scores": {"a": 70, "b": 12, "c": 30},
    }
    assert state.phase == "over"
    notes = GAME.notify(state, events[-1], state)
    assert set(notes) == {"a", "b", "c"}
    assert notes["a"] == {
        "type": "game_over",
        "data": [
            {"player": 0, "score": 70},
            {"player": 1, "score": 12},
            {"player": 2, "score": 30},
        ],
    }
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.ranking == [["b"], ["c"], ["a"]]
    assert outcome.scores == {"a": 70, "b": 12, "c": 30}
    assert GAME.follow_up(state, RNG) == []
    assert GAME.deadline(state) is None
    assert GAME.actions(state, "a") == []


def test_a_tie_for_the_lowest_score_plays_another_round() -> None:
    state, events = settle(_last_turn((70, 12, 12)), RNG)
    assert events[-1]["type"] == "take5.dealt"
    assert events[-1]["round"] == 2
    state, events = settle(state, RNG)
    assert events == [{"type": "take5.turn_started", "round": 2, "turn": 1}]
    assert state.round == 2
    assert state.turn == 1
    assert state.scores == (70, 12, 12)
    assert all(len(hand) == 2 for hand in state.hands)
    assert GAME.outcome(state) is None


def test_everyone_below_win_score_plays_another_round() -> None:
    state, events = settle(_last_turn((65, 12, 0)), RNG)
    assert "take5.dealt" in [e["type"] for e in events]
    assert GAME.outcome(state) is None


def test_random_games_end_by_the_rule_and_replay_exactly() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        seats = ["p0", "p1", "p2", "p3", "p4", "p5"][: rng.randint(2, 6)]
        local = play(GAME, seats, rng)
        final = game_state(local.state)
        assert final.phase == "over"
        assert game_is_over(final.scores, 66)
        assert local.outcome is not None
        assert local.outcome.ranking[0] == [seats[final.scores.index(min(final.scores))]]
        events = [json.loads(json.dumps(s.event)) for s in local.steps]
        assert local.table.replay(events) == local.state
        # every round before the last ended with the game still going
        for state, step in _states(local):
            if step.event["type"] == "take5.dealt" and step.event["round"] > 1:
                assert not game_is_over(game_state(state).scores, 66)


# -- configuration ----------------------------------------------------------------------------


def test_config_defaults_are_the_seeds() -> None:
    cfg = Take5Config()
    assert (cfg.turn_count, cfg.stack_size, cfg.win_score, cfg.deck_size) == (10, 5, 66, 104)
    assert cfg.bull_range == (1, 7)
    assert cfg.turn_timeout == 30.0
    dumped = cfg.model_dump(mode="json")
    assert dumped["bull_range"] == [1, 7]
    assert Take5Config.model_validate(json.loads(json.dumps(dumped))) == cfg


@pytest.mark.parametrize(
    "bad",
    [
        {"bull_range": [3, 7]},  # the standard deck has 1-bull cards
        {"bull_range": [1, 6]},  # and 55 has 7
        {"bull_range": [7, 1]},
        {"bull_range": [0, 7]},
        {"bull_range": [1]},
        {"deck_size": 20, "turn_count": 10},  # not even two hands and four rows
        {"turn_count": 0},
        {"stack_size": 0},
        {"win_score": 0},
        {"deck_size": 100_000},
        {"bulls": [1, 2, 3], "deck_size": 10, "turn_count": 3},  # one per card
        {"bulls": [1] * 9 + [9], "deck_size": 10, "turn_count": 3},  # 9 outside [1, 7]
        {"turn_timeout": 0},
        {"turn_timeout": float("nan")},
        {"turn_timeout": float("inf")},
        {"colour": "red"},
        {"turn_count": "many"},
    ],
)
def test_inconsistent_configs_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Take5Config.model_validate(bad)
    with pytest.raises(Rejection) as refused:
        Table(GAME).create("g1", "ann", bad, seats=2)
    assert refused.value.code == "bad_config"


def test_consistent_custom_configs_are_accepted() -> None:
    cfg = Take5Config.model_validate(
        {"turn_count": 9, "stack_size": 6, "deck_size": 210, "bull_range": [1, 7]}
    )
    assert cfg.max_players() == 10
    custom = Take5Config.model_validate(
        {"deck_size": 12, "turn_count": 4, "bull_range": [3, 7], "bulls": [3] * 11 + [7]}
    )
    assert custom.bull_values() == (0, *([3] * 11), 7)
    local = play(GAME, ["a", "b"], random.Random(1), custom.model_dump(mode="json"))
    assert local.outcome is not None
    played = [s.notifications for s in local.steps if s.event["type"] == "take5.plays_revealed"]
    assert all(e["card"]["bull"] in (3, 7) for n in played for e in n["a"]["data"])


def test_check_start_needs_turn_count_times_players_plus_four_cards() -> None:
    cfg = Take5Config(deck_size=34, turn_count=10)
    GAME.check_start(cfg, ["a", "b", "c"])  # 10 x 3 + 4 = 34: just enough
    with pytest.raises(Rejection) as refused:
        GAME.check_start(cfg, ["a", "b", "c", "d"])
    assert refused.value.code == "bad_config"
    # the table calls it when the last seat fills
    table = Table(GAME)
    rng = random.Random(0)
    events = table.create("g1", "a", {"deck_size": 34}, seats=4)
    for player in ("b", "c"):
        events += table.join(table.replay(events), player, rng)
    with pytest.raises(Rejection) as refused:
        table.join(table.replay(events), "d", rng)
    assert refused.value.code == "bad_config"
    # 10 players with the defaults: 104 cards exactly
    GAME.check_start(Take5Config(), [str(i) for i in range(10)])
    with pytest.raises(Rejection):
        GAME.check_start(Take5Config(deck_size=1000), [str(i) for i in range(11)])


# -- timeouts and the house -------------------------------------------------------------------


def test_turn_deadline_and_timeout_play_the_house_for_missing_players() -> None:
    state = make_state(
        [(10,), (20,), (30,), (40,)],
        [(5, 33, 50), (21, 60, 61), (2, 44, 45)],
        config={"turn_timeout": 12.5},
    )
    assert GAME.deadline(state) == Deadline(12.5, "play:1:1")
    state = apply_all(state, GAME.decide(state, "b", play_cmd(60), RNG))
    assert GAME.deadline(state) == Deadline(12.5, "play:1:1")  # same window
    assert GAME.on_timeout(state, "play:1:2", RNG) == []  # a stale key does nothing
    assert GAME.on_timeout(state, "choose:1:1", RNG) == []
    events = GAME.on_timeout(state, "play:1:1", RNG)
    assert [(e["type"], e.get("player"), e.get("face"), e.get("house")) for e in events] == [
        ("take5.card_played", "a", 5, True),
        ("take5.card_played", "c", 2, True),
        ("take5.plays_revealed", None, None, None),
    ]
    state = apply_all(state, events)
    assert state.revealed == ((2, 2), (5, 0), (60, 1))
    assert GAME.deadline(state) is None  # resolving: nobody is asked
    state, events = settle(state, RNG)
    assert events[-1]["type"] == "take5.choice_requested"
    assert GAME.deadline(state) == Deadline(12.5, "choose:1:1")
    events = GAME.on_timeout(state, "choose:1:1", RNG)
    assert events[0]["row"] == "A"  # 10: 3 bulls, 20: 3, 30: 3, 40: 3 -> the first
    assert events[0]["house"] is True


def test_house_action_is_the_lowest_card_and_the_cheapest_row() -> None:
    state = make_state([(55,), (20, 21), (33,), (1,)], [(70, 9, 80), (90, 91, 92)])
    assert GAME.house_action(state, "a", RNG) == play_cmd(9)
    assert GAME.house_action(state, "zed", RNG) is None
    state = play_all(state, [9, 90])
    assert GAME.house_action(state, "a", RNG) is None
    choosing = make_state([(55,), (20, 21), (33,), (8,)], [(2, 9), (90, 91)])
    choosing = play_all(choosing, [2, 90])
    choosing, _ = settle(choosing, RNG)
    assert choosing.phase == "choose"
    # 55: 7, 20+21: 4, 33: 5, 8: 1
    assert GAME.house_action(choosing, "a", RNG) == {"type": "choose_response", "data": "D"}
    assert GAME.house_action(choosing, "b", RNG) is None


def test_actions_are_complete_commands_that_decide_accepts() -> None:
    rng = random.Random(5)
    for seed in range(6):
        local = play(GAME, ["a", "b", "c"], random.Random(seed))
        for state, _step in _states(local):
            if state.status != "playing":
                continue
            game = game_state(state)
            for player in state.seats:
                actions = GAME.actions(game, player)
                for action in actions:
                    GAME.decide(game, player, action, rng)  # no Rejection
                if game.phase == "play" and game.plays[game.seat(player)] is None:
                    assert len(actions) == len(game.hands[game.seat(player)])
