"""The per-connection subscription limit, on a real nats-server with the deploy configuration.

The auth callout writes the limit into each user JWT (``subs``), but nats-server builds an
auth-callout user from the JWT's permissions only and drops its limits; the deploy
configuration enforces the same number itself (``max_subscriptions`` in deploy/nats/nats.conf).
A player or a guest holds that many subscriptions, one more is refused (the server answers
``-ERR 'maximum subscriptions exceeded'`` and the client closes), and other players keep
theirs. (Fixtures: conftest.py.)
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Callable

import pytest
from cardroom_natsauth import guest_inbox_prefix
from cardroom_natsauth.callout import DEFAULT_MAX_SUBSCRIPTIONS
from deploy_support import DEPLOY, Player, SecureNats

pytestmark = pytest.mark.timeout(60)

LIMIT = DEFAULT_MAX_SUBSCRIPTIONS
EXCEEDED = "maximum subscriptions exceeded"


async def _eventually(
    predicate: Callable[[], bool], what: str, timeout: float = 5.0, *, quiet: bool = False
) -> None:
    """Wait until ``predicate()``; past ``timeout``, fail (or, ``quiet``, just return)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            if quiet:
                return
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def _refused(who: Player) -> bool:
    """Whether the server told ``who`` it holds too many subscriptions."""
    reported = [*who.errors, who.nc.last_error]
    return any(EXCEEDED in str(exc).lower() for exc in reported if exc is not None)


async def _hold(who: Player, prefix: str, count: int) -> None:
    """Subscribe ``who`` to ``count`` subjects below ``prefix``; all of them are held."""
    for i in range(count):
        await who.nc.subscribe(f"{prefix}.s{i}", cb=who.on_message)
    await who.nc.flush(timeout=10)  # a round trip: the server has processed every SUB
    assert who.nc.is_connected
    assert not who.errors, who.errors


async def _reaches(service: Player, who: Player, subject: str) -> None:
    """A message the service publishes on ``subject`` arrives at ``who``.

    The service publishes again every 0.2 s until one arrives: nats-server now and then drops
    a message published on a new subject the moment another connection's SUB was confirmed
    (about one run in ten on a busy machine); a subscription that is not held never receives
    any of them.
    """
    before = len(who.received)
    deadline = time.monotonic() + 5.0
    while len(who.received) == before:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for a message on {subject}")
        await service.nc.publish(subject, b"still subscribed")
        await service.nc.flush()
        await _eventually(lambda: len(who.received) > before, "", timeout=0.2, quiet=True)
    assert who.received[-1].subject == subject


def test_the_deploy_configuration_enforces_the_limit_the_callout_writes() -> None:
    text = (DEPLOY / "nats" / "nats.conf").read_text()
    assert re.search(rf"(?m)^max_subscriptions: {LIMIT}$", text), "nats.conf: max_subscriptions"


async def test_a_player_holds_the_limit_and_no_more(secure_nats: SecureNats) -> None:
    s = secure_nats.subjects
    service = await secure_nats.service()
    alice = await secure_nats.player("alice")
    bob = await secure_nats.player("bob")
    alices, bobs = f"{s.root}.player.alice", f"{s.root}.player.bob"
    await _hold(alice, alices, LIMIT)
    await _hold(bob, bobs, 1)
    await _reaches(service, alice, f"{alices}.s{LIMIT - 1}")  # the last one is held

    await alice.nc.subscribe(f"{alices}.one-more", cb=alice.on_message)
    await _eventually(lambda: _refused(alice), f"{EXCEEDED!r} for alice")
    await _eventually(lambda: alice.nc.is_closed, "alice's connection to close")

    # bob keeps what he holds, and the limit is his own, not shared with alice
    assert bob.nc.is_connected
    assert not _refused(bob)
    await _reaches(service, bob, f"{bobs}.s0")
    await _hold(bob, f"{bobs}.more", LIMIT - 1)
    await _reaches(service, bob, f"{bobs}.more.s{LIMIT - 2}")
    assert not _refused(bob)


async def test_a_guest_holds_the_limit_and_no_more(secure_nats: SecureNats) -> None:
    s = secure_nats.subjects
    service = await secure_nats.service()
    nonce = secrets.token_urlsafe(24)
    prefix = guest_inbox_prefix(s.root, nonce)
    guest = await secure_nats.connect(user="guest", password=nonce, inbox_prefix=prefix)
    await _hold(guest, f"{prefix}.held", LIMIT)
    await _reaches(service, guest, f"{prefix}.held.s{LIMIT - 1}")

    await guest.nc.subscribe(f"{prefix}.one-more", cb=guest.on_message)
    await _eventually(lambda: _refused(guest), f"{EXCEEDED!r} for the guest")
    await _eventually(lambda: guest.nc.is_closed, "the guest's connection to close")
