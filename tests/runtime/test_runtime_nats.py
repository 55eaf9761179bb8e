"""cardroom_runtime.nats against the test NATS server."""

from __future__ import annotations

import asyncio

import pytest
from cardroom_runtime.embedded import free_port
from cardroom_runtime.nats import DUPLICATE_WINDOW, connect, ensure_stream
from nats.js.api import StorageType
from nats.js.errors import APIError


async def test_connect_and_request(nats_url: str, subject_root: str) -> None:
    nc = await connect(nats_url, f"{subject_root}-test")
    try:
        assert nc.is_connected
        assert nc.options["max_reconnect_attempts"] == -1  # reconnects forever

        async def echo(msg) -> None:  # type: ignore[no-untyped-def]
            await msg.respond(msg.data.upper())

        await nc.subscribe(f"{subject_root}.echo", cb=echo)
        reply = await nc.request(f"{subject_root}.echo", b"hi", timeout=2)
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
