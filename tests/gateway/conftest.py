"""`cardroom serve all` as a real process, with its gateway on a free port, for these tests.

One process serves every test of tests/gateway (startup costs seconds): its own database,
its own subject root, ``arg_players`` = :data:`PLAYERS`, short turn and ack timeouts so that
the house takes over silent and departed players quickly. Each test connects its own groups
of :data:`PLAYERS` protocol-only clients and closes them at the end, so the lobby is empty between
tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cardroom_runtime import migrate
from cardroom_runtime.postgres import create_database, drop_database
from gateway_support import ACK_TIMEOUT, GAME, PLAYERS, TURN_TIMEOUT, Gateway, free_port
from support.stack import ServiceProcess


@pytest.fixture(scope="session")
async def gateway_process(
    database_admin_url: str, nats_url: str, subject_root: str
) -> AsyncIterator[Gateway]:
    name = f"{subject_root}_gateway"
    database_url = await create_database(database_admin_url, name)
    await migrate.upgrade_async(database_url)
    port = free_port()
    root = f"{subject_root}gw"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARDROOM_", "PYTEST_"))} | {
        "CARDROOM_DATABASE_URL": database_url,
        "CARDROOM_NATS_URL": nats_url,
        "CARDROOM_SUBJECT_ROOT": root,
        "CARDROOM_GATEWAY_HOST": "127.0.0.1",
        "CARDROOM_GATEWAY_PORT": str(port),
        "CARDROOM_GATEWAY_PLAYERS": str(PLAYERS),
        "CARDROOM_GATEWAY_TURN_TIMEOUT": str(TURN_TIMEOUT),
        "CARDROOM_GATEWAY_ACK_TIMEOUT": str(ACK_TIMEOUT),
        "CARDROOM_GATEWAY_CONFIG": json.dumps(GAME),
    }
    process = ServiceProcess("all", env)
    try:
        try:
            await process.start()
        except RuntimeError:
            raise RuntimeError("\n".join(process.tail)) from None
        yield Gateway("127.0.0.1", port, PLAYERS, process, nats_url, root)
    finally:
        process.stop()
        await drop_database(database_admin_url, name)
        log = os.environ.get("CARDROOM_TEST_GATEWAY_LOG")
        if log:  # the server's side, for a person debugging these tests
            await asyncio.to_thread(Path(log).write_text, "\n".join(process.tail) + "\n")


@pytest.fixture
async def gateway(
    gateway_process: Gateway, request: pytest.FixtureRequest
) -> AsyncIterator[Gateway]:
    try:
        yield gateway_process
    finally:
        await gateway_process.close_clients()
        failed = getattr(request.node, "rep_call", None)
        if failed is not None and failed.failed:
            # past pytest's capture: the server's side of a failure
            sys.__stderr__.write("\n".join(gateway_process.process.tail) + "\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    setattr(item, f"rep_{call.when}", report)
    return report
