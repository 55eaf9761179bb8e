"""The listener alone, in this process: no table is formed, so no NATS is needed."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
from cardroom_gateway import Gateway, GatewaySettings
from cardroom_gateway.settings import GatewaySettingsError
from cardroom_natsauth import GuestAdmission
from cardroom_runtime.host import Runtime
from cardroom_wire import Subjects
from seed_client import ConnectionClosed, SeedClient


def _gateway(**settings: Any) -> Gateway:
    class Configured(Gateway):
        settings_override = GatewaySettings(**settings)

    rt = Runtime(Subjects("unused"), cast(Any, None), cast(Any, None), "nats://unused", "")
    return Configured(rt)


@pytest.fixture
async def listening() -> AsyncIterator[Gateway]:
    gateway = _gateway(port=0, players=2)
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


async def test_port_zero_picks_a_free_port_and_errors_need_no_table(listening: Gateway) -> None:
    assert listening.port is not None
    assert listening.port > 0
    client = await SeedClient.connect("127.0.0.1", listening.port)
    try:
        await client.send_raw(b"\n\n")  # blank lines are no messages
        await client.send({"type": "play_response", "data": {"face": 1, "bull": 1}})
        assert (await client.recv(5))["data"]["code"] == "not_registered"
        await client.send_raw(b"nope\n")
        assert (await client.recv(5))["data"]["code"] == "malformed"
        await client.send({"type": "register_request", "data": None})
        await client.send({"type": "choose_response", "data": "A"})
        error = await client.recv(5)
        assert error["data"]["code"] == "out_of_order"
        assert [conn.registered for conn in listening.waiting] == [True]
    finally:
        client.abort()


async def test_a_lost_connection_leaves_the_lobby(listening: Gateway) -> None:
    assert listening.port is not None
    client = await SeedClient.connect("127.0.0.1", listening.port)
    await client.send({"type": "register_request", "data": None})
    await client.send({"type": "register_request", "data": None})
    assert (await client.recv(5))["data"]["code"] == "out_of_order"  # it is waiting now
    assert len(listening.waiting) == 1
    await client.close()
    for conn in list(listening.connections):
        await conn.closed.wait()
    assert listening.waiting == []


async def test_a_taken_port_turns_the_tcp_edge_off_but_not_the_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        gateway = _gateway(port=taken.getsockname()[1])
        with caplog.at_level(logging.ERROR, logger="cardroom.gateway"):
            await gateway.start()
        try:
            assert gateway.port is None
            assert "the take5 TCP edge is OFF" in caplog.text
        finally:
            await gateway.stop()


async def test_one_connection_too_many_is_refused_and_closed() -> None:
    gateway = _gateway(port=0, players=4, max_connections=2)
    await gateway.start()
    assert gateway.port is not None
    held = [await SeedClient.connect("127.0.0.1", gateway.port) for _ in range(2)]
    try:
        for client in held:  # both are served
            await client.send({"type": "choose_response", "data": "A"})
            assert (await client.recv(5))["data"]["code"] == "not_registered"
        extra = await SeedClient.connect("127.0.0.1", gateway.port)
        assert (await extra.recv(5))["data"]["code"] == "too_many_connections"
        with pytest.raises(ConnectionClosed):
            await extra.recv(5)
        # the ones it holds are untouched
        await held[0].send({"type": "register_request", "data": None})
        await held[0].send({"type": "register_request", "data": None})
        assert (await held[0].recv(5))["data"]["code"] == "out_of_order"
    finally:
        for client in held:
            client.abort()
        await gateway.stop()


async def test_a_connection_that_never_registers_is_closed() -> None:
    gateway = _gateway(port=0, players=2, register_timeout=0.3)
    await gateway.start()
    assert gateway.port is not None
    try:
        idle = await SeedClient.connect("127.0.0.1", gateway.port)
        assert (await idle.recv(5))["data"]["code"] == "register_timeout"
        with pytest.raises(ConnectionClosed):
            await idle.recv(5)
        # a registered connection is not subject to it
        waiting = await SeedClient.connect("127.0.0.1", gateway.port)
        await waiting.send({"type": "register_request", "data": None})
        await waiting.send({"type": "register_request", "data": None})
        assert (await waiting.recv(5))["data"]["code"] == "out_of_order"
        assert [c.registered for c in gateway.waiting] == [True]
        waiting.abort()
    finally:
        await gateway.stop()


async def test_an_address_opens_its_burst_of_connections_then_waits() -> None:
    """Each connection is a new player: past its burst, an address (here 127.0.0.1, trusted
    by default, so trusted no more) is told when to come back and closed, while the ones it
    holds are untouched; later its bucket has refilled (on the test's clock)."""
    gateway = _gateway(port=0, players=2, new_burst=2, new_rate=6, trusted=())
    now = [0.0]
    gateway.admission = GuestAdmission(rate=6, burst=2, trusted=(), clock=lambda: now[0])
    await gateway.start()
    assert gateway.port is not None
    held = []
    try:
        for _ in range(2):
            held.append(await SeedClient.connect("127.0.0.1", gateway.port))
        extra = await SeedClient.connect("127.0.0.1", gateway.port)
        refusal = (await extra.recv(5))["data"]
        assert refusal["code"] == "too_many_new_connections"
        assert "try again in 10 s" in refusal["message"]
        with pytest.raises(ConnectionClosed):
            await extra.recv(5)
        await held[0].send({"type": "choose_response", "data": "A"})
        assert (await held[0].recv(5))["data"]["code"] == "not_registered"
        now[0] += 10
        held.append(await SeedClient.connect("127.0.0.1", gateway.port))
        await held[-1].send({"type": "choose_response", "data": "A"})
        assert (await held[-1].recv(5))["data"]["code"] == "not_registered"
    finally:
        for client in held:
            client.abort()
        await gateway.stop()


def test_the_settings_build_the_admission_and_refuse_a_bad_network() -> None:
    settings = GatewaySettings.from_env(
        {"CARDROOM_GATEWAY_NEW_BURST": "5", "CARDROOM_GATEWAY_TRUSTED": "10.0.0.0/8"}
    )
    admission = settings.admission()
    assert [admission.admit("203.0.113.1") for _ in range(5)] == [0.0] * 5
    assert admission.admit("203.0.113.1") > 0
    assert admission.admit("10.9.9.9") == 0.0
    assert GatewaySettings.from_env({"CARDROOM_GATEWAY_TRUSTED": ""}).trusted == ()
    with pytest.raises(GatewaySettingsError, match="CARDROOM_GATEWAY_TRUSTED"):
        GatewaySettings.from_env({"CARDROOM_GATEWAY_TRUSTED": "nonsense"})
