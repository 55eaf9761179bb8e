"""Replays, for every registered game (and the test game): a finished game's events
reproduce its final state and outcome, and ``--as <player>`` shows exactly what that player
was sent, produced by the projector's code."""

from __future__ import annotations

import pytest
from analytics_support import records_of, simulate
from cardroom_engine import registry
from cardroom_runtime.games import load_games
from support.public import public_versions

from cardroom.cli_shell import CliError
from cardroom.replay_cli import public_updates, replay, seen_by

GAMES = sorted(set(load_games()) | {"highcard"})
SEEDS = (1, 2)


@pytest.mark.parametrize("name", GAMES)
def test_replaying_a_finished_game_reproduces_its_final_state_and_outcome(name: str) -> None:
    game = registry.get(name)
    seats = [f"p{i}" for i in range(max(2, game.min_players))]
    kinds = {
        p: "heuristic" if i == 0 and "heuristic" in game.bots else "random"
        for i, p in enumerate(seats)
    }
    for seed in SEEDS:
        local = simulate(game, seats, seed, kinds)
        records = records_of(local, "g1")
        replayed = replay(records)
        assert replayed.state.status == "finished"
        assert replayed.recorded is not None
        # the outcome the rules derive from the replayed state is the one that was recorded
        assert replayed.consistent, (replayed.recorded, replayed.derived)
        assert local.outcome is not None
        assert replayed.recorded == local.outcome.to_json()
        # and the final state is the one the game ended in, as everyone can see it
        assert replayed.state.version == local.state.version == len(records)
        table = replayed.table
        for player in (*seats, None):
            assert table.view(replayed.state, player) == local.table.view(local.state, player)


@pytest.mark.parametrize("name", GAMES)
def test_replay_as_a_player_shows_exactly_what_that_player_was_sent(name: str) -> None:
    game = registry.get(name)
    seats = [f"p{i}" for i in range(max(2, game.min_players))]
    # the games' own random bots: a game with signed moves (macaua) cannot be played by
    # sending its action templates as they are
    local = simulate(game, seats, 3, dict.fromkeys(seats, "random"))
    records = records_of(local, "g1")
    for player in seats:
        notes, view, actions = seen_by(records, player)
        assert [n["message"] for n in notes] == local.seen_by(player)
        assert [n["seq"] for n in notes] == list(range(1, len(notes) + 1))
        assert all(n["player"] == player for n in notes)
        assert notes[-1]["message"]["type"] == "GameOver"
        assert view == local.table.view(local.state, player)
        assert actions == []
    updates = public_updates(records)
    # one per event, but none for an event for some seats only (a spectator cannot count
    # those: papas' passes), numbered without them
    public = public_versions(game, [s.event for s in local.steps])
    assert [u["version"] for u in updates] == list(range(1, len(public) + 1))
    assert updates[-1]["view"] == local.table.view(local.state, None)
    with pytest.raises(CliError):
        seen_by(records, "nobody")
