"""A shuffle argument in O(n) group operations: Terelius-Wikström, made non-interactive.

The cut-and-choose proof of :mod:`cardroom_mentalpoker.shuffle` costs about
``2 * rounds * n`` scalar multiplications to make and as many to check (64 rounds: 6,900 of
each for a 54-card deck). This is the proof of a shuffle of Terelius and Wikström ("Proofs of
Restricted Shuffles", AFRICACRYPT 2010), the one Verificatum and CHVote use, written here
after the pseudo-code of Haenni, Locher, Koenig and Dubuis ("Pseudo-Code Algorithms for
Verifiable Re-Encryption Mix-Nets", FC 2017 Workshops), in additive notation. It costs about
``5n`` variable-base multiplications to make and ``8n`` to check, and about 14 KiB of JSON
for 54 cards (the cut-and-choose proof: about 250 KiB).

Statement: every card of ``inputs`` and ``outputs`` is under one common key ``pk`` and
``outputs[m] = reenc(inputs[psi(m)], r'_m)`` for a permutation ``psi`` and nonces ``r'``
(re-encryption: ``epk += r G``, ``msg += r pk``), i.e. ``outputs == reencrypt_shuffle(inputs,
perm, nonces)`` with ``psi = perm^-1``, ``r'_m = nonces[psi(m)]``.

Generators ``H_0, H_1..H_n``: Elligator 2 of SHA-512 over a domain tag and the index
(``crypto_core_ed25519_from_uniform``, cofactor cleared), so nobody knows a discrete-log
relation between them and ``G``; the argument's soundness rests on that (a prover who knew
one could commit to a non-permutation).

Prover, with ``psi`` and ``r'``:

1. Commit to the permutation: ``c_j = rho_j G + H_{1+perm[j]}`` (a Pedersen commitment to
   column ``j`` of the permutation matrix; perfectly hiding).
2. Challenges ``u_j = H(seed, j)``, ``seed = SHA-512(domain, context, pk, inputs, outputs,
   c)``; ``u'_m = u_{psi(m)}``.
3. A chain of commitments to the partial products of ``u'``: ``ĉ_{-1} = H_0``,
   ``ĉ_m = R_m G + u'_m ĉ_{m-1}``.
4. Sigma-protocol commitments with fresh ``w1..w4, ŵ_m, w'_m``::

       t1 = w1 G                     t2 = w2 G
       t3 = w3 G + sum w'_m H_{1+m}
       t41 = -w4 pk + sum w'_m out.msg_m       t42 = -w4 G + sum w'_m out.epk_m
       t̂_m = ŵ_m G + w'_m ĉ_{m-1}

5. ``e = H(seed, ĉ, t1, t2, t3, t41, t42, t̂)`` and the responses
   ``s1 = w1 + e sum rho``, ``s2 = w2 + e sum_m R_m v_m`` (``v_m = prod_{k>m} u'_k``),
   ``s3 = w3 + e sum_j rho_j u_j``, ``s4 = w4 + e sum_m r'_m u'_m``, ``ŝ_m = ŵ_m + e R_m``,
   ``s'_m = w'_m + e u'_m``.

The proof is ``(c, ĉ, e, s1..s4, ŝ, s')``. The verifier recomputes the ``u_j`` and every
``t`` from the statement and the responses::

    t1 = s1 G - e (sum c_j - sum H_{1+m})
    t2 = s2 G - e (ĉ_{n-1} - (prod u_j) H_0)
    t3 = s3 G + sum s'_m H_{1+m} - e sum u_j c_j
    t41 = -s4 pk + sum s'_m out.msg_m - e sum u_j in.msg_j
    t42 = -s4 G + sum s'_m out.epk_m - e sum u_j in.epk_j
    t̂_m = ŝ_m G + s'_m ĉ_{m-1} - e ĉ_m

and accepts when hashing them gives ``e`` back. ``t1``, ``t2`` and ``t̂`` show the committed
matrix has one 1 per row and that the product of its rows against ``u`` is ``prod u_j``,
which for random ``u`` only a permutation matrix achieves (Schwartz-Zippel: error ``<= n/ℓ``);
``t3``, ``t41``, ``t42`` show the outputs are the inputs re-encrypted in the committed order.

Soundness: computational, under the discrete-logarithm assumption in this group (the same
assumption every key and mask here rests on), in the random-oracle model for the Fiat-Shamir
hashes. A cheating prover's chance per attempt is about ``n/ℓ < 2^-244`` unless he can find a
relation between the generators. The cut-and-choose proof is statistically sound with error
``2^-rounds`` per attempt (``2^-64`` by default), so this argument is not weaker at the
defaults; it is a different kind of guarantee (an argument, not a proof). Zero-knowledge:
special honest-verifier, so the Fiat-Shamir proof reveals nothing about the permutation in
the random-oracle model; ``c`` is perfectly hiding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from .group import (
    GROUP_ORDER,
    EncodingError,
    MentalPokerError,
    Point,
    Scalar,
    _point_from_hex_unchecked,
    _scalar_from_hex_unchecked,
    base_point,
    framed_sha512,
    hash_to_point,
    hash_to_scalar,
    identity,
    mul_base,
    random_scalar,
)
from .masking import MAX_DECK_SIZE, MaskedCard
from .shuffle import _common_pk, invert_permutation, is_permutation

__all__ = [
    "ShuffleArgument",
    "argument_generators",
    "prove_shuffle_argument",
    "verify_shuffle_argument",
]

_DOMAIN = b"cardroom/mentalpoker/shuffle-argument/v1"
_GEN_DOMAIN = _DOMAIN + b"/generator"
_SEED_DOMAIN = _DOMAIN + b"/statement"
_U_DOMAIN = _DOMAIN + b"/u"
_E_DOMAIN = _DOMAIN + b"/e"


@cache
def _generator(index: int) -> Point:
    point = hash_to_point(_GEN_DOMAIN, index.to_bytes(4, "little"))
    if point.is_identity:  # probability 2^-252: a different domain tag would be needed
        raise MentalPokerError("shuffle argument: a generator is the identity")
    return point


@lru_cache(maxsize=16)
def argument_generators(n: int) -> tuple[Point, ...]:
    """``H_0, H_1, ..., H_n``: the argument's generators for a deck of ``n`` cards."""
    if not 0 < n <= MAX_DECK_SIZE:
        raise MentalPokerError(f"shuffle argument: deck size must be in 1..{MAX_DECK_SIZE}")
    gens = tuple(_generator(i) for i in range(n + 1))
    if len({p.value for p in gens} | {base_point().value}) != n + 2:
        raise MentalPokerError("shuffle argument: generators are not distinct")
    return gens


@lru_cache(maxsize=16)
def _generators_sum(n: int) -> Point:
    """``H_1 + ... + H_n`` (what the permutation commitments add up to, besides ``rho G``)."""
    total = identity()
    for h in argument_generators(n)[1:]:
        total = total + h
    return total


@dataclass(frozen=True, slots=True)
class ShuffleArgument:
    """The non-interactive Terelius-Wikström argument (see the module docstring).

    ``commitments``: ``c_j``, one per input card; ``chain``: ``ĉ_m``, one per output card;
    ``challenge``: ``e``; ``responses``: ``(s1, s2, s3, s4)``; ``chain_responses``: ``ŝ_m``;
    ``perm_responses``: ``s'_m``.
    """

    commitments: tuple[Point, ...]
    chain: tuple[Point, ...]
    challenge: Scalar
    responses: tuple[Scalar, Scalar, Scalar, Scalar]
    chain_responses: tuple[Scalar, ...]
    perm_responses: tuple[Scalar, ...]

    @property
    def size(self) -> int:
        return len(self.commitments)

    def to_json(self) -> dict[str, Any]:
        return {
            "commitments": [p.hex() for p in self.commitments],
            "chain": [p.hex() for p in self.chain],
            "challenge": self.challenge.hex(),
            "responses": [s.hex() for s in self.responses],
            "chain_responses": [s.hex() for s in self.chain_responses],
            "perm_responses": [s.hex() for s in self.perm_responses],
        }

    @classmethod
    def from_json(cls, data: Any, n: int) -> ShuffleArgument:
        """Parse and check every point and scalar (a hostile command)."""
        if not isinstance(data, dict) or set(data) != _FIELDS:
            raise EncodingError(f"shuffle argument: expected an object with keys {sorted(_FIELDS)}")
        return cls(
            _points(data["commitments"], n, "commitments"),
            _points(data["chain"], n, "chain"),
            Scalar.from_hex(data["challenge"]),
            _four(_scalars(data["responses"], 4, "responses")),
            _scalars(data["chain_responses"], n, "chain_responses"),
            _scalars(data["perm_responses"], n, "perm_responses"),
        )

    @classmethod
    def from_json_unchecked(cls, data: Any) -> ShuffleArgument:
        """:meth:`from_json` of an argument it accepted before (see
        ``Point.from_hex_unchecked``): for folding accepted moves, never for a command."""
        return cls(
            tuple(map(_point_from_hex_unchecked, data["commitments"])),
            tuple(map(_point_from_hex_unchecked, data["chain"])),
            _scalar_from_hex_unchecked(data["challenge"]),
            _four(tuple(map(_scalar_from_hex_unchecked, data["responses"]))),
            tuple(map(_scalar_from_hex_unchecked, data["chain_responses"])),
            tuple(map(_scalar_from_hex_unchecked, data["perm_responses"])),
        )


_FIELDS = frozenset(
    {"commitments", "chain", "challenge", "responses", "chain_responses", "perm_responses"}
)


def _points(data: Any, n: int, what: str) -> tuple[Point, ...]:
    if not isinstance(data, list) or len(data) != n:
        raise EncodingError(f"shuffle argument {what}: expected a list of {n} points")
    return tuple(Point.from_hex(x) for x in data)


def _scalars(data: Any, n: int, what: str) -> tuple[Scalar, ...]:
    if not isinstance(data, list) or len(data) != n:
        raise EncodingError(f"shuffle argument {what}: expected a list of {n} scalars")
    return tuple(Scalar.from_hex(x) for x in data)


def _four(s: tuple[Scalar, ...]) -> tuple[Scalar, Scalar, Scalar, Scalar]:
    if len(s) != 4:
        raise EncodingError("shuffle argument responses: expected 4 scalars")
    return s[0], s[1], s[2], s[3]


def _seed(
    context: bytes,
    pk: Point,
    inputs: Sequence[MaskedCard],
    outputs: Sequence[MaskedCard],
    commitments: Sequence[Point],
) -> bytes:
    """The hash of the whole statement and the permutation commitment."""
    h = framed_sha512(_SEED_DOMAIN, context)
    h.update(len(inputs).to_bytes(4, "little"))
    h.update(pk.value)
    for deck in (inputs, outputs):
        for card in deck:
            h.update(card.epk.value)
            h.update(card.msg.value)
            h.update(card.pk.value)
    for c in commitments:
        h.update(c.value)
    return h.digest()


def _challenges(seed: bytes, n: int) -> list[Scalar]:
    return [hash_to_scalar(_U_DOMAIN, seed, j.to_bytes(4, "little")) for j in range(n)]


def _challenge(seed: bytes, chain: Sequence[Point], t: Sequence[Point]) -> Scalar:
    return hash_to_scalar(
        _E_DOMAIN, seed, b"".join(p.value for p in chain), b"".join(p.value for p in t)
    )


def _sum(points: Sequence[Point]) -> Point:
    total = identity()
    for p in points:
        total = total + p
    return total


def prove_shuffle_argument(
    inputs: Sequence[MaskedCard],
    outputs: Sequence[MaskedCard],
    perm: Sequence[int],
    nonces: Sequence[Scalar],
    *,
    context: bytes,
) -> ShuffleArgument:
    """Prove ``outputs == reencrypt_shuffle(inputs, perm, nonces)`` without revealing ``perm``.

    The caller's ``outputs`` are taken as made from ``perm`` and ``nonces`` (a wrong witness
    gives an argument that does not verify, nothing worse).
    """
    n = len(inputs)
    if len(outputs) != n or len(nonces) != n or not is_permutation(perm, n):
        raise MentalPokerError("shuffle argument: perm and nonces must match the deck")
    pk = _common_pk(inputs)
    if _common_pk(outputs) != pk:
        raise MentalPokerError("shuffle argument: outputs are under another key")
    gens = argument_generators(n)
    h0 = gens[0]
    psi = invert_permutation(perm)  # outputs[m] comes from inputs[psi[m]]

    rho = [random_scalar() for _ in range(n)]
    commitments = tuple(mul_base(rho[j]) + gens[1 + perm[j]] for j in range(n))
    seed = _seed(context, pk, inputs, outputs, commitments)
    u = _challenges(seed, n)
    u_out = [u[psi[m]] for m in range(n)]
    r_out = [nonces[psi[m]] for m in range(n)]

    big_r = [random_scalar() for _ in range(n)]
    chain: list[Point] = []
    prev = h0
    for m in range(n):
        prev = mul_base(big_r[m]) + u_out[m] * prev
        chain.append(prev)

    w1, w2, w3, w4 = (random_scalar() for _ in range(4))
    w_hat = [random_scalar() for _ in range(n)]
    w_prime = [random_scalar() for _ in range(n)]
    t1 = mul_base(w1)
    t2 = mul_base(w2)
    t3 = mul_base(w3) + _sum([w_prime[m] * gens[1 + m] for m in range(n)])
    t41 = -w4 * pk + _sum([w_prime[m] * outputs[m].msg for m in range(n)])
    if all(card.epk.is_identity for card in inputs):
        # fast path (the first shuffle, from the open deck): out.epk_m = r'_m G, so
        # sum w'_m out.epk_m = (sum w'_m r'_m) G, one fixed-base product instead of n
        t42 = mul_base(_dot(w_prime, r_out) - w4)
    else:
        t42 = mul_base(-w4) + _sum([w_prime[m] * outputs[m].epk for m in range(n)])
    t_hat = [mul_base(w_hat[m]) + w_prime[m] * (chain[m - 1] if m else h0) for m in range(n)]
    e = _challenge(seed, chain, (t1, t2, t3, t41, t42, *t_hat))

    v = [Scalar.from_int(1)] * n
    for m in range(n - 1, 0, -1):
        v[m - 1] = u_out[m] * v[m]
    s1 = w1 + e * _total(rho)
    s2 = w2 + e * _dot(big_r, v)
    s3 = w3 + e * _dot(rho, u)
    s4 = w4 + e * _dot(r_out, u_out)
    return ShuffleArgument(
        commitments=commitments,
        chain=tuple(chain),
        challenge=e,
        responses=(s1, s2, s3, s4),
        chain_responses=tuple(w_hat[m] + e * big_r[m] for m in range(n)),
        perm_responses=tuple(w_prime[m] + e * u_out[m] for m in range(n)),
    )


def _total(xs: Sequence[Scalar]) -> Scalar:
    return Scalar.from_int(sum(x.to_int() for x in xs))


def _dot(xs: Sequence[Scalar], ys: Sequence[Scalar]) -> Scalar:
    return Scalar.from_int(sum(x.to_int() * y.to_int() for x, y in zip(xs, ys, strict=True)))


def verify_shuffle_argument(
    inputs: Sequence[MaskedCard],
    outputs: Sequence[MaskedCard],
    argument: ShuffleArgument,
    *,
    context: bytes,
) -> bool:
    """True when ``argument`` shows ``outputs`` is a re-randomised permutation of ``inputs``."""
    n = len(inputs)
    if (
        n == 0
        or n > MAX_DECK_SIZE
        or len(outputs) != n
        or len(argument.commitments) != n
        or len(argument.chain) != n
        or len(argument.chain_responses) != n
        or len(argument.perm_responses) != n
        or len(argument.responses) != 4
    ):
        return False
    try:
        pk = _common_pk(inputs)
        if _common_pk(outputs) != pk:
            return False
    except MentalPokerError:
        return False
    try:
        return _verify(inputs, outputs, argument, pk, context)
    except MentalPokerError:  # a point libsodium refuses: only from unchecked decoding
        return False


def _verify(
    inputs: Sequence[MaskedCard],
    outputs: Sequence[MaskedCard],
    argument: ShuffleArgument,
    pk: Point,
    context: bytes,
) -> bool:
    n = len(inputs)
    gens = argument_generators(n)
    h0 = gens[0]
    c, chain, e = argument.commitments, argument.chain, argument.challenge
    s1, s2, s3, s4 = argument.responses
    s_hat, s_prime = argument.chain_responses, argument.perm_responses
    seed = _seed(context, pk, inputs, outputs, c)
    u = _challenges(seed, n)
    neg_e = -e
    neg_eu = [neg_e * uj for uj in u]  # -e u_j: the e of each sum folded into its scalars

    c_bar = _sum(c) - _generators_sum(n)
    u_prod = 1
    for uj in u:
        u_prod = u_prod * uj.to_int() % GROUP_ORDER
    c_hat = chain[n - 1] - Scalar.from_int(u_prod) * h0
    t1 = mul_base(s1) + neg_e * c_bar
    t2 = mul_base(s2) + neg_e * c_hat
    t3 = (
        mul_base(s3)
        + _sum([s_prime[m] * gens[1 + m] for m in range(n)])
        + _sum([neg_eu[j] * c[j] for j in range(n)])
    )
    t41 = (
        -s4 * pk
        + _sum([s_prime[m] * outputs[m].msg for m in range(n)])
        + _sum([neg_eu[j] * inputs[j].msg for j in range(n)])
    )
    # an open deck's epk are all the identity: that sum is then the identity at no cost
    t42 = (
        mul_base(-s4)
        + _sum([s_prime[m] * outputs[m].epk for m in range(n)])
        + _sum([neg_eu[j] * inputs[j].epk for j in range(n)])
    )
    t_hat = [
        mul_base(s_hat[m]) + s_prime[m] * (chain[m - 1] if m else h0) + neg_e * chain[m]
        for m in range(n)
    ]
    return _challenge(seed, chain, (t1, t2, t3, t41, t42, *t_hat)) == e
