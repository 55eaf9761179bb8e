"""Past one machine: the pipeline on a three-node NATS cluster survives the loss of a node.

Three nats-server processes form one cluster, JetStream on each; the events stream has three
replicas (the services create it with ``CARDROOM_JETSTREAM_REPLICAS=3``). Every service runs
as its own process with the cluster's server list (``CARDROOM_NATS_URL``, comma-separated),
and the bots' clients are spread over the three nodes. Mid-game the node that leads the
events stream is killed with SIGKILL; play goes on on the other two (a new stream leader,
clients moved to a survivor) until some tables have finished without it; then it is started
again with the same configuration and store and catches up. Afterwards every game has
finished, every event stream has contiguous versions, no command was applied twice, every
client received every notification exactly once, in order, and the replicated stream holds
every committed event exactly once, with all three replicas current.

Size (environment):

- ``CARDROOM_CLUSTER_GAMES``: at least this many games (default 36);
- ``CARDROOM_CLUSTER_TABLES``: tables played at once (default 6).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from cardroom_client import Client
from cardroom_eventstore import EventStore
from cardroom_runtime.games import load_games
from cardroom_runtime.nats import connect, ensure_stream
from cardroom_wire import Subjects
from sqlalchemy import text
from support.chaos import ChaosProcess, Table, env_int, verify
from support.cluster import NatsCluster, SpreadTableRunner, stream_placement, wait_until
from support.timedstack import GAMES, process_env

TABLES = env_int("CARDROOM_CLUSTER_TABLES", 6)
GAMES_WANTED = env_int("CARDROOM_CLUSTER_GAMES", 36)
SERVICES = ["gamemaster", "relay", "projector", "acktracker", "timers", "analytics"]
REPLICAS = 3

load_games(GAMES)


def _finished(tables: list[Table]) -> int:
    """Tables whose every seat has seen the game end."""
    return sum(
        all(s.bot is not None and _over(s.bot.finished.get(t.game)) for s in t.seats)
        for t in tables
    )


def _over(event: asyncio.Event | None) -> bool:
    return event is not None and event.is_set()


@pytest.mark.timeout(max(240, 4 * GAMES_WANTED))
async def test_losing_a_nats_node_mid_game_loses_nothing(
    subject_root: str,
    fresh_database: Callable[..., Awaitable[str]],
    tmp_path: Path,
) -> None:
    database_url = await fresh_database(migrated=True)
    root = f"{subject_root}cluster"
    subjects = Subjects(root)
    stream = subjects.events_stream
    cluster = NatsCluster(tmp_path / "nats", size=REPLICAS)
    store = await EventStore.connect(database_url)
    processes: dict[str, ChaosProcess] = {}
    nc = None
    started = time.monotonic()
    try:
        await cluster.start()
        # the test's own connection (stream info), with the whole list: it outlives the kill
        nc = await connect(cluster.url(), "cluster-test")
        js = nc.jetstream(timeout=2)
        created = await ensure_stream(js, stream, [subjects.events_all], replicas=REPLICAS)
        assert created.config.num_replicas == REPLICAS
        # each service's list starts with another node (nats-py then shuffles it)
        for i, name in enumerate(SERVICES):
            env = process_env(database_url, cluster.url(i), root)
            env["CARDROOM_JETSTREAM_REPLICAS"] = str(REPLICAS)
            processes[name] = ChaosProcess(name, env, tmp_path)
        await asyncio.gather(*(p.start() for p in processes.values()))
        # the services' own ensure_events_stream kept the stream at three replicas
        assert (await js.stream_info(stream)).config.num_replicas == REPLICAS

        runner = SpreadTableRunner(
            cluster.url(),
            root,
            "highcard",
            {"rounds": 1},
            players=2,
            concurrency=TABLES,
            cluster=cluster,
        )
        figures: dict[str, object] = {}
        stranded: list[Client] = []
        killing_done = asyncio.Event()

        async def placement() -> tuple[str | None, dict[str, bool]]:
            try:
                return await stream_placement(js, stream)
            except Exception:  # the test's connection is moving to a survivor, or no leader yet
                return None, {}

        async def messages() -> int:
            try:
                return (await js.stream_info(stream)).state.messages
            except Exception:  # no leader at this moment
                return -1

        async def killer() -> None:
            try:
                # mid-game: a round of tables finished and the next ones in play
                await wait_until(lambda: _finished(runner.tables) >= 1, 60, "a first game")
                await wait_until(lambda: len(runner.tables) >= TABLES + 2, 60, "tables")
                leader, _ = await placement()
                assert leader is not None, "the events stream has no leader"
                victim = cluster.node(leader)
                figures["victim"] = victim.name
                # the clients on it with a game still to play: they must move to finish it
                playing = {
                    id(s.client)
                    for t in runner.tables
                    for s in t.seats
                    if s.bot is not None and not _over(s.bot.finished.get(t.game))
                }
                stranded.extend(c for c in runner.connected_to(victim) if id(c) in playing)
                killed_at = time.monotonic()
                victim.kill()

                async def new_leader() -> bool:
                    now, _ = await placement()
                    return now is not None and now != victim.name

                figures["new leader after"] = await wait_until(new_leader, 60, "a new leader")
                # play goes on without it, and the stream takes writes on the two left: another
                # round of tables finishes and the relay adds their events
                finished_before = _finished(runner.tables)
                held = -1

                async def counted() -> bool:
                    nonlocal held
                    held = await messages()
                    return held >= 0

                await wait_until(counted, 30, "the stream's message count")
                await wait_until(
                    lambda: _finished(runner.tables) >= finished_before + TABLES,
                    120,
                    "games finishing on two nodes",
                )

                async def grown() -> bool:
                    return await messages() >= held + TABLES

                await wait_until(grown, 60, "events relayed to two nodes")
                figures["written on two"] = await messages() - held
                restarted_at = time.monotonic()
                figures["down"] = restarted_at - killed_at
                await cluster.restart(victim)
                figures["back after"] = time.monotonic() - restarted_at

                async def caught_up() -> bool:
                    now, peers = await placement()
                    return now is not None and len(peers) == REPLICAS - 1 and all(peers.values())

                figures["caught up after"] = await wait_until(caught_up, 60, "replicas current")
            finally:
                killing_done.set()

        def keep_going() -> bool:
            return not killing_done.is_set() or len(runner.tables) < GAMES_WANTED

        kill_task = asyncio.create_task(killer())
        await runner.run(keep_going, finish_timeout=180)
        await kill_task
        assert not runner.errors, runner.errors[:3]
        counts = await verify(store, runner.tables)

        # the replicated stream holds every committed event once (the relay's copies after
        # the leader change were dropped as duplicates), on every replica
        async with store.engine.connect() as conn:
            committed = (await conn.execute(text("SELECT count(*) FROM events"))).scalar_one()

        async def relayed() -> bool:
            return await messages() >= committed

        await wait_until(relayed, 60, f"{committed} events in {stream}")
        info = await js.stream_info(stream)
        assert info.state.messages == committed
        assert info.config.num_replicas == REPLICAS
        assert info.cluster is not None
        assert len(info.cluster.replicas or []) == REPLICAS - 1
        assert all(p.current and not p.offline for p in info.cluster.replicas or [])
    finally:
        if nc is not None:
            await nc.close()
        for p in processes.values():
            p.stop()
        cluster.stop()
        await store.close()
    victim = cluster.node(str(figures["victim"]))
    reconnects = runner.reconnects()
    elapsed = time.monotonic() - started
    print(
        f"\nNATS cluster of {REPLICAS}: {counts['games']} games, {counts['events']} events, "
        f"{counts['notifications']} notifications; killed {victim.name} (the stream leader) "
        f"with {len(stranded)} playing bot clients on it; a new leader after "
        f"{figures['new leader after']:.1f}s, down {figures['down']:.1f}s, healthy and current "
        f"{figures['back after']:.1f}s after its restart (stream replicas current "
        f"{figures['caught up after']:.1f}s later), {figures['written on two']} events written "
        f"while it was down; {reconnects} client reconnects; "
        f"{committed} events in the stream; {elapsed:.0f}s; logs in {tmp_path}"
    )
    assert counts["games"] >= GAMES_WANTED
    assert (victim.kills, victim.starts) == (1, 2)
    # every client playing on the lost node moved to a survivor and carried on
    assert stranded, "no bot was playing on the node killed"
    assert all(c.nc.stats["reconnects"] >= 1 for c in stranded)
