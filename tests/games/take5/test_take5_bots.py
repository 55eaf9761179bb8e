"""Bots: the heuristic beats random play; bots and the house play only legal moves."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from cardroom_engine.simulate import LocalGame, bots_chooser, play
from cardroom_games.take5 import GAME, HeuristicBot
from take5_support import card

GAMES = 40


def test_heuristic_beats_random_over_many_games() -> None:
    """One heuristic bot against three random ones at the default table, played
    through the table (the bot gets its player's table view and messages)."""
    seats = ["h", "r1", "r2", "r3"]
    kinds = {seat: "heuristic" if seat == "h" else "random" for seat in seats}
    wins = 0.0
    points = {"h": 0.0, "r": 0.0}
    for seed in range(GAMES):
        local = play(GAME, seats, random.Random(seed), None, bots_chooser(GAME, kinds))
        outcome = local.outcome
        assert outcome is not None
        if "h" in outcome.ranking[0]:
            wins += 1 / len(outcome.ranking[0])
        points["h"] += outcome.scores["h"]
        points["r"] += sum(outcome.scores[s] for s in seats[1:]) / 3
    # a fair share is a quarter of the wins; the heuristic takes most of them
    assert wins > 0.6 * GAMES, wins
    assert points["h"] < 0.6 * points["r"], points


def test_heuristic_beats_the_house_bot() -> None:
    """Against three house bots (lowest card; cheapest row) it still wins well over a
    quarter of the games."""
    bot = HeuristicBot("h")

    def chooser(
        local: LocalGame, player: str, actions: list[dict[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        if player == "h":
            return bot.choose(local.table.view(local.state, player), actions, rng)
        house = GAME.house_action(local.state.game, player, rng)
        assert house in actions
        return house

    wins = 0.0
    games = 30
    for seed in range(games):
        local = play(GAME, ["h", "x", "y", "z"], random.Random(seed), None, chooser)
        assert local.outcome is not None
        if "h" in local.outcome.ranking[0]:
            wins += 1 / len(local.outcome.ranking[0])
    assert wins > 0.4 * games, wins


def _play_view(rows: dict[str, list[int]]) -> dict[str, object]:
    return {"board": {k: [card(f) for f in v] for k, v in rows.items()}, "stack_size": 5}


def test_heuristic_plays_the_lowest_card_that_takes_no_row() -> None:
    bot = HeuristicBot("a")
    view = _play_view({"A": [10], "B": [20, 21, 22, 23, 24], "C": [30], "D": [40]})
    actions = [{"type": "play_response", "data": card(f)} for f in (5, 25, 31, 60)]
    # 5 is below every row (it would take one), 25 is the sixth card of B: 31 is safe
    assert bot.choose(view, actions, random.Random(0)) == actions[2]
    assert bot.choose({"state": view}, actions, random.Random(0)) == actions[2]


def test_heuristic_otherwise_plays_the_least_costly_card() -> None:
    bot = HeuristicBot("a")
    view = _play_view({"A": [10, 11, 12, 13, 14], "B": [20, 21, 22, 23, 55], "C": [60], "D": [70]})
    # 5: below every row, the cheapest row is C (60: 3) or D (70: 3) -> costs 3
    # 15: sixth card of A (3 + 5 + 1 + 1 + 1 = 11); 56: sixth card of B (3 + 1 + 5 + 1 + 7)
    actions = [{"type": "play_response", "data": card(f)} for f in (5, 15, 56)]
    assert bot.choose(view, actions, random.Random(0)) == actions[0]


def test_heuristic_chooses_the_row_with_the_fewest_bull_heads() -> None:
    bot = HeuristicBot("a")
    view = _play_view({"A": [55], "B": [10, 11], "C": [1, 2, 3], "D": [44]})
    actions = [{"type": "choose_response", "data": k} for k in "ABCD"]
    assert bot.choose(view, actions, random.Random(0)) == actions[2]  # 3 bull heads
    # the same inside the table's view, as a bot receives it
    assert (
        bot.choose({"status": "playing", "state": view}, actions, random.Random(0)) == (actions[2])
    )


def test_bots_and_the_house_make_only_legal_moves() -> None:
    for seed in range(5):
        kinds = {"a": "heuristic", "b": "random", "c": "heuristic"}
        local = play(GAME, list(kinds), random.Random(seed), None, bots_chooser(GAME, kinds))
        assert local.outcome is not None
    # the house alone (as after every player went away) finishes a game too
    local = play(
        GAME,
        ["a", "b", "c"],
        random.Random(9),
        None,
        lambda lg, player, actions, rng: (
            GAME.house_action(lg.state.game, player, rng) or actions[0]
        ),
    )
    assert local.outcome is not None
