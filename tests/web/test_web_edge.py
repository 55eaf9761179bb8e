"""The web edge without a browser: what it serves, what it refuses, the NATS bridge, and the
bots it seats for a player (asked of the lobby, run here)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import secrets
import urllib.error
import urllib.request
from typing import Any

import pytest
from cardroom_client import CardroomError, Client
from cardroom_eventstore import EventStore
from cardroom_gateway import Web, WebSettings
from cardroom_gateway import web as web_module
from cardroom_wire import ErrorCode
from support.browser import WebStack
from websockets.asyncio.client import connect as ws_connect


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


async def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    return await asyncio.to_thread(_get, url, headers)


async def get_json(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    status, body = await get(url, headers)
    return status, json.loads(body)


async def test_the_page_its_configuration_and_the_game_types(web_stack: WebStack) -> None:
    status, page = await get(web_stack.url)
    assert status == 200
    assert b'<script type="module" src="/app.js">' in page
    status, config = await get_json(web_stack.url + "config.json")
    assert config == {"root": web_stack.root, "nats_ws": None}
    status, games = await get_json(web_stack.url + "api/games")
    types = {g["type"]: g for g in games["games"]}
    # (other test modules may have registered test games in this process)
    assert {"take5", "sixtysix", "papas", "macaua"} <= set(types)
    assert types["sixtysix"]["defaults"]["protocol"] == "v2"
    # the defaults a table created now gets: Macaua's shuffles proved by the argument, the
    # proof the page makes
    assert types["macaua"]["defaults"]["shuffle_proof"] == "argument"
    # an unknown page path is the page (it routes by its fragment); a missing file is not
    assert (await get(web_stack.url + "anything"))[0] == 200
    assert (await get(web_stack.url + "missing.js"))[0] == 404


@pytest.mark.parametrize("path", ["../pyproject.toml", "..%2F..%2Fpyproject.toml", "/etc/passwd"])
async def test_no_file_outside_the_built_client(web_stack: WebStack, path: str) -> None:
    status, body = await get(web_stack.url + path.lstrip("/"))
    assert b"[project]" not in body
    assert b"root:" not in body
    assert status in (200, 404)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("a" * 300, 200),  # a page path (no dot): the page, which routes by its fragment
        ("a" * 300 + ".js", 404),  # a file: not found
    ],
)
async def test_a_path_too_long_for_a_file_name_is_not_found(
    web_stack: WebStack, path: str, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    """A path part longer than a file name makes the file system's lookup fail
    (``ENAMETOOLONG``): a missing file, not a handler's failure with a traceback."""
    with caplog.at_level(logging.DEBUG):
        got, _ = await get(web_stack.url + path)
    assert got == status
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_the_public_view_while_the_database_has_no_room_is_unavailable(
    web_stack: WebStack,
    roomless_role: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """PostgreSQL refusing the web edge a connection (a role that may hold none: "too many
    connections") is answered 503 ``unavailable``, which a page retries, not a 500."""
    web = next(s for s in web_stack.host.services if isinstance(s, Web))
    url = web.store_of("g1").engine.url.set(username=roomless_role, password=None)
    full = await EventStore.connect(url.render_as_string(hide_password=False))
    try:
        monkeypatch.setattr(web, "store_of", lambda game: full)
        with caplog.at_level(logging.DEBUG):
            status, reply = await get_json(web_stack.url + "api/public?game=g1")
        assert status == 503
        assert reply["error"]["code"] == "unavailable"
        assert "connections" not in json.dumps(reply)
        assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    finally:
        await full.close()


async def test_bad_public_view_requests(web_stack: WebStack) -> None:
    status, reply = await get_json(web_stack.url + "api/public?game=bad.id")
    assert status == 400
    assert reply["error"]["code"] == "bad_id"
    status, reply = await get_json(web_stack.url + "api/public?game=nosuchgame")
    assert status == 404
    # an id naming a shard this cardroom lacks names no table either
    status, reply = await get_json(web_stack.url + "api/public?game=s7-nosuchgame")
    assert status == 404
    assert reply["error"]["code"] == "unknown_game"


async def test_the_bridge_carries_the_nats_protocol_and_nothing_else(web_stack: WebStack) -> None:
    url = web_stack.url.replace("http://", "ws://") + "nats"
    async with ws_connect(url) as ws:
        info = await asyncio.wait_for(ws.recv(), 5)
        assert isinstance(info, bytes)
        assert info.startswith(b"INFO ")
        await ws.send(b'CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n')
        assert await asyncio.wait_for(ws.recv(), 5) == b"PONG\r\n"


async def test_a_player_seats_bots_only_at_its_own_table_and_in_its_free_seats(
    web_stack: WebStack, nats_url: str
) -> None:
    """The lobby acts for the player the subject names: a player seats bots at a table it
    sits at, in the seats still free, of the game's own kinds; each bot is a player of its
    own, and the last seat starts the game."""
    root = web_stack.root
    alice = await Client.connect(nats_url, f"alice{secrets.token_hex(3)}", subject_root=root)
    mallory = await Client.connect(nats_url, f"mallory{secrets.token_hex(3)}", subject_root=root)
    try:
        game = await alice.create("take5", seats=3)
        for who, args, code in [
            (mallory, (game, 1), ErrorCode.NOT_SEATED),  # nobody fills another's table
            (alice, (game, 3), ErrorCode.TABLE_FULL),
            (alice, (game, 1, "nosuch"), ErrorCode.BAD_REQUEST),
            (alice, ("nosuchgame", 1), ErrorCode.UNKNOWN_GAME),
        ]:
            with pytest.raises(CardroomError) as refused:
                await who.seat_bots(*args)
            assert refused.value.code == code, (args, refused.value)
        assert (await alice.table(game))["seats"] == [alice.player]
        bots = await alice.seat_bots(game, 2, "random")
        assert len(set(bots)) == 2
        assert alice.player not in bots
        table = await alice.table(game)
        assert table["seats"] == [alice.player, *bots]
        assert table["status"] == "playing"
        with pytest.raises(CardroomError) as refused:
            await alice.seat_bots(game, 1)
        assert refused.value.code == ErrorCode.ALREADY_STARTED
    finally:
        await alice.close()
        await mallory.close()


async def test_bots_playing_at_once_are_bounded_per_player_and_per_process(
    web_stack: WebStack, nats_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One player cannot fill the web edge with games of bots: past its share of bots
    playing at once it is refused ``too_many_bots``, and past the process's whole share
    everyone is refused ``unavailable``."""
    monkeypatch.setattr(web_module, "BOTS_PER_PLAYER", 2)
    web = next(s for s in web_stack.host.services if isinstance(s, Web))
    root = web_stack.root
    alice = await Client.connect(nats_url, f"alice{secrets.token_hex(3)}", subject_root=root)
    bob = await Client.connect(nats_url, f"bob{secrets.token_hex(3)}", subject_root=root)
    try:
        game = await alice.create("take5", seats=4)
        assert len(await alice.seat_bots(game, 2, "random")) == 2
        with pytest.raises(CardroomError) as refused:
            await alice.seat_bots(game, 1, "random")
        assert refused.value.code == ErrorCode.TOO_MANY_BOTS
        # a process whose share is spent (here: none at all)
        monkeypatch.setattr(web, "settings", dataclasses.replace(web.settings, bots=0))
        other = await bob.create("take5", seats=3)
        with pytest.raises(CardroomError) as refused:
            await bob.seat_bots(other, 1, "random")
        assert refused.value.code == ErrorCode.UNAVAILABLE
        assert (await bob.table(other))["seats"] == [bob.player]
    finally:
        await alice.close()
        await bob.close()


def test_the_bots_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDROOM_WEB_BOTS", "7")
    assert WebSettings.from_env().bots == 7
    monkeypatch.setenv("CARDROOM_WEB_BOTS", "many")
    with pytest.raises(ValueError, match="CARDROOM_WEB_BOTS"):
        WebSettings.from_env()
    monkeypatch.delenv("CARDROOM_WEB_BOTS")
    assert WebSettings.from_env().bots == web_module.BOTS_AT_ONCE


async def test_a_burst_of_bots_requests_makes_no_more_bots_than_the_free_seats(
    web_stack: WebStack, nats_url: str
) -> None:
    """Each bot is a new player, made before it joins: requests sent at once by the two
    players at a table with one free seat seat one bot, and the others are refused by the
    lobby before any bot is made for them (in the lobby's words, not a failed join's)."""
    root = web_stack.root
    alice = await Client.connect(nats_url, f"alice{secrets.token_hex(3)}", subject_root=root)
    bob = await Client.connect(nats_url, f"bob{secrets.token_hex(3)}", subject_root=root)
    try:
        game = await alice.create("take5", seats=3)
        await bob.join(game)
        results = await asyncio.gather(
            *(who.seat_bots(game, 1, "random") for who in (alice, bob) * 3),
            return_exceptions=True,
        )
        seated = [r for r in results if isinstance(r, list)]
        refused = [r for r in results if isinstance(r, CardroomError)]
        assert len(seated) == 1, results
        assert len(refused) == 5, results
        for refusal in refused:
            assert refusal.message in LOBBY_REFUSALS, refusal
        assert (await alice.table(game))["seats"] == [alice.player, bob.player, *seated[0]]
    finally:
        await alice.close()
        await bob.close()


# what the lobby answers before it asks for any bot (a failed join says otherwise)
LOBBY_REFUSALS = {"the table has 0 free seat(s)", "the table has started"}
