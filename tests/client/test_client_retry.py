"""A request lost with the service that took it: an idempotent one is asked again soon, any
other waits out the client's timeout (sending it twice could do its work twice)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import nats
import pytest
from cardroom_client import CardroomError, Client
from cardroom_client.client import FIRST_ATTEMPT, NOBODY_SERVES_POLL
from nats.aio.msg import Msg


async def test_an_idempotent_request_lost_once_is_sent_again(
    nats_url: str, subject_root: str
) -> None:
    root = f"{subject_root}rt"
    subject = f"{root}.probe"
    seen: list[bytes] = []
    server = await nats.connect(nats_url)

    async def answer_the_second(msg: Msg) -> None:
        seen.append(msg.data)
        if len(seen) >= 2:  # the first is "lost": its taker died before answering
            await msg.respond(json.dumps({"ok": True, "n": len(seen)}).encode())

    await server.subscribe(subject, cb=answer_the_second)
    await server.flush()
    client = await Client.connect(nats_url, "retrier", subject_root=root, timeout=8.0)
    try:
        started = time.monotonic()
        reply = await client.request(subject, {"type": "x"}, idempotent=True)
        took = time.monotonic() - started
        assert reply == {"ok": True, "n": 2}
        assert seen == [seen[0], seen[0]]  # the very same request, sent again
        assert FIRST_ATTEMPT <= took < FIRST_ATTEMPT + 1.0

        # not idempotent: sent once, and the loss is the client's whole timeout
        seen.clear()
        client.timeout = 1.5
        started = time.monotonic()
        with pytest.raises(CardroomError) as refused:
            await client.request(f"{subject}", {"type": "y"}, idempotent=False)
        assert refused.value.code == "unavailable"
        assert time.monotonic() - started >= 1.5
        assert len(seen) == 1
    finally:
        await client.close()
        await server.close()


async def test_an_idempotent_request_nobody_answers_gives_up_at_the_timeout(
    nats_url: str, subject_root: str
) -> None:
    root = f"{subject_root}ru"
    subject = f"{root}.silent"
    seen: list[bytes] = []
    server = await nats.connect(nats_url)

    async def never(msg: Msg) -> None:
        seen.append(msg.data)

    await server.subscribe(subject, cb=never)
    await server.flush()
    client = await Client.connect(nats_url, "waiter", subject_root=root, timeout=3.5)
    try:
        started = time.monotonic()
        with pytest.raises(CardroomError) as refused:
            await client.request(subject, {"type": "x"}, idempotent=True)
        took = time.monotonic() - started
        assert refused.value.code == "unavailable"
        assert 3.5 <= took < 4.5
        assert len(seen) == 3  # sent at 0, 1 and 3 s (waiting 1, 2, then what is left)
    finally:
        await client.close()
        await server.close()


async def test_a_command_nobody_serves_is_asked_again_often(
    nats_url: str, subject_root: str
) -> None:
    """While no process serves commands (the gamemaster restarting) the SDK keeps asking
    every NOBODY_SERVES_POLL seconds at most, not at its slower back-off's pace, so the
    command is served right after a process subscribes."""
    root = f"{subject_root}rn"
    client = await Client.connect(nats_url, "poller", subject_root=root, timeout=5.0)
    server = await nats.connect(nats_url)
    attempts = 0
    eighth = asyncio.Event()
    command = client.command

    async def counted(*args: Any, **kwargs: Any) -> int:
        nonlocal attempts
        attempts += 1
        try:
            return await command(*args, **kwargs)
        finally:
            if attempts == 8:  # refused: the back-off alone would wait 0.5 s now
                eighth.set()

    client.command = counted  # type: ignore[method-assign]

    async def answer(msg: Msg) -> None:
        await msg.respond(json.dumps({"ok": True, "version": 7}).encode())

    try:
        sending = asyncio.create_task(client.send("g1", {"type": "x"}, retry_for=10))
        await eighth.wait()
        await server.subscribe(client.subjects.cmd("g1", "poller"), cb=answer)
        await server.flush()
        subscribed = time.monotonic()
        assert await sending == 7
        assert time.monotonic() - subscribed < NOBODY_SERVES_POLL + 0.25
    finally:
        await client.close()
        await server.close()
