"""DESIGN.md "Security", against a real nats-server running the deploy configuration.

Player A (alice) can play: publish its commands, acks, syncs and lobby requests and get the
answers on its own inbox prefix, receive its private subject and the public ones. It cannot
read B's (bob's) subject, the shared ``_INBOX.>``, the event stream or ``$JS.API``, cannot act
as B, cannot forge what services publish, and cannot create a JetStream consumer: the server
refuses each attempt with a permissions violation. Bad credentials do not connect; a player
nobody configured connects at once, with no restart. (Fixtures: conftest.py.)
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import secrets
import time

import nats.errors
import pytest
from cardroom_client import Client as CardroomClient
from cardroom_natsauth import guest_inbox_prefix, inbox_prefix, issue_player_token
from deploy_support import SecureNats, StubService

pytestmark = pytest.mark.timeout(60)


async def _eventually(predicate: object, timeout: float = 3.0) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


# -- A plays -------------------------------------------------------------------------------------
async def test_a_player_can_play(secure_nats: SecureNats, stub_service: StubService) -> None:
    s = secure_nats.subjects
    alice = await secure_nats.player("alice")
    # its requests: the answers come back below its own inbox prefix
    assert alice.nc.new_inbox().startswith(inbox_prefix(s.root, "alice") + ".")
    for subject in (
        s.cmd("g1", "alice"),
        s.ack("g1", "alice"),
        s.sync("g1", "alice"),
        s.lobby("create", "alice"),
        s.lobby("join", "alice"),
        s.lobby("list", "alice"),
    ):
        reply = await alice.nc.request(subject, b"{}", timeout=10)
        assert json.loads(reply.data) == {"ok": True, "version": 1, "on": subject}
    # what the services send it: its private subjects and the public ones
    await alice.nc.subscribe(s.player_all("alice"), cb=alice.on_message)
    await alice.nc.subscribe(s.public_all, cb=alice.on_message)
    await alice.nc.flush()
    service = stub_service.player.nc
    wanted = {s.player("alice", "g1"): b"for alice", s.public("g1"): b"for everyone"}

    def got() -> set[bytes]:
        return {m.data for m in alice.received}

    # alice's interest can reach the service's side a moment after her flush (a message
    # published before it is dropped, once in CI): what has not arrived is sent again
    for _ in range(10):
        for subject, data in wanted.items():
            if data not in got():
                await service.publish(subject, data)
        with contextlib.suppress(AssertionError):
            await _eventually(lambda: got() >= set(wanted.values()), timeout=0.5)
            break
    assert got() == set(wanted.values())
    assert alice.violations() == []


async def test_the_client_sdk_plays_with_a_token(
    secure_nats: SecureNats, stub_service: StubService
) -> None:
    root = secure_nats.root
    client = await CardroomClient.connect(
        secure_nats.url,
        "carol",
        subject_root=root,
        token=secure_nats.token("carol"),
        inbox_prefix=inbox_prefix(root, "carol"),
        allow_reconnect=False,
    )
    try:
        assert await client.command("g1", "play", card=3) == 1
    finally:
        await client.close()


# -- A cannot read what is not its own ---------------------------------------------------------
FORBIDDEN_SUBSCRIPTIONS = [
    "{root}.player.bob.>",
    "{root}.player.bob.g1",
    "{root}.player.*.g1",
    "{root}.player.>",
    "_INBOX.>",
    "_INBOX_{root}.bob.>",
    "_INBOX_{root}.>",
    "{root}.events.>",
    "{root}.events.take5.g1",
    "{root}.internal.>",
    "{root}.internal.deliver.projector",  # every event, every hidden card, as it is stored
    "{root}.cmd.*.bob",
    "{root}.cmd.>",
    "{root}.lobby.>",
    "$JS.API.>",
    "$JS.>",
    "{root}.>",
    ">",
]


@pytest.mark.parametrize("pattern", FORBIDDEN_SUBSCRIPTIONS)
async def test_a_player_cannot_subscribe_to(secure_nats: SecureNats, pattern: str) -> None:
    subject = pattern.format(root=secure_nats.root)
    alice = await secure_nats.player("alice")
    await alice.nc.subscribe(subject, cb=alice.on_message)
    await alice.nc.flush()
    await alice.violation("subscription", subject)


async def test_nothing_of_b_reaches_a(secure_nats: SecureNats, stub_service: StubService) -> None:
    s = secure_nats.subjects
    alice = await secure_nats.player("alice")
    bob = await secure_nats.player("bob")
    for subject in (s.player_all("bob"), "_INBOX.>", f"_INBOX_{s.root}.bob.>", s.events_all):
        await alice.nc.subscribe(subject, cb=alice.on_message)
    await bob.nc.subscribe(s.player_all("bob"), cb=bob.on_message)
    await alice.nc.flush()
    await bob.nc.flush()
    service = stub_service.player.nc
    await service.publish(s.player("bob", "g1"), b"bob's hand")
    await service.publish(s.events("take5", "g1"), b"the whole deal")
    await service.publish(f"{inbox_prefix(s.root, 'bob')}.x", b"bob's reply")
    await service.publish("_INBOX.x.y", b"a service's reply")
    await service.flush()
    await _eventually(lambda: len(bob.received) == 1)
    await asyncio.sleep(0.1)
    assert alice.received == []


# -- A cannot act as B, nor as a service ------------------------------------------------------
FORBIDDEN_PUBLICATIONS = [
    "{root}.lobby.create.bob",
    "{root}.lobby.join.bob",
    "{root}.lobby.renew.bob",
    "{root}.lobby.create",
    "{root}.cmd.g1.bob",
    "{root}.ack.g1.bob",
    "{root}.sync.g1.bob",
    "{root}.player.bob.g1",
    "{root}.player.alice.g1",  # not even its own: only services notify
    "{root}.public.g1",
    "{root}.events.take5.g1",
    "{root}.internal.release",
    "{root}.internal.deliver.projector",  # a forged event handed to the projector
    "_INBOX_{root}.bob.reply",  # a forged answer to bob's request
    "_INBOX.abc.def",
    "$JS.API.STREAM.LIST",
    "$JS.API.STREAM.CREATE.MINE",
]


@pytest.mark.parametrize("pattern", FORBIDDEN_PUBLICATIONS)
async def test_a_player_cannot_publish_to(
    secure_nats: SecureNats, stub_service: StubService, pattern: str
) -> None:
    subject = pattern.format(root=secure_nats.root)
    alice = await secure_nats.player("alice")
    forged = json.dumps({"type": "play", "card": 1, "forged": secrets.token_hex(8)}).encode()
    inputs_before = len(stub_service.inputs)
    await alice.nc.publish(subject, forged)
    await alice.nc.flush()
    await alice.violation("publish", subject)
    await stub_service.player.nc.flush()
    assert subject not in stub_service.inputs[inputs_before:]
    assert all(m.data != forged for m in stub_service.player.received)


async def test_a_player_cannot_use_jetstream(
    secure_nats: SecureNats, stub_service: StubService
) -> None:
    s = secure_nats.subjects
    service_js = stub_service.player.nc.jetstream()
    await service_js.add_stream(name=s.events_stream, subjects=[s.events_all])
    await service_js.publish(s.events("take5", "g1"), b'{"hands": "everyone\'s"}')

    alice = await secure_nats.player("alice")
    js = alice.nc.jetstream(timeout=0.5)
    with pytest.raises(nats.errors.TimeoutError):  # the request is dropped: nobody answers
        await js.add_consumer(s.events_stream, durable_name="peek")
    await alice.violation("publish", "$JS.API.CONSUMER.", prefix=True)
    alice.errors.clear()
    with pytest.raises(nats.errors.TimeoutError):
        await js.add_consumer(s.events_stream)  # an ephemeral one
    await alice.violation("publish", "$JS.API.CONSUMER.", prefix=True)
    with pytest.raises(nats.errors.TimeoutError):
        await js.get_msg(s.events_stream, 1)
    await alice.violation("publish", f"$JS.API.STREAM.MSG.GET.{s.events_stream}")
    with pytest.raises(nats.errors.TimeoutError):
        await js.account_info()
    await alice.violation("publish", "$JS.API.INFO")

    info = await service_js.stream_info(s.events_stream)
    assert info.state.consumer_count == 0


# -- credentials ---------------------------------------------------------------------------------
def _bad_credentials(server: SecureNats, case: str) -> dict[str, object]:
    root = server.root
    secret = server.secret("player_token_secret")
    good = server.token("alice")
    player, expires, signature = good.split(".")
    cases: dict[str, dict[str, object]] = {
        "garbage token": {"token": "not-a-token"},
        "forged token": {"token": issue_player_token(secrets.token_bytes(32), root, "alice")},
        "tampered token": {"token": f"bob.{expires}.{signature}"},
        "longer-lived token": {"token": f"{player}.{int(expires) + 3600}.{signature}"},
        "expired token": {  # issued 90 s ago, for 60 s
            "token": issue_player_token(secret, root, "alice", ttl=60, now=time.time() - 90)
        },
        "token of another deployment": {"token": issue_player_token(secret, "elsewhere", "alice")},
        "another player's name": {"user": "bob", "password": good},
        "no credentials": {},
        "guest with a guessable nonce": {"user": "guest", "password": "abc"},
        "service with a wrong password": {"user": "service", "password": "guess"},
        "auth user with a wrong password": {"user": "auth", "password": "guess"},
    }
    return cases[case]


BAD_CREDENTIALS = [
    "garbage token",
    "forged token",
    "tampered token",
    "longer-lived token",
    "expired token",
    "token of another deployment",
    "another player's name",
    "no credentials",
    "guest with a guessable nonce",
    "service with a wrong password",
    "auth user with a wrong password",
]


@pytest.mark.parametrize("case", BAD_CREDENTIALS)
async def test_bad_credentials_are_refused(secure_nats: SecureNats, case: str) -> None:
    with pytest.raises(nats.errors.Error, match=r"(?i)authorization violation"):
        await secure_nats.connect(**_bad_credentials(secure_nats, case))


async def test_a_player_added_after_the_start_connects_without_a_restart(
    secure_nats: SecureNats, stub_service: StubService
) -> None:
    newcomer = "newcomer-" + secrets.token_hex(4)
    configuration = "".join(p.read_text() for p in secure_nats.folder.glob("*.conf"))
    assert "alice" not in configuration
    assert newcomer not in configuration
    player = await secure_nats.player(newcomer)
    subject = secure_nats.subjects.cmd("g1", newcomer)
    reply = await player.nc.request(subject, b"{}", timeout=10)
    assert json.loads(reply.data)["ok"] is True
    # the same server process, never restarted: same id as when the fixture started it
    assert secure_nats.proc.poll() is None
    assert player.nc._server_info["server_id"] == secure_nats.server_id


async def test_the_connection_ends_when_the_token_expires(secure_nats: SecureNats) -> None:
    root = secure_nats.root
    player = await secure_nats.connect(
        token=secure_nats.token("dora", ttl=1.2), inbox_prefix=inbox_prefix(root, "dora")
    )
    assert player.nc.is_connected
    await _eventually(lambda: player.nc.is_closed, timeout=5)
    assert "authentication expired" in str(player.nc.last_error).lower()


async def test_a_guest_may_only_ask_the_lobby_for_a_player(
    secure_nats: SecureNats, stub_service: StubService
) -> None:
    s = secure_nats.subjects
    nonce = secrets.token_urlsafe(24)
    guest = await secure_nats.connect(
        user="guest", password=nonce, inbox_prefix=guest_inbox_prefix(s.root, nonce)
    )
    reply = await guest.nc.request(s.lobby("register", nonce), b"{}", timeout=10)
    assert json.loads(reply.data)["ok"] is True
    for subject in (
        s.lobby("register", secrets.token_urlsafe(24)),  # as another guest
        s.lobby("create", nonce),
        s.cmd("g1", "guest"),
        s.ack("g1", "guest"),
    ):
        await guest.nc.publish(subject, b"{}")
        await guest.nc.flush()
        await guest.violation("publish", subject)
    other = f"{guest_inbox_prefix(s.root, secrets.token_urlsafe(24))}.>"
    for subject in (s.public_all, s.player_all("guest"), other):
        await guest.nc.subscribe(subject)
        await guest.nc.flush()
        await guest.violation("subscription", subject)


# -- the WebSocket listener (browsers) applies the same rules ----------------------------------
class _WebSocket:
    """Just enough of a WebSocket client to speak the NATS protocol (no aiohttp here)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.buffer = reader, writer, b""

    @classmethod
    async def open(cls, url: str) -> _WebSocket:
        host, port = url.removeprefix("ws://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        return cls(reader, writer)

    def send(self, text: str) -> None:
        data, mask = text.encode(), os.urandom(4)
        assert len(data) < 126
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.writer.write(bytes([0x82, 0x80 | len(data)]) + mask + masked)

    async def line(self) -> str:
        while b"\r\n" not in self.buffer:
            first, second = await self.reader.readexactly(2)
            size = second & 0x7F
            if size == 126:
                size = int.from_bytes(await self.reader.readexactly(2), "big")
            elif size == 127:
                size = int.from_bytes(await self.reader.readexactly(8), "big")
            payload = await self.reader.readexactly(size)
            if first & 0x0F in (0x1, 0x2, 0x0):
                self.buffer += payload
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line.decode()

    async def after_connect(self, options: dict[str, object]) -> str:
        assert (await self.line()).startswith("INFO ")
        self.send(f"CONNECT {json.dumps({'verbose': False, **options})}\r\nPING\r\n")
        return await self.line()

    def close(self) -> None:
        self.writer.close()


async def test_the_websocket_listener_applies_the_same_rules(secure_nats: SecureNats) -> None:
    refused = await _WebSocket.open(secure_nats.ws_url)
    try:
        assert "authorization violation" in (await refused.after_connect({})).lower()
    finally:
        refused.close()
    ws = await _WebSocket.open(secure_nats.ws_url)
    try:
        assert await ws.after_connect({"auth_token": secure_nats.token("alice")}) == "PONG"
        ws.send(f"SUB {secure_nats.subjects.player_all('alice')} 1\r\nPING\r\n")
        assert await ws.line() == "PONG"
        forbidden = secure_nats.subjects.player_all("bob")
        ws.send(f"SUB {forbidden} 2\r\n")
        assert (await ws.line()).lower() == (
            f"-err 'permissions violation for subscription to \"{forbidden}\"'"
        ).lower()
    finally:
        ws.close()
