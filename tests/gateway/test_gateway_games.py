"""End to end: protocol-only clients play whole games through the gateway of
`cardroom serve all`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from cardroom_gateway.bot import SeedBot
from gateway_support import GAME, Gateway
from seed_client import SeedPlayer


async def _play_all(players: list[SeedPlayer]) -> list[list[dict[str, Any]]]:
    return list(await asyncio.gather(*(p.play() for p in players)))


def _public(player: SeedPlayer) -> str:
    """What every player of a table sees alike: played, taken and game_over lines."""
    lines = [m for m in player.client.received if m["type"] in ("played", "taken", "game_over")]
    return json.dumps(lines)


def _assert_one_table(players: list[SeedPlayer], count: int) -> None:
    assert sorted(p.me for p in players if p.me is not None) == list(range(count))
    assert len({_public(p) for p in players}) == 1  # everyone saw the same game
    for player in players:
        assert player.checker.state == "over"
        assert player.errors == []


async def test_one_table_plays_a_whole_game(gateway: Gateway) -> None:
    players = await gateway.table()
    results = await _play_all(players)
    _assert_one_table(players, gateway.players)
    first = players[0].client.received[0]
    assert first == {
        "type": "register_response",
        "data": {
            "id": players[0].me,
            "player_count": gateway.players,
            "confg": {
                "turn_count": 10,
                "stack_size": 5,
                "win_score": GAME.get("win_score", 66),
                "deck_size": 104,
                "bull_range": [1, 7],
            },
        },
    }
    assert all(result == results[0] for result in results)
    assert max(entry["score"] for entry in results[0]) >= GAME.get("win_score", 66)
    for player in players:
        assert player.house_played == []  # everyone answered in time: the house never played
        # every card of every deal was played by its owner, in the turns of its round
        deals = [m["data"] for m in player.client.received if m["type"] == "deal"]
        assert len(deals) == player.checker.rounds >= 1
        assert [m["data"] for m in player.sent if m["type"] == "play_response"] == [
            card for hand in deals for card in sorted(hand, key=lambda c: c["face"])
        ]
    # the server closes every connection after game_over
    for player in players:
        assert await player.client.rest() == b""


async def test_two_tables_at_once(gateway: Gateway) -> None:
    players = [p for _ in range(2) for p in await gateway.table()]
    await _play_all(players)
    tables: dict[str, list[SeedPlayer]] = {}
    for player in players:
        tables.setdefault(_public(player), []).append(player)
    assert sorted(len(t) for t in tables.values()) == [gateway.players, gateway.players]
    for table in tables.values():
        _assert_one_table(table, gateway.players)
    deals = [json.dumps(m) for p in players for m in p.client.received if m["type"] == "deal"]
    assert len(deals) == len(set(deals))  # two games, each with its own shuffles


async def test_the_gateways_bots_play_a_table(gateway: Gateway) -> None:
    """Item 4 of the issue over TCP: take5's heuristic bot, fed from the take5 lines."""
    bots = [SeedBot("127.0.0.1", gateway.port, seed=i) for i in range(gateway.players)]
    results = await asyncio.wait_for(asyncio.gather(*(bot.play() for bot in bots)), 90)
    assert all(result == results[0] for result in results)
    assert sorted(bot.me for bot in bots if bot.me is not None) == list(range(gateway.players))
    assert all(bot.errors == [] for bot in bots)  # never an illegal or untimely line
    assert all(bot.hand == [] for bot in bots)


def test_the_bot_decides_like_take5s_heuristic() -> None:
    bot = SeedBot()
    bot.observe(
        {
            "type": "register_response",
            "data": {
                "id": 0,
                "player_count": 2,
                "confg": {
                    "turn_count": 3,
                    "stack_size": 2,
                    "win_score": 66,
                    "deck_size": 104,
                    "bull_range": [1, 7],
                },
            },
        }
    )
    bot.observe(
        {
            "type": "deal",
            "data": [{"face": 50, "bull": 3}, {"face": 12, "bull": 1}, {"face": 31, "bull": 1}],
        }
    )
    board = {
        "A": [{"face": 10, "bull": 3}, {"face": 11, "bull": 5}],  # full (stack_size 2)
        "B": [{"face": 30, "bull": 3}],
        "C": [{"face": 60, "bull": 3}],
        "D": [{"face": 70, "bull": 3}],
    }
    # 12 would be the sixth card of full row A; 31 joins B for free
    assert bot.decide({"type": "play_request", "data": board}) == {
        "type": "play_response",
        "data": {"face": 31, "bull": 1},
    }
    assert bot.decide({"type": "choose_request", "data": board}) == {
        "type": "choose_response",
        "data": "B",
    }
    bot.observe(
        {
            "type": "played",
            "data": [
                {"id": 1, "card": {"face": 5, "bull": 2}},
                {"id": 0, "card": {"face": 31, "bull": 1}},
            ],
        }
    )
    assert [card["face"] for card in bot.hand] == [12, 50]
