"""Schnorr and Chaum-Pedersen proofs, key commitments and published keys."""

from __future__ import annotations

import json

import pytest
from cardroom_mentalpoker import (
    DleqProof,
    DlogProof,
    EncodingError,
    PlayerSecrets,
    PublicKeys,
    Scalar,
    VerificationError,
    base_point,
    check_key,
    key_matches,
    mul_base,
    proof_context,
    prove_dleq,
    prove_dlog,
    random_scalar,
    verify_dleq,
    verify_dlog,
)

CTX = b"test-context"


def _bump(s: Scalar) -> Scalar:
    return s + Scalar.from_int(1)


def test_dlog_proof() -> None:
    x = random_scalar()
    proof = prove_dlog(x, context=CTX)
    assert verify_dlog(mul_base(x), proof, context=CTX)
    assert not verify_dlog(mul_base(_bump(x)), proof, context=CTX)
    assert not verify_dlog(mul_base(x), proof, context=b"other")
    assert not verify_dlog(
        mul_base(x), DlogProof(_bump(proof.challenge), proof.response), context=CTX
    )
    assert not verify_dlog(
        mul_base(x), DlogProof(proof.challenge, _bump(proof.response)), context=CTX
    )


def test_dleq_proof_accepts_equal_logs() -> None:
    x = random_scalar()
    h = mul_base(random_scalar())
    g = base_point()
    proof = prove_dleq(x, g, h, context=CTX)
    assert verify_dleq(g, x * g, h, x * h, proof, context=CTX)
    restored = DleqProof.from_json(json.loads(json.dumps(proof.to_json())))
    assert verify_dleq(g, x * g, h, x * h, restored, context=CTX)


def test_dleq_proof_rejects_tampering() -> None:
    x = random_scalar()
    h = mul_base(random_scalar())
    g = base_point()
    proof = prove_dleq(x, g, h, context=CTX)
    a, b = x * g, x * h
    assert not verify_dleq(
        g, a, h, b, DleqProof(_bump(proof.challenge), proof.response), context=CTX
    )
    assert not verify_dleq(
        g, a, h, b, DleqProof(proof.challenge, _bump(proof.response)), context=CTX
    )
    assert not verify_dleq(g, a, h, b + g, proof, context=CTX)  # different second point
    assert not verify_dleq(g, a, h, _bump(x) * h, proof, context=CTX)  # unequal logs
    assert not verify_dleq(g, a, h + g, b, proof, context=CTX)  # different base
    assert not verify_dleq(g, a, h, b, proof, context=b"replayed elsewhere")


def test_dleq_cannot_prove_unequal_logs() -> None:
    # an honest prover for x cannot make a proof for (x*G, y*H) with y != x
    x, y = random_scalar(), random_scalar()
    h = mul_base(random_scalar())
    g = base_point()
    proof = prove_dleq(x, g, h, context=CTX)
    assert not verify_dleq(g, x * g, h, y * h, proof, context=CTX)


def test_published_key_must_match_commitment() -> None:
    secrets = PlayerSecrets.generate(5)
    keys = secrets.public_keys(context=CTX)
    reveal = secrets.reveal(3)
    assert key_matches(reveal.key, keys.cards[3])
    check_key(reveal.key, keys.cards[3])
    # the key of another position, another player's key, a random key: all rejected
    assert not key_matches(secrets.card_keys[2], keys.cards[3])
    assert not key_matches(random_scalar(), keys.cards[3])
    assert not key_matches(Scalar.from_int(0), keys.cards[3])
    with pytest.raises(VerificationError):
        check_key(_bump(reveal.key), keys.cards[3])


def test_public_keys_check() -> None:
    ctx = proof_context("g1", 0, "alice")
    secrets = PlayerSecrets.generate(6)
    keys = secrets.public_keys(context=ctx)
    keys.check(context=ctx, deck_size=6)
    restored = PublicKeys.from_json(json.loads(json.dumps(keys.to_json())))
    assert restored == keys
    assert restored.verify(context=ctx, deck_size=6)
    # wrong deck size; proofs bound to alice do not verify for bob (no copying keys)
    assert not keys.verify(context=ctx, deck_size=54)
    assert not keys.verify(context=proof_context("g1", 0, "bob"))
    assert not keys.verify(context=proof_context("g1", 1, "alice"))
    # a commitment swapped for another point (whose secret is not proven) is rejected
    forged_cards = (mul_base(random_scalar()), *keys.cards[1:])
    forged = PublicKeys(keys.shuffle, forged_cards, keys.shuffle_proof, keys.card_proofs)
    assert not forged.verify(context=ctx)
    # a rogue shuffle key (e.g. minus another player's key) has no valid proof
    rogue = PublicKeys(-keys.shuffle, keys.cards, keys.shuffle_proof, keys.card_proofs)
    with pytest.raises(VerificationError):
        rogue.check(context=ctx)
    with pytest.raises(EncodingError):
        PublicKeys.from_json({"shuffle": keys.shuffle.hex()})


def test_secrets_repr_hides_keys() -> None:
    secrets = PlayerSecrets.generate(3)
    text = repr(secrets)
    assert secrets.shuffle_key.hex() not in text
    assert all(k.hex() not in text for k in secrets.card_keys)
