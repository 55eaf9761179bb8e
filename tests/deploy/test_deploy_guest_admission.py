"""New guests per address on a real nats-server with the deploy configuration.

The responder of the deploy fixture (conftest.py) is given a limit that trusts no network
(the test's clients all come from 127.0.0.1, which the default trusts) and a clock the test
moves: an address brings its burst of guests, the next is refused at the door, a player from
the same address still connects, and once the clock has moved on a guest is admitted again.
"""

from __future__ import annotations

import secrets

import pytest
from cardroom_natsauth import GuestAdmission, guest_inbox_prefix
from deploy_support import SecureNats
from nats.errors import ConnectionClosedError, NoServersError

pytestmark = pytest.mark.timeout(60)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _guest(secure: SecureNats) -> str | None:
    """A new guest connects: None when admitted, else how it was refused."""
    nonce = secrets.token_urlsafe(16)
    try:
        guest = await secure.connect(
            user="guest", password=nonce, inbox_prefix=guest_inbox_prefix(secure.root, nonce)
        )
    except (TimeoutError, NoServersError, ConnectionClosedError, OSError) as exc:
        return repr(exc)
    except Exception as exc:  # nats-py raises the server's -ERR as a plain error
        return repr(exc)
    await guest.nc.flush(timeout=10)
    await guest.nc.close()
    return None


async def test_an_address_brings_its_burst_of_guests_then_waits(
    secure_nats: SecureNats,
) -> None:
    clock = Clock()
    responder = secure_nats.responder
    deployed = responder.admission
    responder.admission = GuestAdmission(rate=6.0, burst=3, trusted=(), clock=clock)
    try:
        assert [await _guest(secure_nats) for _ in range(3)] == [None, None, None]
        why = await _guest(secure_nats)
        assert why is not None
        assert "authorization" in why.lower(), why
        # a player is no guest: the same address still connects as one
        player = await secure_nats.player(f"admitted{secrets.token_hex(3)}")
        await player.nc.flush(timeout=10)
        clock.now += 10  # 6 a minute: one more
        assert await _guest(secure_nats) is None
        assert await _guest(secure_nats) is not None
    finally:
        responder.admission = deployed
