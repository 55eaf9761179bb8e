"""NATS nkeys and the JWTs NATS signs with them (``alg: ed25519-nkey``).

A NATS JWT is an ordinary three-part JWT whose header says ``{"typ": "JWT", "alg":
"ed25519-nkey"}``, whose issuer (``iss``) is an nkey public key, and whose signature is the
ed25519 signature of ``header.payload`` by that key. The claims that NATS reads live under
``nats``. This module writes and reads them; it knows nothing about cardroom.

Keys are strings: a seed (``SA...`` for an account, ``SU...`` for a user) is the private half,
the public key (``A...``, ``U...``, ``N...`` for a server) the public half.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

import nacl.exceptions
import nacl.signing
import nkeys  # type: ignore[import-untyped]

ALGORITHM: Final = "ed25519-nkey"
JWT_VERSION: Final = 2
_HEADER: Final = {"typ": "JWT", "alg": ALGORITHM}

# public key prefixes: the first character of an encoded public key says its role
ACCOUNT: Final = "A"
USER: Final = "U"
SERVER: Final = "N"
OPERATOR: Final = "O"
_PREFIX_BYTES: Final = {
    ACCOUNT: nkeys.PREFIX_BYTE_ACCOUNT,
    USER: nkeys.PREFIX_BYTE_USER,
    SERVER: nkeys.PREFIX_BYTE_SERVER,
    OPERATOR: nkeys.PREFIX_BYTE_OPERATOR,
}


class JwtError(ValueError):
    """A token that is not a well-formed, correctly signed NATS JWT."""


# -- keys ------------------------------------------------------------------------------------
def create_seed(role: str = ACCOUNT) -> str:
    """A fresh random seed for an nkey of ``role`` (``ACCOUNT`` gives ``SA...``)."""
    try:
        prefix = _PREFIX_BYTES[role]
    except KeyError:
        raise ValueError(f"unknown nkey role {role!r}") from None
    seed: bytes = nkeys.encode_seed(os.urandom(32), prefix)
    return seed.decode()


def public_key(seed: str) -> str:
    """The public key (``A...``, ``U...``) of ``seed``."""
    return str(_keypair(seed).public_key.decode())


def _keypair(seed: str) -> Any:
    try:
        return nkeys.from_seed(seed.encode())
    except (nkeys.NkeysError, binascii.Error, ValueError) as exc:
        raise ValueError(f"not an nkey seed: {exc}") from None


def _verify_key(public: str) -> nacl.signing.VerifyKey:
    """Decode an encoded public key (base32: prefix byte, 32 key bytes, crc16)."""
    try:
        raw = base64.b32decode(public + "=" * (-len(public) % 8))
    except (binascii.Error, ValueError):
        raise JwtError("not an nkey public key") from None
    if len(raw) != 35 or public[:1] not in _PREFIX_BYTES:
        raise JwtError("not an nkey public key")
    body, crc = raw[:-2], raw[-2:]
    if raw[0] != _PREFIX_BYTES[public[0]] or nkeys.crc16(bytearray(body)) != int.from_bytes(
        crc, "little"
    ):
        raise JwtError("not an nkey public key")
    return nacl.signing.VerifyKey(bytes(body[1:]))


def is_public_key(value: object, role: str) -> TypeGuard[str]:
    """Whether ``value`` is a well-formed public key of ``role``."""
    if not isinstance(value, str) or not value.startswith(role):
        return False
    try:
        _verify_key(value)
    except JwtError:
        return False
    return True


# -- JWTs ------------------------------------------------------------------------------------
def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise JwtError("bad base64 in JWT") from None


def _claim_id(claims: Mapping[str, Any]) -> str:
    """``jti`` as nats-io/jwt makes it: base32 of sha512/256 over the standard claims."""
    standard = {
        k: claims[k]
        for k in ("aud", "exp", "jti", "iat", "iss", "name", "nbf", "sub")
        if claims.get(k) not in (None, "", 0)
    }
    standard.pop("jti", None)
    digest = hashlib.new("sha512_256", json.dumps(standard, separators=(",", ":")).encode())
    return base64.b32encode(digest.digest()).rstrip(b"=").decode()


def encode(claims: Mapping[str, Any], seed: str, *, now: float | None = None) -> str:
    """Sign ``claims`` with ``seed``: sets ``iss`` (the seed's public key), ``iat`` and ``jti``.

    ``claims`` must hold ``sub`` and a ``nats`` object with its ``type``; ``version`` is set.
    """
    if not claims.get("sub"):
        raise ValueError("a NATS JWT needs a subject (sub)")
    nats = dict(claims.get("nats") or {})
    if not nats.get("type"):
        raise ValueError("a NATS JWT needs nats.type")
    nats["version"] = JWT_VERSION
    kp = _keypair(seed)
    body: dict[str, Any] = {k: v for k, v in claims.items() if k != "nats"}
    body["iss"] = kp.public_key.decode()
    body["iat"] = int(time.time() if now is None else now)
    body.pop("jti", None)
    body["jti"] = _claim_id(body)
    body["nats"] = nats
    head = _b64(json.dumps(_HEADER, separators=(",", ":")).encode())
    payload = _b64(json.dumps(body, separators=(",", ":")).encode())
    signing_input = f"{head}.{payload}"
    signature: bytes = kp.sign(signing_input.encode())
    return f"{signing_input}.{_b64(signature)}"


def decode(token: object, *, verify: bool = True) -> dict[str, Any]:
    """The claims of ``token``; with ``verify``, only if ``iss`` signed it.

    This checks the form and the signature, not what the issuer may issue: the caller decides
    which issuers to trust. Whatever ``token`` is, the only exception is :class:`JwtError`.
    """
    try:
        return _decode(token, verify)
    except JwtError:
        raise
    # what hostile bytes can make the decoders raise: bad UTF-8 or numbers in the JSON, JSON
    # nested too deeply, a signature of the wrong length
    except (ValueError, TypeError, RecursionError, nacl.exceptions.CryptoError):
        raise JwtError("malformed JWT") from None


def _decode(token: object, verify: bool) -> dict[str, Any]:
    if isinstance(token, bytes | bytearray | memoryview):
        token = bytes(token).decode("ascii", errors="replace")
    if not isinstance(token, str):
        raise JwtError("a JWT is text")
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise JwtError("a JWT has three parts")
    try:
        header = json.loads(_unb64(parts[0]))
        claims = json.loads(_unb64(parts[1]))
    except json.JSONDecodeError:
        raise JwtError("bad JSON in JWT") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise JwtError("bad JWT")
    typ, alg = header.get("typ", ""), header.get("alg", "")
    if (
        not isinstance(typ, str)
        or not isinstance(alg, str)
        or typ.upper() != "JWT"
        or alg.lower() not in (ALGORITHM, "ed25519")
    ):
        raise JwtError("unsupported JWT header")
    if verify:
        issuer = claims.get("iss")
        if not isinstance(issuer, str):
            raise JwtError("JWT without issuer")
        key = _verify_key(issuer)
        try:
            key.verify(f"{parts[0]}.{parts[1]}".encode(), _unb64(parts[2]))
        except nacl.exceptions.BadSignatureError:
            raise JwtError("JWT signature does not match its issuer") from None
    return claims


__all__ = [
    "ACCOUNT",
    "OPERATOR",
    "SERVER",
    "USER",
    "JwtError",
    "create_seed",
    "decode",
    "encode",
    "is_public_key",
    "public_key",
]
