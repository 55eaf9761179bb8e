"""The page's mental poker (web/src/macaua, run by node) against this library, both ways.

What the page makes (keys with their proofs, a shuffle with its argument, a mask, card keys,
a signed move, a signed transition, canonical JSON and its hash) verifies here, and what this
library makes verifies in the page; a tampered copy of each is refused on both sides.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from cardroom_mentalpoker import (
    GENESIS_HASH,
    MACAUA_CARDS,
    MaskStepProof,
    PlayerSecrets,
    PublicKeys,
    Scalar,
    ShuffleStepProof,
    SignatureError,
    SignedMove,
    VerificationError,
    canonical_json,
    check_mask_step,
    check_move,
    check_shuffle_step,
    check_transition,
    deck_from_json,
    deck_to_json,
    key_matches,
    mask_step,
    open_card,
    open_deck,
    partial_unmask,
    proof_context,
    revealed_card,
    shuffle_step,
    sign_move,
    sign_transition,
    state_hash,
    verify_key_hex,
)
from nacl.signing import SigningKey
from support.macaua_js import MacauaJs

BINDING = "g7/0123456789abcdef0123456789abcdef"
# what canonical JSON must agree on: key order by code point (an astral character after
# U+FFFF, which UTF-16 order would put before it), escapes, text left unescaped, integers
TRICKY: dict[str, Any] = {
    "z": [1, -7, True, None, 'é\u2028\n"\\\x01\x7f', "\U0001d11e"],
    "\uffff": 1,
    "\U0001d11e": 2,
    "a": {"b": 2**52, "é": "x", "": []},
}


@pytest.fixture(scope="module")
def js() -> Iterator[MacauaJs]:
    with MacauaJs() as node:
        yield node


def test_what_the_page_makes_verifies_here(js: MacauaJs) -> None:
    made = js("make", binding=BINDING, player="p1", value=TRICKY)
    ctx = proof_context(BINDING, 0, "p1")
    keys = PublicKeys.from_json(made["keys"]["keys"])
    keys.check(context=ctx, deck_size=54)
    assert not keys.verify(context=proof_context(BINDING, 1, "p1"), deck_size=54)
    assert made["keys"]["verify_key"] == made["verify_key"]

    shuffled = deck_from_json(made["shuffle"]["cards"])
    fields = {k: made["shuffle"][k] for k in ("keyed", "key_proofs", "argument")}
    proof = ShuffleStepProof.from_json(fields, 54)
    check_shuffle_step(open_deck(), shuffled, keys, proof, context=ctx)
    swapped = (shuffled[1], shuffled[0], *shuffled[2:])
    with pytest.raises(VerificationError):
        check_shuffle_step(open_deck(), swapped, keys, proof, context=ctx)

    masked = deck_from_json(made["mask"]["cards"])
    mask_proof = MaskStepProof.from_json(made["mask"]["proof"], 54)
    check_mask_step(shuffled, masked, keys, mask_proof, context=ctx)
    twin = (*masked[:5], masked[6], *masked[6:])
    with pytest.raises(VerificationError):
        check_mask_step(shuffled, twin, keys, mask_proof, context=ctx)

    # every card key the page publishes matches its commitment and opens its card as the
    # page opened it privately; the shuffle moved the cards
    opened = []
    for item in made["reveal"]["keys"]:
        key = Scalar.from_hex(item["key"])
        assert key_matches(key, keys.cards[item["position"]])
        opened.append(revealed_card(partial_unmask(masked[item["position"]], key)))
    assert opened == made["opened"]
    assert sorted(map(str, opened)) == sorted(MACAUA_CARDS)
    assert opened != list(MACAUA_CARDS)

    signed = SignedMove.from_json({k: v for k, v in made["signed"].items() if k != "type"})
    check_move(signed, made["verify_key"], game_id=BINDING, seq=1, prev_hash=GENESIS_HASH)
    forged = SignedMove.from_json({**signed.to_json(), "move": {**signed.move, "deck": 1}})
    with pytest.raises(SignatureError):
        check_move(forged, made["verify_key"])
    signature, transition = made["transition_signature"], made["transition"]
    check_transition(signature, made["verify_key"], BINDING, 3, transition)
    with pytest.raises(SignatureError):
        check_transition(signature, made["verify_key"], BINDING, 4, transition)

    assert made["canonical"].encode("utf-8") == canonical_json(TRICKY)
    assert made["hash"] == state_hash(TRICKY)


def test_what_this_library_makes_verifies_in_the_page(js: MacauaJs) -> None:
    ctx = proof_context(BINDING, 0, "p1")
    secrets = PlayerSecrets.generate(54)
    keys = secrets.public_keys(context=ctx)
    shuffled, shuffle_proof = shuffle_step(open_deck(), secrets, context=ctx, argument=True)
    masked, mask_proof = mask_step(shuffled, secrets, context=ctx)
    seat = SigningKey.generate()
    signed = sign_move(seat, BINDING, 1, GENESIS_HASH, {"kind": "keys", "deck": 0, "suit": None})
    transition = {"type": "macaua.keys", "player": "p1", "signed": signed.to_json(), "n": [TRICKY]}
    verdict = js(
        "check",
        binding=BINDING,
        player="p1",
        verify_key=verify_key_hex(seat),
        keys={"keys": keys.to_json()},
        shuffle={"cards": deck_to_json(shuffled), **shuffle_proof.to_json()},
        mask={"cards": deck_to_json(masked), "proof": mask_proof.to_json()},
        card_keys=[k.hex() for k in secrets.card_keys],
        signed=signed.to_json(),
        transition=transition,
        transition_signature=sign_transition(seat, BINDING, 3, transition),
    )
    opened = [open_card(card, key) for card, key in zip(masked, secrets.card_keys, strict=True)]
    assert verdict == {
        "keys": True,
        "keys_other_context": False,
        "shuffle": True,
        "shuffle_swapped": False,
        "mask": True,
        "mask_tampered": False,
        "reveal_keys_match": True,
        "opened": opened,
        "move": True,
        "move_tampered": False,
        "transition": True,
        "transition_other_version": False,
    }
