"""Card points: a fixed, publicly derivable encoding of the cards as group points.

The Macaua deck has 54 cards, 13 ranks (Ace, 2-10, Jack, Queen, King) times
4 suits (Spades, Hearts, Diamonds, Clubs), plus a Black Joker and a Red Joker. A card is named
by a short code: rank then suit (``"AS"``, ``"10H"``, ``"QD"``, ``"KC"``) and ``"BJ"`` /
``"RJ"`` for the jokers. The canonical order is suit by suit (S, H, D, C), Ace to King in each,
then the two jokers; it is the order of the open deck before the first shuffle.

Encoding (a face name hashed to a point, i.e. hash-to-group): the point
of a card is Elligator 2 (libsodium ``crypto_core_ed25519_from_uniform``, which also clears
the cofactor) of the first 32 bytes of SHA-512 over a domain tag and the card code. Anyone can
recompute it; nobody knows its discrete logarithm. Decoding compares a point with the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .group import MentalPokerError, Point, hash_to_point

__all__ = [
    "CARD_DOMAIN",
    "MACAUA_CARDS",
    "RANKS",
    "SUITS",
    "CardCodec",
    "card_point",
    "decode_card",
    "default_codec",
]

CARD_DOMAIN = b"cardroom/mentalpoker/card-point/v1"
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
MACAUA_CARDS: tuple[str, ...] = (
    *(rank + suit for suit in SUITS for rank in RANKS),
    "BJ",
    "RJ",
)


def _hash_to_point(domain: bytes, card: str) -> Point:
    return hash_to_point(domain, card.encode("utf-8"))


class CardCodec:
    """The table card code <-> point for one set of cards under one domain tag."""

    __slots__ = ("_by_point", "_cards", "_domain", "_points")

    def __init__(self, cards: Iterable[str] = MACAUA_CARDS, domain: bytes = CARD_DOMAIN) -> None:
        self._cards: tuple[str, ...] = tuple(cards)
        self._domain = domain
        if len(set(self._cards)) != len(self._cards):
            raise MentalPokerError("card codec: duplicate card codes")
        self._points: dict[str, Point] = {c: _hash_to_point(domain, c) for c in self._cards}
        self._by_point: dict[bytes, str] = {p.value: c for c, p in self._points.items()}
        if len(self._by_point) != len(self._cards) or any(
            p.is_identity for p in self._points.values()
        ):
            raise MentalPokerError("card codec: card points are not distinct")

    @property
    def cards(self) -> tuple[str, ...]:
        return self._cards

    @property
    def domain(self) -> bytes:
        return self._domain

    def point(self, card: str) -> Point:
        """The public point of ``card``; raises for a card not in this codec."""
        try:
            return self._points[card]
        except KeyError:
            raise MentalPokerError(f"unknown card {card!r}") from None

    def points(self, cards: Sequence[str] | None = None) -> tuple[Point, ...]:
        return tuple(self.point(c) for c in (self._cards if cards is None else cards))

    def decode(self, point: Point) -> str | None:
        """The card whose point this is, or None when it is no card (still masked)."""
        return self._by_point.get(point.value)


_DEFAULT = CardCodec()


def default_codec() -> CardCodec:
    """The codec of the 54 Macaua cards (shared, immutable)."""
    return _DEFAULT


def card_point(card: str) -> Point:
    """The point of a Macaua card code."""
    return _DEFAULT.point(card)


def decode_card(point: Point) -> str | None:
    """The Macaua card code of a point, or None when the point is no card."""
    return _DEFAULT.decode(point)
