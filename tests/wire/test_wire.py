from __future__ import annotations

import pytest
from cardroom_wire import (
    MAX_ID_LENGTH,
    Command,
    ErrorCode,
    InvalidId,
    JoinTable,
    Subjects,
    WireError,
    check_id,
    decode_json,
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


def test_parse_models() -> None:
    with pytest.raises(WireError) as exc:
        parse(JoinTable, {"type": "join", "player": "a b", "game": "g"})
    assert exc.value.code == ErrorCode.BAD_ID
    with pytest.raises(WireError) as exc:
        parse(JoinTable, {"type": "join", "player": "a"})
    assert exc.value.code == ErrorCode.BAD_REQUEST
    with pytest.raises(WireError) as exc:
        parse(JoinTable, [1, 2])
    assert exc.value.code == ErrorCode.BAD_REQUEST
    cmd = parse(Command, {"type": "bet", "id": "c1", "amount": 2})
    assert cmd.fields() == {"type": "bet", "amount": 2}
