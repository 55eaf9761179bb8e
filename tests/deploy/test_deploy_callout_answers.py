"""The auth service answers every connection the real nats-server asks it about.

Other spellings of a real token and other bad credentials are refused by an answer of the
responder (logged as a refusal), not by the server's callout timeout; the responder logs no
error and no traceback, and a real token connects afterwards. CONNECT options of the wrong
types never connect either.
(Fixtures: conftest.py.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import pytest
from deploy_support import SecureNats
from natsauth.natsauth_support import respellings

pytestmark = pytest.mark.timeout(120)


async def _connect_raw(secure: SecureNats, options: dict[str, Any]) -> str:
    """CONNECT with ``options`` exactly as given, then PING: the server's first answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", secure.server.port)
    try:
        info = await asyncio.wait_for(reader.readline(), 5)
        assert info.startswith(b"INFO "), info
        connect = {"verbose": False, "pedantic": False, "protocol": 1, **options}
        writer.write(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        await writer.drain()
        return (await asyncio.wait_for(reader.readline(), 10)).decode().strip()
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def _refusals(caplog: pytest.LogCaptureFixture) -> int:
    return sum(1 for r in caplog.records if r.getMessage().startswith("auth callout: refused"))


def _no_failure(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        if record.name.startswith("cardroom.natsauth"):
            assert record.levelno < logging.ERROR, record.getMessage()
            assert record.exc_info is None, record.getMessage()


async def test_other_spellings_of_a_token_are_answered_with_a_refusal(
    secure_nats: SecureNats, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="cardroom.natsauth")
    token = secure_nats.token("alice")
    variants = [
        variant
        for what, variant in respellings(token)
        if not what.startswith(("one digit as", "signature letter"))  # one of each kind
    ]
    # a valid token with every digit of the expiry respelled: the Unicode scripts too
    assert len(variants) > 100
    for i, variant in enumerate(variants):
        options = {"auth_token": variant} if i % 2 else {"user": "alice", "pass": variant}
        answer = await _connect_raw(secure_nats, options)
        assert answer == "-ERR 'Authorization Violation'", (variant, answer)
    assert _refusals(caplog) == len(variants)
    _no_failure(caplog)
    assert await _connect_raw(secure_nats, {"auth_token": token}) == "PONG"


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"auth_token": ""},
        {"auth_token": "alice.\u0661\u0667\u0660\u0660.x"},
        {"auth_token": "alice." + "\u00b9" * 10 + "." + "A" * 43},
        {"auth_token": "x" * 4000},
        {"user": "guest", "pass": "short"},
        {"user": "guest", "pass": "n" * 22, "auth_token": "alice.1.x"},
        {"user": "bob", "pass": "\u0000" * 30},
    ],
)
async def test_bad_credentials_are_answered_with_a_refusal(
    secure_nats: SecureNats, caplog: pytest.LogCaptureFixture, options: dict[str, Any]
) -> None:
    caplog.set_level(logging.INFO, logger="cardroom.natsauth")
    assert await _connect_raw(secure_nats, options) == "-ERR 'Authorization Violation'"
    assert _refusals(caplog) == 1
    _no_failure(caplog)


@pytest.mark.parametrize(
    "options",
    [
        {"auth_token": 1800000000},
        {"auth_token": ["alice", "1800000000"]},
        {"auth_token": {"player": "alice"}},
        {"auth_token": True},
        {"user": 7, "pass": "x"},
        {"user": "guest", "pass": None},
        {"user": ["guest"], "pass": {"nonce": "n"}},
    ],
)
async def test_options_of_the_wrong_type_do_not_connect_or_fail_the_responder(
    secure_nats: SecureNats, caplog: pytest.LogCaptureFixture, options: dict[str, Any]
) -> None:
    caplog.set_level(logging.INFO, logger="cardroom.natsauth")
    answer = await _connect_raw(secure_nats, options)
    # the server closes a CONNECT it cannot read without asking; else the responder refuses
    assert answer in ("", "-ERR 'Authorization Violation'"), answer
    assert _refusals(caplog) == (1 if answer else 0)
    _no_failure(caplog)
