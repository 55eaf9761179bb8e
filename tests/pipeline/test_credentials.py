"""The lobby hands out credentials: ``register`` (a guest's player and its token) and ``renew``.

The token is the one the NATS auth callout checks (tests/deploy shows that side); here the
gamemaster issues it over real NATS with the deployment's secret, and hostile renewals are
refused with ``bad_token`` while the lobby keeps serving.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import nats
import pytest
from cardroom_client import CardroomError, Client
from cardroom_gamemaster import Gamemaster
from cardroom_gamemaster.credentials import Credentials
from cardroom_natsauth import inbox_prefix
from cardroom_natsauth.tokens import TokenError, issue_player_token, verify_player_token
from cardroom_runtime.host import Host
from cardroom_wire import ErrorCode, Subjects, WireError

SECRET = "a-test-secret-of-enough-bytes-0123456789"


@pytest.fixture
async def lobby(
    monkeypatch: pytest.MonkeyPatch,
    nats_url: str,
    subject_root: str,
    fresh_database: Callable[..., Awaitable[str]],
) -> AsyncIterator[str]:
    monkeypatch.setenv("CARDROOM_PLAYER_TOKEN_SECRET", SECRET)
    monkeypatch.setenv("CARDROOM_PLAYER_TOKEN_TTL", "600")
    root = f"{subject_root}cred"
    host = Host(
        [Gamemaster],
        nats_url=nats_url,
        database_url=await fresh_database(migrated=True),
        subject_root=root,
    )
    await host.start()
    try:
        yield root
    finally:
        await host.stop()


GUEST = "a-guest-nonce-of-enough-length"


async def _lobby(
    nats_url: str, root: str, verb: str, body: bytes, asker: str = "alice"
) -> dict[str, object]:
    """Ask the lobby as ``asker`` (a player, or for ``register`` a guest's nonce), from the
    inbox prefix the lobby answers it on."""
    s = Subjects(root)
    prefix = s.guest_inbox(asker) if verb == "register" else s.inbox(asker)
    nc = await nats.connect(nats_url, inbox_prefix=prefix)
    try:
        msg = await nc.request(s.lobby(verb, asker), body, timeout=10)
    finally:
        await nc.close()
    reply: dict[str, object] = json.loads(msg.data)
    return reply


async def test_register_then_renew_through_the_lobby(nats_url: str, lobby: str) -> None:
    client = await Client.register(nats_url, subject_root=lobby)
    try:
        assert client.token is not None
        held = verify_player_token(SECRET, lobby, client.token)
        assert held.player == client.player
        # the lobby's TTL setting is applied (600 s, not the default day)
        first_expiry = held.expires
        assert 500 < first_expiry - time.time() <= 601

        renewed = await client.renew()
        again = verify_player_token(SECRET, lobby, renewed)
        assert again.player == client.player
        assert again.expires >= first_expiry
        # a token of this deployment is worthless under another subject root
        with pytest.raises(TokenError):
            verify_player_token(SECRET, lobby + "x", renewed)
    finally:
        await client.close()

    other = await Client.register(nats_url, subject_root=lobby)
    try:
        assert other.player != client.player  # every new guest is a new player
    finally:
        await other.close()


async def test_register_reply_says_the_inbox_prefix(nats_url: str, lobby: str) -> None:
    reply = await _lobby(nats_url, lobby, "register", b"{}", GUEST)
    assert reply["ok"] is True
    assert reply["inbox_prefix"] == inbox_prefix(lobby, str(reply["player"]))
    assert isinstance(reply["expires"], int)


async def test_a_guest_registers_one_player_however_often_it_asks(
    nats_url: str, lobby: str
) -> None:
    """Asking again with the same nonce grants the same player a fresh token: a guest
    connection cannot name a new player with each request."""
    replies = [await _lobby(nats_url, lobby, "register", b"{}", GUEST) for _ in range(3)]
    assert all(reply["ok"] is True for reply in replies)
    players = {str(reply["player"]) for reply in replies}
    assert len(players) == 1
    for reply in replies:
        assert verify_player_token(SECRET, lobby, str(reply["token"])).player in players
    other = await _lobby(nats_url, lobby, "register", b"{}", GUEST + "-other")
    assert other["player"] not in players


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"token": "nobody.1.abc"}', ErrorCode.BAD_TOKEN),  # malformed/forged
        (b'{"token": ""}', ErrorCode.BAD_REQUEST),
        (b'{"token": 5}', ErrorCode.BAD_REQUEST),
        (b"{}", ErrorCode.BAD_REQUEST),
        (b"not json", ErrorCode.BAD_JSON),
        (b'{"extra": 1}', ErrorCode.BAD_REQUEST),
    ],
)
async def test_hostile_renewals_are_refused(
    nats_url: str, lobby: str, body: bytes, code: ErrorCode
) -> None:
    reply = await _lobby(nats_url, lobby, "renew", body)
    assert reply["ok"] is False
    assert reply["error"]["code"] == code  # type: ignore[index]
    # the lobby is still serving
    assert (await _lobby(nats_url, lobby, "register", b"{}", GUEST))["ok"] is True


async def test_expired_and_foreign_tokens_are_refused(nats_url: str, lobby: str) -> None:
    expired = issue_player_token(SECRET, lobby, "alice", ttl=1, now=1_000_000)
    foreign = issue_player_token("another-secret-of-enough-bytes-987654", lobby, "alice")
    other_root = issue_player_token(SECRET, lobby + "x", "alice")
    # a valid token renewed by somebody else: the renewal acts for the subject's player only
    bobs = issue_player_token(SECRET, lobby, "bob")
    for token in (expired, foreign, other_root, bobs):
        reply = await _lobby(nats_url, lobby, "renew", json.dumps({"token": token}).encode())
        assert reply["ok"] is False
        assert reply["error"]["code"] == ErrorCode.BAD_TOKEN  # type: ignore[index]
    mine = await _lobby(nats_url, lobby, "renew", json.dumps({"token": bobs}).encode(), "bob")
    assert mine["ok"] is True


async def test_a_client_without_a_token_cannot_renew(nats_url: str, lobby: str) -> None:
    client = await Client.connect(nats_url, "bob", subject_root=lobby)
    try:
        with pytest.raises(CardroomError) as caught:
            await client.renew()
        assert caught.value.code == ErrorCode.BAD_TOKEN
    finally:
        await client.close()


def test_credentials_settings() -> None:
    with pytest.raises(ValueError, match="at least"):
        Credentials.from_env("r", {"CARDROOM_PLAYER_TOKEN_SECRET": "short"})
    with pytest.raises(ValueError, match="year"):
        Credentials.from_env(
            "r", {"CARDROOM_PLAYER_TOKEN_SECRET": SECRET, "CARDROOM_PLAYER_TOKEN_TTL": "-1"}
        )
    # without a secret the lobby still works, with a random one of its own
    one = Credentials.from_env("r", {})
    two = Credentials.from_env("r", {})
    assert one.secret != two.secret
    token = one.register(GUEST)["token"]
    assert one.renew(token)["player"] == token.split(".")[0]
    with pytest.raises(WireError) as caught:
        two.renew(token)
    assert caught.value.code == ErrorCode.BAD_TOKEN


def test_a_nonce_names_one_player_of_one_deployment() -> None:
    """The id is a keyed hash of the nonce: the same for the same nonce, secret and root,
    different when any of them differs, and shaped like every other player id."""
    mine = Credentials("r", SECRET)
    player = mine.player_of(GUEST)
    assert player == mine.player_of(GUEST) == mine.register(GUEST)["player"]
    assert re.fullmatch(r"p[0-9a-f]{16}", player)
    assert player != mine.player_of(GUEST + "x")
    assert player != Credentials("r2", SECRET).player_of(GUEST)
    assert player != Credentials("r", SECRET + "x").player_of(GUEST)
    assert GUEST not in player


async def test_bots_where_no_service_runs_them_are_unavailable(nats_url: str, lobby: str) -> None:
    """This cardroom runs the gamemaster alone: the lobby checks a bots request, then says in
    words that nobody here runs bots, and the table is as it was."""
    alice = await Client.connect(nats_url, "alice", subject_root=lobby)
    try:
        game = await alice.create("take5", seats=3)
        with pytest.raises(CardroomError) as caught:
            await alice.seat_bots(game, 2)
        assert caught.value.code == ErrorCode.UNAVAILABLE
        assert "runs bots" in caught.value.message
        assert (await alice.table(game))["seats"] == [alice.player]
    finally:
        await alice.close()
