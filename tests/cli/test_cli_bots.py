"""``cardroom bots --kind``: the kinds a game offers are the game's own (its ``bots``), so a
kind a game adds (take5's ``search``) is selectable with no change to the command, and an
unknown kind is refused in words, naming the kinds there are, before anything connects."""

from __future__ import annotations

from typer.testing import CliRunner

from cardroom.cli import app


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
