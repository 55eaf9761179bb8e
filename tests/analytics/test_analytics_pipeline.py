"""Analytics in a whole running cardroom: a tournament through the services, replays of its
games against what was recorded and sent, and rebuilds of every read model against the live
ones."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest
import sqlalchemy as sa
from analytics_support import AnalyticsRun
from cardroom_analytics import read_events, rebuild
from cardroom_analytics.schema import ratings
from cardroom_eventstore import EventStore, readmodels
from cardroom_eventstore import log as eventstore_log
from support.stack import wait_until
from typer.testing import CliRunner

from cardroom import analytics_cli, cli, projector_rebuild
from cardroom.projector_rebuild import PROJECTOR_TABLES, rebuild_projector
from cardroom.replay_cli import read_game, replay, seen_by
from cardroom.tournament_cli import TournamentResult, run_tournament

GAMES = 6

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
async def played(cardroom: AnalyticsRun) -> TournamentResult:
    """A small tournament of the test game, played by bots through the services."""
    done: list[bool] = []
    result = await run_tournament(
        cardroom.nats_url,
        cardroom.root,
        "highcard",
        ["random", "random"],
        GAMES,
        concurrency=3,
        config={"rounds": 1},
        timeout=60,
        on_played=done.append,
    )
    assert done == [True] * GAMES
    return result


def _store(run: AnalyticsRun) -> EventStore:
    assert run.store is not None
    return run.store


async def _ask(run: AnalyticsRun, verb: str, payload: dict[str, Any]) -> dict[str, Any]:
    import nats

    nc = await nats.connect(run.nats_url)
    try:
        return await analytics_cli.ask(nc, run.root, verb, payload)
    finally:
        await nc.close()


async def test_a_tournament_prints_the_leaderboard_analytics_computed(
    cardroom: AnalyticsRun, played: TournamentResult
) -> None:
    assert played.failed == 0
    assert len(set(played.games)) == GAMES
    assert played.players == ["random-1", "random-2"]
    board = played.leaderboard
    assert board["ok"]
    assert sorted(r["player"] for r in board["ratings"]) == ["random-1", "random-2"]
    assert all(r["games"] == GAMES for r in board["ratings"])
    # two seats: a decided game is one seat's win, a tie (a ranking of one place) nobody's
    decided = 0
    for game in played.games:
        recorded = await _ask(cardroom, "game", {"game": game})
        decided += len(recorded["game"]["outcome"]["ranking"]) > 1  # groups, best first
    assert sum(r["wins"] for r in board["ratings"]) == decided
    (kind,) = board["kinds"]
    assert (kind["kind"], kind["players"], kind["games"]) == ("random", 2, 2 * GAMES)
    # it is analytics' answer, not the runner's: the same question gets the same answer
    again = await _ask(
        cardroom,
        "leaderboard",
        {"game_type": "highcard", "players": played.players, "games": played.games},
    )
    assert again == board
    stats = await _ask(cardroom, "stats", {"game_type": "highcard"})
    assert stats["game_types"][0]["finished"] >= GAMES


async def test_replay_equals_the_recorded_outcome_and_what_was_sent(
    cardroom: AnalyticsRun, played: TournamentResult
) -> None:
    store = _store(cardroom)
    for game in played.games:
        records = await read_game(store, game)
        replayed = replay(records)
        assert replayed.state.status == "finished"
        assert replayed.consistent
        recorded = await _ask(cardroom, "game", {"game": game})
        assert recorded["game"]["outcome"] == replayed.recorded == replayed.derived
        assert recorded["game"]["events"] == len(records)
        tables = await store.list_tables("highcard", limit=1000)
        assert [t for _, t in tables if t["game"] == game] == [replayed.state.summary()]
        for player in replayed.state.seats:
            notes, view, actions = seen_by(records, player)
            owed = set(await store.pending_for_player(game, player))
            stored = await store_notifications(store, game, player)
            # exactly what the projector stored of what is still owed an ack (one acked while
            # it was being stored may wait for the acktracker's sweep to be deleted)
            assert [n for n in notes if n["version"] in owed] == [
                n for n in stored if n["version"] in owed
            ]
            live = await store.view(game, player)
            # at the version the player sees (events told to others only do not count)
            seen = replayed.state.seen(player)
            assert live == (game, player, seen, view, actions, len(notes))


async def store_notifications(store: EventStore, game: str, player: str) -> list[dict[str, Any]]:
    async with store.engine.connect() as conn:
        t = readmodels.notifications
        rows = await conn.execute(
            sa.select(t.c.payload)
            .where(t.c.game_id == game, t.c.player_id == player)
            .order_by(t.c.seq)
        )
        return [dict(r.payload) for r in rows]


async def test_rebuild_equals_live_for_every_read_model(
    cardroom: AnalyticsRun, played: TournamentResult
) -> None:
    store = _store(cardroom)
    report = await rebuild_projector(store)
    assert report.equal, report.differences
    assert report.games >= GAMES
    assert report.replaced == report.games
    for table in PROJECTOR_TABLES:
        one = await rebuild_projector(store, tables=(table,), game=played.games[0])
        assert one.equal
        assert one.games == 1
    source = lambda: read_events(cardroom.nats_url, cardroom.subjects)  # noqa: E731
    analytics = await rebuild(cardroom.engine, source)
    assert analytics.equal, analytics.differences
    assert analytics.games >= GAMES

    # a damaged live row is found, left alone without --repair, replaced with it
    game = played.games[1]
    async with store.engine.begin() as conn:
        t = readmodels.views
        await conn.execute(
            sa.update(t).where(t.c.game_id == game, t.c.player_id == "random-1").values(view={})
        )
    damaged = await rebuild_projector(store, game=game)
    assert not damaged.equal
    assert damaged.replaced == 0
    assert any("views" in d and "random-1" in d for d in damaged.differences)
    assert (await store.view(game, "random-1")) is not None
    repaired = await rebuild_projector(store, game=game, repair=True)
    assert repaired.replaced == 1
    assert (await rebuild_projector(store, game=game)).equal

    async with cardroom.engine.begin() as conn:
        await conn.execute(
            sa.update(ratings).where(ratings.c.player_id == "random-2").values(mu=ratings.c.mu + 1)
        )
    damaged_a = await rebuild(cardroom.engine, source)
    assert not damaged_a.equal
    assert any("analytics_ratings" in d and "mu" in d for d in damaged_a.differences)
    assert (await rebuild(cardroom.engine, source, repair=True)).replaced
    assert (await rebuild(cardroom.engine, source)).equal


async def test_rebuild_in_worker_processes_finds_and_repairs_the_same(
    cardroom: AnalyticsRun, played: TournamentResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One game per chunk, folded in two forked workers: the rebuild reads and compares as
    in one process, and repairs exactly the damaged games."""
    monkeypatch.setattr(projector_rebuild, "CHUNK_EVENTS", 1)
    monkeypatch.setattr(projector_rebuild, "CHUNKS_PER_WORKER", 1_000_000)
    store = _store(cardroom)
    report = await rebuild_projector(store, workers=2)
    assert report.workers == 2
    assert report.equal, report.differences
    assert report.games >= GAMES
    first, second = played.games[2], played.games[3]
    async with store.engine.begin() as conn:
        t = readmodels.views
        await conn.execute(
            sa.update(t).where(t.c.game_id == first, t.c.player_id == "random-1").values(seq=99)
        )
        await conn.execute(
            sa.update(t).where(t.c.game_id == second, t.c.player_id == "").values(view={})
        )
    damaged = await rebuild_projector(store, workers=2)
    assert sorted(damaged.differences) == sorted(
        [
            f"views {first} ('random-1',): differs in seq",
            f"views {second} ('',): differs in view",
        ]
    )
    assert damaged.replaced == damaged.games - 2
    repaired = await rebuild_projector(store, workers=2, repair=True)
    assert repaired.replaced == repaired.games
    again = await rebuild_projector(store, workers=0)
    assert again.equal, again.differences
    assert again.workers == 0


async def test_rebuild_folds_events_read_in_any_order(
    cardroom: AnalyticsRun, played: TournamentResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rebuild reads a game's events without asking PostgreSQL to sort a whole chunk;
    rows that come in another order are put in version order before the fold, in this
    process and in the workers (which read on connections of their own)."""
    histories = eventstore_log.HISTORIES
    shuffled = f"SELECT * FROM ({histories.sql}) AS h ORDER BY random()"
    monkeypatch.setattr(histories, "sql", shuffled)  # the same parameters
    monkeypatch.setattr(projector_rebuild, "CHUNK_EVENTS", 1)
    monkeypatch.setattr(projector_rebuild, "CHUNKS_PER_WORKER", 1_000_000)
    store = _store(cardroom)
    for workers in (0, 2):
        report = await rebuild_projector(store, workers=workers)
        assert report.workers == workers
        assert report.equal, report.differences
        assert report.games >= GAMES


async def test_the_commands(cardroom: AnalyticsRun, played: TournamentResult) -> None:
    """`cardroom tournament | stats | replay | rebuild` against the running cardroom."""
    env = {
        "CARDROOM_DATABASE_URL": cardroom.database_url,
        "CARDROOM_NATS_URL": cardroom.nats_url,
        "CARDROOM_SUBJECT_ROOT": cardroom.root,
        "CARDROOM_GAMES": "support.highcard:GAME",
        "COLUMNS": "200",
    }
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        return runner.invoke(cli.app, list(args), env=env, catch_exceptions=False)

    result = await asyncio.to_thread(
        invoke, "tournament", "--game", "highcard", "--bots", "random,random", "--games", "2",
        "--config", "rounds=1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "highcard: 2 games of random-1, random-2" in result.output
    assert "random-1" in result.output

    game = played.games[0]
    result = await asyncio.to_thread(invoke, "replay", game)
    assert result.exit_code == 0, result.output
    assert "table.finished" in result.output
    result = await asyncio.to_thread(invoke, "replay", game, "--as", "random-2", "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)  # (a log line of the search may be on stderr)
    records = await read_game(_store(cardroom), game)
    assert shown["notifications"] == seen_by(records, "random-2")[0]
    result = await asyncio.to_thread(invoke, "replay", game, "--as", "random-9")
    assert result.exit_code == 2
    result = await asyncio.to_thread(invoke, "replay", "no-such-game")
    assert result.exit_code == 2
    result = await asyncio.to_thread(invoke, "replay", game, "--as", "random-2", "--spectator")
    assert result.exit_code == 2  # one view at a time, not one of them silently
    assert "one view at a time" in result.output

    result = await asyncio.to_thread(invoke, "stats", "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["stats"]["game_types"][0]["finished"] >= GAMES + 2

    result = await asyncio.to_thread(invoke, "rebuild")
    assert result.exit_code == 0, result.output
    assert "NO" not in result.output
    result = await asyncio.to_thread(invoke, "rebuild", "views", "--game", "no-such-game")
    assert result.exit_code == 2  # not "equal, 0 games"
    assert "no game 'no-such-game'" in result.output


async def test_a_subscriber_may_join_late(cardroom: AnalyticsRun, played: TournamentResult) -> None:
    """Every event stays on the stream: a new subscriber reads them all from the first."""
    store = _store(cardroom)
    stored = await store.read_all(0, 100_000)
    seen: list[str] = []

    async def caught_up() -> bool:
        seen[:] = [r.event_id for r in await read_events(cardroom.nats_url, cardroom.subjects)]
        return len(seen) >= len(stored)

    await wait_until(caught_up, timeout=30)
    assert seen[: len(stored)] == [str(e.event_id) for e in stored]
    assert os.environ.get("CARDROOM_SUBJECT_ROOT") != cardroom.root  # the CLI test cleaned up
