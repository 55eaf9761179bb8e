"""evolve builds each new state by position (``At`` and ``from_fields``, not ``_replace``,
for speed): the positions must be the fields' own, and a state built so must equal the one
``_replace`` gives, on states of random games."""

from __future__ import annotations

import random

import pytest
from cardroom_engine import Table, TableState
from cardroom_engine.simulate import play
from cardroom_games.papas import GAME
from cardroom_games.papas.state import At, State, from_fields

SEATS = ("ann", "bob", "cid", "dee")


def random_game_states(seed: int) -> list[State]:
    """The game state after every event of a random game, folded from its log."""
    log = [step.event for step in play(GAME, SEATS, random.Random(seed)).steps]
    table = Table(GAME)
    folded: TableState | None = None
    states = []
    for event in log:
        folded = table.evolve(folded, event)
        if isinstance(folded.game, State):
            states.append(folded.game)
    return states


def test_at_gives_every_field_its_position() -> None:
    positions = {name: getattr(At, name.upper()) for name in State._fields}
    assert positions == {name: index for index, name in enumerate(State._fields)}
    assert {name for name in vars(At) if name.isupper()} == {n.upper() for n in State._fields}


@pytest.mark.parametrize("seed", range(3))
def test_from_fields_equals_replace_on_random_states(seed: int) -> None:
    rng = random.Random(seed)
    states = random_game_states(seed)
    assert len(states) > 50
    for state in rng.sample(states, min(len(states), 300)):
        donor = rng.choice(states)  # real values of every field, from elsewhere in the game
        names = rng.sample(State._fields, rng.randint(1, len(State._fields)))
        changes = {name: getattr(donor, name) for name in names}
        new = list(state)
        for name, value in changes.items():
            new[getattr(At, name.upper())] = value
        built = from_fields(new)
        expected = state._replace(**changes)
        assert type(built) is State
        assert built == expected
        assert built._asdict() == expected._asdict()


def test_from_fields_puts_each_value_in_its_field() -> None:
    state = random_game_states(7)[-1]
    marks = {name: object() for name in State._fields}  # values found nowhere else
    for name in State._fields:
        new = list(state)
        new[getattr(At, name.upper())] = marks[name]
        built = from_fields(new)
        for other in State._fields:
            expected = marks[name] if other == name else getattr(state, other)
            assert getattr(built, other) is expected
