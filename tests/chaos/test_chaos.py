"""Crash safety: bots play games while every service process is killed with SIGKILL at random
moments, several times each, and started again. Afterwards every game has finished, every
event stream has contiguous versions, no command was applied twice, and every client received
every notification exactly once, in order. Twice: with one process of each service, and with
two of each (analytics too), sharing the work as a scaled-out deployment does (queue groups,
the projector's deliver group, the relay's tracking lock, the timers' leases, analytics'
lead), one instance killed at a time while the other carries on. With two of each,
one instance of each service is killed, which one drawn from the seed (the instances run
the same code; a restart is most of this test's time); ``make chaos`` kills every instance.
A restart at once cannot show that the sibling carries on alone (a replica that was deaf all
along would go unnoticed), so with two of each, each killed instance is held down in turn
until games started after its kill have finished and every follower has caught up (with the
timers down, until a table whose players never act has had its turns ended by deadlines). At
CI's size that hold-down is its only kill (``make chaos`` kills each at random moments first).

Size (environment; ``make chaos`` runs a bigger one):

- ``CARDROOM_CHAOS_GAMES``: at least this many games (default 100; 60 with two instances);
- ``CARDROOM_CHAOS_KILLS``: kills of each killed service process at random moments (default
  1, and 0 with two instances, whose hold-downs kill each victim once more; ``make chaos``:
  6, again and again);
- ``CARDROOM_CHAOS_TABLES``: tables played at once (default 10);
- ``CARDROOM_CHAOS_SEED``: the random seed of the kill plan (default: random, printed);
- ``CARDROOM_CHAOS_EVERY_INSTANCE``: 1 to kill every instance, not one of each service.

New tables keep starting until both the games and the kills are done, so every kill lands
while games are being played.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from cardroom_analytics.schema import game_types
from cardroom_eventstore import EventStore
from cardroom_runtime.games import load_games
from support.chaos import ChaosProcess, TableRunner, env_int, shuffled_kills, verify
from support.stack import projected, wait_until
from support.timedstack import GAMES, process_env

TABLES = env_int("CARDROOM_CHAOS_TABLES", 10)
EVERY_INSTANCE = env_int("CARDROOM_CHAOS_EVERY_INSTANCE", 0) == 1
SERVICES = ["gamemaster", "relay", "projector", "acktracker", "timers"]
SCALED = [*SERVICES, "analytics"]
# (instances of each service, the services, at least this many games, kills of each process)
SIZES = {
    1: (SERVICES, env_int("CARDROOM_CHAOS_GAMES", 100), env_int("CARDROOM_CHAOS_KILLS", 1)),
    2: (SCALED, env_int("CARDROOM_CHAOS_GAMES", 60), env_int("CARDROOM_CHAOS_KILLS", 0)),
}

load_games(GAMES)


# generous: the CI sizes take about two minutes each on two cores
@pytest.mark.timeout(max(300, max(3 * g + 60 * k * len(s) * n for n, (s, g, k) in SIZES.items())))
@pytest.mark.parametrize("instances", sorted(SIZES))
async def test_killing_every_service_again_and_again_loses_nothing(
    instances: int,
    nats_url: str,
    subject_root: str,
    fresh_database: Callable[..., Awaitable[str]],
    tmp_path: Path,
) -> None:
    services, games_wanted, kills_each = SIZES[instances]
    seed = env_int("CARDROOM_CHAOS_SEED", random.randrange(1_000_000))
    rng = random.Random(seed)
    database_url = await fresh_database(migrated=True)
    root = f"{subject_root}chaos{instances}"
    env = process_env(database_url, nats_url, root)
    processes = {
        f"{name}{i}": ChaosProcess(name, env, tmp_path, label=f"{name}{i}")
        for name in services
        for i in range(instances)
    }
    store = await EventStore.connect(database_url)
    runner = TableRunner(nats_url, root, "highcard", {"rounds": 1}, players=2, concurrency=TABLES)
    started = time.monotonic()
    try:
        await asyncio.gather(*(p.start() for p in processes.values()))
        victims = [
            f"{name}{i}"
            for name in services
            for i in (range(instances) if EVERY_INSTANCE else [rng.randrange(instances)])
        ]
        plan = shuffled_kills(victims, kills_each, rng)
        killing_done = asyncio.Event()

        async def killer() -> None:
            try:
                await _wait_for_tables(runner, 2 * TABLES)
                for victim in plan:
                    await asyncio.sleep(rng.uniform(0.2, 2.0))  # a random moment of play
                    processes[victim].kill()
                    await processes[victim].start()
                if instances > 1:
                    for victim in rng.sample(victims, len(victims)):
                        await _alone(processes[victim], runner, store)
            finally:
                killing_done.set()

        def keep_going() -> bool:
            return not killing_done.is_set() or len(runner.tables) < games_wanted

        kill_task = asyncio.create_task(killer())
        await runner.run(keep_going, finish_timeout=240)
        await kill_task
        assert not runner.errors, runner.errors[:3]
        counts = await verify(store, runner.tables)
    finally:
        for p in processes.values():
            p.stop()
        await store.close()
    kills = {name: p.kills for name, p in processes.items()}
    elapsed = time.monotonic() - started
    print(
        f"\nchaos, {instances} of each (seed {seed}): {counts['games']} games, "
        f"{counts['events']} events, "
        f"{counts['notifications']} notifications, kills {kills} "
        f"({sum(kills.values())} in all), {counts['away']} players marked away, "
        f"{counts['house']} house moves, {elapsed:.0f}s; logs in {tmp_path}"
    )
    assert counts["games"] >= games_wanted
    held = 1 if instances > 1 else 0  # each victim held down once more, at the end
    assert kills == {name: kills_each + held if name in victims else 0 for name in processes}
    assert all(p.starts == kills[name] + 1 for name, p in processes.items())


async def _alone(victim: ChaosProcess, runner: TableRunner, store: EventStore) -> None:
    """``victim`` killed and kept down while its sibling carries on alone: games started
    after the kill finish (commands, acks, the gates' releases), the projector has projected
    them, the relay has published and analytics has counted everything appended meanwhile.
    Then it starts again."""
    victim.kill()
    first = len(runner.tables)

    def played() -> list[int]:
        return [i for i in runner.finished if i >= first]

    await wait_until(lambda: len(played()) >= TABLES, timeout=120)
    for i in played():
        await projected(store, runner.tables[i].game)
    async with store.engine.connect() as conn:
        head = int(await conn.scalar(sa.text("SELECT coalesce(max(position), 0) FROM events")))
        count = int(await conn.scalar(sa.text("SELECT count(*) FROM events")))

    async def relayed() -> bool:
        return await store.checkpoint("relay") >= head

    async def counted() -> bool:
        async with store.engine.connect() as conn:
            total = await conn.scalar(sa.select(sa.func.sum(game_types.c.events)))
        return int(total or 0) >= count

    await wait_until(relayed, timeout=60)
    if victim.name == "timers":
        await _deadlines_fire(runner, store)
    # a killed analytics leader's batch comes back after the consumer's ack wait (10 s)
    await wait_until(counted, timeout=90)
    await victim.start()


async def _deadlines_fire(runner: TableRunner, store: EventStore) -> None:
    """The bots' games have no deadline: a table whose players never act shows that the
    timers instance left alone fires deadlines (each turn ends by its own)."""
    game, seats = await runner.silent("timedhighcard", {"rounds": 1, "think": 0.3})
    try:

        async def timed_out() -> bool:
            records = await store.read_stream(game)
            return sum("timeout" in r.metadata for r in records) >= runner.players

        await wait_until(timed_out, timeout=60)
    finally:
        await asyncio.gather(*(seat.client.close() for seat in seats))


async def _wait_for_tables(runner: TableRunner, n: int) -> None:
    while len(runner.tables) < n:  # noqa: ASYNC110 -- the runner has no event to wait on
        await asyncio.sleep(0.05)
