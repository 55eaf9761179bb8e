"""Every bad line a take5 client can send is refused cleanly: the gateway's edge, fuzzed.

A gateway runs in this process, so that ``caplog`` sees everything it logs, in front of the
cardroom of ``gateway_process``. One connection, the fuzzer, sends every kind of bad input of
:data:`KINDS` at each stage of its life: before it registers, while it waits for its table,
and at its table with a ``play_request`` open; there, lines drawn by hypothesis follow. Each
is refused with the protocol's ``error`` line and its stable code (a blank line is ignored),
at the table followed by the open request, unchanged; a probe after each kind shows that
nothing else was sent. Meanwhile the fuzzer's table-mates and a second table play on. Then
the fuzzer answers and plays to the end: every game finishes, the house never played for
anyone (no bad line made a move or ran out the clock), nobody else was refused anything, and
neither this process nor the cardroom logged an error.

The parser alone is fuzzed too (:func:`test_parse_refuses_any_line_with_a_stable_code`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pytest
from cardroom_games.take5 import ROWS, standard_bull
from cardroom_gateway import Gateway as GatewayService
from cardroom_gateway import GatewaySettings, LineErrorCode, parse
from cardroom_gateway.lines import LineError, encode, error_line
from cardroom_runtime.host import Runtime
from cardroom_wire import Subjects
from gateway_support import ACK_TIMEOUT, GAME, PLAYERS, Gateway
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from seed_client import SeedClient, SeedPlayer
from support.stack import wait_until

Card = dict[str, int]
Hand = list[Card]

LINE_LIMIT = 64 * 1024
HUGE = "1" * 5000  # past Python's 4,300 digits of int-string conversion
DEEP = 30_000  # levels of nesting, within a line of 64 KiB

PROBE = b'{"type": "probe", "data": null}\n'
"""Refused ``bad_message`` naming ``probe``: sent after each kind, its answer must come next."""

SERVER_ONLY = (
    "register_response",
    "deal",
    "play_request",
    "played",
    "choose_request",
    "taken",
    "game_over",
    "error",
)
REFUSED_ANYWHERE = frozenset({"malformed", "bad_message", "line_too_long"})
"""Codes a line gets whatever the connection's stage (the others depend on it)."""


@dataclass(frozen=True)
class Kind:
    """One kind of bad input: what is sent and what the gateway answers at the table."""

    name: str
    build: Callable[[Hand], bytes]
    """The bytes sent (newline included), given the fuzzer's hand (at the table) or a
    stand-in for it (before)."""
    codes: tuple[str, ...]
    """The codes of the error lines it gets at the table, in order; () for none."""
    registers: bool = False
    """A well-formed register_request (never sent before registering: it would register)."""
    fragmented: bool = False
    """Sent one byte per write."""

    def at(self, stage: str) -> tuple[str, ...]:
        """The codes it gets at ``stage``: "unregistered", "waiting" or "table"."""
        if stage == "table":
            return self.codes
        if stage == "unregistered":
            return tuple(c if c in REFUSED_ANYWHERE else "not_registered" for c in self.codes)
        return tuple(c if c in REFUSED_ANYWHERE else "out_of_order" for c in self.codes)


def _text(value: Any) -> bytes:
    return json.dumps(value).encode()


def line(name: str, text: bytes | str, code: str | None, **kw: bool) -> Kind:
    raw = text.encode() if isinstance(text, str) else text
    return Kind(name, lambda _hand: raw + b"\n", (code,) if code else (), **kw)


def built(name: str, build: Callable[[Hand], bytes], code: str) -> Kind:
    return Kind(name, lambda hand: build(hand) + b"\n", (code,))


def play(card: Any) -> bytes:
    return (
        b'{"type": "play_response", "data": '
        + (card if isinstance(card, bytes) else _text(card))
        + b"}"
    )


def held(hand: Hand) -> Card:
    return hand[0]


def not_held(hand: Hand) -> Card:
    """A card of the deck that is in no hand of ours (cardroom itself must refuse it)."""
    return next(
        {"face": face, "bull": standard_bull(face)}
        for face in range(1, 105)
        if {"face": face, "bull": standard_bull(face)} not in hand
    )


def wrong_bull(hand: Hand) -> Card:
    card = held(hand)
    return {"face": card["face"], "bull": card["bull"] % 7 + 1}


def _card(face: bytes | str, bull: bytes | str = "1") -> bytes:
    raw = [v.encode() if isinstance(v, str) else v for v in (face, bull)]
    return b'{"face": ' + raw[0] + b', "bull": ' + raw[1] + b"}"


# -- the kinds -------------------------------------------------------------------------------

WRONG_VALUES: dict[str, str] = {
    "null": "null",
    "false": "false",
    "a float": "7.5",
    "a string": '"7"',
    "a list": "[7]",
    "an object": '{"face": 7}',
    "an integer of 65 bits": str(2**64),
    "an integer of 5,000 digits": HUGE,
}
"""Wrong values for every field of every message a client sends."""

FIELDS: dict[str, Callable[[str], bytes]] = {
    "type": lambda v: f'{{"type": {v}, "data": null}}'.encode(),
    "register_request.data": lambda v: f'{{"type": "register_request", "data": {v}}}'.encode(),
    "play_response.data": lambda v: play(v.encode()),
    "play_response.data.face": lambda v: play(_card(v)),
    "play_response.data.bull": lambda v: play(_card("7", v)),
    "choose_response.data": lambda v: f'{{"type": "choose_response", "data": {v}}}'.encode(),
}

KINDS: list[Kind] = [
    # not one JSON value in UTF-8
    line("not JSON", "{not json", "malformed"),
    line("a truncated object", '{"type": "play_response", "data": {"face": 1', "malformed"),
    line("two values on one line", b'{"type": "probe"} {"type": "probe"}', "malformed"),
    line("a trailing comma", '{"type": "register_request", "data": null,}', "malformed"),
    line("single quotes", "{'type': 'register_request'}", "malformed"),
    line("a bare word", "register_request", "malformed"),
    line("invalid UTF-8", b"\xff\xfe\xfd", "malformed"),
    line("invalid UTF-8 inside a string", b'{"type": "play_\xc3(response"}', "malformed"),
    line("over-long UTF-8 encoding", b'{"type": "\xc0\xafprobe"}', "malformed"),
    line("UTF-8 of a surrogate", b'{"type": "\xed\xa0\x80"}', "malformed"),
    line("UTF-16", '{"type": "register_request"}'.encode("utf-16"), "malformed"),
    line("a byte order mark", b'\xef\xbb\xbf{"type": "register_request"}', "malformed"),
    line("a NUL byte", b"\x00", "malformed"),
    line("a control character in a string", b'{"type": "play\x01_response"}', "malformed"),
    line("a control character before the value", b'\x07{"type": "probe"}', "malformed"),
    line("a vertical tab and a form feed (not blank)", b"\x0b\x0c", "malformed"),
    line("DEL and C1 controls", b"\x7f\xc2\x85", "malformed"),
    line("a NaN", play(_card("NaN")), "malformed"),
    line("an Infinity", play(_card("7", "Infinity")), "malformed"),
    line("a -Infinity", play(_card("-Infinity")), "malformed"),
    line("nested arrays deeper than the parser goes", b"[" * DEEP + b"]" * DEEP, "malformed"),
    line(
        "nested objects deeper than the parser goes",
        b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
        "malformed",
    ),
    line(
        "deep data in a message",
        b'{"type": "probe", "data": ' + b"[" * DEEP + b"]" * DEEP + b"}",
        "malformed",
    ),
    # JSON, but no message a client may send
    line(
        "an integer of 5,000 digits in an unknown message",
        f'{{"type": "x", "data": {HUGE}}}',
        "bad_message",
    ),
    line("an integer of 5,000 digits as a face", play(_card(HUGE)), "bad_message"),
    line("a negative integer of 5,000 digits", play(_card("-" + HUGE)), "bad_message"),
    line("a 60,000-digit integer", play(_card("9" * 60_000)), "bad_message"),
    line("2**63 (past 64 bits)", play(_card(str(2**63))), "bad_message"),
    line("-2**63 - 1 (past 64 bits)", play(_card("7", str(-(2**63) - 1))), "bad_message"),
    line("a float with an integer's value", play(_card("7.0")), "bad_message"),
    line("an exponent", play(_card("1e2")), "bad_message"),
    line("a float beyond the double range", play(_card("1e400")), "bad_message"),
    line("a negative zero float", play(_card("-0.0")), "bad_message"),
    line("true as a number", play(_card("true")), "bad_message"),
    line("a card without bull", play(b'{"face": 7}'), "bad_message"),
    line("a card without face", play(b'{"bull": 1}'), "bad_message"),
    line("a card with a key more", play(b'{"face": 7, "bull": 1, "suit": 2}'), "bad_message"),
    line("a card as a list", play(b"[7, 1]"), "bad_message"),
    line("a play_response without data", '{"type": "play_response"}', "bad_message"),
    line("a nested but legal depth of data", play(b"[" * 200 + b"]" * 200), "bad_message"),
    line("a lower-case STACK_ID", '{"type": "choose_response", "data": "a"}', "bad_message"),
    line("an unknown STACK_ID", '{"type": "choose_response", "data": "E"}', "bad_message"),
    line("a STACK_ID with a space", '{"type": "choose_response", "data": "A "}', "bad_message"),
    line("a STACK_ID as an index", '{"type": "choose_response", "data": 0}', "bad_message"),
    line("JSON null", "null", "bad_message"),
    line("JSON true", "true", "bad_message"),
    line("a JSON number", "42", "bad_message"),
    line("a JSON string", '"register_request"', "bad_message"),
    line("a JSON array", '[{"type": "register_request"}]', "bad_message"),
    line("an empty object", "{}", "bad_message"),
    line("no type", '{"data": null}', "bad_message"),
    line(
        "a key more than type and data",
        '{"type": "register_request", "data": null, "id": 1}',
        "bad_message",
    ),
    line("an unknown type", '{"type": "hello", "data": null}', "bad_message"),
    line("an empty type", '{"type": "", "data": null}', "bad_message"),
    line(
        "a type in capitals",
        '{"type": "PLAY_RESPONSE", "data": {"face": 7, "bull": 1}}',
        "bad_message",
    ),
    line(
        "an escaped NUL in the type",
        '{"type": "play_response\\u0000", "data": null}',
        "bad_message",
    ),
    line("a lone surrogate escape", '{"type": "\\ud800", "data": null}', "bad_message"),
    line("a type of 60,000 characters", b'{"type": "' + b"t" * 60_000 + b'"}', "bad_message"),
    line(
        "a key named twice, the last valid",
        '{"type": "deal", "type": "register_request"}',
        "bad_message",
    ),
    built(
        "a key named twice hiding a move",
        lambda hand: b'{"type": "play_response", "data": null, "data": ' + _text(held(hand)) + b"}",
        "bad_message",
    ),
    built(
        "a card's key named twice",
        lambda hand: play(
            b'{"face": 0, "face": '
            + str(held(hand)["face"]).encode()
            + b', "bull": '
            + str(held(hand)["bull"]).encode()
            + b"}"
        ),
        "bad_message",
    ),
    line("a bad line ending in CR", '{"type": "hello"}\r', "bad_message"),
    # a line too long: discarded whole, refused once
    line("a line of 64 KiB and one byte", b" " * LINE_LIMIT + b"1", "line_too_long"),
    built(
        "a line too long that ends in a move",
        lambda hand: b" " * (3 * LINE_LIMIT) + play(held(hand)),
        "line_too_long",
    ),
    line("a line of 1 MiB", b"[" * (1 << 20), "line_too_long"),
    # blank lines are no messages
    line("an empty line", b"", None),
    line("spaces and tabs", b"  \t  ", None),
    line("a lone CR", b"\r", None),
    # well-formed, but at the wrong time or against the rules
    line(
        "register_request again",
        '{"type": "register_request", "data": null}',
        "out_of_order",
        registers=True,
    ),
    line(
        "register_request without data, spaced",
        '  {"type": "register_request"}  \r',
        "out_of_order",
        registers=True,
    ),
    line(
        "a choose_response when a card is asked for",
        '{"type": "choose_response", "data": "A"}',
        "out_of_order",
    ),
    built("a card of the deck not in the hand", lambda hand: play(not_held(hand)), "illegal_move"),
    built("a held face with another bull", lambda hand: play(wrong_bull(hand)), "illegal_move"),
    line("face 0", play(_card("0")), "illegal_move"),
    line("a negative face", play(_card("-1")), "illegal_move"),
    line("a face past the deck", play(_card("105")), "illegal_move"),
    line("2**63 - 1 (the largest 64-bit integer)", play(_card(str(2**63 - 1))), "illegal_move"),
    line("-2**63 (the smallest)", play(_card("7", str(-(2**63)))), "illegal_move"),
    # several lines
    Kind(
        "three bad lines in one write",
        lambda _hand: b"{\n[1]\n" + b'{"type": "deal", "data": []}\n',
        ("malformed", "bad_message", "bad_message"),
    ),
    Kind(
        "a bad line one byte per write",
        lambda _hand: b'{"type": "hello", "data": [1, 2, 3]}\n',
        ("bad_message",),
        fragmented=True,
    ),
    *(
        line(f"the server's {kind}", f'{{"type": "{kind}", "data": null}}', "bad_message")
        for kind in SERVER_ONLY
    ),
    *(
        line(f"{field} = {what}", build(value), "bad_message")
        for field, build in FIELDS.items()
        for what, value in WRONG_VALUES.items()
        if not (field == "register_request.data" and value == "null")
    ),
]


def test_the_kinds_are_many_and_named_once() -> None:
    names = [kind.name for kind in KINDS]
    assert len(set(names)) == len(names)
    assert len(names) >= 40
    # every stable code a line can get is among them
    codes = {code for kind in KINDS for code in kind.codes}
    assert codes == {"malformed", "bad_message", "line_too_long", "out_of_order", "illegal_move"}


# -- lines drawn by hypothesis ---------------------------------------------------------------

_NUMBERS = (
    st.integers(-3, 110)
    | st.sampled_from([2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**40])
    | st.floats()
    | st.booleans()
    | st.none()
    | st.text(max_size=3)
)
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_CARDS = st.fixed_dictionaries({"face": _NUMBERS, "bull": _NUMBERS}) | st.dictionaries(
    st.sampled_from(["face", "bull", "suit"]), _NUMBERS, max_size=3
)
_TYPES = st.sampled_from(
    ["register_request", "play_response", "choose_response", *SERVER_ONLY]
) | st.text(max_size=12)
_MESSAGES = st.fixed_dictionaries(
    {"type": _TYPES | _SCALARS},
    optional={"data": _CARDS | st.sampled_from([*ROWS, "a", "E"]) | _VALUES, "id": _VALUES},
)


@st.composite
def hostile_lines(draw: st.DrawFn) -> bytes:
    """One line without its newline: a message-like JSON value, a mutation of one, or bytes."""
    how = draw(st.sampled_from(["json", "mutated", "bytes"]))
    if how == "bytes":
        raw = draw(st.binary(max_size=80))
    else:
        ascii_only = draw(st.booleans())
        raw = json.dumps(draw(_MESSAGES), ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
        if how == "mutated":
            at = draw(st.integers(0, len(raw)))
            cut = draw(st.integers(0, 4))
            raw = raw[:at] + draw(st.binary(max_size=4)) + raw[at + cut :]
    return raw.replace(b"\n", b" ")


def drawn_lines(count: int) -> list[bytes]:
    """``count`` lines from :func:`hostile_lines`, the same ones every run."""
    lines: list[bytes] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(hostile_lines())
    def collect(raw: bytes) -> None:
        lines.append(raw)

    collect()
    return lines


def expected_at_table(raw: bytes, hand: Hand) -> str | None:
    """The code the gateway owes ``raw`` while a card is asked for; None: no bad line (a blank
    one, or a move of a held card)."""
    if not raw.strip(b" \t\r"):
        return None
    try:
        incoming = parse(raw)
    except LineError as exc:
        return str(exc.code)
    if incoming.type == "play_response":
        return None if incoming.data in hand else "illegal_move"
    return "out_of_order"  # register_request again, or a row when a card is asked for


ALLOWED = frozenset({LineErrorCode.MALFORMED, LineErrorCode.BAD_MESSAGE})


@settings(max_examples=600, deadline=None)
@given(raw=hostile_lines() | st.binary(max_size=200))
def test_parse_refuses_any_line_with_a_stable_code(raw: bytes) -> None:
    refusal: LineError | None = None
    try:
        incoming = parse(raw)
    except LineError as exc:
        refusal = exc
    if refusal is not None:
        assert refusal.code in ALLOWED
        assert refusal.message
        assert len(refusal.message) < 300  # it never echoes the line
        sent = encode(error_line(refusal.code, refusal.message))  # always writable
        assert sent.isascii()
        assert json.loads(sent)["data"]["code"] == refusal.code
        return
    if incoming.type == "register_request":
        assert incoming.data is None
    elif incoming.type == "play_response":
        assert set(incoming.data) == {"face", "bull"}
        assert all(type(v) is int and -(2**63) <= v < 2**63 for v in incoming.data.values())
    else:
        assert incoming.type == "choose_response"
        assert incoming.data in ROWS


# -- the gateway, fuzzed ---------------------------------------------------------------------


@pytest.fixture
async def fuzzed(gateway_process: Gateway) -> AsyncIterator[tuple[GatewayService, Gateway]]:
    """A gateway in this process before the cardroom of ``gateway_process``. Its turn timeout
    is long: the fuzzer holds its request open through every kind, and the house must not
    answer it meanwhile."""

    class Fuzzed(GatewayService):
        settings_override = GatewaySettings(
            port=0,
            players=PLAYERS,
            turn_timeout=240,
            ack_timeout=ACK_TIMEOUT * 4,
            register_timeout=240,
            line_limit=LINE_LIMIT,
            game=GAME,
        )

    rt = Runtime(
        Subjects(gateway_process.root),
        cast(Any, None),  # the gateway uses neither broker nor store: it is a client
        cast(Any, None),
        gateway_process.nats_url,
        "",
    )
    service = Fuzzed(rt)
    await service.start()
    assert service.port is not None
    handle = Gateway(
        "127.0.0.1",
        service.port,
        PLAYERS,
        gateway_process.process,
        gateway_process.nats_url,
        gateway_process.root,
    )
    try:
        yield service, handle
    finally:
        await handle.close_clients()
        await service.stop()


async def _send(client: SeedClient, kind: Kind, hand: Hand) -> None:
    data = kind.build(hand)
    if not kind.fragmented:
        await client.send_raw(data)
        return
    for byte in data:
        await client.send_raw(bytes([byte]))


async def _refused(
    client: SeedClient, what: str, codes: Sequence[str], request: dict[str, Any] | None
) -> None:
    """The error lines ``codes`` (each followed by ``request`` when one is open), then the
    probe's: nothing else came."""
    await client.send_raw(PROBE)
    for code in (*codes, "probe"):
        message = await client.recv(20)
        assert message["type"] == "error", (what, message)
        data = message["data"]
        assert set(data) == {"code", "message"}, (what, message)
        assert isinstance(data["message"], str), (what, message)
        assert 0 < len(data["message"]) < 300, (what, message)
        if code == "probe":
            assert data["code"] == "bad_message", (what, message)
            assert "probe" in data["message"], (what, message)  # not another line's
        else:
            assert data["code"] == code, (what, message)
        if request is not None:
            assert await client.recv(20) == request, what  # the same request, unchanged


async def _register(service: GatewayService, player: SeedPlayer, registered: int) -> None:
    await player.register()
    await wait_until(lambda: sum(c.registered for c in service.connections) == registered, 20)


async def test_every_bad_line_is_refused_and_changes_nothing(
    fuzzed: tuple[GatewayService, Gateway], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    service, gateway = fuzzed
    cardroom_said = set(gateway.process.tail)
    fuzzer = SeedPlayer(await gateway.connect(), PLAYERS)
    client = fuzzer.client
    stand_in: Hand = [{"face": 55, "bull": 7}]

    # before registering
    for kind in KINDS:
        if not kind.registers:
            await _send(client, kind, stand_in)
            await _refused(client, kind.name, kind.at("unregistered"), None)
    assert [c.registered for c in service.connections] == [False]
    assert service.waiting == []

    # registered, waiting for the table
    await _register(service, fuzzer, 1)
    for kind in KINDS:
        await _send(client, kind, stand_in)
        await _refused(client, kind.name, kind.at("waiting"), None)
    assert len(service.waiting) == 1
    assert service.tables == 0

    # at the table, a card asked for: the fuzzer's table-mates, then a second table
    others = [SeedPlayer(await gateway.connect(), PLAYERS) for _ in range(2 * PLAYERS - 1)]
    for number, other in enumerate(others, start=2):
        await _register(service, other, number)
    playing = [asyncio.create_task(other.play(timeout=600)) for other in others]
    request = await fuzzer.next_of("play_request")
    hand = list(fuzzer.hand)
    for kind in KINDS:
        await _send(client, kind, hand)
        await _refused(client, kind.name, kind.at("table"), request)
    drawn = 0
    for raw in drawn_lines(200):
        code = expected_at_table(raw, hand)
        if code is None or len(raw) >= LINE_LIMIT:
            continue
        await client.send_raw(raw + b"\n")
        await _refused(client, f"drawn line {raw!r}", [code], request)
        drawn += 1
    assert drawn >= 100

    # nothing changed: the request is still open to the fuzzer, who answers and plays on
    assert not any(task.done() for task in playing[: PLAYERS - 1])  # they wait for the fuzzer
    await fuzzer.handle(request)
    mine = await fuzzer.play(timeout=600)
    results = await asyncio.gather(*playing)
    assert service.tables == 2
    assert fuzzer.checker.state == "over"
    assert fuzzer.house_played == []  # no bad line made a move, none ran out the clock
    mates, second = results[: PLAYERS - 1], results[PLAYERS - 1 :]
    assert mates == [mine] * len(mates)
    assert second == [second[0]] * len(second)
    for other in others:
        assert other.checker.state == "over"
        assert other.errors == []
        assert other.house_played == []
    logged = [
        f"{r.levelname} {r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.levelno >= logging.ERROR or r.exc_info
    ]
    assert logged == []
    cardroom_logged = [
        said
        for said in gateway.process.tail
        if said not in cardroom_said and (" ERROR " in said or "Traceback" in said)
    ]
    assert cardroom_logged == []
