"""cardroom_runtime.nats against the test NATS server."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

import pytest
from cardroom_runtime.embedded import free_port
from cardroom_runtime.metrics import Metrics
from cardroom_runtime.nats import DUPLICATE_WINDOW, connect, ensure_stream, subscribe_group
from cardroom_wire import Subjects
from nats.aio.msg import Msg
from nats.js.api import StorageType
from nats.js.errors import APIError
from support.stack import wait_until


async def test_connect_and_request(nats_url: str, subject_root: str) -> None:
    nc = await connect(nats_url, f"{subject_root}-test")
    try:
        assert nc.is_connected
        assert nc.options["max_reconnect_attempts"] == -1  # reconnects forever

        async def echo(msg) -> None:  # type: ignore[no-untyped-def]
            await msg.respond(msg.data.upper())

        await nc.subscribe(f"{subject_root}.echo", cb=echo)
        reply = await nc.request(f"{subject_root}.echo", b"hi", timeout=10)
        assert reply.data == b"HI"
    finally:
        await nc.close()


async def test_connect_to_nothing_fails_within_its_timeout() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises((TimeoutError, asyncio.TimeoutError)):
        await connect(f"nats://127.0.0.1:{free_port()}", "nobody", connect_timeout=1)
    assert loop.time() - started < 5


async def test_ensure_stream_is_idempotent(nats_url: str, subject_root: str) -> None:
    nc = await connect(nats_url, f"{subject_root}-streams")
    try:
        js = nc.jetstream()
        name = f"{subject_root}_ENSURE"
        first = await ensure_stream(js, name, [f"{subject_root}.ensure.>"])
        assert first.config.storage == StorageType.FILE
        assert first.config.duplicate_window == DUPLICATE_WINDOW
        await js.publish(f"{subject_root}.ensure.a", b"1", headers={"Nats-Msg-Id": "m1"})

        again = await ensure_stream(js, name, [f"{subject_root}.ensure.>"])
        assert again.state.messages == 1  # not recreated

        dup = await js.publish(f"{subject_root}.ensure.a", b"1", headers={"Nats-Msg-Id": "m1"})
        assert dup.duplicate

        wider = [f"{subject_root}.ensure.>", f"{subject_root}.more.>"]
        changed = await ensure_stream(js, name, wider)
        assert sorted(changed.config.subjects or []) == sorted(wider)
        assert changed.state.messages == 1
        await js.delete_stream(name)
    finally:
        await nc.close()


async def test_connect_takes_a_server_list_and_skips_a_dead_server(
    nats_url: str, subject_root: str
) -> None:
    dead = f"nats://127.0.0.1:{free_port()}"
    nc = await connect(f"{dead}, {nats_url}", f"{subject_root}-list", dont_randomize=True)
    try:
        assert nc.is_connected
        assert nc.connected_url is not None
        assert nc.connected_url.port == int(nats_url.rsplit(":", 1)[1])
    finally:
        await nc.close()


async def test_a_single_server_refuses_more_than_one_replica(
    nats_url: str, subject_root: str
) -> None:
    nc = await connect(nats_url, f"{subject_root}-replicas")
    try:
        js = nc.jetstream()
        name = f"{subject_root}_REPLICAS"
        one = await ensure_stream(js, name, [f"{subject_root}.replicas.>"], replicas=1)
        assert one.config.num_replicas == 1
        with pytest.raises(APIError, match="replicas > 1 not supported"):
            await ensure_stream(js, name, [f"{subject_root}.replicas.>"], replicas=3)
        await js.delete_stream(name)
    finally:
        await nc.close()


async def test_replicas_that_start_at_once_all_get_their_share(
    nats_url: str, subject_root: str
) -> None:
    """Four replicas of a push consumer join at the same moment, as ``docker compose up
    --scale projector=4`` starts them: each finds no consumer and creates it. Every one of
    them then takes a share of the stream, and each message reaches one replica once (with
    an inbox per replica, the last creation took every message and the others none)."""
    s = Subjects(f"{subject_root}grp")
    conns = [await connect(nats_url, f"{subject_root}-replica{i}") for i in range(4)]
    js = conns[0].jetstream()
    try:
        await ensure_stream(js, s.events_stream, [s.events_all])
        got: list[list[bytes]] = [[] for _ in conns]
        every = asyncio.Event()

        def taker(i: int):  # type: ignore[no-untyped-def]
            async def take(msg: Msg) -> None:
                got[i].append(msg.data)
                await msg.ack()
                if sum(map(len, got)) >= 200:
                    every.set()

            return take

        await asyncio.gather(
            *(
                subscribe_group(
                    nc.jetstream(),
                    s.events_all,
                    stream=s.events_stream,
                    group=f"{s.root}-grp",
                    deliver_subject=s.delivery("grp"),
                    cb=taker(i),
                    ack_wait=5.0,
                )
                for i, nc in enumerate(conns)
            )
        )
        for n in range(200):
            await js.publish(f"{s.root}.events.g.x", str(n).encode())
        await asyncio.wait_for(every.wait(), 20)
        taken = sorted(int(b) for share in got for b in share)
        assert taken == list(range(200))  # each once
        # a queue group hands each message to a replica at random: with four listening, one
        # that takes none of 200 is (3/4)^200 unlikely, and certain when it hears nothing
        assert all(share for share in got), [len(share) for share in got]
        info = await js.consumer_info(s.events_stream, f"{s.root}-grp")
        assert info.config.deliver_subject == s.delivery("grp")
    finally:
        with contextlib.suppress(Exception):
            await js.delete_stream(s.events_stream)
        for nc in conns:
            await nc.close()


async def test_a_services_own_connection_counts_its_losses_with_the_hosts(
    nats_url: str,
) -> None:
    """The relay and analytics hold a NATS connection of their own beside the host's: given
    the host's metrics, its losses and reconnections count in the same counters. The
    connection goes through a relay of bytes that the test cuts."""
    target = urlsplit(nats_url.split(",")[0])
    cut: list[asyncio.StreamWriter] = []

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(target.hostname, target.port)
        cut.extend([writer, up_writer])
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    proxy = await asyncio.start_server(relay, "127.0.0.1", 0)
    port = proxy.sockets[0].getsockname()[1]
    metrics = Metrics()
    nc = await connect(f"nats://127.0.0.1:{port}", "own", metrics=metrics)
    try:
        for writer in cut:
            writer.close()
        await wait_until(lambda: metrics.disconnects._value.get() == 1, timeout=10)
        await wait_until(lambda: metrics.reconnects._value.get() == 1, timeout=20)
        assert nc.is_connected
    finally:
        await nc.close()
        proxy.close()
