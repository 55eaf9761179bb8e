"""The auth callout responder answers every request exactly once, whatever it holds.

A request that names a server and a user nkey gets one answer: a user JWT for a real player
or guest, a refusal for anything else (bad credentials of any type and spelling, a request
that does not verify, a failure inside the responder). A request that names no one to answer
is one warning line. Nothing logs an error or a traceback.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import pytest
from cardroom_natsauth import (
    AuthCalloutResponder,
    create_seed,
    issue_player_token,
    nkeyjwt,
    public_key,
)
from cardroom_natsauth import callout as callout_module
from cardroom_natsauth.permissions import check_nonce
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from natsauth.natsauth_support import (
    ISSUER_SEED,
    NOW,
    ROOT,
    SECRET,
    SERVER,
    SERVER_SEED,
    USER,
    json_values,
    request_claims,
    respellings,
    tokenish,
)

TOKEN = issue_player_token(SECRET, ROOT, "alice", ttl=600, now=NOW)

fuzz = settings(
    deadline=None, max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@dataclass
class Request:
    """A received request: what the responder reads, and what it answered."""

    data: bytes
    headers: dict[str, str] | None = None
    answers: list[bytes] = field(default_factory=list)
    fail_respond: bool = False

    async def respond(self, data: bytes) -> None:
        self.answers.append(data)
        if self.fail_respond:
            raise ConnectionError("the connection is closing")


def _responder() -> AuthCalloutResponder:
    return AuthCalloutResponder(
        issuer_seed=ISSUER_SEED, token_secret=SECRET, root=ROOT, clock=lambda: NOW
    )


def _claims(connect: object) -> dict[str, Any]:
    return request_claims(connect)


def _request(connect: object) -> bytes:
    return nkeyjwt.encode(_claims(connect), SERVER_SEED, now=NOW).encode()


def _handle(responder: AuthCalloutResponder, request: Request) -> None:
    asyncio.run(responder.handle(request))


def _refusal(answer: bytes) -> str:
    """The reason of a refusal addressed to the server and user of the request."""
    response = nkeyjwt.decode(answer)
    assert response["iss"] == public_key(ISSUER_SEED)
    assert response["aud"] == SERVER
    assert response["sub"] == USER
    assert "jwt" not in response["nats"], response
    error = response["nats"]["error"]
    assert isinstance(error, str)
    assert error
    return error


def _granted(answer: bytes) -> dict[str, Any]:
    response = nkeyjwt.decode(answer)
    assert "error" not in response["nats"], response
    return nkeyjwt.decode(response["nats"]["jwt"])


def _quiet(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing the responder logged is an error or carries a traceback."""
    for record in caplog.records:
        assert record.levelno < logging.ERROR, record.getMessage()
        assert record.exc_info is None, record.getMessage()
        assert "\n" not in record.getMessage(), record.getMessage()


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="cardroom.natsauth")
    return caplog


# -- what is answered ---------------------------------------------------------------------------
def test_a_player_and_a_guest_get_a_user(logs: pytest.LogCaptureFixture) -> None:
    responder = _responder()
    for connect, name in (
        ({"auth_token": TOKEN}, "alice"),
        ({"user": "alice", "pass": TOKEN}, "alice"),
        ({"user": "guest", "pass": "n" * 22}, "guest"),
    ):
        request = Request(_request(connect))
        _handle(responder, request)
        assert len(request.answers) == 1
        assert _granted(request.answers[0])["name"] == name
    _quiet(logs)


@fuzz
@given(
    connect=st.fixed_dictionaries(
        {},
        optional={
            "auth_token": json_values | tokenish(TOKEN),
            "user": json_values | st.sampled_from(["alice", "bob", "guest", ""]),
            "pass": json_values | tokenish(TOKEN),
            "name": json_values,
            "jwt": json_values,
        },
    )
    | json_values
)
def test_any_connect_options_get_one_answer(
    logs: pytest.LogCaptureFixture, connect: object
) -> None:
    logs.clear()
    request = Request(_request(connect))
    _handle(_responder(), request)
    assert len(request.answers) == 1
    guest = (
        isinstance(connect, dict)
        and connect.get("user") == "guest"
        and not connect.get("auth_token")
        and _is_nonce(connect.get("pass"))
    )
    if guest:  # the only credentials among these that are real
        assert _granted(request.answers[0])["name"] == "guest"
    else:
        _refusal(request.answers[0])
    _quiet(logs)


def _is_nonce(value: object) -> bool:
    try:
        check_nonce(value)
    except ValueError:
        return False
    return True


def test_every_spelling_of_a_token_but_its_own_is_refused(logs: pytest.LogCaptureFixture) -> None:
    responder = _responder()
    for what, variant in respellings(TOKEN):
        for connect in ({"auth_token": variant}, {"user": "alice", "pass": variant}):
            request = Request(_request(connect))
            _handle(responder, request)
            assert len(request.answers) == 1, what
            assert "token" in _refusal(request.answers[0]), what
    _quiet(logs)


# -- requests that do not verify ----------------------------------------------------------------
def _unsigned(claims: object, header: object = None, signature: bytes = b"x" * 64) -> bytes:
    def part(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    head = part(header if header is not None else {"typ": "JWT", "alg": "ed25519-nkey"})
    tail = base64.urlsafe_b64encode(signature).rstrip(b"=").decode()
    return f"{head}.{part(claims)}.{tail}".encode()


def test_a_request_that_does_not_verify_is_refused(logs: pytest.LogCaptureFixture) -> None:
    responder = _responder()
    good = _claims({"auth_token": TOKEN})
    account_signed = nkeyjwt.encode(good, create_seed(), now=NOW).encode()
    wrong_audience = nkeyjwt.encode({**good, "aud": "x"}, SERVER_SEED, now=NOW).encode()
    other_issuer = {**good, "sub": public_key(create_seed())}
    cases = [
        (_unsigned(good), "malformed request"),  # a forged signature
        (_unsigned(good, signature=b"short"), "malformed request"),
        (account_signed, "not made by the server"),  # signed, but not by the server
        (wrong_audience, "not made by the server"),
        (nkeyjwt.encode(other_issuer, SERVER_SEED, now=NOW).encode(), "another issuer"),
    ]
    for data, reason in cases:
        request = Request(data)
        _handle(responder, request)
        assert len(request.answers) == 1, reason
        assert reason in _refusal(request.answers[0])
    _quiet(logs)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not a jwt",
        b"\xff\xfe\x00garbage",
        _unsigned({"nats": {"server_id": {"id": "NOTAKEY"}, "user_nkey": USER}}),
        _unsigned({"nats": {"server_id": {"id": SERVER}, "user_nkey": "UNOTAKEY"}}),
        _unsigned({"nats": {"server_id": SERVER, "user_nkey": USER}}),
        _unsigned([1, 2, 3]),
        _unsigned(_claims({}), header={"typ": ["JWT"], "alg": {"a": 1}}),
        b"e30." + b"W" * 200_000 + b".e30",
        b"[" * 100_000,
    ],
)
def test_a_request_naming_no_one_is_one_warning(
    logs: pytest.LogCaptureFixture, data: bytes
) -> None:
    request = Request(data)
    _handle(_responder(), request)
    assert request.answers == []
    assert len(_warnings(logs)) == 1, _warnings(logs)
    _quiet(logs)


def _deep(depth: int) -> bytes:
    """A JWT whose claims are JSON nested ``depth`` deep (too deep for the decoder)."""
    payload = base64.urlsafe_b64encode(b"[" * depth + b"]" * depth).rstrip(b"=")
    return b"eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ." + payload + b".e30"


def test_json_nested_too_deep_is_one_warning(logs: pytest.LogCaptureFixture) -> None:
    request = Request(_deep(200_000))
    _handle(_responder(), request)
    assert request.answers == []
    assert len(_warnings(logs)) == 1, _warnings(logs)
    _quiet(logs)


@fuzz
@given(data=st.binary() | st.text().map(str.encode))
def test_random_bytes_are_never_answered_and_never_a_traceback(
    logs: pytest.LogCaptureFixture, data: bytes
) -> None:
    logs.clear()
    request = Request(data)
    _handle(_responder(), request)
    assert request.answers == []  # no server id and user nkey in them to answer
    assert len(_warnings(logs)) == 1, _warnings(logs)
    _quiet(logs)


@fuzz
@given(
    mutations=st.dictionaries(
        st.sampled_from(["sub", "aud", "iss", "nats", "type", "server_id", "user_nkey"]),
        json_values,
        max_size=3,
    ),
    header=st.none() | json_values,
    signature=st.binary(max_size=70),
    signed=st.booleans(),
    connect=json_values,
)
def test_a_request_of_any_shape_gets_at_most_one_answer_and_never_a_user(
    logs: pytest.LogCaptureFixture,
    mutations: dict[str, Any],
    header: object,
    signature: bytes,
    signed: bool,
    connect: object,
) -> None:
    logs.clear()
    claims = _claims(connect)
    inner = ("type", "server_id", "user_nkey")
    for key, value in mutations.items():
        if key in inner:
            claims["nats"][key] = value
    for key, value in mutations.items():
        if key not in inner:
            claims[key] = value
    nats = claims.get("nats")
    # nkeyjwt.encode wants a subject and a type; a request lacking them goes unsigned
    signable = (
        isinstance(claims.get("sub"), str)
        and claims["sub"]
        and isinstance(nats, dict)
        and isinstance(nats.get("type"), str)
        and nats["type"]
    )
    if signed and signable:
        header = None  # the standard one
        data = nkeyjwt.encode(claims, SERVER_SEED, now=NOW).encode()
    else:
        data = _unsigned(claims, header, signature)
    request = Request(data)
    _handle(_responder(), request)
    server = nats.get("server_id") if isinstance(nats, dict) else None
    addressed = (
        isinstance(nats, dict)
        and isinstance(server, dict)
        and nkeyjwt.is_public_key(server.get("id"), nkeyjwt.SERVER)
        and nkeyjwt.is_public_key(nats.get("user_nkey"), nkeyjwt.USER)
    )
    header_ok = header is None or (
        isinstance(header, dict)
        and str(header.get("typ", "")).upper() == "JWT"
        and str(header.get("alg", "")).lower() in ("ed25519-nkey", "ed25519")
    )
    if addressed and header_ok:
        assert len(request.answers) == 1
        response = nkeyjwt.decode(request.answers[0])
        assert "jwt" not in response["nats"] or _granted(request.answers[0])["name"] == "guest"
    else:
        assert request.answers == []
        assert len(_warnings(logs)) == 1, _warnings(logs)
    _quiet(logs)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


jwt_shaped = st.builds(
    lambda head, body, tail: f"{head}.{body}.{tail}",
    st.binary(max_size=40).map(_b64) | json_values.map(lambda v: _b64(json.dumps(v).encode())),
    st.binary(max_size=80).map(_b64) | json_values.map(lambda v: _b64(json.dumps(v).encode())),
    st.binary(max_size=80).map(_b64) | st.text(max_size=5),
)


@settings(deadline=None, max_examples=300)
@given(value=st.binary() | st.text() | json_values | jwt_shaped)
def test_decoding_anything_is_claims_or_a_jwt_error(value: object) -> None:
    for verify in (True, False):
        try:
            claims = nkeyjwt.decode(value, verify=verify)
        except nkeyjwt.JwtError:
            continue
        assert isinstance(claims, dict)


# -- failures of the responder itself -----------------------------------------------------------
def test_a_failure_while_identifying_is_a_refusal(
    logs: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise KeyError("a bug\nover two lines")

    monkeypatch.setattr(callout_module, "verify_player_token", broken)
    request = Request(_request({"auth_token": TOKEN}))
    _handle(_responder(), request)
    assert len(request.answers) == 1
    assert "could not identify" in _refusal(request.answers[0])
    (warning,) = _warnings(logs)
    assert "KeyError" in warning
    _quiet(logs)


def test_an_answer_that_cannot_be_sent_is_one_warning(logs: pytest.LogCaptureFixture) -> None:
    request = Request(_request({"auth_token": TOKEN}), fail_respond=True)
    _handle(_responder(), request)
    assert len(request.answers) == 1  # tried once
    (warning,) = _warnings(logs)
    assert "cannot send" in warning
    _quiet(logs)


def test_an_encrypted_request_is_a_configuration_error(logs: pytest.LogCaptureFixture) -> None:
    request = Request(b"\x01encrypted", headers={"Nats-Server-Xkey": "X" * 56})
    _handle(_responder(), request)
    assert request.answers == []
    (record,) = logs.records
    assert record.levelno == logging.ERROR
    assert record.exc_info is None
    assert "xkey" in record.getMessage()


def test_the_responder_wants_a_token_secret_long_enough() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        AuthCalloutResponder(issuer_seed=ISSUER_SEED, token_secret="short", root=ROOT)
