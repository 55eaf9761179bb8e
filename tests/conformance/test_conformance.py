"""Every registered game (and the test game) against the checks of ``conformance``: a new
game registered through the ``cardroom.games`` entry points, or named in ``CARDROOM_GAMES``,
is checked with no test of its own. Each game is played once per seat count and the checks
read the recorded games."""

from __future__ import annotations

import functools

import pytest
from cardroom_engine import registry
from cardroom_runtime.games import load_games
from conformance import CHECKS, PROFILES, Played, Profile, games_of
from support.highcard import GAME as HIGHCARD

registry.register(HIGHCARD)
GAMES = sorted(set(load_games()) | {HIGHCARD.name})

# What a game is known to fail, and why: asserted to fail still, so that this list is kept
# true (a game that comes to pass a check must leave it).
KNOWN: dict[tuple[str, str], str] = {}


@functools.cache
def played(name: str) -> tuple[Played, ...]:
    return tuple(games_of(registry.get(name)))


def test_the_registry_holds_the_four_games_and_the_test_game() -> None:
    assert {"take5", "sixtysix", "papas", "macaua", "highcard"} <= set(GAMES)


@pytest.mark.parametrize("check", sorted(CHECKS))
@pytest.mark.parametrize("name", GAMES)
def test_game_conforms(name: str, check: str) -> None:
    known = KNOWN.get((name, check))
    probes = PROFILES.get(name, Profile()).probes
    problems = [p for game in played(name) for p in CHECKS[check](game, probes)]
    if known is not None:
        assert problems, f"{name} now passes {check}: remove it from KNOWN"
        return
    assert problems == []
