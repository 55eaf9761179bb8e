"""Signed moves over the canonical encoding; state hashes."""

from __future__ import annotations

import hashlib
import json
from types import MappingProxyType

import pytest
from cardroom_mentalpoker import (
    GENESIS_HASH,
    SignatureError,
    SignedMove,
    canonical_json,
    check_move,
    mul_base,
    random_scalar,
    sign_move,
    state_hash,
    verify_key_hex,
    verify_move,
)
from nacl.signing import SigningKey

MOVE = {"type": "reveal", "position": 42, "key": bytes(range(32))}


def test_canonical_json() -> None:
    assert canonical_json({"b": 1, "a": [True, None, "é"], "c": b"\x01\xff"}) == (
        '{"a":[true,null,"é"],"b":1,"c":"01ff"}'.encode()
    )
    p = mul_base(random_scalar())
    assert canonical_json({"p": p}) == canonical_json({"p": p.hex()})
    assert canonical_json((1, 2)) == b"[1,2]"
    with pytest.raises(TypeError):
        canonical_json({"x": 1.5})
    with pytest.raises(TypeError):
        canonical_json({1: "x"})
    with pytest.raises(TypeError):
        canonical_json({"x": object()})
    with pytest.raises(TypeError):
        canonical_json([[{"x": [1.5]}]])


def test_canonical_json_of_subclasses_and_other_mappings() -> None:
    """Exact built-in types take a fast way; their subclasses and other mappings encode the
    same by the general one."""

    class Name(str):
        pass

    class Count(int):
        pass

    class Table(dict[str, object]):
        pass

    class Cards(list[object]):
        pass

    plain = {"a": [1, "x", True, None], "b": {"c": [2]}}
    dressed = Table(a=Cards([Count(1), Name("x"), True, None]), b=MappingProxyType({"c": (2,)}))
    assert (
        canonical_json(dressed) == canonical_json(plain) == b'{"a":[1,"x",true,null],"b":{"c":[2]}}'
    )
    with pytest.raises(TypeError):
        canonical_json(MappingProxyType({1: "x"}))


def test_state_hash() -> None:
    state = {"seq": 3, "deck": ["aa", "bb"]}
    expected = hashlib.sha256(b'{"deck":["aa","bb"],"seq":3}').hexdigest()
    assert state_hash(state) == expected
    assert state_hash({"deck": ["aa", "bb"], "seq": 3}) == expected  # key order irrelevant
    assert state_hash({"seq": 4, "deck": ["aa", "bb"]}) != expected


def test_signed_move_verifies_and_resists_tampering() -> None:
    alice, bob = SigningKey.generate(), SigningKey.generate()
    prev = state_hash({"seq": 0})
    signed = sign_move(alice, "game-1", 1, prev, MOVE)
    assert signed.signer == verify_key_hex(alice)
    assert verify_move(signed, alice.verify_key)
    assert verify_move(signed, verify_key_hex(alice), game_id="game-1", seq=1, prev_hash=prev)
    check_move(signed, bytes(alice.verify_key))
    # survives a JSON round trip
    wire = json.loads(json.dumps(signed.to_json()))
    assert verify_move(SignedMove.from_json(wire), alice.verify_key)
    # altered move, sequence number, previous hash, game id, or another player's key: fail
    altered = {**signed.move, "position": 41}
    for forged in (
        SignedMove(
            signed.game_id, signed.seq, signed.prev_hash, altered, signed.signer, signed.signature
        ),
        SignedMove(
            signed.game_id, 2, signed.prev_hash, signed.move, signed.signer, signed.signature
        ),
        SignedMove(
            signed.game_id, signed.seq, GENESIS_HASH, signed.move, signed.signer, signed.signature
        ),
        SignedMove(
            "game-2", signed.seq, signed.prev_hash, signed.move, signed.signer, signed.signature
        ),
    ):
        assert not verify_move(forged, alice.verify_key)
    assert not verify_move(signed, bob.verify_key)
    # bob re-signing alice's move is still not alice's move
    assert not verify_move(sign_move(bob, "game-1", 1, prev, MOVE), alice.verify_key)
    # the server's expectations must match the envelope
    with pytest.raises(SignatureError, match="sequence"):
        check_move(signed, alice.verify_key, seq=2)
    with pytest.raises(SignatureError, match="previous state hash"):
        check_move(signed, alice.verify_key, prev_hash=GENESIS_HASH)
    with pytest.raises(SignatureError, match="game id"):
        check_move(signed, alice.verify_key, game_id="game-2")


def test_malformed_envelopes_raise_clear_errors() -> None:
    alice = SigningKey.generate()
    signed = sign_move(alice, "g", 0, GENESIS_HASH, {"x": 1})
    with pytest.raises(SignatureError, match="bad signature"):
        check_move(
            SignedMove("g", 0, GENESIS_HASH, {"x": 1}, signed.signer, "00" * 64), alice.verify_key
        )
    with pytest.raises(SignatureError, match="128"):
        check_move(
            SignedMove("g", 0, GENESIS_HASH, {"x": 1}, signed.signer, "zz"), alice.verify_key
        )
    with pytest.raises(SignatureError, match="verify key"):
        check_move(signed, "abc")
    with pytest.raises(SignatureError):
        sign_move(alice, "g", -1, GENESIS_HASH, {})
    with pytest.raises(SignatureError):
        sign_move(alice, "g", 0, "not-a-hash", {})
    assert not verify_move(
        SignedMove("g", 0, GENESIS_HASH, {"x": 1.5}, signed.signer, signed.signature),
        alice.verify_key,
    )
