from __future__ import annotations

import pytest
from cardroom_wire import (
    MAX_ID_LENGTH,
    MAX_VERSION,
    Ack,
    Command,
    ErrorCode,
    InvalidId,
    JoinTable,
    Subjects,
    SyncRequest,
    WireError,
    check_id,
    decode_json,
    dumps,
    parse,
)

BAD_IDS = ["", "a.b", "a b", "a*", ">", "a>b", "*", "x" * (MAX_ID_LENGTH + 1), "\t", "é", None, 5]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_ids_are_refused(bad: object) -> None:
    with pytest.raises(InvalidId):
        check_id(bad)


@pytest.mark.parametrize("good", ["a", "A-b_9", "x" * MAX_ID_LENGTH])
def test_good_ids_pass(good: str) -> None:
    assert check_id(good) == good


def test_subjects() -> None:
    s = Subjects("cardroom")
    assert s.cmd("g1", "p1") == "cardroom.cmd.g1.p1"
    assert s.player("p1", "g1") == "cardroom.player.p1.g1"
    assert s.events("take5", "g1") == "cardroom.events.take5.g1"
    assert s.parse_input("cardroom.ack.g1.p1") == ("ack", "g1", "p1")
    with pytest.raises(InvalidId):
        s.cmd("g.1", "p1")
    with pytest.raises(InvalidId):
        s.player("*", "g1")
    with pytest.raises(InvalidId):
        Subjects("a.b")


def test_lobby_subjects_name_the_asker() -> None:
    s = Subjects("cr")
    assert s.lobby("create", "alice") == "cr.lobby.create.alice"
    assert s.lobby_all == "cr.lobby.*.*"
    assert s.lobby_of("alice") == "cr.lobby.*.alice"
    assert s.parse_lobby("cr.lobby.join.alice") == ("join", "alice")
    for bad in ("cr.lobby.join", "cr.lobby.join.a.b", "xx.lobby.join.alice", "cr.cmd.g.alice"):
        with pytest.raises(InvalidId):
            s.parse_lobby(bad)
    with pytest.raises(InvalidId):
        s.parse_lobby("cr.lobby.join.a*")
    with pytest.raises(ValueError, match="unknown lobby verb"):
        s.lobby("steal", "alice")


@pytest.mark.parametrize(
    ("subject", "prefix"),
    [
        ("cr.cmd.g1.alice", "_INBOX_cr.alice"),
        ("cr.ack.g1.alice", "_INBOX_cr.alice"),
        ("cr.sync.g1.alice", "_INBOX_cr.alice"),
        ("cr.lobby.create.alice", "_INBOX_cr.alice"),
        ("cr.lobby.register.n0nce", "_GUEST_cr.n0nce"),
        ("cr.internal.release", "_INBOX"),
        ("cr.analytics.stats", "_INBOX"),
        ("cr.cmd.g1", None),
        ("cr.cmd.g1.alice.x", None),
        ("cr.player.alice.g1", None),
        ("cr.events.take5.g1", None),
        ("other.cmd.g1.alice", None),
    ],
)
def test_replies_go_below_the_askers_inbox(subject: str, prefix: str | None) -> None:
    assert Subjects("cr").reply_prefix(subject) == prefix


def test_decode_refuses_what_storage_cannot_hold() -> None:
    with pytest.raises(WireError) as exc:
        decode_json(b'{"name": "a\\u0000b"}')
    assert exc.value.code == ErrorCode.BAD_JSON
    assert decode_json(b'{"name": "a\\u0001b"}') == {"name": "a\x01b"}


def test_decode_refuses_bad_json_and_oversize() -> None:
    with pytest.raises(WireError) as exc:
        decode_json(b"{nope")
    assert exc.value.code == ErrorCode.BAD_JSON
    with pytest.raises(WireError) as exc:
        decode_json(b"\xff\xfe")
    assert exc.value.code == ErrorCode.BAD_JSON
    with pytest.raises(WireError) as exc:
        decode_json(b" " * 70_000)
    assert exc.value.code == ErrorCode.TOO_LARGE


@pytest.mark.parametrize(
    "bad",
    [b"NaN", b'{"a": Infinity}', b'{"a": 1e999999}', b"[" * 2000 + b"]" * 2000, b'"\xed\xa0\x80"'],
)
def test_decode_refuses_what_is_not_json(bad: bytes) -> None:
    with pytest.raises(WireError) as exc:
        decode_json(bad)
    assert exc.value.code == ErrorCode.BAD_JSON


def test_dumps_is_compact_utf8_json_that_decodes_to_the_same() -> None:
    value = {"type": "Dealt", "player": "Dónde", "cards": [1, 2], "nested": {"ok": True, "x": None}}
    raw = dumps(value)
    assert (
        raw
        == '{"type":"Dealt","player":"Dónde","cards":[1,2],"nested":{"ok":true,"x":null}}'.encode()
    )
    assert decode_json(raw) == value
    assert dumps({1: "a"}) == b'{"1":"a"}'  # keys become strings, as JSON has them
    big = {"n": 2**70, "m": -(2**65)}  # beyond orjson's 64 bits: the standard encoder
    assert dumps(big) == b'{"n":1180591620717411303424,"m":-36893488147419103232}'


def test_parse_models() -> None:
    with pytest.raises(WireError) as exc:
        parse(JoinTable, {"type": "join", "game": "a b"})
    assert exc.value.code == ErrorCode.BAD_ID
    with pytest.raises(WireError) as exc:
        parse(JoinTable, {"type": "join"})
    assert exc.value.code == ErrorCode.BAD_REQUEST
    # the actor is the subject's, never the body's: a body that names one is refused
    with pytest.raises(WireError) as exc:
        parse(JoinTable, {"type": "join", "game": "g", "player": "bob"})
    assert exc.value.code == ErrorCode.BAD_REQUEST
    # what storage cannot hold is refused at the edge
    for version in (0, MAX_VERSION + 1, 2**63):
        with pytest.raises(WireError):
            parse(Ack, {"type": "ack", "version": version})
    assert parse(Ack, {"type": "ack", "version": MAX_VERSION}).version == MAX_VERSION
    for untyped in ({}, {"version": 1}):
        with pytest.raises(WireError):
            parse(Ack, untyped)
    for sync in ({}, {"foo": 1}, {"type": "sync", "x": 1}, {"type": "ack"}):
        with pytest.raises(WireError):
            parse(SyncRequest, sync)
    with pytest.raises(WireError) as exc:
        parse(JoinTable, [1, 2])
    assert exc.value.code == ErrorCode.BAD_REQUEST
    cmd = parse(Command, {"type": "bet", "id": "c1", "amount": 2})
    assert cmd.fields() == {"type": "bet", "amount": 2}
