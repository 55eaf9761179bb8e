"""Player tokens have one spelling: whatever else a token is, it is a TokenError, nothing else.

The lobby's ``renew`` rests on the same verification, so any bad token it is shown is
``bad_token``.
"""

from __future__ import annotations

import base64
import re

import pytest
from cardroom_gamemaster.credentials import Credentials
from cardroom_natsauth.tokens import (
    MAX_EXPIRES,
    PlayerToken,
    TokenError,
    issue_player_token,
    verify_player_token,
)
from cardroom_wire import ErrorCode, WireError
from hypothesis import given, settings
from hypothesis import strategies as st
from natsauth.natsauth_support import (
    ROOT,
    SCRIPT_ZEROS,
    SECRET,
    SUPERSCRIPTS,
    UNICODE_DIGITS,
    json_values,
    player_ids,
    respellings,
    tokenish,
)

NOW = 1_700_000_000.0
CANONICAL = re.compile(r"[A-Za-z0-9_-]{1,64}\.[1-9][0-9]{0,11}\.[A-Za-z0-9_-]{43}")

nows = st.integers(0, 10**11).map(float)
ttls = st.floats(min_value=1.0, max_value=10.0**8)


def _refused(token: object, *, now: float = NOW) -> TokenError:
    """The TokenError ``token`` is refused with; any other exception fails the test."""
    with pytest.raises(TokenError) as raised:
        verify_player_token(SECRET, ROOT, token, now=now)
    return raised.value


# -- the one spelling ------------------------------------------------------------------------
@settings(deadline=None)
@given(player=player_ids, now=nows, ttl=ttls)
def test_an_issued_token_verifies_as_what_it_says(player: str, now: float, ttl: float) -> None:
    token = issue_player_token(SECRET, ROOT, player, ttl=ttl, now=now)
    assert token.isascii()
    assert CANONICAL.fullmatch(token), token
    expires = int(now + ttl)
    assert verify_player_token(SECRET, ROOT, token, now=now) == PlayerToken(player, expires)
    assert verify_player_token(SECRET, ROOT, token, now=expires - 0.5).player == player
    assert "expired" in str(_refused(token, now=expires))


@settings(deadline=None, max_examples=300)
@given(player=player_ids, now=nows, ttl=ttls, data=st.data())
def test_no_other_spelling_of_a_token_is_accepted(
    player: str, now: float, ttl: float, data: st.DataObject
) -> None:
    token = issue_player_token(SECRET, ROOT, player, ttl=ttl, now=now)
    assert verify_player_token(SECRET, ROOT, token, now=now).player == player
    variant = data.draw(tokenish(token), label="variant")
    assert variant != token
    _refused(variant, now=now)


def test_every_respelling_of_a_token_is_refused() -> None:
    # an expiry with every digit, so that each Unicode digit has a place to go
    token = issue_player_token(SECRET, ROOT, "Al1ce_x-9", ttl=1, now=1_234_567_890 - 1)
    _, expires, _ = token.split(".")
    assert set(expires) == set("0123456789")
    assert verify_player_token(SECRET, ROOT, token, now=NOW - 1e9).player == "Al1ce_x-9"
    variants = respellings(token)
    # all of them: each script's digits, each digit-like character, superscripts, fullwidth
    assert len(SCRIPT_ZEROS) >= 60
    assert sum(len(chars) for chars in UNICODE_DIGITS.values()) >= 700
    assert any(SUPERSCRIPTS[1] in v for _, v in variants)
    assert any("\uff11" in v for _, v in variants)  # FULLWIDTH DIGIT ONE
    accepted = []
    for what, variant in variants:
        try:
            verify_player_token(SECRET, ROOT, variant, now=NOW - 1e9)
        except TokenError:
            continue
        accepted.append(what)
    assert not accepted, accepted


def test_digits_python_would_read_are_malformed_not_a_crash() -> None:
    token = issue_player_token(SECRET, ROOT, "alice", ttl=60, now=NOW)
    player, expires, signature = token.split(".")
    arabic = "".join(chr(0x660 + int(d)) for d in expires)
    assert int(arabic) == int(expires)  # what made it a second spelling
    superscript = "".join(SUPERSCRIPTS[int(d)] for d in expires)
    assert superscript.isdigit()  # and what made int() raise ValueError
    for spelled in (arabic, superscript, "0" + expires):
        assert str(_refused(f"{player}.{spelled}.{signature}")) == "malformed token"


# -- anything at all ---------------------------------------------------------------------------
@settings(deadline=None, max_examples=300)
@given(
    st.text()
    | st.binary()
    | json_values
    | st.text(alphabet="0123456789.abcAZ_-=+/ \n٠١²³０", max_size=130)
    | st.builds(
        lambda p, e, s: f"{p}.{e}.{s}",
        st.text(max_size=70),
        st.text(max_size=14),
        st.text(max_size=45),
    )
)
def test_anything_that_is_not_a_token_is_only_ever_a_token_error(value: object) -> None:
    _refused(value)


@pytest.mark.parametrize(
    "value",
    [
        None,
        b"alice.1800000000.x",
        1800000000,
        ["alice", "1800000000", "x"],
        "a" * 100_000,
        "." * 100_000,
        "alice.1e9." + "A" * 43,
        f"alice.{MAX_EXPIRES + 1}." + "A" * 43,
        "alice.0." + "A" * 43,
        "alice.1800000000." + "A" * 42,
        "alice.1800000000." + "A" * 44,
        "\ud800.1800000000." + "A" * 43,  # a lone surrogate
    ],
)
def test_odd_values_are_malformed(value: object) -> None:
    assert str(_refused(value)) == "malformed token"


def test_a_forged_signature_of_the_right_form_is_a_bad_signature() -> None:
    token = issue_player_token(SECRET, ROOT, "alice", ttl=60, now=NOW)
    player, expires, signature = token.split(".")
    forged = base64.urlsafe_b64encode(bytes(32)).rstrip(b"=").decode()
    assert str(_refused(f"{player}.{expires}.{forged}")) == "bad token signature"
    assert str(_refused(f"bob.{expires}.{signature}")) == "bad token signature"


def test_issue_refuses_lifetimes_a_token_cannot_state() -> None:
    for ttl in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="lifetime"):
            issue_player_token(SECRET, ROOT, "alice", ttl=ttl, now=NOW)
    with pytest.raises(ValueError, match="expiry"):
        issue_player_token(SECRET, ROOT, "alice", ttl=float(MAX_EXPIRES), now=NOW)
    with pytest.raises(ValueError, match="expiry"):
        issue_player_token(SECRET, ROOT, "alice", ttl=1, now=-100.0)


# -- the lobby's renew -------------------------------------------------------------------------
def _bad_token(credentials: Credentials, token: object) -> WireError:
    with pytest.raises(WireError) as raised:
        credentials.renew(token, now=NOW)
    assert raised.value.code == ErrorCode.BAD_TOKEN, raised.value
    return raised.value


@settings(deadline=None, max_examples=200)
@given(data=st.data())
def test_renew_answers_any_bad_token_with_bad_token(data: st.DataObject) -> None:
    credentials = Credentials(ROOT, SECRET, ttl=600)
    token = issue_player_token(SECRET, ROOT, "alice", ttl=60, now=NOW)
    bad = data.draw(tokenish(token) | st.text() | json_values, label="token")
    if bad == token:
        return
    _bad_token(credentials, bad)


def test_renew_renews_a_good_token_and_refuses_its_other_spellings() -> None:
    credentials = Credentials(ROOT, SECRET, ttl=600)
    token = issue_player_token(SECRET, ROOT, "alice", ttl=60, now=NOW)
    granted = credentials.renew(token, now=NOW)
    assert granted["player"] == "alice"
    assert verify_player_token(SECRET, ROOT, granted["token"]).player == "alice"
    for what, variant in respellings(token):
        assert "renew" in str(_bad_token(credentials, variant)), what
