"""Losing NATS, then PostgreSQL, for a few seconds each: the services reconnect by themselves,
the clients resync, every game finishes, and nobody missed or saw twice a notification.

The test starts its own embedded nats-server and PostgreSQL (the shared servers of the other
tests are never stopped), runs every service in this process, and stops each server for
``OUTAGE`` seconds while bots are playing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from cardroom_eventstore import EventStore
from cardroom_runtime import migrate
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from cardroom_runtime.postgres import create_database
from support.chaos import TableRunner, diagnose, task_stacks, verify
from support.outage import RestartableNats, RestartablePostgres
from support.timedstack import GAMES

from cardroom.services import SERVICES, ServiceName

OUTAGE = 3.0  # seconds each server is away
TABLES = 8

load_games(GAMES)

pytestmark = pytest.mark.timeout(300)


async def test_services_and_clients_ride_out_a_nats_and_a_postgres_outage() -> None:
    # PostgreSQL runs as another user when the tests run as root: a folder it can enter
    data = Path(tempfile.mkdtemp(prefix="cardroom-outage-"))
    os.chmod(data, 0o755)
    nats = RestartableNats(data / "nats")
    pg = RestartablePostgres(data / "pg")
    nats_url = await nats.start()
    admin_url = await pg.start()
    store: EventStore | None = None
    host: Host | None = None
    try:
        database_url = await create_database(admin_url, "cardroom")
        await migrate.upgrade_async(database_url)
        host = Host(
            SERVICES[ServiceName.all],
            nats_url=nats_url,
            database_url=database_url,
            subject_root="outage",
        )
        await host.start()
        store = await EventStore.connect(database_url)
        runner = TableRunner(
            nats_url, "outage", "highcard", {"rounds": 4}, players=2, concurrency=TABLES
        )
        runner.client_timeout = 2.0
        stop_starting = asyncio.Event()
        play = asyncio.create_task(
            runner.run(lambda: not stop_starting.is_set(), finish_timeout=200)
        )

        def notifications() -> int:
            return sum(
                len(seat.recorder.seen.get(t.game, [])) for t in runner.tables for seat in t.seats
            )

        async def progress(more: int, timeout: float = 60) -> None:
            target = notifications() + more
            async with asyncio.timeout(timeout):
                while notifications() < target:  # noqa: ASYNC110 -- recorders have no event
                    await asyncio.sleep(0.05)

        await progress(40)
        outages: dict[str, float] = {}

        # NATS goes away (every connection breaks), and comes back on the same port
        began = time.monotonic()
        nats.stop()
        await asyncio.sleep(OUTAGE)  # the outage itself, not a wait for something
        await nats.restart()
        assert nats.url == nats_url
        await progress(40)
        outages["nats"] = time.monotonic() - began

        # PostgreSQL goes away (every pooled connection dies), and comes back
        began = time.monotonic()
        await pg.stop()
        await asyncio.sleep(OUTAGE)
        assert await pg.start() == admin_url
        await progress(40)
        outages["postgres"] = time.monotonic() - began

        stop_starting.set()
        done, _ = await asyncio.wait([play], timeout=150)
        if not done:
            report = await diagnose(store, runner.tables)
            pytest.fail(f"games did not finish:\n{report}\n{task_stacks()}")
        assert not runner.errors, runner.errors[:3]
        counts = await verify(store, runner.tables)
        print(
            f"\noutages: {counts['games']} games, {counts['notifications']} notifications, "
            f"recovered after nats {outages['nats']:.1f}s, postgres {outages['postgres']:.1f}s "
            f"(each down {OUTAGE}s), {counts['away']} players marked away"
        )
        assert counts["games"] >= TABLES
    finally:
        if host is not None:
            await host.stop()
        if store is not None:
            await store.close()
        nats.stop()
        await pg.stop()
        shutil.rmtree(data, ignore_errors=True)
