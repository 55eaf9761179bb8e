"""The event store in two shards (cardroom_runtime.shards): two fresh databases on the local
server listed in ``CARDROOM_DATABASE_URL``, every service as processes.

- Two instances of each service play games that land on both shards while one instance of
  each service that splits or sweeps its work per shard is killed once. Then: the chaos
  properties (every game finished, contiguous versions, no command twice, every
  notification once and in order), each shard's log holds only its own games, JetStream
  holds every shard's events once, the lobby lists the tables of both, the two relays took
  turns on each shard without a failure, and ``cardroom rebuild`` rebuilds every read model
  (each shard's projector models, analytics' from JetStream) equal to the live ones;
  ``cardroom replay`` finds a game of either shard, ``cardroom status`` counts both.
- A one-shard cardroom gets a second shard while games are being played: every service is
  stopped, ``cardroom migrate`` brings the new database to the schema, and the services start
  again with both URLs. The games in play keep going on shard 0 and finish; new games land on
  both shards.

Size (environment; ``make chaos`` runs a bigger one): ``CARDROOM_SHARD_GAMES`` games at
least (default 16), ``CARDROOM_SHARD_TABLES`` tables at once (default 6).
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from subprocess import PIPE

import pytest
import sqlalchemy as sa
from cardroom_analytics import read_events
from cardroom_analytics import rebuild as rebuild_analytics
from cardroom_analytics.schema import game_types
from cardroom_client import Client
from cardroom_eventstore import EventStore
from cardroom_eventstore.readmodels import LIST_LIMIT
from cardroom_runtime.games import load_games
from cardroom_runtime.nats import connect
from cardroom_runtime.shards import Shards, shard_index
from cardroom_wire import Subjects
from sqlalchemy.ext.asyncio import create_async_engine
from support.chaos import ChaosProcess, TableRunner, env_int, verify
from support.players import replayed
from support.stack import wait_until
from support.timedstack import GAMES, process_env

GAMES_WANTED = env_int("CARDROOM_SHARD_GAMES", 16)
TABLES = env_int("CARDROOM_SHARD_TABLES", 6)
SERVICES = ["gamemaster", "relay", "projector", "acktracker", "timers"]
# the services whose work is split or swept per shard, each killed once (the timers are not:
# these games have no deadlines to fire)
KILLED = ["gamemaster", "relay", "projector", "acktracker"]

load_games(GAMES)

FreshDatabase = Callable[..., Awaitable[str]]


def _env(urls: list[str], nats_url: str, root: str) -> dict[str, str]:
    # 11 processes with pools on both shards, and both shards on one server: the default
    # pools ask for more connections than a stock PostgreSQL allows (100) at ``make chaos``'s
    # size
    return {
        **process_env(",".join(urls), nats_url, root),
        "COLUMNS": "200",
        "CARDROOM_DB_POOL": "2",
        "CARDROOM_DB_HOT_POOL": "2",
    }


async def _cardroom(env: dict[str, str], *args: str) -> str:
    """Run ``cardroom <args>`` (what an operator types); its output, or fail with it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cardroom", *args, env=env, stdout=PIPE, stderr=PIPE
    )
    async with asyncio.timeout(180):
        out, err = await proc.communicate()
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text + err.decode(errors="replace")
    return text


async def _events_in_stream(nats_url: str, subjects: Subjects) -> int:
    nc = await connect(nats_url, "shards-test-probe")
    try:
        info = await nc.jetstream().stream_info(subjects.events_stream)
        return int(info.state.messages)
    finally:
        await nc.close()


@pytest.mark.timeout(max(600, 3 * GAMES_WANTED + 300))
async def test_two_shards_play_lose_nothing_and_rebuild(
    nats_url: str, subject_root: str, fresh_database: FreshDatabase, tmp_path: Path
) -> None:
    rng = random.Random(env_int("CARDROOM_CHAOS_SEED", random.randrange(1_000_000)))
    urls = [await fresh_database(migrated=True) for _ in range(2)]
    root = f"{subject_root}shards"
    subjects = Subjects(root)
    env = _env(urls, nats_url, root)
    processes = {
        f"{name}{i}": ChaosProcess(name, env, tmp_path, label=f"{name}{i}")
        for name in SERVICES
        for i in range(2)
    }
    processes["analytics0"] = ChaosProcess("analytics", env, tmp_path, label="analytics0")
    shards = await Shards.connect(urls)
    try:
        runner = TableRunner(
            nats_url, root, "highcard", {"rounds": 1}, players=2, concurrency=TABLES
        )
        try:
            await asyncio.gather(*(p.start() for p in processes.values()))

            async def killer() -> None:
                # one instance of each service killed once, the other one carries on meanwhile;
                # the kills spread over the games (by how many were made), not over time, so
                # a loaded machine plays no more games than asked for
                order = rng.sample(KILLED, len(KILLED))
                for n, name in enumerate(order, 1):
                    due = max(TABLES, n * GAMES_WANTED // (len(order) + 1))
                    while len(runner.tables) < due:  # noqa: ASYNC110 -- polled from outside
                        await asyncio.sleep(0.05)
                    processes[f"{name}0"].kill()
                    await processes[f"{name}0"].start()

            kill_task = asyncio.create_task(killer())
            await runner.run(lambda: len(runner.tables) < GAMES_WANTED, finish_timeout=240)
            await kill_task
            assert not runner.errors, runner.errors[:3]
            counts = await verify(shards, runner.tables)
            assert counts["games"] >= GAMES_WANTED

            played = collections.Counter(shard_index(t.game) for t in runner.tables)
            assert set(played) == {0, 1}, played  # the gamemasters spread new games over both
            events = 0
            streams: list[set[str]] = []  # each shard's games (a table whose creation's answer a
            # killed gamemaster never sent is there too, though no runner plays it)
            for shard, store in enumerate(shards.stores):
                log = await store.read_all(0, 1_000_000)
                # a shard's log holds its own games only, each shard in an order of its own
                streams.append({e.stream_id for e in log})
                assert {shard_index(game) for game in streams[shard]} == {shard}
                assert {t.game for t in runner.tables if shard_index(t.game) == shard} <= streams[
                    shard
                ]
                positions = [e.position for e in log]
                assert positions == sorted(set(positions))
                events += len(log)
                top = positions[-1]

                async def relayed(store: EventStore = store, top: int = top) -> bool:
                    return await store.checkpoint("relay") >= top

                await wait_until(relayed, timeout=60)
            # JetStream carries every shard's events, each once (the relays' restarts republished
            # some: the duplicates were dropped by their event ids)
            assert await _events_in_stream(nats_url, subjects) == events

            # the lobby lists the tables of both shards
            client = await Client.connect(nats_url, "lister", subject_root=root, timeout=15)
            try:
                listed = {t["game"] for t in await client.tables(game_type="highcard")}
            finally:
                await client.close()
            every = streams[0] | streams[1]
            if len(every) <= LIST_LIMIT:
                assert listed == every
            else:  # the newest tables of either shard
                assert len(listed) == LIST_LIMIT
                assert listed <= every

            # analytics (its tables in the first database) saw every shard's events
            engine = create_async_engine(urls[0])
            try:

                async def applied() -> bool:
                    async with engine.connect() as conn:
                        total = await conn.scalar(sa.select(sa.func.sum(game_types.c.events)))
                    return int(total or 0) >= events

                await wait_until(applied, timeout=60)
                report = await rebuild_analytics(engine, lambda: read_events(nats_url, subjects))
                assert report.equal, report.differences
                assert report.games == len(every)
            finally:
                await engine.dispose()
        finally:
            for p in processes.values():
                p.stop()
        # two relays of each shard take turns without a failure (the one behind takes up the
        # other's checkpoint)
        for relay in ("relay0", "relay1"):
            said = (tmp_path / f"{relay}.log").read_text(errors="replace")
            assert "Traceback" not in said, said[-3000:]
        # the operator's rebuild: every shard's read models from its own events, and analytics'
        said = await _cardroom(env, "rebuild")
        for shard in (0, 1):
            assert f"projector (shard {shard})" in said, said
        assert "NO" not in said, said
        # a replay reads its game's shard; the status sums the shards
        for shard in (0, 1):
            game = next(t.game for t in runner.tables if shard_index(t.game) == shard)
            replay = json.loads(await _cardroom(env, "replay", game, "--json"))
            assert len(replay["events"]) == len(await shards.of(game).read_stream(game))
            assert replay["final"]["status"] == "finished"
        status = await _cardroom(env, "status", "--once")
        assert re.search(rf"highcard\W+finished\W+{len(runner.tables)}\W", status), status
        assert await _rebuild_counts(urls) == [len(streams[0]), len(streams[1])]
    finally:
        await shards.close()


async def _rebuild_counts(urls: list[str]) -> list[int]:
    """Each shard's games, rebuilt and compared (:func:`rebuild_shards`, what the command
    runs), checked equal; their numbers."""
    from cardroom.projector_rebuild import rebuild_shards

    out = []
    for shard, report in await rebuild_shards(urls, workers=0):
        assert report.equal, (shard, report.differences)
        out.append(report.games)
    return out


@pytest.mark.timeout(max(600, 3 * GAMES_WANTED + 300))
async def test_a_second_shard_added_to_a_running_cardroom(
    nats_url: str, subject_root: str, fresh_database: FreshDatabase, tmp_path: Path
) -> None:
    first = await fresh_database(migrated=True)
    added = await fresh_database()  # empty: `cardroom migrate` brings it to the schema
    root = f"{subject_root}addshard"
    before_env = _env([first], nats_url, root)
    after_env = _env([first, added], nats_url, root)

    def processes(env: dict[str, str], tag: str) -> dict[str, ChaosProcess]:
        return {n: ChaosProcess(n, env, tmp_path, label=f"{n}-{tag}") for n in SERVICES}

    one = processes(before_env, "one")
    two = processes(after_env, "two")
    # longer games, so that some are being played when the services stop
    runner = TableRunner(nats_url, root, "highcard", {"rounds": 5}, players=2, concurrency=4)
    shards = await Shards.connect([first, added])
    old, in_play = 0, set[str]()
    try:
        await asyncio.gather(*(p.start() for p in one.values()))
        added_at: int | None = None

        def keep_going() -> bool:
            return added_at is None or len(runner.tables) < added_at + GAMES_WANTED // 2

        playing = asyncio.create_task(runner.run(keep_going, finish_timeout=240))

        async def some_in_play() -> bool:
            if len(runner.tables) < 4:
                return False
            for table in list(runner.tables):
                if (await replayed(shards.stores[0], table.game)).status == "playing":
                    return True
            return False

        await wait_until(some_in_play, timeout=120)
        for p in one.values():
            p.stop()
        old = len(runner.tables)
        for table in runner.tables:
            if (await replayed(shards.stores[0], table.game)).status == "playing":
                in_play.add(table.game)
        await _cardroom(after_env, "migrate")
        await asyncio.gather(*(p.start() for p in two.values()))
        added_at = len(runner.tables)
        await playing
        assert not runner.errors, runner.errors[:3]
        counts = await verify(shards, runner.tables)
    finally:
        for p in [*one.values(), *two.values()]:
            p.stop()
        await shards.close()
    assert in_play, "no game was being played when the shard was added"
    # the games made before stay on shard 0 (their ids name none) and finished there
    assert {shard_index(t.game) for t in runner.tables[:old]} == {0}
    new = collections.Counter(shard_index(t.game) for t in runner.tables[added_at:])
    assert set(new) == {0, 1}, new
    assert counts["games"] == len(runner.tables)
    engine = create_async_engine(added)
    try:
        async with engine.connect() as conn:
            stored = set(await conn.scalars(sa.text("SELECT stream_id FROM streams")))
    finally:
        await engine.dispose()
    # the new shard holds exactly the games made on it (orphans of a create whose answer was
    # lost in the restart aside: they are in neither list)
    assert {t.game for t in runner.tables if shard_index(t.game) == 1} <= stored
    assert not stored & in_play
