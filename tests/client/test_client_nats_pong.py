"""A flush that is given up (cancelled, or timed out) leaves its PING's future behind in
nats-py's list of PONGs awaited; when that PONG comes, nats-py set a result on the cancelled
future, its read loop stopped on the error, and the connection went deaf without
reconnecting: every later flush waited its whole timeout (a client's close drains with
flushes: a bot's close then took 30 s) and no message arrived. The client SDK mends
nats-py's PONG handling (``cardroom_client.natsfix``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import cardroom_client  # noqa: F401 -- the mend is made when the SDK is imported
import nats
import pytest


async def test_a_connection_hears_after_a_flush_was_given_up(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        got: asyncio.Queue[bytes] = asyncio.Queue()

        async def heard(msg: nats.aio.msg.Msg) -> None:
            got.put_nowait(msg.data)

        await nc.subscribe("pongfix.test", cb=heard)
        given_up = asyncio.ensure_future(nc.flush(timeout=5))
        await asyncio.sleep(0)  # its PING is sent, its future awaited
        given_up.cancel()
        with pytest.raises(asyncio.CancelledError):
            await given_up
        for i in range(3):  # the PONG of the given-up flush, then these ones
            await nc.flush(timeout=10)  # bounds on a hang, not a pace
            await nc.publish("pongfix.test", b"%d" % i)
        async with asyncio.timeout(10):
            assert [await got.get() for _ in range(3)] == [b"0", b"1", b"2"]
        assert nc.is_connected
    finally:
        await nc.close()


def test_a_service_process_is_mended_without_importing_the_client() -> None:
    """The services' connections (FastStream's, nats-py's client underneath) are mended as
    soon as the runtime's host is imported, and the client SDK's own module (its imports
    cost a service's start) is not loaded for it."""
    probe = (
        "import sys\n"
        "import cardroom_runtime.host\n"
        "from nats.aio.client import Client\n"
        "mended = (Client._process_pong, Client._process_headers, Client._process_msg)\n"
        "print(*(m.__module__ for m in mended), 'cardroom_client.client' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == [*["cardroom_client.natsfix"] * 3, "False"]
