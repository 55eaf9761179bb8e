"""The masking algebra: add key, re-randomise, partial unmask."""

from __future__ import annotations

import json

import pytest
from cardroom_mentalpoker import (
    GROUP_ORDER,
    MACAUA_CARDS,
    EncodingError,
    MaskedCard,
    MentalPokerError,
    Scalar,
    add_key,
    card_point,
    deck_from_json,
    deck_to_json,
    decode_card,
    mul_base,
    open_deck,
    partial_unmask,
    random_scalar,
    remask,
    swap_key,
    unmasked_point,
)
from hypothesis import given, settings
from hypothesis import strategies as st

scalars = st.integers(min_value=1, max_value=GROUP_ORDER - 1).map(Scalar.from_int)


def _mask(card: str, keys: list[Scalar]) -> MaskedCard:
    c = MaskedCard.open(card_point(card))
    for k in keys:
        c = remask(add_key(c, k))
    return c


def test_open_card_and_one_key() -> None:
    k = random_scalar()
    card = add_key(MaskedCard.open(card_point("7H")), k)
    assert card.pk == mul_base(k)
    masked = remask(card)
    assert decode_card(masked.msg) is None
    assert decode_card(unmasked_point(masked, k)) == "7H"
    opened = partial_unmask(masked, k)
    assert opened.is_open
    assert opened == MaskedCard.open(card_point("7H"))


@settings(max_examples=40, deadline=None)
@given(
    card=st.sampled_from(MACAUA_CARDS),
    keys=st.lists(scalars, min_size=1, max_size=4),
    data=st.data(),
)
def test_masking_commutes(card: str, keys: list[Scalar], data: st.DataObject) -> None:
    """Keys applied in any order, with re-randomisations between, unmask in any order."""
    add_order = data.draw(st.permutations(range(len(keys))))
    remove_order = data.draw(st.permutations(range(len(keys))))
    # the first key is followed by a re-randomisation (as in the shuffle step): before it,
    # epk = O and the card is not hidden yet; the later ones are optional
    later = data.draw(st.lists(st.booleans(), min_size=len(keys) - 1, max_size=len(keys) - 1))
    remask_after = [True, *later]
    c = MaskedCard.open(card_point(card))
    for i, again in zip(add_order, remask_after, strict=True):
        c = add_key(c, keys[i])
        if again:
            c = remask(c, data.draw(scalars))
    # the joint key is the sum of the keys, whatever the order
    joint = keys[0]
    for k in keys[1:]:
        joint = joint + k
    assert c.pk == mul_base(joint)
    identity = MaskedCard.open(card_point(card)).epk
    for step, i in enumerate(remove_order):
        left = [keys[j] for j in remove_order[step:]]
        # hidden unless the keys still on it cancel out (k and l - k) or so do the
        # re-randomisations (r and l - r: epk is the identity): then it is open already
        if sum(int.from_bytes(k.value, "little") for k in left) % GROUP_ORDER and (
            c.epk != identity
        ):
            assert decode_card(c.msg) is None
        c = partial_unmask(c, keys[i])
    assert c.is_open
    assert decode_card(c.msg) == card


def test_missing_one_key_decodes_to_no_card() -> None:
    keys = [random_scalar() for _ in range(3)]
    for missing in range(3):
        c = _mask("QS", keys)
        for i, k in enumerate(keys):
            if i != missing:
                c = partial_unmask(c, k)
        assert not c.is_open
        assert decode_card(c.msg) is None
        # the owner of the missing key (and only he) can finish it
        assert decode_card(unmasked_point(c, keys[missing])) == "QS"
        # a wrong key does not open it either
        assert decode_card(unmasked_point(c, random_scalar())) is None


def test_rerandomisation_keeps_the_card_and_changes_the_encoding() -> None:
    keys = [random_scalar(), random_scalar()]
    c = _mask("BJ", keys)
    again = remask(c)
    assert again.pk == c.pk
    assert again.epk != c.epk
    assert again.msg != c.msg
    for k in keys:
        again = partial_unmask(again, k)
    assert decode_card(again.msg) == "BJ"


def test_swap_key_equals_unmask_then_add() -> None:
    k, c_key, other = random_scalar(), random_scalar(), random_scalar()
    card = _mask("5D", [k, other])
    assert swap_key(card, k, c_key) == add_key(partial_unmask(card, k), c_key)


def test_guards() -> None:
    open_card = MaskedCard.open(card_point("AS"))
    with pytest.raises(MentalPokerError):
        partial_unmask(open_card, random_scalar())
    with pytest.raises(MentalPokerError):
        remask(open_card)


def test_deck_json_round_trip_and_limits() -> None:
    deck = tuple(remask(add_key(c, random_scalar())) for c in open_deck())
    data = json.loads(json.dumps(deck_to_json(deck)))
    assert deck_from_json(data) == deck
    with pytest.raises(EncodingError):
        deck_from_json(data, max_size=10)
    with pytest.raises(EncodingError):
        deck_from_json([{"epk": "00", "msg": "00", "pk": "00"}])
    bad = dict(data[0], pk=MaskedCard.open(card_point("AS")).pk.hex())
    with pytest.raises(EncodingError):
        MaskedCard.from_json(bad)  # open (pk = O) but epk is not O
