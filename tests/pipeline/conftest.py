"""A whole cardroom for one test: its own database, its own subject root, the test game.

``stack`` runs every service in this process (as ``cardroom serve all`` does);
``process_stack`` runs each service as its own OS process (``cardroom serve <name>``), so a
test can kill one with SIGKILL and start it again.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from cardroom_eventstore import EventStore
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from support.stack import ProcessStack, ServiceProcess, Stack

from cardroom.services import SERVICES, ServiceName

TESTS = Path(__file__).resolve().parents[1]
GAMES = "support.highcard:GAME"
_counter = itertools.count()

load_games(GAMES)


@pytest.fixture
async def stack(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> AsyncIterator[Stack]:
    database_url = await fresh_database(migrated=True)
    root = f"{subject_root}s{next(_counter)}"
    host = Host(
        SERVICES[ServiceName.all], nats_url=nats_url, database_url=database_url, subject_root=root
    )
    await host.start()
    stack = Stack(nats_url, database_url, root, host.store, host=host)
    try:
        yield stack
    finally:
        await stack.close_clients()
        await host.stop()


@pytest.fixture
async def process_stack(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> AsyncIterator[ProcessStack]:
    database_url = await fresh_database(migrated=True)
    root = f"{subject_root}p{next(_counter)}"
    env = {
        **os.environ,
        "CARDROOM_DATABASE_URL": database_url,
        "CARDROOM_NATS_URL": nats_url,
        "CARDROOM_SUBJECT_ROOT": root,
        "CARDROOM_GAMES": GAMES,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    store = await EventStore.connect(database_url)
    stack = ProcessStack(nats_url, database_url, root, store)
    for name in ("gamemaster", "relay", "projector", "acktracker"):
        stack.processes[name] = ServiceProcess(name, env)
    try:
        await asyncio.gather(*(p.start() for p in stack.processes.values()))
        yield stack
    finally:
        await stack.close_clients()
        for p in stack.processes.values():
            p.stop()
        await store.close()
