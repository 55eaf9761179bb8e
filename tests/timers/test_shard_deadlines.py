"""Deadlines over two event store shards: each game's deadlines are rows of its own shard,
written there by the gamemaster, claimed there by the timers service and marked fired
there, so a game on either shard is played out by its deadlines alone."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import sqlalchemy as sa
from cardroom_acktracker import AckTracker
from cardroom_client import Client
from cardroom_gamemaster import Gamemaster
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime.host import Host
from cardroom_runtime.shards import shard_index
from support.players import check_stream, listener, replayed
from support.stack import wait_until
from support.timedstack import QuickTimers


async def _evaluated(store: Any) -> dict[str, tuple[int, bool]]:
    """The games whose deadlines this shard holds: the version they were last evaluated
    for, and whether the game was still active then."""
    async with store.engine.connect() as conn:
        rows = await conn.execute(sa.text("SELECT game_id, version, active FROM deadline_versions"))
        return {str(game): (int(version), bool(active)) for game, version, active in rows}


async def test_each_shards_deadlines_fire_and_play_its_games_out(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> None:
    urls = [await fresh_database(migrated=True) for _ in range(2)]
    root = f"{subject_root}shardtimers"
    host = Host(
        [Gamemaster, Relay, Projector, AckTracker, QuickTimers],
        nats_url=nats_url,
        database_url=",".join(urls),
        subject_root=root,
    )
    await host.start()
    clients: list[Client] = []
    try:
        games: list[str] = []
        for table in range(2):  # one gamemaster names new games on each shard in turn
            seats = []
            for name in ("ann", "ben"):
                client = await Client.connect(
                    nats_url, f"{name}{table}", subject_root=root, timeout=15
                )
                clients.append(client)
                seats.append(listener(client))  # acknowledges everything, never acts
            game = await seats[0].client.create(
                "timedhighcard", {"rounds": 2, "think": 0.2}, seats=2
            )
            await seats[1].client.join(game)
            games.append(game)
        assert sorted(shard_index(game) for game in games) == [0, 1]
        shards = host.shards

        async def finished() -> bool:
            for game in games:
                if (await replayed(shards.of(game), game)).status != "finished":
                    return False
            return True

        await wait_until(finished, timeout=90)
        for game in games:
            records = await shards.of(game).read_stream(game)
            check_stream(records)
            # two rounds, two turns each, every turn ended by its own deadline, each once
            fired = [r.metadata["timeout"] for r in records if "timeout" in r.metadata]
            assert len(fired) == 4
            assert len(set(fired)) == 4
        for shard, store in enumerate(shards.stores):
            # this shard's games only, each evaluated for its last version (finished)
            mine = {
                game: (await store.stream_version(game), False)
                for game in games
                if shard_index(game) == shard
            }

            async def evaluated(store: Any = store, mine: Any = mine) -> bool:
                return bool(await _evaluated(store) == mine)

            # (the gamemaster writes a game's deadlines up to a second after a change)
            await wait_until(evaluated, timeout=30)
    finally:
        # bounded: Client.close can wait for ever on a feed task (see tests/timers/conftest.py)
        closing = asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
        await asyncio.wait([asyncio.ensure_future(closing)], timeout=15)
        await host.stop()
