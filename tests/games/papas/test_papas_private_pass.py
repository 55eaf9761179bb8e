"""A pass is private in papas (``SkipReaction`` goes to the passer only), so nothing the
others observe may change when someone passes: not their views, not their actions, and not
the version numbers their views and later notifications carry (they could count passes)."""

from __future__ import annotations

import random

from cardroom_engine.simulate import LocalGame, new_game
from cardroom_games.papas import GAME


def _window_with_two_reactors(seed: int) -> LocalGame | None:
    """Random play from ``seed`` until a reaction window that at least two may still answer."""
    rng = random.Random(seed)
    local = new_game(GAME, ["ana", "bo", "cy"], rng)
    table = local.table
    for _ in range(2000):
        if local.state.status != "playing":
            return None
        reactors = [
            p
            for p in local.state.seats
            if any(a["type"] == "SkipReaction" for a in table.actions(local.state, p))
        ]
        if len(reactors) >= 2:
            return local
        movers = [(p, a) for p in local.state.seats if (a := table.actions(local.state, p))]
        player, actions = rng.choice(movers)
        local.apply(table.decide(local.state, player, rng.choice(actions), rng, gate_open=True))
        local.settle(rng)
    return None


def test_a_pass_changes_nothing_the_others_observe() -> None:
    checked = 0
    for seed in range(40):
        local = _window_with_two_reactors(seed)
        if local is None:
            continue
        table, rng = local.table, random.Random(seed)
        passer, other = [
            p
            for p in local.state.seats
            if any(a["type"] == "SkipReaction" for a in table.actions(local.state, p))
        ][:2]
        before = local.state
        seen = {p: (table.view(before, p), table.actions(before, p)) for p in before.seats}
        public = table.view(before, None)
        skip = next(a for a in table.actions(before, passer) if a["type"] == "SkipReaction")
        steps = len(local.steps)
        local.apply(table.decide(before, passer, skip, rng, gate_open=True))
        first = local.steps[steps]
        assert first.event["type"] == "papas.reaction_skipped"
        assert set(first.notifications) == {passer}
        after = table.evolve(before, first.event)
        for p in after.seats:
            if p != passer:
                assert (table.view(after, p), table.actions(after, p)) == seen[p], p
        assert table.view(after, None) == public
        # the passer sees its own version move, the others do not
        assert table.view(after, passer)["version"] == seen[passer][0]["version"] + 1
        # the next thing the other reactor is told carries the next version it has not seen
        local.settle(rng)
        while local.state.status == "playing" and not any(
            other in s.notifications for s in local.steps[steps + 1 :]
        ):
            movers = [(p, a) for p in local.state.seats if (a := table.actions(local.state, p))]
            player, actions = rng.choice(movers)
            local.apply(table.decide(local.state, player, actions[0], rng, gate_open=True))
            local.settle(rng)
        told = next(s for s in local.steps[steps + 1 :] if other in s.notifications)
        index = local.steps.index(told)
        then = table.replay([s.event for s in local.steps[: index + 1]])
        document = table.notification(then, other, 1, told.notifications[other])
        assert document["version"] == seen[other][0]["version"] + 1
        checked += 1
    assert checked >= 5
