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
from cardroom_wire import Subjects
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


async def test_a_request_cancelled_as_its_reply_comes_is_cancelled() -> None:
    """Python 3.11's ``asyncio.wait_for``, which nats-py's request awaits, returns the result
    when the task is cancelled in the instant the reply arrives, and the cancellation is
    lost: a bot stopped then played on (a benchmark's stop waited out its 30 s for it). The
    client raises the cancellation all the same; a request of a task cancelled before it
    began, and finishing its cleanup, is answered as usual."""
    loop = asyncio.get_running_loop()
    reply = Msg(_client=None, subject="s", data=json.dumps({"ok": True}).encode())  # type: ignore[arg-type]

    class ReplyAndCancelAtOnce:
        async def request(self, subject: str, data: bytes, **_: Any) -> Msg:
            answer: asyncio.Future[Msg] = loop.create_future()
            task = asyncio.current_task()
            assert task is not None

            def arrive() -> None:  # the reply, and the cancellation, in one turn of the loop
                answer.set_result(reply)
                task.cancel()

            loop.call_soon(arrive)
            return await asyncio.wait_for(answer, 5)

    client = Client(ReplyAndCancelAtOnce(), "p", Subjects("r"), timeout=5)  # type: ignore[arg-type]
    asker = asyncio.create_task(client.request("r.x", {"type": "x"}))
    with pytest.raises(asyncio.CancelledError):
        await asker
    assert asker.cancelled()

    class Answers:
        async def request(self, subject: str, data: bytes, **_: Any) -> Msg:
            return reply

    async def clean_up_after_a_cancel() -> dict[str, Any]:
        client.nc = Answers()  # type: ignore[assignment]
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            return await client.request("r.bye", {"type": "bye"})
        raise AssertionError("not cancelled")

    cleaner = asyncio.create_task(clean_up_after_a_cancel())
    await asyncio.sleep(0)
    cleaner.cancel()
    assert await cleaner == {"ok": True}


async def test_a_sync_in_the_background_ends_quietly_when_the_connection_closes() -> None:
    """A sync the client starts by itself (after a reconnect, or for a gap in a game's
    notifications) whose connection is closing ends without an error nobody retrieves; the
    client holds the task until then."""
    from nats.errors import ConnectionClosedError

    asked: list[str] = []

    class Closed:
        async def request(self, subject: str, data: bytes, **_: Any) -> Msg:
            asked.append(subject)
            raise ConnectionClosedError

    client = Client(Closed(), "p", Subjects("r"), timeout=5)  # type: ignore[arg-type]
    client._feeds["g1"] = client._feed("g1")
    client._resync_all()
    assert len(client._syncs) == 1
    (task,) = client._syncs
    await task
    assert task.exception() is None
    assert asked == ["r.sync.g1.p"]
    assert not client._syncs
