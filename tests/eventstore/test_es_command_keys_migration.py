"""Migration 0010 keys the stored command answers by player (``<player>.<command id>``, the
gamemaster's :func:`~cardroom_gamemaster.commands.command_key`), so that a resend of a command
answered before the upgrade is still answered as the first time; downgrade takes the prefix
off, keeping one row where two would have the same key."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from alembic import command
from alembic.config import Config
from cardroom_eventstore import Append, EventStore, NewEvent
from cardroom_gamemaster.commands import command_key
from sqlalchemy import text


def move(actor: str, command_id: str) -> NewEvent:
    return NewEvent("bet", {}, {"actor": actor, "command_id": command_id})


async def keys(store: EventStore) -> dict[tuple[str, str], int]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(text("SELECT stream_id, command_id, reply FROM commands"))
        return {(r[0], r[1]): r[2]["version"] for r in rows}


async def test_stored_answers_are_keyed_by_their_player_and_back(
    es_empty_database_url: str, es_alembic_config: Callable[[str], Config]
) -> None:
    config = es_alembic_config(es_empty_database_url)
    await asyncio.to_thread(command.upgrade, config, "0009")
    store = await EventStore.connect(es_empty_database_url)
    try:
        # alice's c1 (two events), bob's c2, and in another game bob's c1
        await store.append(
            Append("g1", "t", 0, [move("alice", "c1"), move("alice", "c1")], "c1", {"version": 2})
        )
        await store.append(Append("g1", "t", 2, [move("bob", "c2")], "c2", {"version": 3}))
        await store.append(Append("g2", "t", 0, [move("bob", "c1")], "c1", {"version": 1}))
        # a key no event names (the event store used directly): left alone
        await store.append(Append("g3", "t", 0, [NewEvent("x", {})], "k", {"version": 1}))

        await asyncio.to_thread(command.upgrade, config, "0010")
        assert await keys(store) == {
            ("g1", command_key("alice", "c1")): 2,
            ("g1", command_key("bob", "c2")): 3,
            ("g2", command_key("bob", "c1")): 1,
            ("g3", "k"): 1,
        }
        assert await store.command_reply("g1", command_key("alice", "c1")) == {"version": 2}

        # after the upgrade bob names c1 in g1 too: two keys that downgrade would merge
        await store.append(Append("g1", "t", 3, [move("bob", "c1")], "bob.c1", {"version": 4}))
        await asyncio.to_thread(command.downgrade, config, "0009")
        assert await keys(store) == {
            ("g1", "c1"): 2,
            ("g1", "c2"): 3,
            ("g2", "c1"): 1,
            ("g3", "k"): 1,
        }
    finally:
        await store.close()
