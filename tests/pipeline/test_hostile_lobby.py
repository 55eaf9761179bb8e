"""Hostile requests to each lobby verb, on a running cardroom while bot tables play: each is
refused cleanly with a stable code (or, sent with a reply address that is not its asker's,
answered nowhere and counted by the edge), changes nothing in the store, and logs no error.

Run with ``-s`` to see what was tried per verb.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from cardroom_gamemaster.credentials import SECRET_ENV
from cardroom_natsauth.tokens import issue_player_token
from support.hostile import (
    DROP,
    OK,
    QUIET,
    BotTables,
    Case,
    Raw,
    World,
    bodies,
    body_kinds,
    field_cases,
    finish,
    id_kinds,
    prepare,
    reply_kinds,
    run_cases,
    run_generated,
)
from support.stack import Stack

SECRET = "hostile-lobby-test-secret-of-enough-bytes"
MIN_KINDS = 40


def _int_kinds(name: str, *, low: int, high: int, game_code: str | None = None) -> list[Any]:
    """(kind, value, code) of bad integers for a field valid in ``low..high``."""
    return [
        (f"{name}: zero" if low > 0 else f"{name}: below range", low - 1, "bad_request"),
        (f"{name}: -1", -1, "bad_request"),
        (f"{name}: one past the top", high + 1, "bad_request"),
        (f"{name}: 2^31", 2**31, "bad_request"),
        (f"{name}: 2^63", 2**63, "bad_request"),
        (f"{name}: -2^63", -(2**63), "bad_request"),
        (f"{name}: 2^64 - 1", 2**64 - 1, "bad_request"),
        (f"{name}: 2^64", 2**64, "bad_request"),
        (f"{name}: -2^64", -(2**64), "bad_request"),
        (f"{name}: a numeric string", str(low), "bad_request"),
        (f"{name}: a whole float", float(low), "bad_request"),
        (f"{name}: 1.5", 1.5, "bad_request"),
        (f"{name}: true", True, "bad_request"),
        (f"{name}: false", False, "bad_request"),
        (f"{name}: a list", [low], "bad_request"),
        (f"{name}: an object", {"n": low}, "bad_request"),
    ]


GOOD_KEY = "0123456789abcdef" * 4


def _key_kinds() -> list[tuple[str, Any, str]]:
    """(kind, value, code) of a bad seat key: anything but 64 lowercase hex characters (null
    is a valid value, the same as no key, so it is not tried)."""
    return [
        ("key: 63 characters", GOOD_KEY[:-1], "bad_request"),
        ("key: 65 characters", GOOD_KEY + "0", "bad_request"),
        ("key: 128 characters", GOOD_KEY * 2, "bad_request"),
        ("key: 60,000 characters", "a" * 60_000, "bad_request"),
        ("key: empty", "", "bad_request"),
        ("key: uppercase", GOOD_KEY.upper(), "bad_request"),
        ("key: one uppercase letter", GOOD_KEY[:-1] + "F", "bad_request"),
        ("key: not hex", "g" * 64, "bad_request"),
        ("key: a trailing newline", GOOD_KEY[:-1] + "\n", "bad_request"),
        ("key: a 0x prefix", "0x" + GOOD_KEY[2:], "bad_request"),
        ("key: base64", "ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=", "bad_request"),
        ("key: Arabic-Indic digits", "\u0661" * 64, "bad_request"),
        ("key: fullwidth digits", "\uff10" * 64, "bad_request"),
        ("key: an escaped NUL", GOOD_KEY[:-1] + "\u0000", "bad_json"),
        (
            "key: a lone surrogate",
            Raw(b'"' + GOOD_KEY[:-1].encode() + b'\xed\xa0\x80"'),
            "bad_json",
        ),
        ("key: an integer", 12, "bad_request"),
        ("key: an integer beyond 64 bits", 2**64, "bad_request"),
        ("key: a float", 1.5, "bad_request"),
        ("key: true", True, "bad_request"),
        ("key: a list", [GOOD_KEY], "bad_request"),
        ("key: a list of 32 byte values", list(range(32)), "bad_request"),
        ("key: an object", {"key": GOOD_KEY}, "bad_request"),
    ]


def _type_kinds(subject: str, base: dict[str, Any], verb: str) -> list[Case]:
    other = "join" if verb != "join" else "create"
    return field_cases(
        subject,
        base,
        [
            ("type: another verb's", other, "bad_request"),
            ("type: in capitals", verb.upper(), "bad_request"),
            ("type: an integer", 1, "bad_request"),
            ("type: null", None, "bad_request"),
            ("type: a list", [verb], "bad_request"),
            ("type: empty", "", "bad_request"),
        ],
    )


def _extra_kinds(subject: str, base: dict[str, Any]) -> list[Case]:
    return field_cases(
        subject,
        base,
        [
            ("x: an extra field", 1, "bad_request"),
            ("player: a body that names another player", "bob", "bad_request"),
            ("actor: a body that names another actor", "bob", "bad_request"),
        ],
    )


def _verb_subject_kinds(world: World, verb: str, data: bytes, asker: str) -> list[Case]:
    """The verb spelled otherwise, and askers that are not one token (answered below that
    asker's inbox, so an answer is due)."""
    root = world.stack.root

    def lobby(v: str, a: str) -> str:
        return f"{root}.lobby.{v}.{a}"

    return [
        Case("subject: the verb in capitals", lobby(verb.upper(), asker), data, "bad_request"),
        Case("subject: the verb with a suffix", lobby(verb + "s", asker), data, "bad_request"),
        Case("subject: asker non-ASCII", lobby(verb, "älice"), data, "bad_id"),
        Case("subject: asker of 65 characters", lobby(verb, "a" * 65), data, "bad_id"),
        Case("subject: asker with a '!'", lobby(verb, "al!ce"), data, "bad_id"),
        Case("subject: asker '*'", lobby(verb, "*"), data, "bad_id"),
        Case("subject: asker with a control character", lobby(verb, "al\x01ce"), data, "bad_id"),
    ]


def create_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.lobby("create", "alice")
    base = {"game_type": "highcard", "config": QUIET, "seats": 3}
    valid = orjson.dumps(base)  # a table would be created, were it handled

    def cfg(kind: str, config: Any, code: str = "bad_config") -> tuple[str, Any, str]:
        return (f"config: {kind}", config, code)

    deep = Raw(b'{"deep":' + b'{"a":' * 500 + b"1" + b"}" * 501)
    cases = [
        *body_kinds(subject, base),
        *field_cases(subject, base, id_kinds("game_type", "highcard")),
        *field_cases(
            subject, base, [("game_type: a game nobody serves", "chess", "unknown_game_type")]
        ),
        *field_cases(subject, base, [("game_type: in capitals", "HIGHCARD", "unknown_game_type")]),
        Case("field game_type: missing", subject, orjson.dumps({"seats": 3}), "bad_request"),
        *field_cases(subject, base, id_kinds("game", "fz1", optional=True)),
        *field_cases(
            subject,
            base,
            [
                ("game: a running game's id", w.game, "conflict"),
                ("game: a finished game's id", w.finished, "conflict"),
                ("game: a lobby table's id", w.lobby, "conflict"),
            ],
        ),
        *field_cases(subject, base, _int_kinds("seats", low=1, high=16)),
        *field_cases(subject, base, _key_kinds()),
        *field_cases(
            subject,
            base,
            [
                ("seats: fewer than the game allows", 1, "bad_config"),
                ("seats: more than the game allows", 4, "bad_config"),
                ("seats: the wire's largest", 16, "bad_config"),
            ],
        ),
        *field_cases(
            subject,
            base,
            [
                cfg("a list", [1], "bad_request"),
                cfg("a string", "rounds=3", "bad_request"),
                cfg("null", None, "bad_request"),
                cfg("an integer", 3, "bad_request"),
                cfg("an option the game has not", {"cheat": True}),
                cfg("rounds zero", {"rounds": 0}),
                cfg("rounds above the game's limit", {"rounds": 51}),
                cfg("rounds a word", {"rounds": "many"}),
                cfg("rounds 1.5", {"rounds": 1.5}),
                cfg("rounds true", {"rounds": True}),
                cfg("rounds a numeric string", {"rounds": "3"}),
                cfg("rounds a whole float", {"rounds": 3.0}),
                cfg("ack_timeout a numeric string", {"table": {"ack_timeout": "30"}}),
                cfg("ack_timeout true", {"table": {"ack_timeout": True}}),
                cfg("ack_timeout null (never)", {"table": {"ack_timeout": None}}),
                cfg("rounds 2^63", {"rounds": 2**63}),
                cfg("rounds a list", {"rounds": [3]}),
                cfg("max_value 1", {"max_value": 1}),
                cfg("table options not an object", {"table": 5}),
                cfg("table option unknown", {"table": {"x": 1}}),
                cfg("ack_timeout zero", {"table": {"ack_timeout": 0}}),
                cfg("ack_timeout negative", {"table": {"ack_timeout": -1}}),
                cfg("ack_timeout above a day", {"table": {"ack_timeout": 86_401}}),
                cfg("turn_timeout 1e308", {"table": {"turn_timeout": 1e308}}),
                cfg("turn_timeout a list", {"table": {"turn_timeout": [1]}}),
                cfg("nested 500 deep", deep),
            ],
        ),
        *_type_kinds(subject, base, "create"),
        *_extra_kinds(subject, base),
        *_verb_subject_kinds(w, "create", valid, "alice"),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


def join_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.lobby("join", "carol")
    base = {"game": w.lobby}  # carol would take a seat, were it handled
    valid = orjson.dumps(base)
    cases = [
        *body_kinds(subject, base),
        *field_cases(subject, base, id_kinds("game", w.lobby)),
        Case("field game: missing", subject, b"{}", "bad_request"),
        *field_cases(
            subject,
            base,
            [
                ("game: nobody's", "nosuchgame", "unknown_game"),
                ("game: a running game", w.game, "already_started"),
                ("game: a finished game", w.finished, "already_started"),
            ],
        ),
        *field_cases(subject, base, _key_kinds()),
        Case(
            "seated: join the own table again", w.s.lobby("join", "alice"), valid, "already_seated"
        ),
        Case(
            "seated: bind a key to the own seat after joining",
            w.s.lobby("join", "alice"),
            orjson.dumps({**base, "key": GOOD_KEY}),
            "already_seated",
        ),
        Case(
            "seated: a key for a running game one plays",
            w.s.lobby("join", "bob"),
            orjson.dumps({"game": w.game, "key": GOOD_KEY}),
            "already_seated",
        ),
        Case(
            "key: a good key for a running game",
            subject,
            orjson.dumps({"game": w.game, "key": GOOD_KEY}),
            "already_started",
        ),
        Case(
            "seated: join a running game one plays",
            w.s.lobby("join", "bob"),
            orjson.dumps({"game": w.game}),
            "already_seated",
        ),
        *_type_kinds(subject, base, "join"),
        *_extra_kinds(subject, base),
        *_verb_subject_kinds(w, "join", valid, "carol"),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


def start_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.lobby("start", "alice")
    base = {"game": w.lobby}  # 1 of 3 seats: not_enough_players
    valid = orjson.dumps(base)
    cases = [
        *body_kinds(subject, base),
        *field_cases(subject, base, id_kinds("game", w.lobby)),
        Case("field game: missing", subject, b"{}", "bad_request"),
        *field_cases(
            subject,
            base,
            [
                ("game: nobody's", "nosuchgame", "unknown_game"),
                ("game: a running game", w.game, "already_started"),
                ("game: a finished game", w.finished, "already_started"),
            ],
        ),
        Case("state: too few players", subject, valid, "not_enough_players"),
        Case(
            "not seated: start another's table", w.s.lobby("start", "carol"), valid, "not_creator"
        ),
        Case(
            "seated, not the creator: start a finished game",
            w.s.lobby("start", "erin"),
            orjson.dumps({"game": w.finished}),
            "already_started",
        ),
        *_type_kinds(subject, base, "start"),
        *_extra_kinds(subject, base),
        *_verb_subject_kinds(w, "start", valid, "alice"),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


def bots_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.lobby("bots", "alice")
    base = {"game": w.lobby, "count": 1, "kind": "random"}  # (the edge drops it unanswered)
    valid = orjson.dumps(base)
    cases = [
        *body_kinds(subject, base),
        *field_cases(subject, base, id_kinds("game", w.lobby)),
        Case("field game: missing", subject, orjson.dumps({"count": 1}), "bad_request"),
        *field_cases(
            subject,
            base,
            [
                ("game: nobody's", "nosuchgame", "unknown_game"),
                ("game: a running game", w.game, "already_started"),
                ("game: another's finished game", w.finished, "not_seated"),
                ("count: more than the free seats", 3, "table_full"),
                ("kind: one the game lacks", "nosuch", "bad_request"),
            ],
        ),
        *field_cases(subject, base, _int_kinds("count", low=1, high=9)),
        *field_cases(subject, base, id_kinds("kind", "random")),
        Case("not seated: fill another's table", w.s.lobby("bots", "carol"), valid, "not_seated"),
        Case(
            "seated: a finished game",
            w.s.lobby("bots", "erin"),
            orjson.dumps({**base, "game": w.finished}),
            "already_started",
        ),
        *_type_kinds(subject, base, "bots"),
        *_extra_kinds(subject, base),
        *_verb_subject_kinds(w, "bots", valid, "alice"),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


def get_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.lobby("get", "carol")
    base = {"game": w.game}  # a read: anyone may look at a table's summary
    valid = orjson.dumps(base)
    cases = [
        *body_kinds(subject, base),
        *field_cases(subject, base, id_kinds("game", w.game)),
        Case("field game: missing", subject, b"{}", "bad_request"),
        *field_cases(subject, base, [("game: nobody's", "nosuchgame", "unknown_game")]),
        *_type_kinds(subject, base, "get"),
        *_extra_kinds(subject, base),
        *_verb_subject_kinds(w, "get", valid, "carol"),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


def list_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.lobby("list", "carol")
    base = {"status": "playing"}
    valid = orjson.dumps(base)
    cases = [
        *body_kinds(subject, base),
        *field_cases(subject, base, id_kinds("game_type", "highcard", optional=True)),
        *field_cases(
            subject,
            base,
            [
                ("status: a status no table has", "open", "bad_request"),
                ("status: in capitals", "PLAYING", "bad_request"),
                ("status: empty", "", "bad_request"),
                ("status: an integer", 1, "bad_request"),
                ("status: a list", ["playing"], "bad_request"),
                ("status: true", True, "bad_request"),
            ],
        ),
        *_type_kinds(subject, base, "list"),
        *_extra_kinds(subject, base),
        *_verb_subject_kinds(w, "list", valid, "carol"),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


def register_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.lobby("register", "nonce2")
    base: dict[str, Any] = {}
    valid = b"{}"  # a new player id and token: stateless, but answered to the guest only
    cases = [
        *body_kinds(subject, {"type": "register"}),
        *_type_kinds(subject, {"type": "register"}, "register"),
        *_extra_kinds(subject, base),
        *field_cases(
            subject,
            base,
            [
                ("nonce: a body that names the nonce", "nonce3", "bad_request"),
                ("token: a token in a register request", w.guest["token"], "bad_request"),
            ],
        ),
        *_verb_subject_kinds(w, "register", valid, "nonce2"),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


def renew_cases(w: World) -> tuple[str, list[Case]]:
    player, token = w.guest["player"], w.guest["token"]
    subject = w.s.lobby("renew", player)
    base = {"token": token}  # a fresh token: stateless, but answered to its player only
    valid = orjson.dumps(base)
    name, expires, signature = token.split(".")
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    root = w.stack.root
    now = time.time()
    cases = [
        *body_kinds(subject, base),
        Case("field token: missing", subject, b"{}", "bad_request"),
        *field_cases(
            subject,
            base,
            [
                ("token: empty", "", "bad_request"),
                ("token: 257 characters", "t" * 257, "bad_request"),
                ("token: 60,000 characters", "t" * 60_000, "bad_request"),
                ("token: an integer", 1, "bad_request"),
                ("token: null", None, "bad_request"),
                ("token: true", True, "bad_request"),
                ("token: a list", [token], "bad_request"),
                ("token: an object", {"token": token}, "bad_request"),
                ("token: not a token at all", "garbage", "bad_token"),
                ("token: dots only", "..", "bad_token"),
                ("token: a forged signature", f"{name}.{expires}.{flipped}", "bad_token"),
                ("token: no signature", f"{name}.{expires}.", "bad_token"),
                ("token: a later expiry", f"{name}.{int(expires) + 1}.{signature}", "bad_token"),
                ("token: an expiry of 13 digits", f"{name}.{'9' * 13}.{signature}", "bad_token"),
                ("token: a negative expiry", f"{name}.-{expires}.{signature}", "bad_token"),
                (
                    "token: an expiry in superscript digits",
                    f"{name}.\u00b2\u00b3.{signature}",
                    "bad_token",
                ),
                (
                    "token: an expiry in Arabic-Indic digits",
                    f"{name}.\u0661\u0662.{signature}",
                    "bad_token",
                ),
                ("token: an escaped NUL", token + "\u0000", "bad_json"),
                ("token: non-ASCII", token + "é", "bad_token"),
                ("token: another player's name", f"p{expires}.{expires}.{signature}", "bad_token"),
                ("token: a player id that is no token", f"a b.{expires}.{signature}", "bad_token"),
                ("token: four parts", f"{token}.x", "bad_token"),
                (
                    "token: expired",
                    issue_player_token(SECRET, root, player, ttl=60, now=now - 3600),
                    "bad_token",
                ),
                (
                    "token: of another deployment",
                    issue_player_token(SECRET, f"{root}x", player, ttl=60),
                    "bad_token",
                ),
                (
                    "token: signed with another secret",
                    issue_player_token(SECRET + "x", root, player, ttl=60),
                    "bad_token",
                ),
            ],
        ),
        Case(
            "asker: another player's valid token", w.s.lobby("renew", "alice"), valid, "bad_token"
        ),
        *_type_kinds(subject, base, "renew"),
        *_extra_kinds(subject, base),
        *_verb_subject_kinds(w, "renew", valid, player),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


VERBS: dict[str, Callable[[World], tuple[str, list[Case]]]] = {
    "create": create_cases,
    "join": join_cases,
    "start": start_cases,
    "list": list_cases,
    "get": get_cases,
    "bots": bots_cases,
    "register": register_cases,
    "renew": renew_cases,
}
FIELDS = {
    "create": ["game_type", "config", "seats", "game", "key"],
    "join": ["game", "key"],
    "start": ["game"],
    "list": ["game_type", "status"],
    "get": ["game"],
    "bots": ["game", "count", "kind"],
    "register": [],
    "renew": ["token"],
}


@pytest.mark.parametrize("verb", list(VERBS))
async def test_hostile_lobby_requests(
    stack: Stack, verb: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)  # read by the lobby on first use, below
    caplog.set_level(logging.INFO)
    world = await prepare(stack)
    async with BotTables(stack) as bots:
        subject, cases = VERBS[verb](world)
        tally = await run_cases(world, f"lobby {verb}", cases)
        await run_generated(world, tally, subject, bodies(FIELDS[verb], [verb, "x"]))
        await finish(world, await bots.stop(), caplog.records)
    print(tally.summary())
    assert tally.codes[DROP] >= 10
    assert len(tally.kinds) >= MIN_KINDS, tally.kinds
    assert OK not in tally.codes or verb in ("get", "list", "register", "renew")
