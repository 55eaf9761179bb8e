"""The flood guard on a real nats-server with the deploy configuration.

A connection that publishes faster than any honest client is kicked by the server at the
guard's request, and its player (or, for a guest, its address) is refused by the auth callout
for a while; a player publishing at a client's pace beside it keeps its connection, and the
static users are never judged. (Fixtures: conftest.py; the guard runs as deployed, with its
default limit and interval.)
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable

import pytest
from cardroom_natsauth import DEFAULT_FLOOD_INTERVAL, DEFAULT_FLOOD_LIMIT, guest_inbox_prefix
from deploy_support import Player, SecureNats
from nats.errors import ConnectionClosedError, NoServersError

pytestmark = pytest.mark.timeout(60)

# long enough for several readings of the guard, at a rate a client of the game never sends
GRACE = 10 * DEFAULT_FLOOD_INTERVAL


async def _eventually(predicate: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def _flood(who: Player, subject: str, until: Callable[[], bool], seconds: float) -> int:
    """Publish as fast as the connection takes it (a turn for the loop every 500) until
    ``until()`` or ``seconds``; returns how many were sent."""
    sent = 0
    deadline = time.monotonic() + seconds
    while not until() and time.monotonic() < deadline:
        try:
            for _ in range(500):
                await who.nc.publish(subject, b"{}")
            sent += 500
        except (ConnectionClosedError, OSError):
            break
        await asyncio.sleep(0)
    return sent


async def _paced(who: Player, subject: str, rate: float, seconds: float) -> int:
    """Publish at ``rate`` a second for ``seconds``."""
    sent = 0
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) < seconds:
        due = int(elapsed * rate) + 1
        while sent < due:
            await who.nc.publish(subject, b"{}")
            sent += 1
        await who.nc.flush()
        await asyncio.sleep(0.01)
    return sent


async def _refused_at_connect(secure: SecureNats, **options: object) -> str:
    try:
        await secure.connect(**options)
    except (TimeoutError, NoServersError, ConnectionClosedError, OSError) as exc:
        return repr(exc)
    except Exception as exc:  # nats-py raises the server's -ERR as a plain error
        return repr(exc)
    raise AssertionError("a banned client connected")


async def test_a_flooding_player_is_kicked_and_refused_while_a_paced_one_stays(
    secure_nats: SecureNats,
) -> None:
    s = secure_nats.subjects
    flooder_id = f"flooder{secrets.token_hex(3)}"
    honest_id = f"honest{secrets.token_hex(3)}"
    flooder = await secure_nats.player(flooder_id)
    honest = await secure_nats.player(honest_id)
    service = await secure_nats.service()
    kicked_before = len(secure_nats.guard.kicked)

    def gone() -> bool:
        return not flooder.nc.is_connected

    started = time.monotonic()
    # the honest player sends at a fifth of the limit while the flooder floods, and the
    # services' user publishes faster than the limit: neither may be touched
    honest_task = asyncio.create_task(
        _paced(honest, s.lobby("list", honest_id), DEFAULT_FLOOD_LIMIT / 5, GRACE / 2)
    )
    service_task = asyncio.create_task(
        _flood(service, f"{s.root}.internal.guardtest", lambda: False, GRACE / 2)
    )
    sent = await _flood(flooder, s.lobby("list", flooder_id), gone, GRACE)
    await _eventually(gone, "the flooder's connection to close", GRACE)
    took = time.monotonic() - started
    await honest_task
    service_sent = await service_task
    print(f"  guard: the flooder was kicked after {took:.2f}s and {sent} messages")

    # the server may close the connection before it answers the guard's request
    await _eventually(
        lambda: [c.user for c in list(secure_nats.guard.kicked)[kicked_before:]] == [flooder_id],
        "the guard to record the kick",
        GRACE,
    )
    assert service_sent > DEFAULT_FLOOD_LIMIT * GRACE / 4  # fast enough to be judged
    # kicked within a few readings of the guard
    assert took < 4 * DEFAULT_FLOOD_INTERVAL + 1.0, took
    # the flooder is refused at the door, with a fresh token too
    why = await _refused_at_connect(
        secure_nats,
        token=secure_nats.token(flooder_id),
        inbox_prefix=s.inbox(flooder_id),
    )
    assert "authorization" in why.lower(), why
    # the others kept their connections and still round-trip
    for player in (honest, service):
        assert player.nc.is_connected
        await player.nc.flush(timeout=10)
    # another player connects as usual
    other = await secure_nats.player(f"other{secrets.token_hex(3)}")
    await other.nc.flush(timeout=10)
    secure_nats.guard.bans.lift(f"player:{flooder_id}")
    back = await secure_nats.player(flooder_id)
    await back.nc.flush(timeout=10)


async def test_a_flooding_guest_is_kicked_and_its_address_refused(
    secure_nats: SecureNats,
) -> None:
    s = secure_nats.subjects
    nonce = secrets.token_urlsafe(16)
    kicked_before = len(secure_nats.guard.kicked)
    guest = await secure_nats.connect(
        user="guest", password=nonce, inbox_prefix=guest_inbox_prefix(s.root, nonce)
    )

    def gone() -> bool:
        return not guest.nc.is_connected

    await _flood(guest, s.lobby("register", nonce), gone, GRACE)
    await _eventually(gone, "the guest's connection to close", GRACE)
    # the server may close the connection before it answers the guard's request
    await _eventually(
        lambda: [c.user for c in list(secure_nats.guard.kicked)[kicked_before:]] == ["guest"],
        "the guard to record the kick",
        GRACE,
    )
    other = secrets.token_urlsafe(16)
    try:
        why = await _refused_at_connect(
            secure_nats,
            user="guest",
            password=other,
            inbox_prefix=guest_inbox_prefix(s.root, other),
        )
        assert "authorization" in why.lower(), why
        # players from the same address are judged by their own id
        player = await secure_nats.player(f"sameaddress{secrets.token_hex(3)}")
        await player.nc.flush(timeout=10)
    finally:
        secure_nats.guard.bans.lift("host:127.0.0.1")
