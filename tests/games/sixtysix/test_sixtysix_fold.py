"""evolve builds each new state by position (``At`` and ``from_fields``, not ``_replace``,
for speed): the positions must be the fields' own, and a state built so must equal the one
``_replace`` gives, on states of random games of both protocols."""

from __future__ import annotations

import random

import pytest
from cardroom_engine import Table, TableState
from cardroom_engine.simulate import play
from cardroom_games.sixtysix import GAME, State
from cardroom_games.sixtysix.rules import _FOLDS, EVENT_TYPES, At, evolve, from_fields

SEATS = ("ann", "bob", "cid")


def random_game_states(seed: int, protocol: str) -> list[State]:
    """The game state after every event of a random game, folded from its log."""
    rng = random.Random(seed)
    log = [step.event for step in play(GAME, SEATS, rng, {"protocol": protocol}).steps]
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


def test_every_event_type_has_its_fold_and_others_are_refused() -> None:
    assert set(_FOLDS) == EVENT_TYPES
    with pytest.raises(ValueError, match="unknown sixtysix event 'no_such_event'"):
        evolve(GAME.setup(None, SEATS), {"type": "no_such_event"})


@pytest.mark.parametrize(("seed", "protocol"), [(0, "v1"), (1, "v2"), (2, "v1"), (3, "v2")])
def test_from_fields_equals_replace_on_random_states(seed: int, protocol: str) -> None:
    rng = random.Random(seed)
    states = random_game_states(seed, protocol)
    assert len(states) > 20
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
    state = random_game_states(7, "v2")[-1]
    marks = {name: object() for name in State._fields}  # values found nowhere else
    for name in State._fields:
        new = list(state)
        new[getattr(At, name.upper())] = marks[name]
        built = from_fields(new)
        for other in State._fields:
            expected = marks[name] if other == name else getattr(state, other)
            assert getattr(built, other) is expected
