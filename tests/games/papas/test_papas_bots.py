"""The bots: legal moves only, from their own player's view, and heuristic beats random."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest
from cardroom_engine import Bot
from cardroom_engine.simulate import Chooser, LocalGame, bots_chooser, play
from cardroom_games.papas import GAME, HeuristicBot
from papas_testkit import Harness, make_state


def chooser(kinds: dict[str, str]) -> tuple[Chooser, dict[str, Bot]]:
    """Like ``bots_chooser``, keeping the bots: each observes exactly its player's messages,
    in order, and chooses from its player's view and legal actions."""
    bots: dict[str, Bot] = {p: GAME.bots[kind](p) for p, kind in kinds.items()}
    fed = dict.fromkeys(kinds, 0)

    def choose(
        local: LocalGame, player: str, actions: list[dict[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        steps = local.steps
        for step in steps[fed[player] :]:
            if player in step.notifications:
                bots[player].observe(step.notifications[player])
        fed[player] = len(steps)
        return bots[player].choose(local.table.view(local.state, player), actions, rng)

    return choose, bots


def duel(games: int, players: int, seed: int) -> tuple[int, list[HeuristicBot]]:
    """One heuristic bot against random bots, the heuristic seat going round."""
    wins = 0
    heroes: list[HeuristicBot] = []
    for game in range(games):
        seats = [f"p{i}" for i in range(players)]
        hero = seats[game % players]
        choose, bots = chooser({p: "heuristic" if p == hero else "random" for p in seats})
        local = play(GAME, seats, random.Random(seed + game), None, choose)
        outcome = local.outcome
        assert outcome is not None
        wins += outcome.ranking[0] == [hero]
        bot = bots[hero]
        assert isinstance(bot, HeuristicBot)
        heroes.append(bot)
    return wins, heroes


def test_bots_are_listed() -> None:
    assert set(GAME.bots) == {"random", "heuristic", "search"}
    assert isinstance(GAME.bots["heuristic"]("p0"), HeuristicBot)


def test_heuristic_beats_random_head_to_head() -> None:
    wins, bots = duel(30, 2, seed=100)
    assert wins >= 24, wins  # random play would win about half
    assert bots
    assert all(b.fallbacks == 0 for b in bots)


def test_heuristic_beats_three_random_bots() -> None:
    wins, bots = duel(16, 4, seed=200)
    assert wins >= 8, wins  # random play would win about a quarter
    assert all(b.fallbacks == 0 for b in bots)


def test_heuristic_interrupts_what_hurts_it_and_keeps_interrupts_otherwise() -> None:
    bot = HeuristicBot("b")
    h = Harness(
        make_state(
            {"a": ["get_off_the_pony", "harry_potato"], "b": ["no_dude"], "c": ["potato"]},
            potatoes={"b": 3},
        )
    )
    h.play("a", "harry_potato")  # harmless to b: b keeps its interrupt
    choice = bot.choose(GAME.view(h.state, "b"), GAME.actions(h.state, "b"), h.rng)
    assert choice == {"type": "SkipReaction", "window": 1}
    h.skip_all()
    h = Harness(
        make_state(
            {"a": ["get_off_the_pony", "harry_potato"], "b": ["no_dude"], "c": ["potato"]},
            potatoes={"b": 3},
        )
    )
    h.play("a", "get_off_the_pony", "b")  # steals from b: worth an interrupt
    choice = bot.choose(GAME.view(h.state, "b"), GAME.actions(h.state, "b"), h.rng)
    assert choice["type"] == "PlayInterrupt"


def test_heuristic_plays_its_threesome_and_reads_the_table_view() -> None:
    h = Harness(make_state({"a": ["duchesses_potatoes"] * 3 + ["harry_potato"], "b": ["potato"]}))
    view = GAME.view(h.state, "a")
    bot = HeuristicBot("a")
    for shown in (view, {"game": "g", "status": "playing", "state": view}):
        choice = bot.choose(shown, GAME.actions(h.state, "a"), h.rng)
        assert choice["type"] == "PlayThreesome"
    assert bot.fallbacks == 0


@pytest.mark.parametrize("players", [2, 4, 6])
def test_mixed_tables_of_bots_finish_their_games(players: int) -> None:
    kinds = {f"p{i}": ("heuristic", "random")[i % 2] for i in range(players)}
    chosen = bots_chooser(GAME, kinds)  # every command they choose goes through decide
    local = play(GAME, list(kinds), random.Random(players), {"win_threshold": 4}, chosen)
    assert local.outcome is not None
