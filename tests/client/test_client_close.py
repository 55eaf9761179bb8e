"""Closing a client drains its connection. nats-py's drain swallows a cancellation (the
caller went on as if never cancelled) and leaves the gathered future of its subscriptions'
drains holding a CancelledError nobody retrieves, which asyncio logs as an error. A close
that is cancelled raises the cancellation, logs nothing, and the connection still closes."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest
from cardroom_client import Client
from nats.aio.msg import Msg
from support.stack import wait_until


async def test_a_cancelled_close_is_cancelled_logs_nothing_and_still_closes(
    nats_url: str, subject_root: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = await Client.connect(nats_url, "closer", subject_root=f"{subject_root}close")
    handling = asyncio.Event()
    let_go = asyncio.Event()

    async def slow(msg: Msg) -> None:  # a message still being handled holds the drain
        handling.set()
        await let_go.wait()

    await client.nc.subscribe("closefix.test", cb=slow)
    await client.nc.publish("closefix.test", b"x")
    await client.nc.flush()
    async with asyncio.timeout(10):
        await handling.wait()
    caplog.set_level(logging.ERROR, logger="asyncio")
    closing = asyncio.ensure_future(client.close())
    await wait_until(lambda: client.nc.is_draining, timeout=10)
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    let_go.set()
    await wait_until(lambda: client.nc.is_closed, timeout=10)
    gc.collect()  # an unretrieved exception is logged when its future is collected
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
