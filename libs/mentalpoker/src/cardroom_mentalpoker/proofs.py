"""Non-interactive zero-knowledge proofs (Fiat-Shamir, SHA-512 reduced modulo ℓ).

- :func:`prove_dlog` / :func:`verify_dlog`: Schnorr proof of knowledge of ``x`` with
  ``A = x * B``. Used for every published key commitment, so nobody can publish a key whose
  secret he does not know (a rogue key ``K' = X*G - sum(others)`` would let its author cancel
  the other players' keys).
- :func:`prove_dleq` / :func:`verify_dleq`: Chaum-Pedersen proof of discrete-log equality:
  ``A = x * B1`` and ``C = x * B2`` for the same ``x``. Used to show that a masking step used
  the committed key (``x = k``, ``B1 = G``, ``B2 = epk``) and that a re-randomisation is one
  (``x = r``, ``B1 = G``, ``B2 = pk``); without them nobody could tell whether
  a mask step re-encrypted the same cards.

Both proofs are the compact form ``(challenge e, response z)``: the verifier recomputes the
commitments ``T = z*B - e*A`` and checks that hashing them gives ``e`` back. Every proof
is bound to a caller-chosen ``context`` (game id, step, player, position): a proof made for
one context does not verify in another, so proofs cannot be replayed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .group import (
    EncodingError,
    Point,
    Scalar,
    _scalar_from_hex_unchecked,
    base_point,
    hash_to_scalar,
    random_scalar,
)

__all__ = [
    "DleqProof",
    "DlogProof",
    "prove_dleq",
    "prove_dlog",
    "verify_dleq",
    "verify_dlog",
]

_DLOG_DOMAIN = b"cardroom/mentalpoker/schnorr-dlog/v1"
_DLEQ_DOMAIN = b"cardroom/mentalpoker/chaum-pedersen-dleq/v1"


def _proof_json(challenge: Scalar, response: Scalar) -> dict[str, str]:
    return {"e": challenge.hex(), "z": response.hex()}


def _proof_fields(data: object, what: str) -> tuple[Scalar, Scalar]:
    if not isinstance(data, dict) or set(data) != {"e", "z"}:
        raise EncodingError(f"{what}: expected an object with keys e and z")
    return Scalar.from_hex(data["e"]), Scalar.from_hex(data["z"])


def _proof_fields_unchecked(data: Any) -> tuple[Scalar, Scalar]:
    return _scalar_from_hex_unchecked(data["e"]), _scalar_from_hex_unchecked(data["z"])


@dataclass(frozen=True, slots=True)
class DlogProof:
    """Schnorr proof of knowledge of a discrete logarithm."""

    challenge: Scalar
    response: Scalar

    def to_json(self) -> dict[str, str]:
        return _proof_json(self.challenge, self.response)

    @classmethod
    def from_json(cls, data: Any) -> DlogProof:
        return cls(*_proof_fields(data, "dlog proof"))

    @classmethod
    def from_json_unchecked(cls, data: Any) -> DlogProof:
        """:meth:`from_json` of a proof it accepted before (see ``Scalar.from_hex_unchecked``)."""
        # built through the slots' setters: the frozen __init__ costs as much as the decoding
        proof = _new(cls)
        _set_dlog_challenge(proof, _scalar_from_hex_unchecked(data["e"]))
        _set_dlog_response(proof, _scalar_from_hex_unchecked(data["z"]))
        return proof


_new = object.__new__
_set_dlog_challenge: Callable[[DlogProof, Scalar], None] = DlogProof.__dict__["challenge"].__set__
_set_dlog_response: Callable[[DlogProof, Scalar], None] = DlogProof.__dict__["response"].__set__


@dataclass(frozen=True, slots=True)
class DleqProof:
    """Chaum-Pedersen proof that two points have the same discrete log to two bases."""

    challenge: Scalar
    response: Scalar

    def to_json(self) -> dict[str, str]:
        return _proof_json(self.challenge, self.response)

    @classmethod
    def from_json(cls, data: Any) -> DleqProof:
        return cls(*_proof_fields(data, "dleq proof"))

    @classmethod
    def from_json_unchecked(cls, data: Any) -> DleqProof:
        """:meth:`from_json` of a proof it accepted before (see ``Scalar.from_hex_unchecked``)."""
        return cls(*_proof_fields_unchecked(data))


def prove_dlog(secret: Scalar, *, context: bytes, base: Point | None = None) -> DlogProof:
    """Prove knowledge of ``secret`` for the public point ``secret * base`` (base G)."""
    b = base if base is not None else base_point()
    return _prove_dlog_known(secret, b, secret * b, context=context)


def _prove_dlog_known(secret: Scalar, base: Point, public: Point, *, context: bytes) -> DlogProof:
    """:func:`prove_dlog` when the caller already holds ``public = secret * base``."""
    w = random_scalar()
    t = w * base
    e = hash_to_scalar(_DLOG_DOMAIN, context, base.value, public.value, t.value)
    return DlogProof(e, w + e * secret)


def verify_dlog(
    public: Point, proof: DlogProof, *, context: bytes, base: Point | None = None
) -> bool:
    """True when ``proof`` shows knowledge of ``x`` with ``public = x * base`` (base G)."""
    b = base if base is not None else base_point()
    if b.is_identity or public.is_identity:
        return False
    t = proof.response * b - proof.challenge * public
    e = hash_to_scalar(_DLOG_DOMAIN, context, b.value, public.value, t.value)
    return e == proof.challenge


def prove_dleq(secret: Scalar, base1: Point, base2: Point, *, context: bytes) -> DleqProof:
    """Prove ``log_base1(secret*base1) == log_base2(secret*base2)`` without revealing it."""
    return _prove_dleq_known(secret, base1, secret * base1, base2, secret * base2, context=context)


def _prove_dleq_known(
    secret: Scalar, base1: Point, a: Point, base2: Point, c: Point, *, context: bytes
) -> DleqProof:
    """:func:`prove_dleq` when the caller already holds ``a = secret*base1`` and
    ``c = secret*base2`` (the masking steps compute both anyway): the same proof, two scalar
    multiplications fewer."""
    w = random_scalar()
    t1 = w * base1
    t2 = w * base2
    e = hash_to_scalar(
        _DLEQ_DOMAIN,
        context,
        base1.value,
        a.value,
        base2.value,
        c.value,
        t1.value,
        t2.value,
    )
    return DleqProof(e, w + e * secret)


def verify_dleq(
    base1: Point,
    public1: Point,
    base2: Point,
    public2: Point,
    proof: DleqProof,
    *,
    context: bytes,
) -> bool:
    """True when ``public1 = x*base1`` and ``public2 = x*base2`` for one ``x``.

    ``base1`` must not be the identity (the statement would say nothing about ``x``).
    ``base2`` may be the identity: then the proof only holds for ``public2 = O``.
    """
    if base1.is_identity:
        return False
    e, z = proof.challenge, proof.response
    t1 = z * base1 - e * public1
    t2 = z * base2 - e * public2
    expected = hash_to_scalar(
        _DLEQ_DOMAIN,
        context,
        base1.value,
        public1.value,
        base2.value,
        public2.value,
        t1.value,
        t2.value,
    )
    return expected == e
