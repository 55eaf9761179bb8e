"""Fisher-Yates on the CSPRNG, the cut-and-choose shuffle proof, the shuffle and mask steps."""

from __future__ import annotations

import json
import secrets
from collections import Counter

import pytest
from cardroom_mentalpoker import (
    MACAUA_CARDS,
    MaskedCard,
    MaskStepProof,
    PlayerSecrets,
    ShuffleProof,
    ShuffleStepProof,
    VerificationError,
    add_key,
    apply_permutation,
    check_mask_step,
    check_shuffle_step,
    decode_card,
    invert_permutation,
    is_permutation,
    mask_step,
    mul_base,
    open_deck,
    partial_unmask,
    proof_context,
    prove_shuffle,
    random_permutation,
    random_scalar,
    reencrypt_shuffle,
    remask,
    shuffle_step,
    verify_mask_step,
    verify_shuffle,
    verify_shuffle_step,
)
from cardroom_mentalpoker.masking import Deck

ROUNDS = 12
CTX = proof_context("g-shuffle", 0, "p0")


def test_random_permutation_is_a_permutation() -> None:
    for n in (1, 2, 5, 54):
        perm = random_permutation(n)
        assert is_permutation(perm, n)
        assert apply_permutation(list(range(n)), invert_permutation(perm)) == perm


def test_random_permutation_uses_the_csprng(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def fake(bound: int) -> int:
        calls.append(bound)
        return 0

    monkeypatch.setattr(secrets, "randbelow", fake)
    perm = random_permutation(6)
    # Fisher-Yates: one draw per position from the top, bounds n, n-1, ..., 2
    assert calls == [6, 5, 4, 3, 2]
    # always swapping with index 0 gives this exact permutation
    assert perm == (1, 2, 3, 4, 5, 0)


def test_random_permutation_is_uniform_enough() -> None:
    counts = Counter(random_permutation(3) for _ in range(6000))
    assert len(counts) == 6
    assert all(800 < c < 1200 for c in counts.values())


def _masked_deck(n: int) -> tuple[Deck, MaskedCard]:
    k = random_scalar()
    deck = tuple(remask(add_key(c, k)) for c in open_deck(MACAUA_CARDS[:n]))
    return deck, deck[0]


def test_shuffle_proof_round_trip() -> None:
    deck, _ = _masked_deck(10)
    perm = random_permutation(10)
    nonces = tuple(random_scalar() for _ in deck)
    out = reencrypt_shuffle(deck, perm, nonces)
    proof = prove_shuffle(deck, out, perm, nonces, context=CTX, rounds=ROUNDS)
    assert verify_shuffle(deck, out, proof, context=CTX, min_rounds=ROUNDS)
    restored = ShuffleProof.from_json(json.loads(json.dumps(proof.to_json())), 10)
    assert verify_shuffle(deck, out, restored, context=CTX, min_rounds=ROUNDS)
    # the same proof under another context, with too few rounds, or on another output
    assert not verify_shuffle(deck, out, proof, context=b"other", min_rounds=ROUNDS)
    assert not verify_shuffle(deck, out, proof, context=CTX, min_rounds=ROUNDS + 1)
    other = reencrypt_shuffle(deck, perm, tuple(random_scalar() for _ in deck))
    assert not verify_shuffle(deck, other, proof, context=CTX, min_rounds=ROUNDS)


def test_shuffle_proof_rejects_tampered_opening() -> None:
    deck, _ = _masked_deck(6)
    perm = random_permutation(6)
    nonces = tuple(random_scalar() for _ in deck)
    out = reencrypt_shuffle(deck, perm, nonces)
    proof = prove_shuffle(deck, out, perm, nonces, context=CTX, rounds=ROUNDS)
    first = proof.openings[0]
    bumped = type(first)(first.permutation, (first.nonces[0] + first.nonces[1], *first.nonces[1:]))
    tampered = ShuffleProof(proof.digest, (bumped, *proof.openings[1:]))
    assert not verify_shuffle(deck, out, tampered, context=CTX, min_rounds=ROUNDS)
    flipped = ShuffleProof(bytes([proof.digest[0] ^ 1]) + proof.digest[1:], proof.openings)
    assert not verify_shuffle(deck, out, flipped, context=CTX, min_rounds=ROUNDS)


def test_shuffle_proof_catches_substitution() -> None:
    """A shuffler who replaces the deck by fresh encryptions of an order he knows
    (possible for anyone: the joint key is public) cannot prove it."""
    deck, _ = _masked_deck(8)
    pk = deck[0].pk
    known = tuple(
        MaskedCard(mul_base(r := random_scalar()), p.msg + r * pk, pk)
        for p in open_deck(MACAUA_CARDS[:8])
    )
    perm = random_permutation(8)
    nonces = tuple(random_scalar() for _ in deck)
    proof = prove_shuffle(deck, known, perm, nonces, context=CTX, rounds=ROUNDS)
    assert not verify_shuffle(deck, known, proof, context=CTX, min_rounds=ROUNDS)


def _players(n: int, size: int) -> tuple[list[PlayerSecrets], list[bytes]]:
    secrets_ = [PlayerSecrets.generate(size) for _ in range(n)]
    contexts = [proof_context("g-steps", 0, f"p{i}") for i in range(n)]
    return secrets_, contexts


def test_shuffle_and_mask_steps_verify_and_keep_the_cards() -> None:
    size = 12
    players, contexts = _players(2, size)
    keys = [s.public_keys(context=c) for s, c in zip(players, contexts, strict=True)]
    deck = open_deck(MACAUA_CARDS[:size])
    for s, k, c in zip(players, keys, contexts, strict=True):
        new, proof = shuffle_step(deck, s, context=c, rounds=ROUNDS)
        restored = ShuffleStepProof.from_json(json.loads(json.dumps(proof.to_json())), size)
        check_shuffle_step(deck, new, k, restored, context=c, min_rounds=ROUNDS)
        deck = new
    for s, k, c in zip(players, keys, contexts, strict=True):
        new, mproof = mask_step(deck, s, context=c)
        restored_m = MaskStepProof.from_json(json.loads(json.dumps(mproof.to_json())), size)
        check_mask_step(deck, new, k, restored_m, context=c)
        deck = new
    # every position is now locked by one key per player and the deck is a permutation
    seen = []
    for i, card in enumerate(deck):
        for s in players:
            card = partial_unmask(card, s.card_keys[i])
        seen.append(decode_card(card.msg))
    assert sorted(seen, key=str) == sorted(MACAUA_CARDS[:size], key=str)


def test_shuffle_step_rejects_cheats() -> None:
    size = 8
    (alice, bob), (ca, cb) = _players(2, size)
    ka, kb = alice.public_keys(context=ca), bob.public_keys(context=cb)
    deck = open_deck(MACAUA_CARDS[:size])
    new, proof = shuffle_step(deck, alice, context=ca, rounds=ROUNDS)
    assert verify_shuffle_step(deck, new, ka, proof, context=ca, min_rounds=ROUNDS)
    # checked against bob's keys, or bob's context: rejected
    assert not verify_shuffle_step(deck, new, kb, proof, context=ca, min_rounds=ROUNDS)
    assert not verify_shuffle_step(deck, new, ka, proof, context=cb, min_rounds=ROUNDS)
    # one card replaced by another encryption of a card alice picked
    pk = new[0].pk
    r = random_scalar()
    forged = (MaskedCard(mul_base(r), open_deck(["AS"])[0].msg + r * pk, pk), *new[1:])
    with pytest.raises(VerificationError, match="shuffle proof"):
        check_shuffle_step(deck, forged, ka, proof, context=ca, min_rounds=ROUNDS)
    # The basic checks alone (same key on every card, every card changed; a proof of 0 rounds)
    # do not see that substitution: this is why the verifier demands min_rounds
    keyed = [MaskedCard(c.epk, m, pk) for c, m in zip(deck, proof.keyed, strict=True)]
    perm, nonces = random_permutation(size), [random_scalar() for _ in range(size)]
    empty = prove_shuffle(keyed, forged, perm, nonces, context=ca + b"|shuffle", rounds=0)
    bare = ShuffleStepProof(proof.keyed, proof.key_proofs, empty)
    assert verify_shuffle_step(deck, forged, ka, bare, context=ca, min_rounds=0)
    assert not verify_shuffle_step(deck, forged, ka, bare, context=ca, min_rounds=ROUNDS)
    # a keyed msg that is not msg + k*epk (second shuffler, epk != O)
    deck2, proof2 = shuffle_step(new, bob, context=cb, rounds=ROUNDS)
    assert verify_shuffle_step(new, deck2, kb, proof2, context=cb, min_rounds=ROUNDS)
    wrong_keyed = (proof2.keyed[1], *proof2.keyed[1:])
    bad = ShuffleStepProof(wrong_keyed, proof2.key_proofs, proof2.shuffle)
    with pytest.raises(VerificationError, match="committed key"):
        check_shuffle_step(new, deck2, kb, bad, context=cb, min_rounds=ROUNDS)


def test_mask_step_rejects_cheats() -> None:
    size = 6
    (alice,), (ca,) = _players(1, size)
    ka = alice.public_keys(context=ca)
    deck, _ = shuffle_step(open_deck(MACAUA_CARDS[:size]), alice, context=ca, rounds=ROUNDS)
    new, proof = mask_step(deck, alice, context=ca)
    assert verify_mask_step(deck, new, ka, proof, context=ca)
    # a card replaced by a re-randomised copy of its neighbour (same pk shape fails)
    swapped_cards = (new[1], new[0], *new[2:])
    assert not verify_mask_step(deck, swapped_cards, ka, proof, context=ca)
    # msg shifted by a point: the swap or re-randomisation proof fails
    g = mul_base(random_scalar())
    shifted = (MaskedCard(new[0].epk, new[0].msg + g, new[0].pk), *new[1:])
    with pytest.raises(VerificationError, match="card 0"):
        check_mask_step(deck, shifted, ka, proof, context=ca)
    # another player's keys
    (mallory,), (cm,) = _players(1, size)
    km = mallory.public_keys(context=cm)
    assert not verify_mask_step(deck, new, km, proof, context=ca)
