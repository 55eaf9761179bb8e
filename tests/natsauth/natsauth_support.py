"""Helpers of the natsauth tests: keys and requests of a made-up server, other spellings of a
valid player token, and strategies.

A lenient parser reads each spelling of :func:`respellings` as the player, expiry and
signature of the original token (Unicode digits, leading zeros, padding, standard base64,
whitespace, letter case, look-alike characters); a token has one spelling, so each of them
must be refused.
"""

from __future__ import annotations

import base64
import sys
import unicodedata
from typing import Any

from cardroom_natsauth import create_seed, nkeyjwt, public_key
from hypothesis import strategies as st

SECRET = "s3cret-s3cret-s3cret-s3cret"
ROOT = "crt1"
NOW = 1_700_000_000.0
SERVER_SEED = create_seed(nkeyjwt.SERVER)
SERVER = public_key(SERVER_SEED)
ISSUER_SEED = create_seed()
USER = public_key(create_seed(nkeyjwt.USER))


def request_claims(connect: object, host: str = "127.0.0.1") -> dict[str, Any]:
    """The claims of the server's authorization request for a client sending ``connect``."""
    return {
        "sub": public_key(ISSUER_SEED),
        "aud": "nats-authorization-request",
        "nats": {
            "type": "authorization_request",
            "server_id": {"id": SERVER, "name": "test", "host": "127.0.0.1"},
            "user_nkey": USER,
            "client_info": {"host": host, "id": 7},
            "connect_opts": connect,
        },
    }


ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
B64URL = ID_ALPHABET[:62] + "-_"

# every character that is a digit to Python (str.isdigit(), int(), unicodedata.digit) but
# is not an ASCII one: decimal digits of every script, superscripts, circled digits, ...
UNICODE_DIGITS: dict[int, list[str]] = {d: [] for d in range(10)}
for _code in range(sys.maxunicode + 1):
    _char = chr(_code)
    _value = unicodedata.digit(_char, None)
    if _value is not None and not _char.isascii():
        UNICODE_DIGITS[_value].append(_char)

# the zero of each script whose ten decimal digits are consecutive code points
SCRIPT_ZEROS: list[str] = [
    zero
    for zero in UNICODE_DIGITS[0]
    if all(unicodedata.decimal(chr(ord(zero) + d), None) == d for d in range(10))
]
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
WHITESPACE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\u00a0", "\u2003", "\u3000"]
WHITESPACE += ["\u200b", "\ufeff", "\u2028"]
DOTS = ["\uff0e", "\u3002", "\u2024", "\ufe52"]  # full stops that normalise to, or look like, "."


def respellings(token: str) -> list[tuple[str, str]]:
    """(what, spelling) for other spellings of ``token``; none of them equals it."""
    player, expires, signature = token.split(".")
    digest = base64.urlsafe_b64decode(signature + "=")
    out: list[tuple[str, str]] = []

    def add(what: str, variant_player: str, variant_expires: str, variant_signature: str) -> None:
        variant = f"{variant_player}.{variant_expires}.{variant_signature}"
        if variant != token:
            out.append((what, variant))

    # the expiry
    for zeros in range(1, 4):
        add(f"{zeros} leading zeros", player, "0" * zeros + expires, signature)
    for zero in SCRIPT_ZEROS:
        digits = "".join(chr(ord(zero) + int(d)) for d in expires)
        add(f"{unicodedata.name(zero)} digits", player, digits, signature)
    add("superscript digits", player, "".join(SUPERSCRIPTS[int(d)] for d in expires), signature)
    for value, chars in UNICODE_DIGITS.items():
        at = expires.find(str(value))
        if at < 0:
            continue
        for char in chars:
            respelled = expires[:at] + char + expires[at + 1 :]
            add(
                f"one digit as {unicodedata.name(char, hex(ord(char)))}",
                player,
                respelled,
                signature,
            )
    for sign in ("+", "-", "_"):
        add(f"{sign!r} before the expiry", player, sign + expires, signature)
    add("an underscore inside the expiry", player, f"{expires[:3]}_{expires[3:]}", signature)
    add("an exponent", player, f"{expires}e0", signature)

    # the signature
    for padding in ("=", "=="):
        add(f"padding {padding!r}", player, expires, signature + padding)
    standard = base64.b64encode(digest).decode()
    add("standard base64, padded", player, expires, standard)
    add("standard base64, unpadded", player, expires, standard.rstrip("="))
    last = B64URL.index(signature[-1])
    for low_bits in (1, 2, 3):  # the 2 bits past the digest, which a decoder drops
        add(f"low bits {low_bits}", player, expires, signature[:-1] + B64URL[last ^ low_bits])
    for i, char in enumerate(signature):
        if char.isalpha():
            swapped = signature[:i] + char.swapcase() + signature[i + 1 :]
            add(f"signature letter {i} in the other case", player, expires, swapped)
    add("the signature in capitals", player, expires, signature.upper())
    add("the signature in small letters", player, expires, signature.lower())

    # the player
    add("the player in capitals", player.upper(), expires, signature)
    add("the player in small letters", player.lower(), expires, signature)
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in player)
    add("the player in fullwidth letters", fullwidth, expires, signature)

    # whitespace anywhere, other dots
    for space in WHITESPACE:
        for at in {0, len(player), len(player) + 1, len(token) - len(signature) - 1, len(token)}:
            variant = token[:at] + space + token[at:]
            out.append((f"{space!r} at {at}", variant))
    for dot in DOTS:
        out.append((f"{unicodedata.name(dot)} for the dots", token.replace(".", dot)))
        out.append((f"{unicodedata.name(dot)} for one dot", token.replace(".", dot, 1)))
    return out


player_ids = st.text(alphabet=ID_ALPHABET, min_size=1, max_size=64)

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def tokenish(token: str) -> st.SearchStrategy[str]:
    """Strings near ``token``: its other spellings, and random edits of it."""
    edits = st.builds(
        lambda at, cut, insert: token[:at] + insert + token[at + cut :],
        st.integers(0, len(token)),
        st.integers(0, 3),
        st.text(max_size=3),
    ).filter(lambda variant: variant != token)
    return st.sampled_from([variant for _, variant in respellings(token)]) | edits
