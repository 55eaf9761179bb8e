"""Signed moves: Ed25519 (``nacl.signing``) over a canonical encoding.

Canonical encoding (:func:`canonical_json`): JSON with sorted keys, no spaces, UTF-8 (no
ASCII escaping), no NaN/infinity, no floats at all (their text differs between languages),
string keys only; ``bytes`` and the group types are written as lowercase hex, tuples as lists,
and objects with a ``to_json()`` method (masked cards, proofs, keys) as its result.

A move is signed over the canonical encoding of::

    {"domain": "cardroom/mentalpoker/move/v1", "game_id": ..., "seq": ...,
     "prev_hash": ..., "move": ...}

``prev_hash`` is :func:`state_hash` of the state the move applies to (SHA-256 over the
canonical encoding, lowercase hex); the first move of a game uses :data:`GENESIS_HASH`.
Changing any of game id, sequence number, previous hash or move, or verifying with another
player's key, makes the signature fail.

A transition (one accepted step of the game, a player's move or the server's) is signed by
every player who checked it, over the canonical encoding of::

    {"domain": "cardroom/mentalpoker/transition/v1", "game_id": ..., "version": ...,
     "transition": <state_hash of the transition>}

``version`` is the transition's place in the game's record; the signature says "I checked
this transition against the state I hold, and it holds" (:func:`sign_transition`,
:func:`check_transition`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nacl.exceptions import BadSignatureError, CryptoError
from nacl.signing import SigningKey, VerifyKey

from .group import EncodingError, Point, Scalar, VerificationError

__all__ = [
    "GENESIS_HASH",
    "MOVE_DOMAIN",
    "TRANSITION_DOMAIN",
    "SignatureError",
    "SignedMove",
    "canonical_json",
    "check_move",
    "check_transition",
    "move_message",
    "plain_state_hash",
    "sign_move",
    "sign_transition",
    "state_hash",
    "transition_message",
    "verify_key_hex",
    "verify_move",
]

MOVE_DOMAIN = "cardroom/mentalpoker/move/v1"
TRANSITION_DOMAIN = "cardroom/mentalpoker/transition/v1"
GENESIS_HASH = "0" * 64
_HEX = frozenset("0123456789abcdef")


class SignatureError(VerificationError):
    """A move's signature, signer key or envelope is invalid."""


def _plain(value: Any) -> Any:
    # The exact built-in types first: a move is mostly lists and dicts of hex strings, and an
    # ABC's isinstance (Mapping) is slow; subclasses and the rest take the general way below.
    kind = type(value)
    if kind is str or kind is int or value is None:
        return value
    if kind is list:
        return [_plain(item) for item in value]
    if kind is dict:
        return _plain_object(value)
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        raise TypeError("canonical JSON: floats are not allowed")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, (Point, Scalar)):
        return value.hex()
    if isinstance(value, Mapping):
        return _plain_object(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return _plain(to_json())
    raise TypeError(f"canonical JSON: cannot encode {type(value).__name__}")


def _plain_object(value: Mapping[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError("canonical JSON: object keys must be strings")
        out[key] = _plain(item)
    return out


def _dumps(plain: Any) -> bytes:
    return json.dumps(
        plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def canonical_json(value: Any) -> bytes:
    """The canonical UTF-8 JSON encoding of ``value`` (see the module docstring)."""
    return _dumps(_plain(value))


def state_hash(state: Any) -> str:
    """SHA-256 over the canonical encoding of ``state``, as 64 lowercase hex digits."""
    return hashlib.sha256(canonical_json(state)).hexdigest()


def plain_state_hash(state: Any) -> str:
    """:func:`state_hash` of a value that is plain JSON already (dicts with string keys,
    lists, strings, ints, bools, None; no floats), such as moves :func:`canonical_json`
    encoded before: the same digest without converting and checking every item again.
    Other values give a digest that :func:`state_hash` would not (or refuse)."""
    return hashlib.sha256(_dumps(state)).hexdigest()


def _check_hash(value: object, what: str) -> str:
    if not isinstance(value, str) or len(value) != 64 or not set(value) <= _HEX:
        raise SignatureError(f"{what} must be 64 lowercase hex digits")
    return value


def move_message(game_id: str, seq: int, prev_hash: str, move: Any) -> bytes:
    """The exact bytes that are signed for a move."""
    if not isinstance(game_id, str) or not game_id:
        raise SignatureError("game id must be a non-empty string")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise SignatureError("sequence number must be a non-negative integer")
    _check_hash(prev_hash, "previous state hash")
    return canonical_json(
        {
            "domain": MOVE_DOMAIN,
            "game_id": game_id,
            "move": move,
            "prev_hash": prev_hash,
            "seq": seq,
        }
    )


def verify_key_hex(signing_key: SigningKey) -> str:
    """The hex of a signing key's public verify key (what a player publishes)."""
    return bytes(signing_key.verify_key).hex()


@dataclass(frozen=True, slots=True)
class SignedMove:
    """A move with its envelope and its signature (hex). ``signer``: verify key, hex."""

    game_id: str
    seq: int
    prev_hash: str
    move: Any
    signer: str
    signature: str

    def message(self) -> bytes:
        return move_message(self.game_id, self.seq, self.prev_hash, self.move)

    def to_json(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seq": self.seq,
            "prev_hash": self.prev_hash,
            "move": _plain(self.move),
            "signer": self.signer,
            "signature": self.signature,
        }

    @classmethod
    def from_json(cls, data: Any) -> SignedMove:
        fields = {"game_id", "seq", "prev_hash", "move", "signer", "signature"}
        if not isinstance(data, dict) or set(data) != fields:
            raise EncodingError(f"signed move: expected keys {sorted(fields)}")
        return cls(
            data["game_id"],
            data["seq"],
            data["prev_hash"],
            data["move"],
            data["signer"],
            data["signature"],
        )


def sign_move(
    signing_key: SigningKey, game_id: str, seq: int, prev_hash: str, move: Any
) -> SignedMove:
    """Sign ``move`` as the ``seq``-th move of ``game_id`` on the state hashing to ``prev_hash``."""
    message = move_message(game_id, seq, prev_hash, move)
    signature = signing_key.sign(message).signature
    return SignedMove(
        game_id, seq, prev_hash, _plain(move), verify_key_hex(signing_key), signature.hex()
    )


def _verify_key(key: VerifyKey | str | bytes) -> VerifyKey:
    if isinstance(key, VerifyKey):
        return key
    raw = key
    if isinstance(raw, str):
        if len(raw) != 64 or not set(raw) <= _HEX:
            raise SignatureError("verify key must be 64 lowercase hex digits")
        raw = bytes.fromhex(raw)
    if len(raw) != 32:
        raise SignatureError("verify key must be 32 bytes")
    return VerifyKey(raw)


def check_move(
    signed: SignedMove,
    verify_key: VerifyKey | str | bytes,
    *,
    game_id: str | None = None,
    seq: int | None = None,
    prev_hash: str | None = None,
) -> None:
    """Raise :class:`SignatureError` unless ``signed`` carries a valid signature by
    ``verify_key`` (the key the server has on record for the player, not ``signed.signer``).

    ``game_id``, ``seq`` and ``prev_hash``, when given, must equal the envelope's: the server
    passes the game it is in, the next sequence number and the hash of its current state.
    """
    key = _verify_key(verify_key)
    if game_id is not None and signed.game_id != game_id:
        raise SignatureError("signed move: wrong game id")
    if seq is not None and signed.seq != seq:
        raise SignatureError(f"signed move: sequence number {signed.seq}, expected {seq}")
    if prev_hash is not None and signed.prev_hash != prev_hash:
        raise SignatureError("signed move: previous state hash does not match")
    sig = signed.signature
    if not isinstance(sig, str) or len(sig) != 128 or not set(sig) <= _HEX:
        raise SignatureError("signed move: signature must be 128 lowercase hex digits")
    try:
        message = signed.message()
    except TypeError as exc:
        raise SignatureError(f"signed move: {exc}") from None
    try:
        key.verify(message, bytes.fromhex(sig))
    except (BadSignatureError, CryptoError):
        raise SignatureError("signed move: bad signature") from None


def verify_move(
    signed: SignedMove,
    verify_key: VerifyKey | str | bytes,
    *,
    game_id: str | None = None,
    seq: int | None = None,
    prev_hash: str | None = None,
) -> bool:
    """:func:`check_move` as a boolean."""
    try:
        check_move(signed, verify_key, game_id=game_id, seq=seq, prev_hash=prev_hash)
    except SignatureError:
        return False
    return True


def transition_message(game_id: str, version: int, transition: Any) -> bytes:
    """The exact bytes every player signs for a transition it checked."""
    if not isinstance(game_id, str) or not game_id:
        raise SignatureError("game id must be a non-empty string")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SignatureError("version must be a positive integer")
    return canonical_json(
        {
            "domain": TRANSITION_DOMAIN,
            "game_id": game_id,
            "transition": state_hash(transition),
            "version": version,
        }
    )


def sign_transition(signing_key: SigningKey, game_id: str, version: int, transition: Any) -> str:
    """The signature (hex) of a transition its signer checked."""
    return bytes(signing_key.sign(transition_message(game_id, version, transition)).signature).hex()


def check_transition(
    signature: object,
    verify_key: VerifyKey | str | bytes,
    game_id: str,
    version: int,
    transition: Any,
) -> None:
    """Raise :class:`SignatureError` unless ``signature`` is ``verify_key``'s signature of the
    transition at ``version`` of ``game_id``."""
    if not isinstance(signature, str) or len(signature) != 128 or not set(signature) <= _HEX:
        raise SignatureError("transition signature must be 128 lowercase hex digits")
    key = _verify_key(verify_key)
    try:
        key.verify(transition_message(game_id, version, transition), bytes.fromhex(signature))
    except (BadSignatureError, CryptoError):
        raise SignatureError("transition signature: bad signature") from None
