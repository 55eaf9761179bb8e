"""Scoring: every rule and edge case, as pure functions and through a table."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from cardroom_engine.simulate import Step
from cardroom_games.sixtysix import add_scores, game_over, round_scores, winners
from hypothesis import given, settings
from hypothesis import strategies as st
from sixtysix_harness import Script, gates

# -- 1.9.1-4: the round score -----------------------------------------------------------------


def test_raw_score_is_the_sum_of_the_hand_and_the_lowest_scores_zero() -> None:
    assert round_scores([[1, 2, 3, 4], [5, 5, 9, 10], [0, 6, 7, 8]], None) == [0, 29, 21]


def test_hands_of_any_size_from_one_to_four_cards() -> None:
    assert round_scores([[13], [0, 0, 1, 1], [6, 7]], None) == [13, 0, 13]


def test_every_player_tied_for_lowest_scores_zero() -> None:
    assert round_scores([[3, 4], [7], [2, 5], [9, 9]], None) == [0, 0, 0, 18]


def test_everyone_tied_without_a_stop_everyone_scores_zero() -> None:
    assert round_scores([[5], [2, 3], [1, 1, 1, 2]], None) == [0, 0, 0]


def test_stopper_with_the_unique_lowest_score_gets_no_penalty() -> None:
    assert round_scores([[1, 2], [5, 5], [6]], stopper=0) == [0, 10, 6]


def test_stopper_above_the_lowest_gets_five_more() -> None:
    assert round_scores([[1, 2], [5, 5], [6]], stopper=2) == [0, 10, 11]


def test_stopper_tied_for_lowest_gets_lowest_plus_five_the_others_zero() -> None:
    assert round_scores([[4], [1, 3], [2, 2], [9]], stopper=1) == [0, 9, 0, 9]


def test_stopper_tied_at_zero_gets_five() -> None:
    assert round_scores([[0, 0], [0], [1]], stopper=0) == [5, 0, 1]


def test_a_stopper_penalised_to_another_score_is_not_zeroed() -> None:
    # stopper 3 (lowest, tied with player 1), penalised to 8: only player 1 scores 0
    assert round_scores([[8], [3], [3], [10]], stopper=2) == [8, 0, 8, 10]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 13), min_size=1, max_size=4), min_size=2, max_size=5),
    st.data(),
)
def test_scores_properties(hands: list[list[int]], data: st.DataObject) -> None:
    stopper = data.draw(st.none() | st.integers(0, len(hands) - 1))
    scores = round_scores(hands, stopper)
    raw = [sum(h) for h in hands]
    low = min(raw)
    assert min(scores) == 0  # there is always at least one 0
    for p, (r, s) in enumerate(zip(raw, scores, strict=True)):
        if p == stopper and (r > low or raw.count(low) > 1):
            assert s == r + 5
        elif r == low:
            assert s == 0
        else:
            assert s == r


# -- 1.9.5: totals --------------------------------------------------------------------------


def test_positive_scores_are_added_and_zeros_change_nothing() -> None:
    assert add_scores([10, 20, 30], [0, 5, 13]) == [10, 25, 43]


def test_a_total_of_exactly_66_drops_to_33() -> None:
    assert add_scores([60, 50, 66 - 13], [6, 16, 13]) == [33, 33, 33]


def test_totals_passing_66_do_not_drop() -> None:
    assert add_scores([60, 65], [7, 2]) == [67, 67]


def test_a_zero_score_at_33_keeps_33() -> None:
    assert add_scores([33], [0]) == [33]


# -- 1.9.6-7: end of the game and winners ---------------------------------------------------


def test_the_game_ends_only_above_66() -> None:
    assert not game_over([66, 0])  # cannot really stay at 66, but 66 itself does not end it
    assert not game_over([65, 12])
    assert game_over([67, 12])
    assert game_over([0, 100, 3])


def test_winners_are_every_player_tied_at_the_lowest_total() -> None:
    assert winners([40, 12, 70]) == [1]
    assert winners([12, 40, 12, 70]) == [0, 2]


# -- through a table ------------------------------------------------------------------------


def stop_then_draw_13s(
    game: Script, stopper: str, others: list[str], settle: tuple[int, ...] = ()
) -> list[Step]:
    """``stopper`` stops, then each of ``others`` draws a 13 and discards it."""
    game.do(stopper, {"type": "StopRound"})
    steps: list[Step] = []
    for i, player in enumerate(others):
        game.do(player, {"type": "TakeCardFromDeck"}, draw=13)
        steps = game.do(player, {"type": "Discard"}, settle=settle if i == len(others) - 1 else ())
    return steps


def round_finished(steps: list[Step]) -> dict[str, Any]:
    for gate in gates(steps):
        for message in gate.values():
            if message["type"] == "RoundFinished":
                return message
    raise AssertionError("no RoundFinished")


def test_stopper_penalty_and_zeroing_at_a_table() -> None:
    # c2 stops tied for lowest (10) with c1: c2 gets 15, c1 gets 0
    game = Script([[1, 2, 3, 4], [1, 1, 4, 4], [0, 6, 7, 8]], starter=1)
    message = round_finished(stop_then_draw_13s(game, "c2", ["c3", "c1"]))
    assert message["scores"] == [0, 15, 21]
    assert message["totalScores"] == [0, 15, 21]
    assert game.state.next_starter == 0


def test_a_total_of_66_drops_to_33_at_a_table() -> None:
    game = Script([[1, 2, 3, 4], [5, 5, 6, 8], [0, 6, 7, 8]], starter=1, totals=[0, 37, 45])
    message = round_finished(stop_then_draw_13s(game, "c2", ["c3", "c1"]))
    assert message["scores"] == [0, 29, 21]
    assert message["totalScores"] == [0, 33, 33]  # 37 + 29 = 66 -> 33; 45 + 21 = 66 -> 33
    assert message["isGameFinished"] is False


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_the_next_round_starts_with_a_random_player_among_those_who_scored_zero(
    protocol: str,
) -> None:
    starters: Counter[int] = Counter()
    for answer in (0, 1):
        game = Script(
            [[1, 2, 3, 4], [5, 5, 6, 8], [4, 3, 2, 1]],
            starter=1,
            protocol=protocol,
            discard=2 if protocol == "v1" else None,
        )
        stop_then_draw_13s(game, "c2", ["c3", "c1"], settle=(answer,))
        starter = game.state.next_starter
        assert starter is not None
        starters[starter] += 1
        mover = game.state.mover()
        assert mover == starter
        assert game.actions(game.players[starter]) == [{"type": "StartNextRound"}]
        game.do(game.players[starter], {"type": "StartNextRound"})
        assert game.state.active == starter  # the starter moves first
        assert game.state.round == 2
    assert starters == Counter({0: 1, 2: 1})


def test_exactly_66_is_not_the_end_but_67_is() -> None:
    game = Script([[1, 2, 3, 4], [5, 5, 6, 8], [0, 6, 7, 8]], starter=1, totals=[0, 37, 46])
    message = round_finished(stop_then_draw_13s(game, "c2", ["c3", "c1"]))
    assert message["totalScores"] == [0, 33, 67]
    assert message["isGameFinished"] is True
    outcome = game.local.outcome
    assert outcome is not None
    assert outcome.scores == {"c1": 0, "c2": 33, "c3": 67}
    assert outcome.details["winners"] == ["c1"]


def test_tied_winners_are_all_crowned() -> None:
    game = Script([[1, 2, 3, 4], [5, 5, 6, 8], [1, 2, 3, 4]], starter=1, totals=[20, 60, 20])
    stop_then_draw_13s(game, "c2", ["c3", "c1"])
    outcome = game.local.outcome
    assert outcome is not None
    assert outcome.ranking == [["c1", "c3"], ["c2"]]
    assert outcome.details["winners"] == ["c1", "c3"]
