"""Crash safety: bots play games while every service process is killed with SIGKILL at random
moments, several times each, and started again. Afterwards every game has finished, every
event stream has contiguous versions, no command was applied twice, and every client received
every notification exactly once, in order.

Size (environment; ``make chaos`` runs a bigger one):

- ``CARDROOM_CHAOS_GAMES``: at least this many games (default 100);
- ``CARDROOM_CHAOS_KILLS``: kills of each of the five services (default 2);
- ``CARDROOM_CHAOS_TABLES``: tables played at once (default 10);
- ``CARDROOM_CHAOS_SEED``: the random seed of the kill plan (default: random, printed).

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
from cardroom_eventstore import EventStore
from cardroom_runtime.games import load_games
from support.chaos import ChaosProcess, TableRunner, env_int, shuffled_kills, verify
from support.timedstack import GAMES, process_env

GAMES_WANTED = env_int("CARDROOM_CHAOS_GAMES", 100)
KILLS_EACH = env_int("CARDROOM_CHAOS_KILLS", 2)
TABLES = env_int("CARDROOM_CHAOS_TABLES", 10)
SERVICES = ["gamemaster", "relay", "projector", "acktracker", "timers"]

load_games(GAMES)

# generous: the CI size takes about two minutes on two cores
pytestmark = pytest.mark.timeout(max(300, 3 * GAMES_WANTED + 60 * KILLS_EACH * len(SERVICES)))


async def test_killing_every_service_again_and_again_loses_nothing(
    nats_url: str,
    subject_root: str,
    fresh_database: Callable[..., Awaitable[str]],
    tmp_path: Path,
) -> None:
    seed = env_int("CARDROOM_CHAOS_SEED", random.randrange(1_000_000))
    rng = random.Random(seed)
    database_url = await fresh_database(migrated=True)
    root = f"{subject_root}chaos"
    env = process_env(database_url, nats_url, root)
    processes = {name: ChaosProcess(name, env, tmp_path) for name in SERVICES}
    store = await EventStore.connect(database_url)
    runner = TableRunner(nats_url, root, "highcard", {"rounds": 1}, players=2, concurrency=TABLES)
    started = time.monotonic()
    try:
        await asyncio.gather(*(p.start() for p in processes.values()))
        plan = shuffled_kills(SERVICES, KILLS_EACH, rng)
        killing_done = asyncio.Event()

        async def killer() -> None:
            try:
                await _wait_for_tables(runner, 2 * TABLES)
                for victim in plan:
                    await asyncio.sleep(rng.uniform(0.2, 2.0))  # a random moment of play
                    processes[victim].kill()
                    await processes[victim].start()
            finally:
                killing_done.set()

        def keep_going() -> bool:
            return not killing_done.is_set() or len(runner.tables) < GAMES_WANTED

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
        f"\nchaos (seed {seed}): {counts['games']} games, {counts['events']} events, "
        f"{counts['notifications']} notifications, kills {kills} "
        f"({sum(kills.values())} in all), {counts['away']} players marked away, "
        f"{counts['house']} house moves, {elapsed:.0f}s; logs in {tmp_path}"
    )
    assert counts["games"] >= GAMES_WANTED
    assert kills == dict.fromkeys(SERVICES, KILLS_EACH)
    assert all(p.starts == KILLS_EACH + 1 for p in processes.values())


async def _wait_for_tables(runner: TableRunner, n: int) -> None:
    while len(runner.tables) < n:  # noqa: ASYNC110 -- the runner has no event to wait on
        await asyncio.sleep(0.05)
