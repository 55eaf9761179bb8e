"""The translation between cardroom's notifications and the take5 lines, without a server."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from cardroom_engine import Table
from cardroom_engine.simulate import play
from cardroom_games.take5 import GAME
from cardroom_gateway import GatewaySettings, LineErrorCode, parse, translate
from cardroom_gateway.lines import Incoming, LineError, encode, error_line
from cardroom_gateway.settings import GatewaySettingsError

CARD = {"face": 7, "bull": 1}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"type": "register_request", "data": null}\n', Incoming("register_request", None)),
        (b'{"type": "register_request"}', Incoming("register_request", None)),
        (
            b'{"type": "play_response", "data": {"face": 7, "bull": 1}}',
            Incoming("play_response", CARD),
        ),
        (b'{"type": "choose_response", "data": "C"}\r\n', Incoming("choose_response", "C")),
    ],
)
def test_parse_accepts_the_seeds_client_messages(raw: bytes, expected: Incoming) -> None:
    assert parse(raw) == expected


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"", LineErrorCode.MALFORMED),
        (b"{", LineErrorCode.MALFORMED),
        (b'{"type": "play_response"} {"type": "play_response"}', LineErrorCode.MALFORMED),
        (b"\xff", LineErrorCode.MALFORMED),
        (b"[" * 100_000, LineErrorCode.MALFORMED),  # too deep for the parser
        (b"null", LineErrorCode.BAD_MESSAGE),
        (b'"play_response"', LineErrorCode.BAD_MESSAGE),
        (b'{"type": 1}', LineErrorCode.BAD_MESSAGE),
        (b'{"type": "nope"}', LineErrorCode.BAD_MESSAGE),
        (b'{"type": "deal", "data": []}', LineErrorCode.BAD_MESSAGE),
        (b'{"type": "error", "data": null}', LineErrorCode.BAD_MESSAGE),
        (b'{"type": "register_request", "data": {}}', LineErrorCode.BAD_MESSAGE),
        (b'{"type": "play_response", "data": null}', LineErrorCode.BAD_MESSAGE),
        (b'{"type": "play_response", "data": {"face": 7}}', LineErrorCode.BAD_MESSAGE),
        (
            b'{"type": "play_response", "data": {"face": true, "bull": 1}}',
            LineErrorCode.BAD_MESSAGE,
        ),
        (b'{"type": "play_response", "data": {"face": 7.0, "bull": 1}}', LineErrorCode.BAD_MESSAGE),
        (b'{"type": "choose_response", "data": "a"}', LineErrorCode.BAD_MESSAGE),
        (b'{"type": "choose_response", "data": 0}', LineErrorCode.BAD_MESSAGE),
    ],
)
def test_parse_refuses_with_a_stable_code(raw: bytes, code: LineErrorCode) -> None:
    with pytest.raises(LineError) as refused:
        parse(raw)
    assert refused.value.code == code
    assert refused.value.message


def test_error_lines_and_encoding() -> None:
    line = error_line(LineErrorCode.ILLEGAL_MOVE, "that card is not in your hand")
    assert line == {
        "type": "error",
        "data": {"code": "illegal_move", "message": "that card is not in your hand"},
    }
    raw = encode(line)
    assert raw.endswith(b"\n")
    assert raw.count(b"\n") == 1
    assert json.loads(raw) == line
    assert encode({"type": "x", "data": "a\nb"}).count(b"\n") == 1  # newlines are escaped


def test_game_started_becomes_register_response_with_the_seat_index() -> None:
    config = GAME.config_model().model_dump(mode="json")
    started = {
        "type": "GameStarted",
        "game": "g1",
        "game_type": "take5",
        "seats": ["ann", "bob", "cy"],
        "config": config,
    }
    assert translate(started, "bob") == [
        {
            "type": "register_response",
            "data": {
                "id": 1,
                "player_count": 3,
                "confg": {
                    "turn_count": 10,
                    "stack_size": 5,
                    "win_score": 66,
                    "deck_size": 104,
                    "bull_range": [1, 7],
                },
            },
        }
    ]
    assert translate(started, "ann")[0]["data"]["id"] == 0


@pytest.mark.parametrize(
    "message",
    [
        {"type": "GameOver", "outcome": {"scores": {}, "ranking": []}},
        {"type": "PlayerAway", "player": "bob"},
        {"type": "PlayerBack", "player": "bob"},
        {"type": "SomethingNew"},
    ],
)
def test_table_messages_without_a_seed_line(message: dict[str, Any]) -> None:
    assert translate(message, "ann") == []


def test_every_take5_message_of_real_games_passes_through_exactly() -> None:
    """Every message take5 sends, in random games, becomes exactly one take5 line: itself."""
    kinds: set[str] = set()
    for seed in range(5):
        local = play(GAME, ["ann", "bob", "cy", "dee"], random.Random(seed))
        for step in local.steps:
            for player, message in step.notifications.items():
                lines = translate(message, player)
                if message["type"] == "GameStarted":
                    assert lines[0]["type"] == "register_response"
                    continue
                if message["type"] in ("GameOver", "PlayerAway", "PlayerBack"):
                    assert lines == []
                    continue
                assert lines == [{"type": message["type"], "data": message["data"]}]
                assert set(message) == {"type", "data"}  # nothing dropped on the way
                kinds.add(message["type"])
    assert kinds == {"deal", "play_request", "played", "choose_request", "taken", "game_over"}


def test_settings_from_the_environment() -> None:
    assert GatewaySettings.from_env({}) == GatewaySettings()
    defaults = GatewaySettings()
    assert (defaults.host, defaults.port, defaults.players) == ("127.0.0.1", 45678, 4)
    settings = GatewaySettings.from_env(
        {
            "CARDROOM_GATEWAY_HOST": "0.0.0.0",
            "CARDROOM_GATEWAY_PORT": "5000",
            "CARDROOM_GATEWAY_PLAYERS": "6",
            "CARDROOM_GATEWAY_TURN_TIMEOUT": "2.5",
            "CARDROOM_GATEWAY_ACK_TIMEOUT": "4",
            "CARDROOM_GATEWAY_CONFIG": '{"win_score": 30, "stack_size": 4}',
        }
    )
    assert (settings.host, settings.port, settings.players) == ("0.0.0.0", 5000, 6)
    assert settings.table_config() == {
        "win_score": 30,
        "stack_size": 4,
        "turn_timeout": 2.5,
        "table": {"ack_timeout": 4.0, "turn_timeout": 2.5},
    }
    assert settings.take5_config().win_score == 30
    # what the gateway creates is what the table accepts
    events = Table(GAME).create("g1", "ann", settings.table_config(), seats=6)
    assert events[0]["options"] == {"ack_timeout": 4.0, "turn_timeout": 2.5}
    assert events[0]["config"]["turn_timeout"] == 2.5


@pytest.mark.parametrize(
    ("env", "name"),
    [
        ({"CARDROOM_GATEWAY_PORT": "http"}, "CARDROOM_GATEWAY_PORT"),
        ({"CARDROOM_GATEWAY_PORT": "70000"}, "CARDROOM_GATEWAY_PORT"),
        ({"CARDROOM_GATEWAY_PLAYERS": "1"}, "CARDROOM_GATEWAY_PLAYERS"),
        ({"CARDROOM_GATEWAY_PLAYERS": "11"}, "CARDROOM_GATEWAY_PLAYERS"),
        ({"CARDROOM_GATEWAY_TURN_TIMEOUT": "0"}, "CARDROOM_GATEWAY_TURN_TIMEOUT"),
        ({"CARDROOM_GATEWAY_ACK_TIMEOUT": "inf"}, "CARDROOM_GATEWAY_ACK_TIMEOUT"),
        ({"CARDROOM_GATEWAY_CONFIG": "{"}, "CARDROOM_GATEWAY_CONFIG"),
        ({"CARDROOM_GATEWAY_CONFIG": '{"deck_size": 20}'}, "CARDROOM_GATEWAY_CONFIG"),
        ({"CARDROOM_GATEWAY_CONFIG": '{"colour": "red"}'}, "CARDROOM_GATEWAY_CONFIG"),
        ({"CARDROOM_GATEWAY_CONFIG": '{"turn_timeout": 5}'}, "CARDROOM_GATEWAY_CONFIG"),
    ],
)
def test_bad_settings_name_their_variable(env: dict[str, str], name: str) -> None:
    with pytest.raises(GatewaySettingsError, match=name):
        GatewaySettings.from_env(env)
