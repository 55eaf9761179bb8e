"""The bots: the random-legal bot and the heuristic bot (remembers what it saw, keeps low
cards, stops when its known sum is low) and how the heuristic fares against random."""

from __future__ import annotations

import random
from typing import Any

import pytest
from cardroom_engine import RandomBot, TableState
from cardroom_engine.simulate import bots_chooser, play
from cardroom_games.sixtysix import GAME, HeuristicBot
from sixtysix_harness import play_bots

PROTOCOLS = ["v2", "v1"]


def test_the_game_offers_a_random_and_a_heuristic_bot() -> None:
    assert GAME.bots["random"] is RandomBot
    assert isinstance(GAME.bots["heuristic"]("p"), HeuristicBot)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bots_play_whole_games_through_simulate(protocol: str) -> None:
    seats = ["a", "b", "c", "d"]
    kinds = {"a": "heuristic", "b": "random", "c": "heuristic", "d": "random"}
    local = play(
        GAME, seats, random.Random(3), {"protocol": protocol}, choose=bots_chooser(GAME, kinds)
    )
    assert local.outcome is not None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_heuristic_bots_against_each_other_finish(protocol: str) -> None:
    for seed in range(10):
        outcome, _ = play_bots(dict.fromkeys(["a", "b", "c"], "heuristic"), seed, protocol)
        assert outcome is not None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_heuristic_remembers_exactly_what_its_player_was_told(protocol: str) -> None:
    """The bot rebuilds its knowledge from the notifications alone; at each of its moves it
    matches the cards the player's view shows (so the messages carry everything the view
    claims the player knows: nothing is only in the view)."""
    checked = 0

    def check(player: str, bot: Any, table_state: TableState) -> None:
        nonlocal checked
        if not isinstance(bot, HeuristicBot):
            return
        state = table_state.game
        if state.phase in ("round_over",):
            return  # v1 reveals the hands at the round's end only in the view
        view = GAME.view(state, player)
        assert bot.memory.me == view["playerIndex"]
        assert bot.memory.hands == view["hands"]
        assert bot.memory.discard == view["discardedValue"]
        checked += 1

    for seed in range(12):
        kinds = {"a": "heuristic", "b": "heuristic", "c": "random"}
        play_bots(kinds, seed, protocol, on_choose=check)
    assert checked > 300


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_heuristic_beats_random_players(protocol: str) -> None:
    """200 three-player games: one heuristic bot (in every seat in turn) against two random
    bots. Random play would win about a third of them."""
    games, wins = 200, 0
    for seed in range(games):
        seats = ["a", "b", "c"]
        kinds = dict.fromkeys(seats, "random")
        hero = seats[seed % 3]
        kinds[hero] = "heuristic"
        outcome, _ = play_bots(kinds, seed, protocol)
        assert outcome is not None
        wins += hero in outcome.details["winners"]
    rate = wins / games
    print(f"\nsixtysix {protocol}: heuristic won {wins}/{games} = {rate:.0%} against 2 random")
    assert rate > 0.6
