"""The unchecked decoders (for folding moves that were checked when accepted) and the plain
state hash: the same values as the checked ones on anything the checked ones accept."""

from __future__ import annotations

import dataclasses
import json

import pytest
from cardroom_mentalpoker import (
    CardKeys,
    DleqProof,
    DlogProof,
    EncodingError,
    MaskedCard,
    PlayerSecrets,
    Point,
    PublicKeys,
    Scalar,
    ShuffleOpening,
    ShuffleStepProof,
    add_key,
    canonical_json,
    card_point,
    deck_from_json,
    deck_from_json_unchecked,
    deck_to_json,
    identity,
    mask_step,
    open_deck,
    plain_state_hash,
    proof_context,
    random_scalar,
    remask,
    shuffle_step,
    sign_move,
    state_hash,
)
from cardroom_mentalpoker.group import PackedPoints
from nacl.signing import SigningKey

SMALL_ORDER = "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"


def _wire(value: object) -> object:
    return json.loads(json.dumps(value))


def test_unchecked_decoders_give_what_the_checked_ones_give() -> None:
    context = proof_context("g/1", 0, "p0")
    secrets = PlayerSecrets.generate(54)
    keys = secrets.public_keys(context=context)
    wire_keys = _wire(keys.to_json())
    assert PublicKeys.from_json_unchecked(wire_keys) == PublicKeys.from_json(wire_keys)
    deck, proof = shuffle_step(open_deck(), secrets, context=context, rounds=3)
    masked, _ = mask_step(deck, secrets, context=context)
    for cards in (open_deck(), deck, masked):
        wire = _wire(deck_to_json(cards))
        assert deck_from_json_unchecked(wire) == deck_from_json(wire) == cards
        assert [MaskedCard.from_json_unchecked(c) for c in wire] == list(cards)
    wire_proof = _wire(proof.to_json())
    checked = ShuffleStepProof.from_json(wire_proof, 54)
    openings = [ShuffleOpening.from_json_unchecked(o) for o in wire_proof["shuffle"]["openings"]]
    assert tuple(openings) == checked.shuffle.openings
    assert [DleqProof.from_json_unchecked(p) for p in wire_proof["key_proofs"]] == list(
        checked.key_proofs
    )
    assert [Point.from_hex_unchecked(p) for p in wire_proof["keyed"]] == list(checked.keyed)
    dlog = keys.card_proofs[0]
    assert DlogProof.from_json_unchecked(_wire(dlog.to_json())) == dlog
    scalar = secrets.card_keys[0]
    assert Scalar.from_hex_unchecked(scalar.hex()) == scalar
    assert Point.from_hex_unchecked(identity().hex()).is_identity


def test_unchecked_values_are_whole_values() -> None:
    """Built through their slots' setters: frozen, equal, hashable and usable as the
    checked ones."""
    context = proof_context("g/1", 0, "p0")
    secrets = PlayerSecrets.generate(4)
    masked, _ = mask_step(open_deck(["AS", "2H", "BJ", "RJ"]), secrets, context=context)
    wire = _wire(deck_to_json(masked))
    proof = secrets.public_keys(context=context).card_proofs[1]
    for fast, slow in [
        (MaskedCard.from_json_unchecked(wire[2]), MaskedCard.from_json(wire[2])),
        (DlogProof.from_json_unchecked(_wire(proof.to_json())), proof),
        (Point.from_hex_unchecked(wire[0]["pk"]), Point.from_hex(wire[0]["pk"])),
        (Scalar.from_hex_unchecked(proof.response.hex()), proof.response),
    ]:
        assert type(fast) is type(slow)
        assert fast == slow
        assert hash(fast) == hash(slow)
        assert repr(fast) == repr(slow)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(fast, dataclasses.fields(fast)[0].name, None)
    point = Point.from_hex_unchecked(wire[0]["pk"])
    assert point + point == Scalar.from_int(2) * point
    assert Scalar.from_hex_unchecked(proof.response.hex()) * point == proof.response * point


def test_unchecked_decoding_checks_nothing() -> None:
    # why it must never see a command: this is what the checked decoder keeps out
    with pytest.raises(EncodingError):
        Point.from_hex(SMALL_ORDER)
    assert Point.from_hex_unchecked(SMALL_ORDER).hex() == SMALL_ORDER


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": [True, None, "é", -5], "c": {"z": [], "y": {}}},
        {"prev": "0" * 64, "move": {"game_id": "tâble/1", "seq": 3, "move": {"k": ["aa"]}}},
        [],
        "ü",
        0,
    ],
)
def test_plain_state_hash_is_state_hash_on_plain_json(value: object) -> None:
    assert plain_state_hash(value) == state_hash(value)
    assert plain_state_hash(_wire(value)) == state_hash(value)


def test_plain_state_hash_of_a_signed_move_read_back() -> None:
    secrets = PlayerSecrets.generate(54)
    context = proof_context("g/1", 0, "p0")
    deck, proof = shuffle_step(open_deck(), secrets, context=context, rounds=2)
    move = {"kind": "shuffle", "cards": deck, "proof": proof, "digest": b"\x01\x02"}
    signed = sign_move(SigningKey.generate(), "g/1", 1, "0" * 64, move)
    stored = _wire({"prev": "1" * 64, "move": signed.to_json()})
    assert canonical_json(stored) == canonical_json({"prev": "1" * 64, "move": signed})
    assert plain_state_hash(stored) == state_hash({"prev": "1" * 64, "move": signed.to_json()})


def test_packed_points_are_the_tuple_of_their_points() -> None:
    """A table keeps accepted commitments packed as bytes (``CardKeys.from_json_unchecked``)
    and masked cards as the bytes of their points: read back, they are the same values."""
    keys = PlayerSecrets.generate(5).public_keys(context=b"ctx")
    packed = CardKeys.from_json_unchecked(_wire(keys.to_json()))
    assert isinstance(packed.cards, PackedPoints)
    assert len(packed.cards) == 5
    assert packed.cards == keys.cards
    assert keys.cards == packed.cards
    assert list(packed.cards) == list(keys.cards)
    assert packed.cards[-1] == keys.cards[-1]
    assert packed.cards[1:3] == keys.cards[1:3]
    assert hash(packed.cards) == hash(keys.cards)
    assert packed.cards != keys.cards[:4]
    with pytest.raises(IndexError):
        packed.cards[5]
    with pytest.raises(EncodingError):
        PackedPoints(bytes(33))
    card = remask(add_key(MaskedCard.open(card_point("AS")), random_scalar()))
    data = card.epk.value + card.msg.value + card.pk.value
    assert MaskedCard.from_bytes_unchecked(data) == card
