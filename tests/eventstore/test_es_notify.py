"""wait_for_append: LISTEN/NOTIFY wake-ups for tailing readers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from cardroom_eventstore import Append, EventStore, NewEvent
from sqlalchemy import text

OpenStore = Callable[..., Awaitable[EventStore]]


async def test_wait_for_append_wakes_on_append_from_another_connection(
    open_store: OpenStore,
) -> None:
    reader = await open_store()
    writer = await open_store()
    # The first call starts listening; nothing was appended, so it times out.
    assert await reader.wait_for_append(0.05) is False

    waiting = asyncio.create_task(reader.wait_for_append(30))
    await asyncio.sleep(0)  # let the waiter start waiting (not needed for correctness)
    started = time.monotonic()
    await writer.append(Append("g", "take5", 0, [NewEvent("e", {})]))
    assert await waiting is True
    assert time.monotonic() - started < 10

    # A notification that arrives while nobody waits is not lost: the next call returns at once.
    await writer.append(Append("g", "take5", 1, [NewEvent("e", {})]))
    deadline = time.monotonic() + 30
    assert await reader.wait_for_append(30) is True
    assert time.monotonic() < deadline
    # ... and consumed: with no new append the following call times out.
    assert await reader.wait_for_append(0.05) is False

    # A rolled-back append notifies nobody.
    async with writer.engine.connect() as conn:
        await conn.execute(text("SELECT pg_notify('unrelated', '')"))
    assert await reader.wait_for_append(0.05) is False


async def test_wait_for_append_survives_a_dead_listener(
    open_store: OpenStore, es_database_url: str
) -> None:
    reader = await open_store()
    writer = await open_store()
    assert await reader.wait_for_append(0.05) is False

    # Kill the listener's backend from another connection.
    async with writer.engine.connect() as conn:
        killed = await conn.scalar(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND query LIKE 'LISTEN%'"
            )
        )
    assert killed == 1
    # The waiter is told it may have missed appends (True), and listening resumes.
    assert await reader.wait_for_append(30) is True
    assert await reader.wait_for_append(0.05) is False
    waiting = asyncio.create_task(reader.wait_for_append(30))
    await writer.append(Append("g", "take5", 0, [NewEvent("e", {})]))
    assert await waiting is True
