"""Per-player keys and their public commitments.

Each player holds, for one deck (one shuffle-and-mask round; a reshuffle of the discard pile
is a new deck with new keys, and keys are never reused across decks):

- a shuffle key ``k`` (the same for every card during the shuffle phase), and
- one card key ``c_i`` per deck position ``i`` (54 for a full Macaua deck),

all uniformly random non-zero scalars from the CSPRNG. The commitments are the public points
``K = k*G`` and ``C_i = c_i*G``, published when the player joins, each with a Schnorr proof
that its author knows the secret (bound to a context such as game id + player + deck number).

Revealing a card key means publishing the scalar ``c_i`` itself (the deal, step 4 of
:mod:`cardroom_mentalpoker.protocol`): anyone
checks ``c_i*G == C_i`` (:func:`key_matches`) and recomputes the unmasking. One key per
(player, position) means publishing it opens that one position and no other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .group import (
    EncodingError,
    PackedPoints,
    Point,
    Scalar,
    VerificationError,
    _point_from_hex_unchecked,
    base_point,
    mul_base,
    random_scalar,
)
from .masking import MAX_DECK_SIZE
from .proofs import DlogProof, _prove_dlog_known, verify_dlog

__all__ = [
    "CardKeys",
    "KeyReveal",
    "PlayerSecrets",
    "PublicKeys",
    "check_key",
    "key_matches",
]


def _shuffle_context(context: bytes) -> bytes:
    return context + b"|shuffle-key"


def _card_context(context: bytes, position: int) -> bytes:
    return context + b"|card-key|" + str(position).encode("ascii")


@dataclass(frozen=True, slots=True)
class CardKeys:
    """A player's commitments for one deck, once their proofs were checked: all that the
    later steps (shuffle, mask, reveals) are checked against. What a table keeps of
    accepted :class:`PublicKeys`: the proofs stay in the log, and holding them would be
    most of a game's memory."""

    shuffle: Point
    cards: Sequence[Point]
    """A tuple, or :class:`PackedPoints` when read back from accepted keys."""

    @property
    def deck_size(self) -> int:
        return len(self.cards)

    @classmethod
    def from_json_unchecked(cls, data: Any) -> CardKeys:
        """The commitments of :class:`PublicKeys` JSON accepted before (not checked again,
        see ``Point.from_hex_unchecked``; the proofs not read): for folding accepted moves,
        never for a command."""
        return cls(
            _point_from_hex_unchecked(data["shuffle"]),
            PackedPoints.from_hex_unchecked(data["cards"]),
        )


@dataclass(frozen=True, slots=True)
class PublicKeys(CardKeys):
    """A player's published commitments for one deck, with proofs of knowledge."""

    shuffle_proof: DlogProof = field(repr=False)
    card_proofs: tuple[DlogProof, ...] = field(repr=False)

    def check(self, *, context: bytes, deck_size: int | None = None) -> None:
        """Raise :class:`VerificationError` unless every commitment is well formed and proven."""
        if deck_size is not None and len(self.cards) != deck_size:
            raise VerificationError(
                f"public keys: {len(self.cards)} card keys, expected {deck_size}"
            )
        if len(self.card_proofs) != len(self.cards):
            raise VerificationError("public keys: one proof per card key is required")
        if not verify_dlog(self.shuffle, self.shuffle_proof, context=_shuffle_context(context)):
            raise VerificationError("public keys: shuffle key proof does not verify")
        for i, (point, proof) in enumerate(zip(self.cards, self.card_proofs, strict=True)):
            if not verify_dlog(point, proof, context=_card_context(context, i)):
                raise VerificationError(f"public keys: card key {i} proof does not verify")
        if len({p.value for p in (self.shuffle, *self.cards)}) != len(self.cards) + 1:
            raise VerificationError("public keys: keys must be distinct")

    def verify(self, *, context: bytes, deck_size: int | None = None) -> bool:
        try:
            self.check(context=context, deck_size=deck_size)
        except VerificationError:
            return False
        return True

    def to_json(self) -> dict[str, Any]:
        return {
            "shuffle": self.shuffle.hex(),
            "cards": [p.hex() for p in self.cards],
            "shuffle_proof": self.shuffle_proof.to_json(),
            "card_proofs": [p.to_json() for p in self.card_proofs],
        }

    @classmethod
    def from_json(cls, data: Any, *, max_size: int = MAX_DECK_SIZE) -> PublicKeys:
        if not isinstance(data, dict) or set(data) != {
            "shuffle",
            "cards",
            "shuffle_proof",
            "card_proofs",
        }:
            raise EncodingError("public keys: expected shuffle, cards, shuffle_proof, card_proofs")
        cards, proofs = data["cards"], data["card_proofs"]
        if not isinstance(cards, list) or not isinstance(proofs, list):
            raise EncodingError("public keys: cards and card_proofs must be lists")
        if len(cards) > max_size or len(proofs) != len(cards):
            raise EncodingError("public keys: bad number of card keys or proofs")
        return cls(
            Point.from_hex(data["shuffle"]),
            tuple(Point.from_hex(c) for c in cards),
            DlogProof.from_json(data["shuffle_proof"]),
            tuple(DlogProof.from_json(p) for p in proofs),
        )

    @classmethod
    def from_json_unchecked(cls, data: Any) -> PublicKeys:
        """:meth:`from_json` of keys accepted before, without checking them again (see
        ``Point.from_hex_unchecked``): never for a command."""
        return cls(
            _point_from_hex_unchecked(data["shuffle"]),
            tuple(map(_point_from_hex_unchecked, data["cards"])),
            DlogProof.from_json_unchecked(data["shuffle_proof"]),
            tuple(map(DlogProof.from_json_unchecked, data["card_proofs"])),
        )


@dataclass(frozen=True, slots=True)
class PlayerSecrets:
    """A player's secret keys for one deck. Never leaves the player's client; repr hides it."""

    shuffle_key: Scalar = field(repr=False)
    card_keys: tuple[Scalar, ...] = field(repr=False)

    @classmethod
    def generate(cls, deck_size: int) -> PlayerSecrets:
        if not 0 < deck_size <= MAX_DECK_SIZE:
            raise ValueError(f"deck size must be in 1..{MAX_DECK_SIZE}")
        return cls(random_scalar(), tuple(random_scalar() for _ in range(deck_size)))

    @property
    def deck_size(self) -> int:
        return len(self.card_keys)

    def card_key(self, position: int) -> Scalar:
        if not 0 <= position < len(self.card_keys):
            raise IndexError(f"position {position} outside the deck")
        return self.card_keys[position]

    def public_keys(self, *, context: bytes) -> PublicKeys:
        """The commitments to publish, each with its proof of knowledge bound to ``context``."""
        g = base_point()
        shuffle = mul_base(self.shuffle_key)
        cards = tuple(mul_base(c) for c in self.card_keys)
        return PublicKeys(
            shuffle=shuffle,
            cards=cards,
            shuffle_proof=_prove_dlog_known(
                self.shuffle_key, g, shuffle, context=_shuffle_context(context)
            ),
            card_proofs=tuple(
                _prove_dlog_known(c, g, point, context=_card_context(context, i))
                for i, (c, point) in enumerate(zip(self.card_keys, cards, strict=True))
            ),
        )

    def reveal(self, position: int) -> KeyReveal:
        """The published form of this player's key for ``position``."""
        return KeyReveal(position, self.card_key(position))

    def reveal_many(self, positions: Sequence[int]) -> tuple[KeyReveal, ...]:
        return tuple(self.reveal(p) for p in positions)


@dataclass(frozen=True, slots=True)
class KeyReveal:
    """A published card key: the secret scalar of one player for one deck position."""

    position: int
    key: Scalar

    def to_json(self) -> dict[str, Any]:
        return {"position": self.position, "key": self.key.hex()}

    @classmethod
    def from_json(cls, data: Any) -> KeyReveal:
        if not isinstance(data, dict) or set(data) != {"position", "key"}:
            raise EncodingError("key reveal: expected an object with keys position, key")
        position = data["position"]
        if not isinstance(position, int) or isinstance(position, bool) or position < 0:
            raise EncodingError("key reveal: position must be a non-negative integer")
        return cls(position, Scalar.from_hex(data["key"]))


def key_matches(key: Scalar, commitment: Point) -> bool:
    """True when the published secret ``key`` is the one committed to: ``key*G == commitment``."""
    return not key.is_zero and mul_base(key) == commitment


def check_key(key: Scalar, commitment: Point, *, what: str = "published key") -> None:
    """Raise :class:`VerificationError` unless ``key`` matches ``commitment``."""
    if not key_matches(key, commitment):
        raise VerificationError(f"{what} does not match its commitment")
