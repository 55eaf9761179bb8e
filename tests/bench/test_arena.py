"""bench/arena.py's oracle trial and bench/separation.py's simulation of the ratings."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cardroom_engine import registry
from cardroom_engine.simulate import bots_chooser, new_game
from cardroom_runtime.games import load_games

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # (arena imports the benchmarks' common module)
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def arena() -> ModuleType:
    load_games()
    return _load("arena")


def _table(game: str) -> tuple[Any, dict[str, Any], Any, str]:
    rules = registry.get(game)
    kinds = {"s": "search", "h": "heuristic", "r": "random"}
    made = {p: rules.bots[k](p) for p, k in kinds.items()}
    local = new_game(rules, list(kinds), random.Random(3), {})
    local.settle(random.Random(3))
    return local, made, bots_chooser(rules, kinds, made), "s"


@pytest.mark.parametrize("hands", [False, True])
def test_the_oracle_hands_the_search_the_true_state(arena: ModuleType, hands: bool) -> None:
    local, made, chooser, me = _table("papas")
    truth = local.state.game
    determinizer = made[me].determinizer
    fair = determinizer.sample(local.table.view(local.state, me), me, random.Random(1))
    assert fair.hands != truth.hands  # (a fair sample deals the others' cards at random)
    oracle = arena._oracle("papas", made, chooser, "hands" if hands else "1")
    mover = next(p for p in local.state.seats if local.table.actions(local.state, p))
    oracle(local, mover, local.table.actions(local.state, mover), random.Random(2))
    sample = determinizer.sample(local.table.view(local.state, me), me, random.Random(1))
    assert sample.hands == truth.hands
    assert sorted(sample.deck) == sorted(truth.deck)
    assert (sample.deck != truth.deck) is hands  # with ``hands`` the draws stay unknown


def test_macaua_has_no_open_state_to_hand(arena: ModuleType) -> None:
    with pytest.raises(SystemExit):
        arena._oracle("macaua", {}, None, "1")


def test_the_horizon_knob_sets_the_search_modules_and_refuses_a_game_without_one(
    arena: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cardroom_games.papas import search

    monkeypatch.setattr(search, "HORIZON", search.HORIZON)  # put back after the test
    arena._set_horizon("papas", 400)
    assert search.HORIZON == 400
    with pytest.raises(SystemExit, match="no horizon"):
        arena._set_horizon("take5", 400)


def test_ahead_counts_the_games_one_kind_ranked_above_another(arena: ModuleType) -> None:
    rankings = [
        [["search"], ["heuristic"], ["random"]],
        [["heuristic", "search"], ["random"]],  # a tie: neither above
        [["random"], ["heuristic"], ["search"]],
    ]
    assert arena.ahead(rankings, "search", "heuristic") == 1
    assert arena.ahead(rankings, "heuristic", "search") == 1
    assert arena.ahead(rankings, "heuristic", "random") == 2


def test_the_simulated_ratings_separate_a_sure_edge_and_not_a_coin() -> None:
    separation = _load("separation")
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    sure = separation.tournament(1.0, 200, 0, model)
    coin = [separation.tournament(0.5, 200, seed, model) for seed in range(10)]
    assert sure[0]
    assert sure[1] > 10
    assert sum(c[0] for c in coin) <= 1


def test_two_kinds_play_head_to_head_in_alternating_seats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arena = _load("arena")
    monkeypatch.setenv("ARENA_KINDS", "search,heuristic")
    kinds = arena.table_kinds()
    assert kinds == ["search", "heuristic"]
    assert [arena.seating(i, kinds) for i in range(4)] == [
        ["search", "heuristic"],
        ["heuristic", "search"],
        ["search", "heuristic"],
        ["heuristic", "search"],
    ]
    table = arena.rate([[["search"], ["heuristic"]]] * 3, kinds)
    assert set(table) == {"search", "heuristic"}
    assert table["search"]["mu"] > table["heuristic"]["mu"]
    for wrong in ("search", "search,search", "search,oracle"):
        monkeypatch.setenv("ARENA_KINDS", wrong)
        with pytest.raises(SystemExit):
            arena.table_kinds()
    monkeypatch.delenv("ARENA_KINDS")
    assert arena.table_kinds() == arena.KINDS
    assert [arena.seating(i) for i in range(6)] == [
        ["search", "heuristic", "random"],
        ["heuristic", "random", "search"],
        ["random", "search", "heuristic"],
        ["search", "random", "heuristic"],
        ["random", "heuristic", "search"],
        ["heuristic", "search", "random"],
    ]


def test_a_round_robin_of_pairs_separates_a_sure_edge_and_not_a_coin() -> None:
    separation = _load("separation")
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    assert separation.tournament(1.0, 300, 0, model, pairs=True)[0]
    coin = [separation.tournament(0.5, 300, seed, model, pairs=True) for seed in range(10)]
    assert sum(separated for separated, _, _ in coin) <= 1
