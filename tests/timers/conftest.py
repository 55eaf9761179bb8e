"""A whole cardroom for one timers test: its own database and subject root, the two test games
(``highcard`` and ``timedhighcard``), and a timers service that looks often.

``timed_stack`` runs every service in this process; ``make_stack(timers=...)`` lets a test
choose the timers service class (a ManualClock one), or run none (``timers=None``, for a test
that runs it as its own process).
"""

from __future__ import annotations

import asyncio
import itertools
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from cardroom_acktracker import AckTracker
from cardroom_gamemaster import Gamemaster
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host, Service
from cardroom_timers import Timers
from support.timedstack import GAMES, MakeStack, QuickTimers, TimedStack, process_env

_counter = itertools.count()

load_games(GAMES)


@pytest.fixture
async def make_stack(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> AsyncIterator[MakeStack]:
    made: list[TimedStack] = []

    async def make(timers: type[Timers] | None = QuickTimers) -> TimedStack:
        database_url = await fresh_database(migrated=True)
        root = f"{subject_root}t{next(_counter)}"
        services: list[type[Service]] = [Gamemaster, Relay, Projector, AckTracker]
        if timers is not None:
            services.append(timers)
        host = Host(services, nats_url=nats_url, database_url=database_url, subject_root=root)
        await host.start()
        env = process_env(database_url, nats_url, root)
        stack = TimedStack(nats_url, database_url, root, host.store, host=host, env=env)
        made.append(stack)
        return stack

    yield make
    for stack in made:
        # Client.close can wait for ever on a feed task whose cancellation Python 3.11's
        # asyncio.wait_for swallowed (a libs/client bug): bounded, the host goes regardless
        closing = asyncio.ensure_future(stack.close_clients())
        done, _ = await asyncio.wait([closing], timeout=15)
        if not done:
            warnings.warn("closing the clients took more than 15s", stacklevel=1)
        if stack.host is not None:
            await stack.host.stop()


@pytest.fixture
async def timed_stack(make_stack: MakeStack) -> TimedStack:
    return await make_stack()
