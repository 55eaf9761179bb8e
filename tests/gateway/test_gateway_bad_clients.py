"""Bad clients: malformed lines, wrong types, out of order, silence, abrupt disconnects.

Every refusal is an ``error`` line with a stable code and, while a request is open, that
request again; the game goes on, with the house playing for silent and departed players.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from gateway_support import ACK_TIMEOUT, TURN_TIMEOUT, Gateway
from seed_client import SeedClient, SeedPlayer


async def _expect_error(client: SeedClient, code: str) -> dict[str, Any]:
    message = await client.recv(10)
    assert message["type"] == "error", message
    assert message["data"]["code"] == code, message
    assert isinstance(message["data"]["message"], str)
    assert message["data"]["message"]
    return message


async def _refused_then_asked_again(
    player: SeedPlayer, line: bytes, code: str, request: dict[str, Any]
) -> None:
    await player.client.send_raw(line)
    await _expect_error(player.client, code)
    player.checker.feed({"type": "error", "data": None})
    assert await player.next(10) == request  # the same request again


async def test_lines_before_the_table_starts(gateway: Gateway) -> None:
    first = SeedPlayer(await gateway.connect(), gateway.players)
    client = first.client
    await client.send({"type": "play_response", "data": {"face": 1, "bull": 1}})
    await _expect_error(client, "not_registered")
    await client.send_raw(b"{not json\n")
    await _expect_error(client, "malformed")
    await client.send_raw(b"x" * 70_000 + b"\n")  # more than the 64 KiB a line may hold
    await _expect_error(client, "line_too_long")
    # the long line was dropped whole: the next answer is the next line's
    await client.send({"type": "ping", "data": None})
    assert "ping" in (await _expect_error(client, "bad_message"))["data"]["message"]
    await client.send({"type": "register_request", "data": 1})
    await _expect_error(client, "bad_message")  # data must be null
    await first.register()
    await first.register()
    await _expect_error(client, "out_of_order")  # registered already
    await client.send({"type": "play_response", "data": {"face": 1, "bull": 1}})
    await _expect_error(client, "out_of_order")  # the table has not started
    others = [SeedPlayer(await gateway.connect(), gateway.players) for _ in range(2)]
    for other in others:
        await other.register()
    players = [first, *others]
    results = await asyncio.gather(*(p.play() for p in players))
    assert all(result == results[0] for result in results)
    assert first.checker.state == "over"


async def test_bad_responses_get_an_error_and_the_request_again(gateway: Gateway) -> None:
    players = await gateway.table()
    bad = players[0]
    playing = [asyncio.create_task(p.play()) for p in players[1:]]
    request = await bad.next_of("play_request")  # after the deal: the hand is known
    hand = list(bad.hand)
    not_mine = next(
        {"face": f, "bull": 1} for f in range(1, 105) if {"face": f, "bull": 1} not in hand
    )
    wrong_bull = {"face": hand[0]["face"], "bull": hand[0]["bull"] % 7 + 1}
    cases: list[tuple[bytes, str]] = [
        (b"{not json\n", "malformed"),
        (b"\xff\xfe\n", "malformed"),
        (b"[1, 2]\n", "bad_message"),
        (b'{"data": null}\n', "bad_message"),
        (b'{"type": "hello", "data": null}\n', "bad_message"),
        (b'{"type": "deal", "data": []}\n', "bad_message"),  # a server message
        (b'{"type": "play_response", "data": "A"}\n', "bad_message"),
        (b'{"type": "play_response", "data": {"face": "1", "bull": 1}}\n', "bad_message"),
        (b'{"type": "choose_response", "data": "E"}\n', "bad_message"),
        (b'{"type": "choose_response", "data": "A"}\n', "out_of_order"),  # no row asked
        (b'{"type": "register_request", "data": null}\n', "out_of_order"),
        (json.dumps({"type": "play_response", "data": not_mine}).encode() + b"\n", "illegal_move"),
        (
            json.dumps({"type": "play_response", "data": wrong_bull}).encode() + b"\n",
            "illegal_move",
        ),
    ]
    for line, code in cases:
        await _refused_then_asked_again(bad, line, code, request)
    await bad.handle(request)  # a good answer at last
    # an answer when nothing is asked: an error, and no request (none is open)
    await bad.client.send({"type": "play_response", "data": bad.hand[0]})
    while (message := await bad.next(10))["type"] != "error":
        assert await bad.handle(message) is None
    assert message["data"]["code"] == "out_of_order"
    results = await asyncio.gather(bad.play(), *playing)
    assert all(result == results[0] for result in results)
    assert bad.house_played == []  # every refused line left the request open for the player
    assert bad.errors == []  # nothing else was refused


async def test_a_silent_player_is_played_by_the_house(gateway: Gateway) -> None:
    players = await gateway.table()
    silent = players[1]
    silent.silent_requests = 1  # the first request goes unanswered
    loop = asyncio.get_running_loop()
    started = loop.time()
    results = await asyncio.gather(*(p.play() for p in players))
    assert all(result == results[0] for result in results)
    # the house played for it, after the turn timeout: its lowest card
    first_deal = next(m["data"] for m in silent.client.received if m["type"] == "deal")
    assert silent.house_played == [min(first_deal, key=lambda card: card["face"])]
    assert loop.time() - started >= TURN_TIMEOUT  # not before the turn timeout
    for player in players:
        assert player.errors == []
        assert player.house_played == ([] if player is not silent else silent.house_played)


async def test_an_abrupt_disconnect_hands_the_seat_to_the_house(gateway: Gateway) -> None:
    players = await gateway.table()
    gone, staying = players[0], players[1:]
    playing = [asyncio.create_task(p.play()) for p in staying]
    await gone.next_of("play_request")
    gone_id = gone.me
    gone.client.abort()  # no answer, no goodbye: a reset connection
    results = await asyncio.gather(*playing)
    assert results[0] == results[1]
    assert {entry["player"] for entry in results[0]} == set(range(gateway.players))
    # the departed seat kept playing (the house), every turn, to the end
    for player in staying:
        played = [m["data"] for m in player.client.received if m["type"] == "played"]
        assert len(played) >= 10
        assert all(gone_id in [entry["id"] for entry in turn] for turn in played)
        assert player.house_played == []
        assert player.errors == []


async def test_a_disconnect_mid_game_after_answering(gateway: Gateway) -> None:
    """A client that answered and then vanished (a half-closed socket: EOF)."""
    players = await gateway.table()
    gone, staying = players[2], players[:2]
    playing = [asyncio.create_task(p.play()) for p in staying]
    for _ in range(3):  # three turns, then away
        await gone.handle(await gone.next_of("play_request"))
    loop = asyncio.get_running_loop()
    left = loop.time()
    await gone.client.close()
    results = await asyncio.gather(*playing)
    assert results[0] == results[1]
    assert len(results[0]) == gateway.players
    # one ack timeout for the seat to be marked away, then the game ran on without waiting
    assert loop.time() - left >= ACK_TIMEOUT


async def test_a_player_who_leaves_the_lobby_is_not_seated(gateway: Gateway) -> None:
    leaver = SeedPlayer(await gateway.connect(), gateway.players)
    await leaver.register()
    # the gateway has it waiting once it answers a later line on the same connection
    await leaver.client.send({"type": "play_response", "data": {"face": 1, "bull": 1}})
    await _expect_error(leaver.client, "out_of_order")
    leaver.client.abort()
    # a round trip on another connection: the server's loop has seen the reset by then
    probe = await gateway.connect()
    await probe.send_raw(b"?\n")
    await _expect_error(probe, "malformed")
    players = await gateway.table()
    results = await asyncio.gather(*(p.play() for p in players))
    assert all(result == results[0] for result in results)
    assert sorted(p.me for p in players if p.me is not None) == list(range(gateway.players))
