"""The lobby hands out credentials on the deploy configuration, end to end.

A real nats-server with the deploy configuration and the auth callout (``secure_nats``), and
the real pipeline services connected as the service user: two newcomers register as guests,
get a player id and token from the gamemaster's lobby, connect with them (the auth callout
admits them with their own rights only) and play a game to its end; a renewed token connects
too, and a token the lobby did not sign does not.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from cardroom_acktracker import AckTracker
from cardroom_bots.players import BotPlayer
from cardroom_client import Client
from cardroom_gamemaster import Gamemaster
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from cardroom_timers import Timers
from deploy_support import SecureNats
from nats.errors import Error as NatsError

load_games("support.highcard:GAME")


@pytest.fixture
async def lobby(
    monkeypatch: pytest.MonkeyPatch,
    secure_nats: SecureNats,
    fresh_database: Callable[..., Awaitable[str]],
) -> AsyncIterator[SecureNats]:
    monkeypatch.setenv("CARDROOM_PLAYER_TOKEN_SECRET", secure_nats.secret("player_token_secret"))
    host = Host(
        [Gamemaster, Relay, Projector, AckTracker, Timers],
        nats_url=secure_nats.local(secure_nats.secret("nats_url")),
        database_url=await fresh_database(migrated=True),
        subject_root=secure_nats.root,
    )
    await host.start()
    try:
        yield secure_nats
    finally:
        await host.stop()


async def test_newcomers_register_connect_and_play(lobby: SecureNats) -> None:
    root = lobby.root
    alice = await Client.register(lobby.url, subject_root=root)
    bob = await Client.register(lobby.url, subject_root=root)
    bots = [BotPlayer(alice), BotPlayer(bob)]
    try:
        assert alice.player != bob.player
        game = await alice.create("highcard", seats=2)
        for bot in bots:
            bot.watch(game, "highcard")
        await bob.join(game)
        async with asyncio.timeout(60):
            await asyncio.gather(*(b.finished[game].wait() for b in bots))
        assert bots[0].outcomes[game] == bots[1].outcomes[game]

        renewed = await alice.renew()
        again = await Client.connect(lobby.url, alice.player, subject_root=root, token=renewed)
        try:
            assert (await again.table(game))["status"] == "finished"
        finally:
            await again.close()
    finally:
        await asyncio.gather(*(b.close() for b in bots), return_exceptions=True)


async def test_a_token_the_lobby_did_not_sign_is_refused(lobby: SecureNats) -> None:
    forged = "mallory.9999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    with pytest.raises((NatsError, OSError, asyncio.TimeoutError)):
        await Client.connect(
            lobby.url,
            "mallory",
            subject_root=lobby.root,
            token=forged,
            max_reconnect_attempts=0,
            allow_reconnect=False,
            connect_timeout=3,
        )
