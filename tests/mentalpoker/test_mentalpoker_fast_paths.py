"""The fast paths: raw libsodium calls, the first shuffler's fixed-base products, proofs that
reuse the products a step computes anyway, and the Terelius-Wikström shuffle argument.

Each fast path gives exactly what the slow path gives (same randomness, same bytes), and a
tampered step is still refused.
"""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import cardroom_mentalpoker.argument as mp_argument
import cardroom_mentalpoker.keys as mp_keys
import cardroom_mentalpoker.proofs as mp_proofs
import cardroom_mentalpoker.protocol as mp_protocol
import cardroom_mentalpoker.shuffle as mp_shuffle
import pytest
from cardroom_mentalpoker import (
    MACAUA_CARDS,
    EncodingError,
    MaskedCard,
    MaskStepProof,
    MentalPokerError,
    PlayerSecrets,
    Point,
    PublicKeys,
    Scalar,
    ShuffleStepProof,
    VerificationError,
    add_key,
    base_point,
    check_mask_step,
    check_shuffle_step,
    decode_card,
    identity,
    mask_step,
    mul_base,
    open_deck,
    partial_unmask,
    proof_context,
    prove_dleq,
    prove_dlog,
    prove_shuffle,
    random_permutation,
    random_scalar,
    reencrypt_shuffle,
    remask,
    shuffle_step,
    swap_key,
    verify_shuffle,
    verify_shuffle_step,
)
from cardroom_mentalpoker.argument import (
    ShuffleArgument,
    argument_generators,
    prove_shuffle_argument,
    verify_shuffle_argument,
)
from cardroom_mentalpoker.group import _scalarmult
from cardroom_mentalpoker.masking import Deck
from cardroom_mentalpoker.shuffle import ShuffleProof
from nacl import bindings

ROUNDS = 6
CTX = proof_context("g-fast", 0, "p0")


# -- deterministic randomness, shared by the library and the slow references ---------------


class Draws:
    """One seeded source for every random scalar and permutation of a test."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def scalar(self, token_bytes: Any = None) -> Scalar:
        while True:
            s = Scalar.reduce(self.rng.randbytes(64))
            if not s.is_zero:
                return s

    def permutation(self, n: int, randbelow: Any = None) -> tuple[int, ...]:
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.rng.randrange(i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return tuple(perm)


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``seeded(seed)`` points every module's randomness at a fresh ``Draws(seed)``."""

    def reset(seed: int) -> Draws:
        draws = Draws(seed)
        for module in (mp_protocol, mp_shuffle, mp_proofs, mp_keys, mp_argument):
            if hasattr(module, "random_scalar"):
                monkeypatch.setattr(module, "random_scalar", draws.scalar)
        for module in (mp_protocol, mp_shuffle):
            monkeypatch.setattr(module, "random_permutation", draws.permutation)
        return draws

    return reset


def _ctx(context: bytes, tag: str, position: int | None = None) -> bytes:
    return context + (f"|{tag}" if position is None else f"|{tag}|{position}").encode()


# -- the slow paths, as the library computed them before (public primitives only) ----------


def slow_shuffle_step(
    deck: Deck, secrets: PlayerSecrets, draws: Draws, *, context: bytes, rounds: int
) -> tuple[Deck, ShuffleStepProof]:
    k = secrets.shuffle_key
    g = base_point()
    keyed = tuple(add_key(card, k) for card in deck)
    key_proofs = tuple(
        prove_dleq(k, g, card.epk, context=_ctx(context, "add-key", i))
        for i, card in enumerate(deck)
    )
    perm = draws.permutation(len(deck))
    nonces = tuple(draws.scalar() for _ in deck)
    out = reencrypt_shuffle(keyed, perm, nonces)
    proof = prove_shuffle(keyed, out, perm, nonces, context=_ctx(context, "shuffle"), rounds=rounds)
    return out, ShuffleStepProof(tuple(c.msg for c in keyed), key_proofs, proof)


def slow_mask_step(
    deck: Deck, secrets: PlayerSecrets, draws: Draws, *, context: bytes
) -> tuple[Deck, MaskStepProof]:
    g = base_point()
    k = secrets.shuffle_key
    out, swapped, swap_proofs, remask_proofs = [], [], [], []
    for i, card in enumerate(deck):
        c = secrets.card_keys[i]
        mid = swap_key(card, k, c)
        r = draws.scalar()
        out.append(remask(mid, r))
        swapped.append(mid.msg)
        swap_proofs.append(prove_dleq(c - k, g, card.epk, context=_ctx(context, "swap", i)))
        remask_proofs.append(prove_dleq(r, g, mid.pk, context=_ctx(context, "remask", i)))
    return tuple(out), MaskStepProof(tuple(swapped), tuple(swap_proofs), tuple(remask_proofs))


def slow_public_keys(secrets: PlayerSecrets, *, context: bytes) -> PublicKeys:
    return PublicKeys(
        shuffle=mul_base(secrets.shuffle_key),
        cards=tuple(mul_base(c) for c in secrets.card_keys),
        shuffle_proof=prove_dlog(secrets.shuffle_key, context=context + b"|shuffle-key"),
        card_proofs=tuple(
            prove_dlog(c, context=context + b"|card-key|" + str(i).encode())
            for i, c in enumerate(secrets.card_keys)
        ),
    )


# -- group: the raw calls give libsodium's answers through nacl.bindings --------------------


def test_raw_calls_equal_the_bindings() -> None:
    for _ in range(20):
        s, t = random_scalar(), random_scalar()
        p = mul_base(random_scalar())
        q = random_scalar() * MaskedCard.open(open_deck(["7H"])[0].msg).msg
        assert (s * p).value == bindings.crypto_scalarmult_ed25519_noclamp(s.value, p.value)
        assert mul_base(s).value == bindings.crypto_scalarmult_ed25519_base_noclamp(s.value)
        assert (p + q).value == bindings.crypto_core_ed25519_add(p.value, q.value)
        assert (p - q).value == bindings.crypto_core_ed25519_sub(p.value, q.value)
        assert (-p).value == bindings.crypto_core_ed25519_sub(identity().value, p.value)
        assert (s + t).value == bindings.crypto_core_ed25519_scalar_add(s.value, t.value)
        assert (s - t).value == bindings.crypto_core_ed25519_scalar_sub(s.value, t.value)
        assert (s * t).value == bindings.crypto_core_ed25519_scalar_mul(s.value, t.value)
        assert (-s).value == bindings.crypto_core_ed25519_scalar_negate(s.value)
        assert s.invert().value == bindings.crypto_core_ed25519_scalar_invert(s.value)
        wide = random.randbytes(64)
        assert Scalar.reduce(wide).value == bindings.crypto_core_ed25519_scalar_reduce(wide)


def test_identity_shortcuts_equal_libsodium() -> None:
    o = identity()
    p = mul_base(random_scalar())
    assert p + o == p
    assert o + p == p
    assert p - o == p
    assert (o + p).value == bindings.crypto_core_ed25519_add(o.value, p.value)
    assert (p - o).value == bindings.crypto_core_ed25519_sub(p.value, o.value)
    assert o - p == -p
    assert o + o == o
    assert random_scalar() * o == o
    assert Scalar.from_int(0) * p == o
    assert p + (-p) == o


def test_raw_calls_refuse_bad_points() -> None:
    small_order = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
    with pytest.raises(EncodingError):
        Point(small_order)
    with pytest.raises(MentalPokerError):
        _scalarmult(random_scalar().value, small_order)
    with pytest.raises(MentalPokerError):
        Scalar.from_int(0).invert()


# -- the first shuffler's fixed-base products ------------------------------------------------


def test_reencrypt_with_known_key_equals_the_slow_path() -> None:
    k = random_scalar()
    keyed = tuple(add_key(c, k) for c in open_deck(MACAUA_CARDS[:10]))
    perm = random_permutation(10)
    nonces = tuple(random_scalar() for _ in keyed)
    assert reencrypt_shuffle(keyed, perm, nonces, pk_secret=k) == reencrypt_shuffle(
        keyed, perm, nonces
    )
    with pytest.raises(MentalPokerError, match="pk_secret"):
        reencrypt_shuffle(keyed, perm, nonces, pk_secret=k + Scalar.from_int(1))
    mixed = (*keyed[:-1], add_key(keyed[-1], random_scalar()))
    with pytest.raises(MentalPokerError, match="common key"):
        reencrypt_shuffle(mixed, perm, nonces, pk_secret=k)


def test_prove_shuffle_with_known_key_equals_the_slow_path(seeded: Any) -> None:
    k = random_scalar()
    keyed = tuple(add_key(c, k) for c in open_deck(MACAUA_CARDS[:9]))
    perm = random_permutation(9)
    nonces = tuple(random_scalar() for _ in keyed)
    out = reencrypt_shuffle(keyed, perm, nonces)
    seeded(7)
    fast = prove_shuffle(keyed, out, perm, nonces, context=CTX, rounds=ROUNDS, pk_secret=k)
    seeded(7)
    slow = prove_shuffle(keyed, out, perm, nonces, context=CTX, rounds=ROUNDS)
    assert fast == slow
    assert verify_shuffle(keyed, out, fast, context=CTX, min_rounds=ROUNDS)


@pytest.mark.parametrize("size", [1, 5, 12])
def test_shuffle_step_equals_the_slow_path(seeded: Any, size: int) -> None:
    """First shuffler (open deck: the fixed-base path) and second (the general path)."""
    alice, bob = PlayerSecrets.generate(size), PlayerSecrets.generate(size)
    deck = open_deck(MACAUA_CARDS[:size])
    for secrets, seed in ((alice, 1), (bob, 2)):
        seeded(seed)
        fast = shuffle_step(deck, secrets, context=CTX, rounds=ROUNDS)
        draws = seeded(seed)
        slow = slow_shuffle_step(deck, secrets, draws, context=CTX, rounds=ROUNDS)
        assert fast == slow
        assert json.dumps(fast[1].to_json()) == json.dumps(slow[1].to_json())
        keys = secrets.public_keys(context=CTX)
        check_shuffle_step(deck, fast[0], keys, fast[1], context=CTX, min_rounds=ROUNDS)
        deck = fast[0]


def test_mask_step_equals_the_slow_path(seeded: Any) -> None:
    size = 8
    alice = PlayerSecrets.generate(size)
    deck, _ = shuffle_step(open_deck(MACAUA_CARDS[:size]), alice, context=CTX, rounds=0)
    seeded(3)
    fast = mask_step(deck, alice, context=CTX)
    draws = seeded(3)
    slow = slow_mask_step(deck, alice, draws, context=CTX)
    assert fast == slow
    check_mask_step(deck, fast[0], alice.public_keys(context=CTX), fast[1], context=CTX)


def test_public_keys_equal_the_slow_path(seeded: Any) -> None:
    secrets = PlayerSecrets.generate(6)
    seeded(4)
    fast = secrets.public_keys(context=CTX)
    seeded(4)
    assert fast == slow_public_keys(secrets, context=CTX)
    fast.check(context=CTX, deck_size=6)


def test_first_shuffle_fast_path_still_refuses_tampering() -> None:
    size = 8
    alice = PlayerSecrets.generate(size)
    ka = alice.public_keys(context=CTX)
    deck = open_deck(MACAUA_CARDS[:size])
    new, proof = shuffle_step(deck, alice, context=CTX, rounds=ROUNDS)
    assert verify_shuffle_step(deck, new, ka, proof, context=CTX, min_rounds=ROUNDS)
    # two output cards swapped, a card substituted, a nonce of an opening bumped
    assert not verify_shuffle_step(
        deck, (new[1], new[0], *new[2:]), ka, proof, context=CTX, min_rounds=ROUNDS
    )
    pk = new[0].pk
    r = random_scalar()
    forged = (MaskedCard(mul_base(r), open_deck(["AS"])[0].msg + r * pk, pk), *new[1:])
    with pytest.raises(VerificationError, match="shuffle proof"):
        check_shuffle_step(deck, forged, ka, proof, context=CTX, min_rounds=ROUNDS)
    assert isinstance(proof.shuffle, ShuffleProof)
    first = proof.shuffle.openings[0]
    bumped = replace(first, nonces=(first.nonces[0] + Scalar.from_int(1), *first.nonces[1:]))
    tampered = replace(
        proof, shuffle=replace(proof.shuffle, openings=(bumped, *proof.shuffle.openings[1:]))
    )
    assert not verify_shuffle_step(deck, new, ka, tampered, context=CTX, min_rounds=ROUNDS)


# -- the shuffle argument ---------------------------------------------------------------------


def _keyed_deck(size: int, *, masked: bool) -> Deck:
    """Cards under one key: straight from the open deck (epk = O), or re-randomised."""
    k = random_scalar()
    deck = tuple(add_key(c, k) for c in open_deck(MACAUA_CARDS[:size]))
    return tuple(remask(c) for c in deck) if masked else deck


def _shuffled(deck: Deck) -> tuple[Deck, tuple[int, ...], tuple[Scalar, ...]]:
    perm = random_permutation(len(deck))
    nonces = tuple(random_scalar() for _ in deck)
    return reencrypt_shuffle(deck, perm, nonces), perm, nonces


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("size", [1, 2, 7, 54])
def test_argument_verifies_and_round_trips(size: int, masked: bool) -> None:
    deck = _keyed_deck(size, masked=masked)
    out, perm, nonces = _shuffled(deck)
    arg = prove_shuffle_argument(deck, out, perm, nonces, context=CTX)
    assert verify_shuffle_argument(deck, out, arg, context=CTX)
    data = json.loads(json.dumps(arg.to_json()))
    assert ShuffleArgument.from_json(data, size) == arg
    assert ShuffleArgument.from_json_unchecked(data) == arg
    assert not verify_shuffle_argument(deck, out, arg, context=CTX + b"x")


def test_argument_refuses_every_tampered_field() -> None:
    size = 6
    deck = _keyed_deck(size, masked=True)
    out, perm, nonces = _shuffled(deck)
    arg = prove_shuffle_argument(deck, out, perm, nonces, context=CTX)
    one = Scalar.from_int(1)
    p = mul_base(random_scalar())
    s1, s2, s3, s4 = arg.responses
    tampered = [
        replace(arg, commitments=(arg.commitments[0] + p, *arg.commitments[1:])),
        replace(arg, commitments=(arg.commitments[1], arg.commitments[0], *arg.commitments[2:])),
        replace(arg, chain=(*arg.chain[:-1], arg.chain[-1] + p)),
        replace(arg, chain=(arg.chain[0] + p, *arg.chain[1:])),
        replace(arg, challenge=arg.challenge + one),
        replace(arg, responses=(s1 + one, s2, s3, s4)),
        replace(arg, responses=(s1, s2 + one, s3, s4)),
        replace(arg, responses=(s1, s2, s3 + one, s4)),
        replace(arg, responses=(s1, s2, s3, s4 + one)),
        replace(arg, chain_responses=(arg.chain_responses[0] + one, *arg.chain_responses[1:])),
        replace(arg, perm_responses=(*arg.perm_responses[:-1], arg.perm_responses[-1] + one)),
        replace(arg, perm_responses=arg.perm_responses[:-1]),
    ]
    for bad in tampered:
        assert not verify_shuffle_argument(deck, out, bad, context=CTX)
    assert verify_shuffle_argument(deck, out, arg, context=CTX)


def test_argument_refuses_a_tampered_shuffle() -> None:
    size = 8
    deck = _keyed_deck(size, masked=True)
    out, perm, nonces = _shuffled(deck)
    arg = prove_shuffle_argument(deck, out, perm, nonces, context=CTX)
    pk = deck[0].pk
    # outputs swapped, one re-randomised again, one replaced by a card the shuffler chose
    assert not verify_shuffle_argument(deck, (out[1], out[0], *out[2:]), arg, context=CTX)
    assert not verify_shuffle_argument(deck, (remask(out[0]), *out[1:]), arg, context=CTX)
    r = random_scalar()
    chosen = MaskedCard(mul_base(r), open_deck(["AS"])[0].msg + r * pk, pk)
    assert not verify_shuffle_argument(deck, (chosen, *out[1:]), arg, context=CTX)
    # the other inputs, or the outputs of another shuffle of the same inputs
    assert not verify_shuffle_argument(_keyed_deck(size, masked=True), out, arg, context=CTX)
    other, _, _ = _shuffled(deck)
    assert not verify_shuffle_argument(deck, other, arg, context=CTX)


def test_argument_catches_substitution() -> None:
    """A shuffler who replaces the deck by fresh encryptions of an order he knows, proving
    with the honest prover (he has no witness for the real inputs)."""
    size = 8
    deck = _keyed_deck(size, masked=True)
    pk = deck[0].pk
    known = tuple(
        MaskedCard(mul_base(r := random_scalar()), c.msg + r * pk, pk)
        for c in open_deck(MACAUA_CARDS[:size])
    )
    perm = random_permutation(size)
    nonces = tuple(random_scalar() for _ in deck)
    arg = prove_shuffle_argument(deck, known, perm, nonces, context=CTX)
    assert not verify_shuffle_argument(deck, known, arg, context=CTX)
    # the substituted deck is a true shuffle of *some* deck, and provable for that one only
    fake_inputs = known
    fake_out, fake_perm, fake_nonces = _shuffled(fake_inputs)
    fake = prove_shuffle_argument(fake_inputs, fake_out, fake_perm, fake_nonces, context=CTX)
    assert verify_shuffle_argument(fake_inputs, fake_out, fake, context=CTX)
    assert not verify_shuffle_argument(deck, fake_out, fake, context=CTX)


@pytest.mark.parametrize("cheat", ["commit", "outputs"])
def test_argument_refuses_a_non_permutation(monkeypatch: pytest.MonkeyPatch, cheat: str) -> None:
    """The honest prover's code run with a mapping that is no permutation (a card dropped and
    another duplicated): committed as such, or committed as a permutation."""
    size = 6
    deck = _keyed_deck(size, masked=True)
    nonces = tuple(random_scalar() for _ in deck)
    source = (0, 0, 2, 3, 4, 5)  # output m is input source[m]: input 1 dropped, 0 twice
    out = tuple(
        MaskedCard(
            deck[j].epk + mul_base(nonces[j]), deck[j].msg + nonces[j] * deck[j].pk, deck[j].pk
        )
        for j in source
    )
    monkeypatch.setattr(mp_argument, "is_permutation", lambda perm, n: True)
    monkeypatch.setattr(mp_argument, "invert_permutation", lambda perm: source)
    perm = (1, 0, 2, 3, 4, 5) if cheat == "outputs" else (0, 0, 2, 3, 4, 5)
    arg = prove_shuffle_argument(deck, out, perm, nonces, context=CTX)
    monkeypatch.undo()
    assert not verify_shuffle_argument(deck, out, arg, context=CTX)


def test_argument_refuses_mismatched_sizes_and_keys() -> None:
    deck = _keyed_deck(5, masked=True)
    out, perm, nonces = _shuffled(deck)
    arg = prove_shuffle_argument(deck, out, perm, nonces, context=CTX)
    assert not verify_shuffle_argument(deck[:4], out[:4], arg, context=CTX)
    assert not verify_shuffle_argument(deck, out[:4], arg, context=CTX)
    assert not verify_shuffle_argument((), (), arg, context=CTX)
    other_pk = mul_base(random_scalar())
    moved = tuple(MaskedCard(c.epk, c.msg, other_pk) for c in out)
    assert not verify_shuffle_argument(deck, moved, arg, context=CTX)
    with pytest.raises(MentalPokerError):
        prove_shuffle_argument(deck, out, perm[:4], nonces, context=CTX)
    with pytest.raises(MentalPokerError):
        prove_shuffle_argument(deck, moved, perm, nonces, context=CTX)


def test_argument_json_is_strict() -> None:
    deck = _keyed_deck(3, masked=True)
    out, perm, nonces = _shuffled(deck)
    data = prove_shuffle_argument(deck, out, perm, nonces, context=CTX).to_json()
    for bad in (
        None,
        [],
        {**data, "extra": 1},
        {k: v for k, v in data.items() if k != "chain"},
        {**data, "chain": data["chain"][:2]},
        {**data, "responses": data["responses"][:3]},
        {**data, "challenge": "zz" * 32},
        {**data, "commitments": ["00" * 32, *data["commitments"][1:]]},
        {**data, "perm_responses": ["ff" * 32, *data["perm_responses"][1:]]},
    ):
        with pytest.raises(EncodingError):
            ShuffleArgument.from_json(bad, 3)


def test_argument_generators_are_fixed_and_distinct() -> None:
    gens = argument_generators(54)
    assert gens[:11] == argument_generators(10)
    assert len({g.value for g in gens}) == 55
    assert base_point() not in gens
    assert identity() not in gens
    with pytest.raises(MentalPokerError):
        argument_generators(0)


def test_steps_with_the_argument_deal_a_whole_deck() -> None:
    size = 54
    players = [PlayerSecrets.generate(size) for _ in range(3)]
    contexts = [proof_context("g-arg", 0, f"p{i}") for i in range(3)]
    keys = [s.public_keys(context=c) for s, c in zip(players, contexts, strict=True)]
    deck = open_deck()
    for s, k, c in zip(players, keys, contexts, strict=True):
        new, proof = shuffle_step(deck, s, context=c, argument=True)
        assert isinstance(proof.shuffle, ShuffleArgument)
        data = json.loads(json.dumps(proof.to_json()))
        assert set(data) == {"keyed", "key_proofs", "argument"}
        restored = ShuffleStepProof.from_json(data, size)
        # an argument meets any min_rounds (its soundness does not come from rounds)
        check_shuffle_step(deck, new, k, restored, context=c, min_rounds=256)
        with pytest.raises(VerificationError, match="shuffle argument"):
            check_shuffle_step(deck, (new[1], new[0], *new[2:]), k, restored, context=c)
        with pytest.raises(VerificationError):
            check_shuffle_step(deck, new, k, restored, context=contexts[0] + b"!")
        deck = new
    for s, k, c in zip(players, keys, contexts, strict=True):
        new, mproof = mask_step(deck, s, context=c)
        check_mask_step(deck, new, k, mproof, context=c)
        deck = new
    seen = []
    for i, card in enumerate(deck):
        for s in players:
            card = partial_unmask(card, s.card_keys[i])
        seen.append(decode_card(card.msg))
    assert sorted(seen, key=str) == sorted(MACAUA_CARDS, key=str)


def test_shuffle_step_proof_json_keeps_the_cut_and_choose_form() -> None:
    alice = PlayerSecrets.generate(4)
    deck = open_deck(MACAUA_CARDS[:4])
    _, proof = shuffle_step(deck, alice, context=CTX, rounds=2)
    data = proof.to_json()
    assert set(data) == {"keyed", "key_proofs", "shuffle"}
    assert ShuffleStepProof.from_json(data, 4) == proof
    with pytest.raises(EncodingError):
        ShuffleStepProof.from_json({**data, "argument": {}}, 4)


# -- off the event loop -------------------------------------------------------------------


def test_steps_run_in_a_thread_pool() -> None:
    """Every function is thread-safe (no shared buffers): steps made and checked in threads
    at once give valid results."""
    size = 20
    players = [PlayerSecrets.generate(size) for _ in range(4)]
    deck = open_deck(MACAUA_CARDS[:size])

    def one(secrets: PlayerSecrets) -> bool:
        keys = secrets.public_keys(context=CTX)
        new, proof = shuffle_step(deck, secrets, context=CTX, argument=True)
        check_shuffle_step(deck, new, keys, proof, context=CTX)
        masked, mproof = mask_step(new, secrets, context=CTX)
        check_mask_step(new, masked, keys, mproof, context=CTX)
        again, cproof = shuffle_step(new, secrets, context=CTX, rounds=2)
        return verify_shuffle_step(new, again, keys, cproof, context=CTX, min_rounds=2)

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(one, players * 2))
