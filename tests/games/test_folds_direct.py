"""A table folds a run of a kit game's events by calling each event's fold itself
(``Table.evolve_many``, through ``kit.folds_of``): the state it ends in is the one folding
every event alone through the game's ``evolve`` ends in, private events and presence events
inside the runs included."""

from __future__ import annotations

import random

import pytest
from cardroom_engine import Game, Table, simulate
from cardroom_games.papas import GAME as PAPAS
from cardroom_games.sixtysix import GAME as SIXTYSIX
from cardroom_games.take5 import GAME as TAKE5


@pytest.mark.parametrize("game", [TAKE5, PAPAS, SIXTYSIX], ids=lambda g: g.name)
def test_evolve_many_ends_where_evolve_one_by_one_ends(game: Game[object]) -> None:
    table = Table(game)
    assert table._direct  # the game's folds are called directly
    assert not set(table._direct) & table.private_events
    for seed in range(6):
        rng = random.Random(seed)
        local = simulate.play(game, ["a", "b"], rng)
        events = [s.event for s in local.steps]
        at = rng.randrange(4, len(events))
        events[at:at] = [
            {"type": "table.away", "player": "a"},
            {"type": "table.back", "player": "a"},
        ]
        start = rng.randrange(1, len(events) // 2)
        state = table.replay(events[:start])
        one = state
        for event in events[start:]:
            one = table.evolve(one, event)
        assert table.evolve_many(state, events[start:]) == one


def test_an_unknown_event_is_refused_in_a_run_as_alone() -> None:
    table = Table(TAKE5)
    local = simulate.play(TAKE5, ["a", "b"], random.Random(1))
    events = [s.event for s in local.steps]
    state = table.replay(events[:5])
    with pytest.raises(ValueError, match="unknown take5 event"):
        table.evolve_many(state, [*events[5:8], {"type": "no_such_event"}])
