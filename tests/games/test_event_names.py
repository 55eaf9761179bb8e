"""Every game names its events ``<game>.<what_happened>`` (DESIGN.md, "Writing a game: the
kit"): the game's registered name, a dot, a snake_case name. A notification keeps the name
its protocol gives it, which for papas is not the event's: its protocol module names the
message of every event type, each once."""

from __future__ import annotations

import importlib
import re
from importlib.metadata import entry_points

import pytest
from cardroom_engine import registry
from cardroom_games.papas.folds import FOLDS as PAPAS_FOLDS
from cardroom_games.papas.protocol import MESSAGES, NOTIFIERS
from cardroom_runtime.games import GROUP, load_games
from support import highcard

# the games installed (registered by their entry points), not test games a test registered
GAMES = sorted(ep.name for ep in entry_points(group=GROUP))
load_games("")


def test_the_registry_holds_the_four_games() -> None:
    assert {"take5", "sixtysix", "papas", "macaua"} <= set(GAMES)


def _misnamed(name: str, types: list[str]) -> list[str]:
    pattern = re.compile(rf"{re.escape(name)}\.[a-z][a-z0-9_]*")
    assert types
    return [t for t in types if not pattern.fullmatch(t)]


@pytest.mark.parametrize("name", GAMES)
def test_every_event_type_of_a_game_is_named_after_it(name: str) -> None:
    game = registry.get(name)
    folds = importlib.import_module(f"{type(game).__module__.rsplit('.', 1)[0]}.folds").FOLDS
    assert _misnamed(name, list(folds.types)) == []


def test_the_test_game_a_new_author_reads_follows_the_scheme() -> None:
    assert _misnamed(highcard.GAME.name, list(highcard.FOLDS.types)) == []


def test_papas_names_the_message_of_every_event_type_once() -> None:
    assert set(MESSAGES) == set(PAPAS_FOLDS.types) == set(NOTIFIERS.types)
    assert len(set(MESSAGES.values())) == len(MESSAGES)
    # the messages are named after the state machine's transitions, not as events are
    assert all(re.fullmatch(r"[A-Z][A-Za-z]+", m) for m in MESSAGES.values())
