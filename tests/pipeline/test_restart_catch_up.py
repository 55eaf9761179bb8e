"""A service that starts does not leave what its predecessor left undone to the acktracker's
sweep (``cardroom_runtime.gate``, step 5): a starting gamemaster follows up every release
left unhandled and has the owed notifications sent again at once, and a starting acktracker
sends every unhandled release again at once, however young."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import nats
import pytest
from cardroom_acktracker import AckTracker
from cardroom_gamemaster import Gamemaster
from cardroom_gamemaster.session import Notifier
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime import gate
from cardroom_runtime.host import Host, Service
from cardroom_wire import Notification, Subjects
from support.stack import Stack, projected, wait_until

# the sweep never comes within a test: only a start can send or follow up a lost release
SWEEP_NEVER = 600.0
_roots = itertools.count()


class _Lost:
    """Releases the acktracker sends are lost while ``on`` (as with a gamemaster that died)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.on = True
        original = gate.Releases.send

        async def send(releases: gate.Releases, game: str, version: int, **kw: Any) -> None:
            if not self.on:
                await original(releases, game, version, **kw)

        monkeypatch.setattr(gate.Releases, "send", send)


Start = Callable[..., Awaitable[Host]]


@pytest.fixture
async def started(
    nats_url: str,
    subject_root: str,
    fresh_database: Callable[..., Awaitable[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[Stack, Start]]:
    """A cardroom without timers (nothing else looks at a waiting game) whose acktracker
    sweeps only at its start, and a way to start one more service on it."""
    monkeypatch.setattr(AckTracker, "sweep_seconds", SWEEP_NEVER)
    database_url = await fresh_database(migrated=True)
    root = f"{subject_root}rr{next(_roots)}"
    hosts: list[Host] = []

    async def start(*services: type[Service]) -> Host:
        host = Host(services, nats_url=nats_url, database_url=database_url, subject_root=root)
        hosts.append(host)
        await host.start()
        return host

    first = await start(Gamemaster, AckTracker, Relay, Projector)
    stack = Stack(nats_url, database_url, root, first.store, host=first)
    try:
        yield stack, start
    finally:
        await stack.close_clients()
        for host in reversed(hosts):
            await host.stop()


async def _stalled(stack: Stack) -> tuple[str, int]:
    """A highcard game dealt and acknowledged by both players: its gate released, the
    release lost, so the game waits for the follow-up."""
    alice, bob = await stack.client("alice"), await stack.client("bob")
    for client in (alice, bob):
        client.on_notification(lambda note: asyncio.sleep(0))
    game = await alice.create("highcard", {}, seats=2)
    await bob.join(game)

    async def released() -> bool:
        return any(g == game for g, _ in await stack.store.unhandled_releases())

    await wait_until(released, timeout=15)
    ((_, version),) = [r for r in await stack.store.unhandled_releases() if r[0] == game]
    assert await stack.store.stream_version(game) == version  # nothing followed it up
    return game, version


async def _followed_up(stack: Stack, game: str, version: int) -> None:
    async def moved() -> bool:
        return await stack.store.stream_version(game) > version

    await wait_until(moved, timeout=10)
    assert (game, version) not in await stack.store.unhandled_releases()


async def test_a_starting_gamemaster_follows_up_the_releases_left_unhandled(
    started: tuple[Stack, Start], monkeypatch: pytest.MonkeyPatch
) -> None:
    stack, start = started
    _Lost(monkeypatch)  # for good: only the new gamemaster's start can move the game
    game, version = await _stalled(stack)
    await start(Gamemaster)
    await _followed_up(stack, game, version)


async def test_a_starting_acktracker_sends_the_releases_left_unhandled_at_once(
    started: tuple[Stack, Start], monkeypatch: pytest.MonkeyPatch
) -> None:
    stack, start = started
    lost = _Lost(monkeypatch)
    game, version = await _stalled(stack)
    lost.on = False
    # the release is far younger than RELEASE_GRACE: a later sweep would leave it alone
    await start(AckTracker)
    await _followed_up(stack, game, version)


async def test_a_starting_gamemaster_has_the_owed_notifications_sent_again_at_once(
    started: tuple[Stack, Start], monkeypatch: pytest.MonkeyPatch
) -> None:
    stack, start = started

    async def died_before_publishing(*_: Any) -> None:
        return None

    # every gamemaster's way out for notifications (Sessions.notifier) sends nothing
    monkeypatch.setattr(Notifier, "publish", died_before_publishing)
    received: asyncio.Queue[Notification] = asyncio.Queue()

    async def handle(note: Notification) -> None:
        received.put_nowait(note)

    alice, bob = await stack.client("alice"), await stack.client("bob")
    for client in (alice, bob):
        client.on_notification(handle)
    game = await alice.create("highcard", {}, seats=2)
    await bob.join(game)  # the deal is appended, its notifications stored, never published
    await projected(stack.store, game)
    assert received.empty()
    # they are far younger than the resend's RESEND_AFTER: only the start sends them now
    await start(Gamemaster)
    async with asyncio.timeout(10):
        dealt = {(await received.get()).player for _ in range(2)}
    assert dealt == {"alice", "bob"}


async def test_a_malformed_resend_request_is_refused_in_one_line(
    started: tuple[Stack, Start], caplog: pytest.LogCaptureFixture
) -> None:
    stack, _ = started
    caplog.set_level(logging.WARNING, logger="cardroom.acktracker")
    nc = await nats.connect(stack.nats_url)
    try:
        for body in (b"not json", b"[1]", b'{"game": 1}'):
            await nc.publish(Subjects(stack.root).resend, body)
        await nc.flush()

        async def refused() -> bool:
            return sum("resend request refused" in r.getMessage() for r in caplog.records) >= 2

        await wait_until(refused, timeout=10)
    finally:
        await nc.close()
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
