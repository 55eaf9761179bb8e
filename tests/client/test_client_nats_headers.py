"""Anybody allowed to publish on a subject may send any header block with a message, and
any bytes in a wildcard token of the subject. nats-py read some of them (not UTF-8, a block
cut short) by raising in its one reading task, which then ended: the connection stayed
"connected" and heard nothing more. One player's hostile message on its command subject
deafened the services for every game. The SDK's mend (``cardroom_client.natsfix``) takes a
header block it cannot read as none, drops a message it still cannot read, and reads on;
these tests send each such message over a bare TCP connection to a real server."""

from __future__ import annotations

import asyncio
import json

import cardroom_client  # noqa: F401 -- the mend is made when the SDK is imported
import nats
import pytest
from nats.aio.msg import Msg
from support.hostile import UNREADABLE_HEADERS, hpub

WAIT = 10
"""Seconds a message that must arrive is waited for: a bound on a hang, not a pace (a loaded
machine can stall a second or two)."""


async def _hostile_publisher(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = url.removeprefix("nats://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    assert (await reader.readline()).startswith(b"INFO ")
    connect = {"verbose": False, "pedantic": False, "protocol": 1, "headers": True}
    writer.write(f"CONNECT {json.dumps(connect)}\r\nPING\r\n".encode())
    assert await reader.readline() == b"PONG\r\n"
    return reader, writer


@pytest.mark.parametrize(
    ("what", "headers"), UNREADABLE_HEADERS, ids=[h[0] for h in UNREADABLE_HEADERS]
)
async def test_a_connection_hears_on_after_unreadable_headers(
    nats_url: str, what: str, headers: bytes
) -> None:
    nc = await nats.connect(nats_url)
    reader, writer = await _hostile_publisher(nats_url)
    try:
        got: asyncio.Queue[Msg] = asyncio.Queue()

        async def heard(msg: Msg) -> None:
            got.put_nowait(msg)

        await nc.subscribe("headerfix.test", cb=heard)
        await nc.flush()
        writer.write(hpub("headerfix.test", headers, b"hostile") + b"PING\r\n")
        await writer.drain()
        assert await reader.readline() == b"PONG\r\n"  # the server has delivered it
        await nc.publish("headerfix.test", b"after")
        await nc.flush(timeout=WAIT)
        async with asyncio.timeout(WAIT):
            first, second = await got.get(), await got.get()
        # the hostile message arrives as its body alone (the body is checked as ever), and
        # the connection reads on
        assert (first.data, first.headers) == (b"hostile", None)
        assert second.data == b"after"
        assert nc.is_connected
    finally:
        writer.close()
        await nc.close()


async def test_readable_headers_still_arrive(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        sub = await nc.subscribe("headerfix.readable")
        await nc.publish("headerfix.readable", b"body", headers={"traceparent": "00-ab-cd-01"})
        msg = await sub.next_msg(timeout=WAIT)
        assert msg.headers == {"traceparent": "00-ab-cd-01"}
    finally:
        await nc.close()


async def test_a_connection_hears_on_after_a_subject_that_is_not_utf8(nats_url: str) -> None:
    """A wildcard token of a subject is its publisher's to write too: nats-py could not read
    one that is not UTF-8 either. The message is dropped (nothing can tell whom to answer);
    the connection reads on."""
    nc = await nats.connect(nats_url)
    reader, writer = await _hostile_publisher(nats_url)
    try:
        sub = await nc.subscribe("headerfix.*.token")
        await nc.flush()
        writer.write(b"PUB headerfix.\xff\xfe.token 7\r\nhostile\r\nPING\r\n")
        await writer.drain()
        assert await reader.readline() == b"PONG\r\n"  # the server has delivered it
        await nc.publish("headerfix.plain.token", b"after")
        msg = await sub.next_msg(timeout=WAIT)
        assert (msg.subject, msg.data) == ("headerfix.plain.token", b"after")
        assert nc.is_connected
    finally:
        writer.close()
        await nc.close()
