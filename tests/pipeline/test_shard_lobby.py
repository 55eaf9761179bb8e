"""The lobby over two event store shards: where a table lives by its id (named by the
gamemaster, or by its creator), ids naming a shard there is not, and one listing of both
shards' tables."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from cardroom_acktracker import AckTracker
from cardroom_client import CardroomError, Client
from cardroom_gamemaster import Gamemaster
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from cardroom_runtime.shards import shard_index
from support.stack import wait_until

load_games("support.highcard:GAME")


async def test_tables_live_where_their_ids_say_and_the_lobby_lists_both_shards(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> None:
    urls = [await fresh_database(migrated=True) for _ in range(2)]
    root = f"{subject_root}shardlobby"
    host = Host(
        [Gamemaster, Relay, Projector, AckTracker],
        nats_url=nats_url,
        database_url=",".join(urls),
        subject_root=root,
    )
    await host.start()
    client = await Client.connect(nats_url, "ann", subject_root=root, timeout=15)
    try:
        named = [await client.create("highcard", seats=2) for _ in range(4)]
        assert sorted(shard_index(game) for game in named) == [0, 0, 1, 1]  # in turn
        chosen = [
            await client.create("highcard", seats=2, game=game) for game in ("mine", "s1-mine")
        ]
        assert chosen == ["mine", "s1-mine"]
        stores = host.shards.stores
        for game in [*named, *chosen]:
            here, there = stores[shard_index(game)], stores[1 - shard_index(game)]
            assert await here.stream_version(game) > 0
            assert await there.stream_version(game) == 0
        # a table may not name a shard this cardroom lacks; a request for one names no game
        with pytest.raises(CardroomError) as refused:
            await client.create("highcard", seats=2, game="s2-mine")
        assert refused.value.code == "bad_id"
        with pytest.raises(CardroomError) as unknown:
            await client.table("s2-mine")
        assert unknown.value.code == "unknown_game"
        assert (await client.table("s1-mine"))["game"] == "s1-mine"

        everyone = {*named, *chosen}

        async def listed() -> bool:
            return {t["game"] for t in await client.tables(game_type="highcard")} == everyone

        # the projector writes each table's listing into its shard; the lobby merges them
        await wait_until(listed, timeout=30)
    finally:
        await asyncio.wait([asyncio.ensure_future(client.close())], timeout=15)
        await host.stop()
