"""papas, take5 and sixtysix evolve build each new state by position (``At`` and
``from_fields``, not ``_replace``, for speed): the positions must be the fields' own, and a
state built so must equal the one ``_replace`` gives, on states of random games (sixtysix:
of both protocols)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from cardroom_engine import Table, TableState
from cardroom_engine.game import Game
from cardroom_engine.simulate import play
from cardroom_games import papas, sixtysix, take5
from cardroom_games.papas import state as papas_state
from cardroom_games.sixtysix import rules as sixtysix_rules
from cardroom_games.take5 import rules as take5_rules


@dataclass(frozen=True)
class Case:
    """One game's state class and its builder by position."""

    game: Game[Any]
    state: type[Any]  # a NamedTuple
    at: type
    from_fields: Any
    seats: tuple[str, ...]
    least: int  # states a random game has at least
    samples: tuple[tuple[int, dict[str, Any] | None], ...]  # (seed, config) per sample game
    last: tuple[int, dict[str, Any] | None]  # the game whose last state gets marked values

    def states(self, seed: int, config: dict[str, Any] | None) -> list[Any]:
        """The game state after every event of a random game, folded from its log."""
        log = [
            step.event for step in play(self.game, self.seats, random.Random(seed), config).steps
        ]
        table = Table(self.game)
        folded: TableState | None = None
        states = []
        for event in log:
            folded = table.evolve(folded, event)
            if isinstance(folded.game, self.state):
                states.append(folded.game)
        return states


CASES = {
    "papas": Case(
        papas.GAME,
        papas_state.State,
        papas_state.At,
        papas_state.from_fields,
        ("ann", "bob", "cid", "dee"),
        50,
        ((0, None), (1, None), (2, None)),
        (7, None),
    ),
    "take5": Case(
        take5.GAME,
        take5.Take5State,
        take5_rules.At,
        take5_rules.from_fields,
        ("ann", "bob", "cid"),
        50,
        ((0, None), (1, None), (2, None)),
        (7, None),
    ),
    "sixtysix": Case(
        sixtysix.GAME,
        sixtysix.State,
        sixtysix_rules.At,
        sixtysix_rules.from_fields,
        ("ann", "bob", "cid"),
        20,
        tuple((seed, {"protocol": p}) for seed, p in [(0, "v1"), (1, "v2"), (2, "v1"), (3, "v2")]),
        (7, {"protocol": "v2"}),
    ),
}
SAMPLES = [(name, seed, config) for name, case in CASES.items() for seed, config in case.samples]


@pytest.mark.parametrize("name", CASES)
def test_at_gives_every_field_its_position(name: str) -> None:
    case = CASES[name]
    fields = case.state._fields
    positions = {field: getattr(case.at, field.upper()) for field in fields}
    assert positions == {field: index for index, field in enumerate(fields)}
    assert {n for n in vars(case.at) if n.isupper()} == {field.upper() for field in fields}


@pytest.mark.parametrize(("name", "seed", "config"), SAMPLES)
def test_from_fields_equals_replace_on_random_states(
    name: str, seed: int, config: dict[str, Any] | None
) -> None:
    case = CASES[name]
    rng = random.Random(seed)
    states = case.states(seed, config)
    assert len(states) > case.least
    fields = case.state._fields
    for state in rng.sample(states, min(len(states), 300)):
        donor = rng.choice(states)  # real values of every field, from elsewhere in the game
        names = rng.sample(fields, rng.randint(1, len(fields)))
        changes = {field: getattr(donor, field) for field in names}
        new = list(state)
        for field, value in changes.items():
            new[getattr(case.at, field.upper())] = value
        built = case.from_fields(new)
        expected = state._replace(**changes)
        assert type(built) is case.state
        assert built == expected
        assert built._asdict() == expected._asdict()


@pytest.mark.parametrize("name", CASES)
def test_from_fields_puts_each_value_in_its_field(name: str) -> None:
    case = CASES[name]
    state = case.states(*case.last)[-1]
    fields = case.state._fields
    marks = {field: object() for field in fields}  # values found nowhere else
    for field in fields:
        new = list(state)
        new[getattr(case.at, field.upper())] = marks[field]
        built = case.from_fields(new)
        for other in fields:
            expected = marks[field] if other == field else getattr(state, other)
            assert getattr(built, other) is expected
