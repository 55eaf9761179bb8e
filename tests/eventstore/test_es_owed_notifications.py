"""The notifications read model holds what is owed (migration 0005): events name their
addressees, stored notifications are those still to be acknowledged, views carry the seq.
And the hot pool drops a connection asyncpg reports broken."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from alembic import command
from alembic.config import Config
from cardroom_eventstore import TO, Append, EventStore, NewEvent, readmodels
from cardroom_eventstore.readmodels import StoredNotification, StoredView
from cardroom_runtime.host import storage_unavailable
from sqlalchemy import text


def ev(*addressees: str, meta: dict[str, str] | None = None) -> NewEvent:
    return NewEvent("dealt", {"n": len(addressees)}, meta or {}, frozenset(addressees))


async def stored(store: EventStore, game: str) -> list[tuple[str, int, int]]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT player_id, seq, version FROM notifications WHERE game_id = :g ORDER BY 1, 2"
            ),
            {"g": game},
        )
        return [tuple(r) for r in rows]  # type: ignore[misc]


def note(game: str, player: str, seq: int, version: int) -> StoredNotification:
    return StoredNotification(game, player, seq, version, {"seq": seq, "version": version})


async def test_events_carry_their_addressees(store: EventStore) -> None:
    recorded = await store.append(
        Append("g", "take5", 0, [ev(meta={"actor": "x"}), ev("bob", "amy", meta={"actor": "x"})])
    )
    assert recorded[0].metadata == {"actor": "x", TO: []}  # nobody
    assert recorded[1].metadata == {"actor": "x", TO: ["amy", "bob"]}
    assert [e.metadata for e in await store.read_stream("g")] == [e.metadata for e in recorded]
    assert await store.addressed("g", 2, "amy")
    assert not await store.addressed("g", 1, "amy")  # an event sent to nobody
    assert not await store.addressed("g", 2, "cat")  # not to this player
    assert not await store.addressed("g", 3, "amy")  # no such version
    assert not await store.addressed("nope", 2, "amy")


async def test_only_owed_notifications_are_stored_and_the_sweep_deletes_the_rest(
    store: EventStore,
) -> None:
    await store.append(Append("g", "take5", 0, [ev("amy", "bob"), ev("amy", "bob")]))
    assert (await store.ack("g", 1, "amy")).accepted  # acked before the projector stores it
    views = [StoredView("g", "amy", 2, {"v": 1}, [], 2), StoredView("g", "bob", 2, {}, [], 2)]
    async with store.tracking_many(["t"]) as tracking:
        assert await readmodels.owed(tracking.conn, ["g", "h"]) == {
            "g": {(1, "bob"), (2, "amy"), (2, "bob")},
            "h": set(),
        }
        notes = [note("g", p, v, v) for v in (1, 2) for p in ("amy", "bob")]
        await readmodels.write_batch(tracking.conn, notes, views, [])
    assert await stored(store, "g") == [("amy", 2, 2), ("bob", 1, 1), ("bob", 2, 2)]
    assert await store.last_seq("g", "amy") == 2
    assert await store.last_seq("g", "cat") == 0
    view = await store.view("g", "amy")
    assert view == views[0]

    # acknowledged after it was stored: it stays until the sweep
    assert (await store.ack("g", 1, "bob")).accepted
    assert await store.delete_acknowledged() == 1
    assert await stored(store, "g") == [("amy", 2, 2), ("bob", 2, 2)]
    assert await store.delete_acknowledged() == 0
    # an away player's excused ack is still owed: its notification stays for their sync
    await store.excuse("g", ["amy"])
    assert await store.delete_acknowledged() == 0
    assert await stored(store, "g") == [("amy", 2, 2), ("bob", 2, 2)]


async def test_migration_0005_keeps_what_is_owed(
    es_empty_database_url: str, es_alembic_config: Callable[[str], Config]
) -> None:
    url = es_empty_database_url
    config = es_alembic_config(url)
    await asyncio.to_thread(command.upgrade, config, "0004")
    store = await EventStore.connect(url)
    try:
        async with store.engine.begin() as conn:
            # a game as the older code stored it: no metadata.to, every notification kept
            await conn.execute(
                text(
                    "INSERT INTO events (stream_id, stream_type, version, event_id, type, data,"
                    " metadata) VALUES ('g', 'take5', 1, gen_random_uuid(), 'a', '{}', '{}'),"
                    " ('g', 'take5', 2, gen_random_uuid(), 'b', '{}', '{\"actor\": \"amy\"}')"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO notifications (game_id, player_id, seq, version, payload) VALUES"
                    " ('g', 'amy', 1, 1, '{}'), ('g', 'bob', 1, 1, '{}'), ('g', 'bob', 2, 2, '{}')"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO pending_acks (stream_id, version, player_id, gate_version)"
                    " VALUES ('g', 2, 'bob', 2)"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO views (game_id, player_id, version, view, actions) VALUES"
                    " ('g', 'amy', 2, '{}', '[]'), ('g', 'bob', 2, '{}', '[]'),"
                    " ('g', '', 2, '{}', '[]')"
                )
            )
        await asyncio.to_thread(command.upgrade, config, "0005")
        assert await stored(store, "g") == [("bob", 2, 2)]
        async with store.engine.connect() as conn:
            seqs = (await conn.execute(text("SELECT player_id, seq FROM views ORDER BY 1"))).all()
            metadata = (
                await conn.execute(text("SELECT metadata FROM events ORDER BY version"))
            ).scalars()
            assert [tuple(r) for r in seqs] == [("", 0), ("amy", 1), ("bob", 2)]
            assert [json.loads(m) if isinstance(m, str) else m for m in metadata] == [
                {TO: ["amy", "bob"]},
                {"actor": "amy", TO: ["bob"]},
            ]
        await asyncio.to_thread(command.downgrade, config, "0004")
        await asyncio.to_thread(command.upgrade, config, "head")
    finally:
        await store.close()


async def test_a_broken_hot_connection_is_dropped_and_the_statement_runs_on_another(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncpg's "another operation is in progress" (raised before anything is sent): the
    connection is terminated, not pooled again, and the ack runs once more on another."""
    await store.append(Append("g", "take5", 0, [ev("amy")]))
    broken: list[asyncpg.Connection[asyncpg.Record]] = []
    fetch = asyncpg.Connection.fetch

    async def once_broken(self: asyncpg.Connection[asyncpg.Record], *args: Any) -> Any:
        if not broken:
            broken.append(self)
            raise asyncpg.exceptions.InternalClientError("cannot switch to state 12")
        return await fetch(self, *args)

    monkeypatch.setattr(asyncpg.Connection, "fetch", once_broken)
    results = await store.ack_many([("g", 1, "amy")])
    assert results[0].accepted
    assert broken
    assert broken[0].is_closed()
    assert await store.pending("g") == {}
    assert storage_unavailable(asyncpg.exceptions.InternalClientError("again"))
