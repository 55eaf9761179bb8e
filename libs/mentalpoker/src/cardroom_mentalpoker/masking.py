"""Masked cards and their three operations (ElGamal-style, additive notation).

A card in the deck is a triple ``(epk, msg, pk)`` with the invariant

    pk  = x * G            x = sum of the secret keys currently masking the card
    epk = r * G            r = sum of the nonces of every re-randomisation so far
    msg = M + x * epk      M = the card's point (see :mod:`cardroom_mentalpoker.cards`)

An open card is ``(O, M, O)``. The operations (named as in prove-my-turn's
``src/utils.ts``):

- :func:`add_key` (``addPlayer``): ``pk += s*G``, ``msg += s*epk``.
- :func:`remask` (``mask``): re-randomise with a fresh nonce r:
  ``epk += r*G``, ``msg += r*pk``.
- :func:`partial_unmask` (``partialUnmask``): ``msg -= s*epk``, ``pk -= s*G``.

Keys are added and removed additively, so masking commutes: any set of keys applied in any
order, interleaved with any re-randomisations, is removed in any order. Deviations from the
source, each fixing a quirk of it:

- ``addPlayer`` in the source leaves ``msg`` alone when ``pk = O``; that breaks the invariant
  when ``epk`` is not ``O``. Here ``msg += s*epk`` always (the same when ``epk = O``).
- ``partialUnmask`` in the source is a silent no-op on an open card; here it raises.
- ``mask`` in the source has a "no players masking" guard that never fires; here
  re-randomising an open card raises (it would hide nothing).
- When the last key is removed the card is normalised to ``(O, M, O)``, the open form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .cards import CardCodec, default_codec
from .group import (
    EncodingError,
    MentalPokerError,
    Point,
    Scalar,
    _point_from_hex_unchecked,
    _point_unchecked,
    identity,
    mul_base,
    random_scalar,
)

__all__ = [
    "MAX_DECK_SIZE",
    "Deck",
    "MaskedCard",
    "add_key",
    "deck_from_json",
    "deck_from_json_unchecked",
    "deck_to_json",
    "open_deck",
    "partial_unmask",
    "remask",
    "swap_key",
    "unmasked_point",
]

MAX_DECK_SIZE = 256
"""The largest deck :func:`deck_from_json` accepts (hostile-input size limit)."""


@dataclass(frozen=True, slots=True)
class MaskedCard:
    """One card of the deck: ``(epk, msg, pk)``; see the module docstring."""

    epk: Point
    msg: Point
    pk: Point

    @classmethod
    def open(cls, point: Point) -> MaskedCard:
        """The open card ``(O, M, O)``."""
        return cls(identity(), point, identity())

    @property
    def is_open(self) -> bool:
        return self.pk.is_identity

    def to_json(self) -> dict[str, str]:
        return {"epk": self.epk.hex(), "msg": self.msg.hex(), "pk": self.pk.hex()}

    @classmethod
    def from_json(cls, data: Any) -> MaskedCard:
        if not isinstance(data, dict) or set(data) != {"epk", "msg", "pk"}:
            raise EncodingError("masked card: expected an object with keys epk, msg, pk")
        card = cls(
            Point.from_hex(data["epk"]), Point.from_hex(data["msg"]), Point.from_hex(data["pk"])
        )
        if card.pk.is_identity and not card.epk.is_identity:
            raise EncodingError("masked card: an open card must have epk = identity")
        return card

    @classmethod
    def from_json_unchecked(cls, data: Any) -> MaskedCard:
        """:meth:`from_json` of a card it accepted before, without checking it again (see
        ``Point.from_hex_unchecked``): for folding accepted moves, never for a command."""
        # built through the slots' setters: the frozen __init__ costs as much as the decoding
        card = _new(cls)
        _set_epk(card, _point_from_hex_unchecked(data["epk"]))
        _set_msg(card, _point_from_hex_unchecked(data["msg"]))
        _set_pk(card, _point_from_hex_unchecked(data["pk"]))
        return card

    @classmethod
    def from_bytes_unchecked(cls, data: bytes) -> MaskedCard:
        """The card whose points' encodings are ``data`` (``epk``, ``msg``, ``pk``, 32 bytes
        each), accepted before: not checked again, as :meth:`from_json_unchecked`."""
        card = _new(cls)
        _set_epk(card, _point_unchecked(data[:32]))
        _set_msg(card, _point_unchecked(data[32:64]))
        _set_pk(card, _point_unchecked(data[64:96]))
        return card


_new = object.__new__
_set_epk: Callable[[MaskedCard, Point], None] = MaskedCard.__dict__["epk"].__set__
_set_msg: Callable[[MaskedCard, Point], None] = MaskedCard.__dict__["msg"].__set__
_set_pk: Callable[[MaskedCard, Point], None] = MaskedCard.__dict__["pk"].__set__


def _card(epk: Point, msg: Point, pk: Point) -> MaskedCard:
    """``MaskedCard(epk, msg, pk)`` through the slots' setters (the frozen ``__init__`` costs
    a few microseconds, and the shuffle proofs build thousands of cards)."""
    card = _new(MaskedCard)
    _set_epk(card, epk)
    _set_msg(card, msg)
    _set_pk(card, pk)
    return card


Deck = tuple[MaskedCard, ...]


def add_key(card: MaskedCard, key: Scalar) -> MaskedCard:
    """Add ``key`` to the card's mask (prove-my-turn's ``addPlayer``)."""
    return MaskedCard(card.epk, card.msg + key * card.epk, card.pk + mul_base(key))


def remask(card: MaskedCard, nonce: Scalar | None = None) -> MaskedCard:
    """Re-randomise the card with ``nonce`` (fresh from the CSPRNG when None); ``mask``
    in prove-my-turn.

    The card stays the same card under the same keys; its encoding changes completely.
    """
    if card.is_open:
        raise MentalPokerError("remask: an open card cannot be re-randomised (no key masks it)")
    r = nonce if nonce is not None else random_scalar()
    return MaskedCard(card.epk + mul_base(r), card.msg + r * card.pk, card.pk)


def partial_unmask(card: MaskedCard, key: Scalar) -> MaskedCard:
    """Remove ``key`` from the card's mask (prove-my-turn's ``partialUnmask``).

    Removing the last key gives the open card ``(O, M, O)``.
    """
    if card.is_open:
        raise MentalPokerError("partial_unmask: the card is already open")
    pk = card.pk - mul_base(key)
    msg = card.msg - key * card.epk
    if pk.is_identity:
        return MaskedCard.open(msg)
    return MaskedCard(card.epk, msg, pk)


def swap_key(card: MaskedCard, old: Scalar, new: Scalar) -> MaskedCard:
    """``add_key(partial_unmask(card, old), new)`` in one step (step 3 of the deal, "Mask")."""
    delta = new - old
    return MaskedCard(card.epk, card.msg + delta * card.epk, card.pk + mul_base(delta))


def unmasked_point(card: MaskedCard, key: Scalar) -> Point:
    """``msg - key*epk``: the card's point when ``key`` is the only key left on it.

    With any other key set the result is a random-looking point that decodes to no card.
    """
    return card.msg - key * card.epk


def open_deck(cards: Sequence[str] | None = None, codec: CardCodec | None = None) -> Deck:
    """The open deck ``(O, M, O)`` of ``cards`` (default: every card of the codec, in order)."""
    c = codec if codec is not None else default_codec()
    return tuple(MaskedCard.open(p) for p in c.points(cards))


def deck_to_json(deck: Iterable[MaskedCard]) -> list[dict[str, str]]:
    return [card.to_json() for card in deck]


def deck_from_json(data: Any, *, max_size: int = MAX_DECK_SIZE) -> Deck:
    if not isinstance(data, list):
        raise EncodingError("deck: expected a list of masked cards")
    if len(data) > max_size:
        raise EncodingError(f"deck: more than {max_size} cards")
    return tuple(MaskedCard.from_json(item) for item in data)


def deck_from_json_unchecked(data: Any) -> Deck:
    """:func:`deck_from_json` of a deck it accepted before, not checked again (see
    ``MaskedCard.from_json_unchecked``)."""
    return tuple(MaskedCard.from_json_unchecked(item) for item in data)
