"""``cardroom bots --kind``: the kinds a game offers are the game's own (its ``bots``), so a
kind a game adds (take5's ``search``) is selectable with no change to the command, and an
unknown kind is refused in words, naming the kinds there are, before anything connects."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cardroom.cli import app
from cardroom.cli_shell import CliError
from cardroom.replay_cli import known_rules


def test_an_unknown_kind_is_refused_with_the_games_kinds() -> None:
    result = CliRunner().invoke(app, ["bots", "--game", "take5", "--kind", "nosuch"])
    assert result.exit_code != 0
    assert "take5 has no bot nosuch" in result.output
    assert "heuristic, random, search" in result.output


def test_an_unknown_game_is_refused_naming_the_games() -> None:
    result = CliRunner().invoke(app, ["bots", "--game", "chess"])
    assert result.exit_code != 0
    assert "no game type 'chess'" in result.output
    assert "take5" in result.output


def test_a_game_type_without_rules_here_is_a_clear_error() -> None:
    """``replay`` and ``rebuild`` fold a game with its rules: a type this process has not
    registered (a game named in the services' ``CARDROOM_GAMES`` only) is one line saying
    so, not a traceback."""
    known_rules("take5")
    with pytest.raises(CliError, match=r"no rules for game type 'gofish'.*CARDROOM_GAMES"):
        known_rules("gofish")
