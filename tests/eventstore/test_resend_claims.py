"""The acktracker's resends as the read models schedule them (``EventStore.claim_resends``):
each owed notification's waits double up to a cap, a finished game's stop after a bound, an
away player's are never resent, two sweeps never claim one notification, and the sweep's
statement reads only due rows by index on a large database.

Time is moved by setting a row's ``resend_at`` into the past (the end-to-end timing is
tests/acktracker/test_resend_backoff.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from cardroom_eventstore import Append, EventStore, NewEvent, readmodels
from cardroom_eventstore.readmodels import StoredNotification
from sqlalchemy import text

FIRST, CAP, FINISHED = 1.0, 5.0, 2


def ev(*addressees: str) -> NewEvent:
    return NewEvent(type="dealt", data={}, addressees=frozenset(addressees))


async def owe(store: EventStore, game: str, *players: str, status: str = "playing") -> None:
    """A game whose first event every one of ``players`` owes, its notifications stored."""
    await store.append(Append(game, "take5", 0, [ev(*players)]))
    notes = [StoredNotification(game, p, 1, 1, {"seq": 1, "player": p}) for p in players]
    summary = {"game": game, "game_type": "take5", "status": status, "version": 1}
    async with store.relaxed.connection() as conn:
        await readmodels.write_batch(conn, notes, [], [summary])


async def claim(store: EventStore, limit: int = 500) -> list[tuple[str, str]]:
    notes = await store.claim_resends(first=FIRST, cap=CAP, finished=FINISHED, limit=limit)
    return [(n.game_id, n.player_id) for n in notes]


async def time_passes(store: EventStore) -> None:
    """Every stored notification's next resend (or first one) is due."""
    async with store.engine.begin() as conn:
        await conn.execute(
            text(
                "UPDATE notifications SET resend_at = now() - interval '1 hour'"
                " WHERE resend_at <> 'infinity'"
            )
        )


async def schedule(store: EventStore, game: str, player: str) -> tuple[int, float | None]:
    """(resends, seconds until the next resend; None: never again)."""
    async with store.engine.connect() as conn:
        resends, wait = (
            await conn.execute(
                text(
                    "SELECT resends, CASE WHEN resend_at = 'infinity' THEN NULL"
                    " ELSE extract(epoch FROM resend_at - now()) END"
                    " FROM notifications WHERE game_id = :g AND player_id = :p"
                ),
                {"g": game, "p": player},
            )
        ).one()
    return int(resends), None if wait is None else float(wait)


async def test_a_notification_is_first_resent_once_overdue(store: EventStore) -> None:
    await owe(store, "g", "a")
    assert await claim(store) == []  # stored just now: not overdue yet
    await time_passes(store)
    assert await claim(store) == [("g", "a")]
    assert await claim(store) == []  # its next resend is not due yet


async def test_the_waits_double_up_to_the_cap(store: EventStore) -> None:
    await owe(store, "g", "a")
    waits = []
    for _ in range(5):
        await time_passes(store)
        assert await claim(store) == [("g", "a")]
        resends, wait = await schedule(store, "g", "a")
        assert wait is not None
        waits.append((resends, round(wait)))
    assert waits == [(1, 2), (2, 4), (3, 5), (4, 5), (5, 5)]


async def test_a_finished_games_notifications_are_resent_a_bounded_number_of_times(
    store: EventStore,
) -> None:
    await owe(store, "over", "a", status=readmodels.FINISHED)
    await owe(store, "on", "a")
    sent = []
    for _ in range(FINISHED + 3):
        await time_passes(store)
        sent += await claim(store)
    assert sent.count(("over", "a")) == FINISHED
    assert sent.count(("on", "a")) == FINISHED + 3
    assert await schedule(store, "over", "a") == (FINISHED, None)  # never again
    assert await store.pending_for_player("over", "a") == [1]  # still owed: a sync lists it


async def test_a_game_that_finishes_stops_the_resends_of_what_it_owes(store: EventStore) -> None:
    await owe(store, "g", "a")
    for _ in range(FINISHED + 1):  # resent more often while it was running than the bound
        await time_passes(store)
        assert await claim(store) == [("g", "a")]
    async with store.relaxed.connection() as conn:
        summary = {"game": "g", "game_type": "take5", "status": readmodels.FINISHED, "version": 2}
        await readmodels.write_batch(conn, [], [], [summary])
    await time_passes(store)
    assert await claim(store) == []
    assert await schedule(store, "g", "a") == (FINISHED + 1, None)


async def test_away_and_acknowledged_notifications_are_not_resent(store: EventStore) -> None:
    await owe(store, "g", "here", "away", "acked")
    await store.excuse("g", ["away"])  # owed, but holds no gate: they sync when back
    assert (await store.ack("g", 1, "acked")).accepted
    await time_passes(store)
    assert await claim(store) == [("g", "here")]
    assert await schedule(store, "g", "away") == (0, None)
    await time_passes(store)
    assert await claim(store) == [("g", "here")]


async def test_two_sweeps_never_claim_one_notification(store: EventStore) -> None:
    for i in range(40):
        await owe(store, f"g{i}", "a", "b")
    await time_passes(store)
    first, second = await asyncio.gather(claim(store, limit=50), claim(store, limit=50))
    assert len(first) + len(second) == 80
    assert len(set(first) | set(second)) == 80


# A large room: 100,000 owed notifications, none of them due (waiting for a later resend, or
# finished with), and a few due ones.
_FILL = """
INSERT INTO pending_acks (stream_id, version, player_id, gate_version)
SELECT 'g' || i, 11, p, CASE WHEN i % 3 = 0 THEN 0 ELSE 11 END
FROM generate_series(1, 50000) i, unnest(ARRAY['a', 'b']) p;
INSERT INTO notifications (game_id, player_id, seq, version, payload, resends, resend_at)
SELECT 'g' || i, p, 5, 11, '{}', 3,
       CASE WHEN i % 2 = 0 THEN 'infinity' ELSE now() + interval '30 s' END
FROM generate_series(1, 50000) i, unnest(ARRAY['a', 'b']) p;
UPDATE notifications SET resend_at = now() - interval '1 s' WHERE game_id IN ('g1', 'g7');
INSERT INTO tables (game_id, game_type, status, summary, version)
SELECT 'g' || i, 'highcard', 'playing', '{}', 10 FROM generate_series(1, 50000) i;
ANALYZE
"""


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found += _nodes(child)
    return found


async def test_the_sweep_reads_only_due_rows_by_index(store: EventStore) -> None:
    async with store.engine.begin() as conn:
        for statement in _FILL.split(";"):
            await conn.execute(text(statement))
    params = {"first": FIRST, "due": FIRST, "cap": CAP, "finished": FINISHED, "limit": 500}
    async with store.engine.connect() as conn:
        explained = await conn.scalar(
            text("EXPLAIN (FORMAT JSON) " + readmodels._CLAIM_RESENDS.text), params
        )
    plan = (json.loads(explained) if isinstance(explained, str) else explained)[0]["Plan"]
    scans = {(n["Node Type"], n.get("Relation Name")) for n in _nodes(plan)}
    assert not {s for s in scans if s[0] == "Seq Scan"}, scans
    resend_scans = [n for n in _nodes(plan) if n.get("Index Name") == "notifications_by_resend_at"]
    assert resend_scans, scans
    assert sorted(await claim(store)) == [("g1", "a"), ("g1", "b"), ("g7", "a"), ("g7", "b")]
