"""Every game's search hook samples only states its player cannot tell from the truth.

For every registered game with a ``search`` bot, at positions reached by random play: each
sample, seen by the player, is exactly the player's view of the true state, and the hidden
parts vary between samples; a search bot's whole games are legal; and its choice is the same
in two true states the player cannot tell apart (the others' hidden cards dealt otherwise).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from cardroom_engine import RandomBot, registry
from cardroom_engine.search import SearchBot
from cardroom_engine.simulate import LocalGame, bots_chooser, new_game, play
from cardroom_runtime.games import load_games

load_games()
SEARCHED = sorted(name for name in registry.names() if "search" in registry.get(name).bots)
MODELLED = {"macaua"}
"""Games whose search runs on a model of their own, not on their rules (Macaua: signed moves
need keys no playout has); tests/games/test_search_bots.py checks theirs."""
ON_RULES = [name for name in SEARCHED if name not in MODELLED]
SEATS = {"take5": ["a", "b", "c"], "papas": ["a", "b", "c"], "sixtysix": ["a", "b", "c"]}
CONFIGS: dict[str, dict[str, Any]] = {
    "take5": {"win_score": 30},
    "papas": {"reaction_seconds": 1.0},
}


def test_the_games_with_a_search_bot() -> None:
    assert {"take5", "papas", "sixtysix", "macaua"} <= set(SEARCHED)


def _positions(game: str, seed: int, count: int) -> list[tuple[LocalGame, str]]:
    rules = registry.get(game)
    rng = random.Random(seed)
    seats = SEATS.get(game, ["a", "b"])
    local = new_game(rules, seats, rng, CONFIGS.get(game))
    table = local.table
    found: list[tuple[LocalGame, str]] = []
    for _ in range(3000):
        if local.state.status != "playing" or len(found) >= count:
            break
        movers = [(p, a) for p in seats if (a := table.actions(local.state, p))]
        if not movers:
            due = rules.deadline(local.state.game)
            assert due is not None, "nobody can move and nothing is due"
            local.apply(table.timeout(local.state, due.key, rng))
            local.settle(rng)
            continue
        player, actions = rng.choice(movers)
        if rng.random() < 0.3:
            found.append((LocalGame(table, local.state, list(local.steps)), player))
        local.apply(table.decide(local.state, player, rng.choice(actions), rng, gate_open=True))
        local.settle(rng)
    return found


def _determinizer(game: str, local: LocalGame, player: str) -> Any:
    bot = registry.get(game).bots["search"](player)
    assert isinstance(bot, SearchBot)
    for message in local.seen_by(player):
        bot.observe(message)
    return bot.determinizer


@pytest.mark.parametrize("game", ON_RULES)
def test_every_sample_looks_to_the_player_exactly_as_the_truth(game: str) -> None:
    rules = registry.get(game)
    checked = varied = 0
    for seed in range(12):
        if checked >= 24:
            break
        for local, player in _positions(game, seed, 8):
            truth = local.state.game
            view = local.table.view(local.state, player)
            d = _determinizer(game, local, player)
            samples = [d.sample(view, player, random.Random(i)) for i in range(8)]
            for sample in samples:
                assert rules.view(sample, player) == rules.view(truth, player)
                assert rules.actions(sample, player) == rules.actions(truth, player)
            varied += len({repr(s.hands) for s in samples}) > 1
            checked += 1
    assert checked >= 12
    assert varied >= checked // 2, "the hidden cards hardly ever vary"


@pytest.mark.parametrize("game", ON_RULES)
def test_search_bots_play_legal_whole_games(game: str) -> None:
    rules = registry.get(game)
    seats = SEATS.get(game, ["a", "b"])
    made: dict[str, Any] = {p: rules.bots["search"](p) for p in seats[:2]}
    for bot in made.values():
        bot.iterations = 8
    made.update({p: RandomBot(p) for p in seats[2:]})
    local = play(
        rules,
        seats,
        random.Random(3),
        CONFIGS.get(game),
        choose=bots_chooser(rules, dict.fromkeys(seats, "random"), made),
    )
    assert local.state.status == "finished"
