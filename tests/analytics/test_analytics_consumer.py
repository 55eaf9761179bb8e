"""The analytics service on real NATS (JetStream) and PostgreSQL: it consumes each event once,
across redeliveries, duplicates on the stream and a SIGKILL of its own process."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import nats
import pytest
import sqlalchemy as sa
from analytics_support import (
    AnalyticsProcess,
    AnalyticsRun,
    NewDatabase,
    applied_events,
    consumer_idle,
    publish,
    records_of,
    simulate,
    tournament_records,
    wait_applied,
)
from cardroom_analytics import (
    Analytics,
    db,
    durable_name,
    query_subject,
    read_events,
    rebuild,
)
from cardroom_analytics.db import snapshot
from cardroom_analytics.schema import games, results
from cardroom_analytics.service import ENV_ACK_WAIT, ENV_BATCH
from cardroom_engine import registry
from cardroom_runtime.host import Host, ensure_events_stream
from cardroom_wire import Subjects
from sqlalchemy.ext.asyncio import create_async_engine
from support.stack import wait_until

TAKE5 = "take5"
_rounds = itertools.count()


async def _ask(run: AnalyticsRun, verb: str, payload: Any = None, raw: bytes | None = None) -> Any:
    nc = await nats.connect(run.nats_url)
    try:
        body = raw if raw is not None else json.dumps(payload or {}).encode()
        msg = await nc.request(query_subject(run.subjects, verb), body, timeout=10)
        return json.loads(msg.data)
    finally:
        await nc.close()


async def _idle(run: AnalyticsRun) -> None:
    await wait_until(
        lambda: consumer_idle(run.nats_url, run.subjects, durable_name(run.subjects)), timeout=30
    )


async def test_ratings_move_the_right_way_and_redelivery_counts_nothing_twice(
    analytics_only: AnalyticsRun,
) -> None:
    run = analytics_only
    players = ["heuristic-1", "random-1"]
    records = tournament_records(registry.get(TAKE5), players, 10)
    await publish(run.nats_url, run.subjects, records)
    await wait_applied(run.engine, len(records))

    board = await _ask(run, "leaderboard", {"game_type": TAKE5})
    assert board["ok"], board
    top, bottom = board["ratings"]
    assert (top["player"], bottom["player"]) == ("heuristic-1", "random-1")
    assert top["rating"] > bottom["rating"]
    assert top["mu"] > 25 > bottom["mu"]
    assert top["games"] == bottom["games"] == 10
    assert top["wins"] > bottom["wins"]
    assert [k["kind"] for k in board["kinds"]] == ["heuristic", "random"]

    stats = await _ask(run, "stats")
    (take5,) = stats["game_types"]
    assert (take5["created"], take5["finished"], take5["playing"]) == (10, 10, 0)
    assert take5["events"] == len(records)
    assert take5["rated_players"] == 2
    assert take5["duration_avg_s"] > 0
    game = await _ask(run, "game", {"game": "t3"})
    assert game["game"]["outcome"] == records_of_game(records, "t3")[-1]["data"]["outcome"]
    assert [r["player_id"] for r in game["results"]] == [
        p for group in game["game"]["outcome"]["ranking"] for p in sorted(group)
    ]
    async with run.engine.connect() as conn:
        before = await snapshot(conn)

    # 1. the same events again, as real duplicates on the stream (new message ids)
    await publish(run.nats_url, run.subjects, records[: len(records) // 2], fresh_ids=True)
    await _idle(run)
    # 2. the durable consumer lost: a new one redelivers the whole stream from the start
    assert run.host is not None
    await run.host.stop()
    nc = await nats.connect(run.nats_url)
    try:
        await nc.jetstream().delete_consumer(run.subjects.events_stream, durable_name(run.subjects))
    finally:
        await nc.close()
    await run.host.start()
    await _idle(run)
    async with run.engine.connect() as conn:
        assert await snapshot(conn) == before
    assert run.analytics.applied == 0  # everything it was given was a duplicate


def records_of_game(records: list[dict[str, Any]], game: str) -> list[dict[str, Any]]:
    return [r for r in records if r["game"] == game]


async def test_no_double_count_across_a_restart_of_its_own_process(
    analytics_process: tuple[AnalyticsRun, AnalyticsProcess],
) -> None:
    """SIGKILL the analytics process mid-stream (it applies 40 events per transaction), start
    it again: every event counted once, and the tables equal a fold of the whole stream."""
    run, process = analytics_process
    records = tournament_records(registry.get("sixtysix"), ["heuristic-1", "random-1"], 16)
    await publish(run.nats_url, run.subjects, records)
    await process.start()
    await wait_until(lambda: _more_than(run, 200), timeout=30)
    process.kill()
    killed_at = await applied_events(run.engine)
    assert 0 < killed_at < len(records)
    await process.start()
    await wait_applied(run.engine, len(records))
    await _idle(run)

    async with run.engine.connect() as conn:
        per_game = dict((await conn.execute(sa.select(games.c.game_id, games.c.events))).all())
        n_results = await conn.scalar(sa.select(sa.func.count()).select_from(results))
    assert per_game == {f"t{g}": len(records_of_game(records, f"t{g}")) for g in range(16)}
    assert n_results == 2 * 16
    report = await rebuild(run.engine, lambda: read_events(run.nats_url, run.subjects))
    assert report.equal, report.differences
    assert report.events == report.applied == len(records)


async def _more_than(run: AnalyticsRun, n: int) -> bool:
    return await applied_events(run.engine) > n


async def test_a_gap_waits_for_the_missing_event_and_bad_messages_are_dropped(
    analytics_only: AnalyticsRun,
) -> None:
    run = analytics_only
    records = records_of(simulate(registry.get("highcard"), ["a", "b"], 7), "gap1")
    head, missing, tail = records[:2], records[2], records[3:]
    await publish(run.nats_url, run.subjects, head + tail)
    nc = await nats.connect(run.nats_url)
    try:  # not an event record: dropped (terminated), nothing else is held up by it
        await nc.publish(run.subjects.events("highcard", "junk"), b"{not json")
        await nc.flush()
    finally:
        await nc.close()
    await wait_applied(run.engine, 2)
    await asyncio.sleep(0.5)
    assert await applied_events(run.engine) == 2  # the rest waits for version 3
    await publish(run.nats_url, run.subjects, [missing])
    await wait_applied(run.engine, len(records))
    game = await _ask(run, "game", {"game": "gap1"})
    assert game["game"]["status"] == "finished"
    assert game["game"]["version"] == len(records)


async def test_queries_answer_bad_requests_with_errors(analytics_only: AnalyticsRun) -> None:
    run = analytics_only
    cases: list[tuple[str, Any, str]] = [
        ("nope", {}, "bad_request"),
        ("leaderboard", {}, "bad_request"),
        ("leaderboard", {"game_type": "take5", "limit": 0}, "bad_request"),
        ("leaderboard", {"game_type": "take5", "players": "x"}, "bad_request"),
        ("stats", {"extra": 1}, "bad_request"),
        ("games", {"status": "sleeping"}, "bad_request"),
        ("game", {"game": "nothing-here"}, "unknown_game"),
    ]
    for verb, payload, code in cases:
        reply = await _ask(run, verb, payload)
        assert reply["ok"] is False, (verb, payload)
        assert reply["error"]["code"] == code, (verb, payload, reply)
    reply = await _ask(run, "stats", raw=b"[1, 2")
    assert reply["ok"] is False
    empty = await _ask(run, "leaderboard", {"game_type": "take5"})
    assert empty == {"ok": True, "game_type": "take5", "ratings": [], "kinds": []}


async def test_one_instance_leads_and_another_takes_over_when_it_stops(
    analytics_only: AnalyticsRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two analytics processes on one consumer: one fetches and applies everything, the other
    stands by (two fetching would split each game's events and wait on each other's gaps);
    when the leader stops, the other takes over and applies the rest."""
    run = analytics_only
    assert run.host is not None
    monkeypatch.setenv(ENV_BATCH, "20")  # many batches: two fetching would share them
    second = Host(
        [Analytics], nats_url=run.nats_url, database_url=run.database_url, subject_root=run.root
    )
    await second.start()
    running = [run.host, second]
    try:
        players = ["heuristic-1", "random-1"]
        records = tournament_records(registry.get(TAKE5), players, 12)
        await publish(run.nats_url, run.subjects, records)
        await wait_applied(run.engine, len(records))
        both = [_analytics(host) for host in running]
        leaders = [a for a in both if a.leading]
        assert len(leaders) == 1, [a.leading for a in both]
        assert sorted(a.applied for a in both) == [0, len(records)]
        (leader,) = leaders
        assert leader.applied == len(records)

        host = running.pop(both.index(leader))
        await host.stop()
        more = tournament_records(registry.get(TAKE5), players, 4, prefix="u")
        await publish(run.nats_url, run.subjects, more)
        await wait_applied(run.engine, len(records) + len(more))
        (other,) = (_analytics(h) for h in running)
        assert other.leading
        assert other.applied == len(more)
    finally:
        if second in running:
            await second.stop()
        if run.host not in running:
            run.host = None  # stopped already


def _analytics(host: Host) -> Analytics:
    (service,) = host.services
    assert isinstance(service, Analytics)
    return service


async def test_a_batch_a_leader_never_acknowledged_is_applied_before_anything_newer(
    nats_url: str,
    subject_root: str,
    new_database: NewDatabase,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A leader fetched the first game's events, fewer than a whole batch (the live tail), and
    died (its lead, a PostgreSQL session, ends with it). The next leader must not apply the
    later games' results before them: the ratings would not be the fold of the stream in order,
    which is what ``cardroom rebuild`` computes (each game's update starts from the last)."""
    url = await new_database()
    subjects = Subjects(f"{subject_root}lead{next(_rounds)}")
    await ensure_events_stream(nats_url, subjects)
    engine = create_async_engine(url)
    monkeypatch.setenv(ENV_BATCH, "100")  # room for two more whole games beside the first
    monkeypatch.setenv(ENV_ACK_WAIT, "5")  # longer than the lead takes to pass
    lead = await engine.execution_options(isolation_level="AUTOCOMMIT").connect()
    nc = await nats.connect(nats_url)
    host = Host([Analytics], nats_url=nats_url, database_url=url, subject_root=subjects.root)
    try:
        assert await db.try_lead(lead, durable_name(subjects))  # the leader that will die
        await host.start()  # it makes the consumer, and stands by
        records = tournament_records(registry.get("highcard"), ["random-1", "random-2"], 6)
        first = records_of_game(records, "t0")
        await publish(nats_url, subjects, records)
        fetcher = await nc.jetstream().pull_subscribe(
            subjects.events_all, durable=durable_name(subjects), stream=subjects.events_stream
        )
        held: list[Any] = []
        while len(held) < len(first):
            held += await fetcher.fetch(len(first) - len(held), timeout=10)
        assert [json.loads(m.data)["event_id"] for m in held] == [r["event_id"] for r in first]
        await lead.invalidate()  # it dies holding them: the lead passes
        await wait_applied(engine, len(records))
        run = AnalyticsRun(nats_url, url, subjects, engine)
        await _idle(run)
        report = await rebuild(engine, lambda: read_events(nats_url, subjects))
        assert report.equal, report.differences
    finally:
        await host.stop()
        await nc.close()
        await lead.close()
        await engine.dispose()
