"""The seat key of a join or create: one spelling of an Ed25519 verify key, or nothing."""

from __future__ import annotations

from typing import Any

import pytest
from cardroom_wire import ErrorCode, JoinTable, WireError, parse
from cardroom_wire.messages import CreateTable

GOOD = "0123456789abcdef" * 4
BAD_KEYS: list[tuple[str, Any]] = [
    ("63 characters", GOOD[:-1]),
    ("65 characters", GOOD + "0"),
    ("empty", ""),
    ("uppercase", GOOD.upper()),
    ("one uppercase letter", GOOD[:-1] + "F"),
    ("not hex", "g" * 64),
    ("a trailing newline", GOOD[:-1] + "\n"),
    ("a trailing newline past 64", GOOD + "\n"),
    ("spaces", " " + GOOD[1:]),
    ("a 0x prefix", "0x" + GOOD[2:]),
    ("base64 of 32 bytes", "ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8="),
    ("non-ASCII digits", "\u0661" * 64),
    ("an integer", 12),
    ("a float", 1.5),
    ("true", True),
    ("a list", [GOOD]),
    ("an object", {"key": GOOD}),
    ("bytes as a list of numbers", list(range(32))),
]


@pytest.mark.parametrize("model", [JoinTable, CreateTable])
def test_a_good_key_is_taken_and_absent_or_null_is_none(model: type[Any]) -> None:
    base = {"game": "g1"} if model is JoinTable else {"game_type": "highcard"}
    assert parse(model, {**base, "key": GOOD}).key == GOOD
    assert parse(model, base).key is None
    assert parse(model, {**base, "key": None}).key is None  # null is absent (a keyed game
    # then refuses it key_required: tests/engine/test_seat_keys.py)


@pytest.mark.parametrize("model", [JoinTable, CreateTable])
@pytest.mark.parametrize(("kind", "bad"), BAD_KEYS, ids=[k for k, _ in BAD_KEYS])
def test_anything_but_64_lowercase_hex_is_refused_bad_request(
    model: type[Any], kind: str, bad: Any
) -> None:
    base = {"game": "g1"} if model is JoinTable else {"game_type": "highcard"}
    with pytest.raises(WireError) as exc:
        parse(model, {**base, "key": bad})
    assert exc.value.code == ErrorCode.BAD_REQUEST, kind
    assert "key" in exc.value.message
    if isinstance(bad, str) and bad:
        assert bad not in exc.value.message  # the value is not echoed back


def test_the_schema_says_the_pattern() -> None:
    schema = JoinTable.model_json_schema()
    (string,) = [s for s in schema["properties"]["key"]["anyOf"] if s.get("type") == "string"]
    assert string["pattern"] == "^[0-9a-f]{64}$"
    assert "key" not in schema.get("required", [])
