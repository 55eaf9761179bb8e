"""The search bot's reading of the others' cards from their play (``HandReading``) and its
deal.

Each move of another player bounds the cards it has seen, read as the heuristic bot plays.
Heuristic players play by exactly those rules, so in their games every bound must hold
against the true hands, whether an owner has seen a card must agree with the truth, the
bookkeeping must follow the view's hands through claims and swaps, and every sample must
deal each bounded card within its bound (the true cards prove such a deal exists).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from cardroom_engine.simulate import LocalGame, bots_chooser, play
from cardroom_games.sixtysix import GAME
from cardroom_games.sixtysix.search import SixtySixDeterminizer
from cardroom_games.sixtysix.state import GAME_OVER, ROUND_FINISHED, ROUND_OVER


def _follow(
    kinds: dict[str, str],
    seed: int,
    protocol: str,
    before: Callable[[LocalGame, str, SixtySixDeterminizer], None] | None = None,
) -> SixtySixDeterminizer:
    """Play one game of ``kinds`` with a determinizer of seat ``a`` fed its notifications;
    ``before(local, player, determinizer)`` runs before each choice."""
    d = SixtySixDeterminizer("a")
    inner = bots_chooser(GAME, kinds)
    fed = 0

    def choose(
        local: LocalGame, player: str, actions: list[dict[str, Any]], r: random.Random
    ) -> Mapping[str, Any]:
        nonlocal fed
        seen = local.seen_by("a")
        for message in seen[fed:]:
            d.observe(message)
        fed = len(seen)
        if before is not None:
            before(local, player, d)
        return inner(local, player, actions, r)

    play(GAME, list(kinds), random.Random(seed), {"protocol": protocol}, choose)
    return d


@pytest.mark.parametrize("protocol", ["v2", "v1"])
def test_bounds_hold_in_heuristic_games_and_samples_keep_them(protocol: str) -> None:
    counts = {"decisions": 0, "bounds": 0, "sampled": 0}
    rng = random.Random(7)

    def check(local: LocalGame, player: str, d: SixtySixDeterminizer) -> None:
        if player == "a":
            _check(local, d, rng, counts)

    for seed in range(12):
        _follow(dict.fromkeys(["a", "b", "c"], "heuristic"), seed, protocol, check)
    assert counts["decisions"] > 200
    assert counts["bounds"] > 100
    assert counts["sampled"] > 100


def test_a_player_whose_bounds_break_at_the_rounds_ends_is_no_longer_read() -> None:
    """A random player keeps and stops as it likes: the hands shown at a round's end break
    its bounds, and its cards are then dealt without them; the heuristic players' hold."""
    for seed in range(3):
        kinds = {"a": "heuristic", "b": "heuristic", "c": "random"}
        reading = _follow(kinds, seed, "v2").reading
        assert all(reading.checked[p][0] > 0 for p in (0, 1))  # bounds were checked
        assert [reading.trusts(p) for p in range(3)] == [True, True, False]
        reading.cards = [[(0, 0)] * 2 for _ in range(3)]
        assert reading.of([[None] * 2] * 3) == [[(0, 0)] * 2, [(0, 0)] * 2, [(None, 0)] * 2]


def _check(
    local: LocalGame, d: SixtySixDeterminizer, rng: random.Random, counts: dict[str, int]
) -> None:
    view = local.table.view(local.state, "a")
    g = view.get("state", view)
    hands = g.get("hands") or ()
    if local.state.game.phase in (ROUND_OVER, ROUND_FINISHED, GAME_OVER):
        return  # the hands are open
    read = d.reading.of(hands)
    assert read is not None, "the reading lost track of the hands"
    counts["decisions"] += 1
    truth = local.state.game.hands
    for p, row in enumerate(read):
        for j, (_, seen) in enumerate(row):
            owner = 1 << p
            assert bool(seen & owner) == bool(local.state.game.known[p][j] & owner), (p, j)
    bounded = [
        (p, j, bound)
        for p, row in enumerate(read)
        if p != g["playerIndex"]
        for j, (bound, _) in enumerate(row)
        if bound is not None and hands[p][j] is None
    ]
    for p, j, bound in bounded:
        assert truth[p][j] <= bound, (p, j, truth[p][j], bound)
        counts["bounds"] += 1
    if bounded:
        sample = d.sample(view, "a", rng)
        for p, j, bound in bounded:
            assert sample.hands[p][j] <= bound
            counts["sampled"] += 1
