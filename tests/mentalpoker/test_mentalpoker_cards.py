"""Card points: the 54 Macaua cards, publicly derivable, distinct, decodable."""

from __future__ import annotations

from collections import Counter

import pytest
from cardroom_mentalpoker import (
    MACAUA_CARDS,
    CardCodec,
    MentalPokerError,
    card_point,
    decode_card,
    default_codec,
    mul_base,
    random_scalar,
)
from nacl import bindings


def test_deck_composition() -> None:
    assert len(MACAUA_CARDS) == 54
    assert len(set(MACAUA_CARDS)) == 54
    suits = Counter(c[-1] for c in MACAUA_CARDS if c not in ("BJ", "RJ"))
    assert suits == {"S": 13, "H": 13, "D": 13, "C": 13}
    assert {"AS", "10H", "QD", "KC", "BJ", "RJ"} <= set(MACAUA_CARDS)


def test_points_are_distinct_subgroup_points_and_decode() -> None:
    points = default_codec().points()
    assert len({p.value for p in points}) == 54
    for card, point in zip(MACAUA_CARDS, points, strict=True):
        assert bindings.crypto_core_ed25519_is_valid_point(point.value)
        assert decode_card(point) == card
        assert card_point(card) == point


def test_points_are_publicly_derivable() -> None:
    # a fresh codec (another process, another client) derives the same table
    assert CardCodec().points() == default_codec().points()
    # a different domain gives different points
    assert CardCodec(domain=b"other").point("AS") != card_point("AS")


def test_random_point_is_no_card() -> None:
    assert decode_card(mul_base(random_scalar())) is None


def test_unknown_card_and_duplicates_rejected() -> None:
    with pytest.raises(MentalPokerError):
        card_point("ZZ")
    with pytest.raises(MentalPokerError):
        CardCodec(["AS", "AS"])
