"""A full simulated deal among 3 players, in pure Python, over signed JSON messages.

Each player holds its secrets; a relay-and-validate "server" sees only the public messages
and checks every move with public data; an observer replays the same public log. At the end
each player knows exactly its own hand (plus the open cards) and the observer knows only the
open cards.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from cardroom_mentalpoker import (
    GENESIS_HASH,
    MACAUA_CARDS,
    Deck,
    KeyReveal,
    MaskedCard,
    MaskStepProof,
    PlayerSecrets,
    PublicKeys,
    ShuffleStepProof,
    SignedMove,
    VerificationError,
    apply_reveals,
    check_mask_step,
    check_move,
    check_shuffle_step,
    deal_reveals,
    deck_from_json,
    deck_to_json,
    decode_card,
    mask_step,
    open_card,
    open_deck,
    partial_unmask,
    proof_context,
    revealed_card,
    shuffle_step,
    sign_move,
    standard_deal,
    state_hash,
    unmasked_point,
    verify_key_hex,
    verify_revealed_card,
)
from nacl.signing import SigningKey

GAME = "macaua-sim"
ROUNDS = 8
N = 54


@dataclass
class Player:
    name: str
    index: int
    signing: SigningKey = field(default_factory=SigningKey.generate)
    secrets: PlayerSecrets = field(default_factory=lambda: PlayerSecrets.generate(N))

    @property
    def context(self) -> bytes:
        return proof_context(GAME, 0, self.name)


@dataclass
class PublicState:
    """Everything derivable from the public log: what the server (and any observer) has."""

    signers: dict[str, str]
    keys: dict[str, PublicKeys] = field(default_factory=dict)
    deck: Deck = field(default_factory=open_deck)
    seq: int = 0
    reveals: list[tuple[str, KeyReveal]] = field(default_factory=list)

    def hash(self) -> str:
        if self.seq == 0:
            return GENESIS_HASH
        return state_hash(
            {
                "seq": self.seq,
                "deck": deck_to_json(self.deck),
                "keys": {name: k.to_json() for name, k in sorted(self.keys.items())},
            }
        )

    def apply(self, wire: str) -> None:
        """Validate one signed public message with public data only, then apply it."""
        signed = SignedMove.from_json(json.loads(wire))
        move: dict[str, Any] = signed.move
        name = move["player"]
        check_move(signed, self.signers[name], game_id=GAME, seq=self.seq, prev_hash=self.hash())
        ctx = proof_context(GAME, 0, name)
        kind = move["type"]
        if kind == "keys":
            keys = PublicKeys.from_json(move["keys"])
            keys.check(context=ctx, deck_size=N)
            self.keys[name] = keys
        elif kind == "shuffle":
            new = deck_from_json(move["deck"])
            proof = ShuffleStepProof.from_json(move["proof"], N)
            check_shuffle_step(
                self.deck, new, self.keys[name], proof, context=ctx, min_rounds=ROUNDS
            )
            self.deck = new
        elif kind == "mask":
            new = deck_from_json(move["deck"])
            mproof = MaskStepProof.from_json(move["proof"], N)
            check_mask_step(self.deck, new, self.keys[name], mproof, context=ctx)
            self.deck = new
        elif kind == "reveal":
            reveals = [KeyReveal.from_json(r) for r in move["reveals"]]
            self.deck = apply_reveals(self.deck, self.keys[name], reveals)
            self.reveals.extend((name, r) for r in reveals)
        else:
            raise AssertionError(kind)
        self.seq += 1


def _send(player: Player, state: PublicState, log: list[str], move: dict[str, Any]) -> None:
    signed = sign_move(
        player.signing, GAME, state.seq, state.hash(), {"player": player.name, **move}
    )
    wire = json.dumps(signed.to_json())
    state.apply(wire)  # the server validates before recording
    log.append(wire)


def test_three_player_deal_draw_and_play() -> None:
    players = [Player(f"p{i}", i) for i in range(3)]
    signers = {p.name: verify_key_hex(p.signing) for p in players}
    server = PublicState(signers)
    log: list[str] = []

    # 1. introductions, 2. shuffle, 3. mask: strictly round-robin
    for p in players:
        _send(
            p,
            server,
            log,
            {"type": "keys", "keys": p.secrets.public_keys(context=p.context).to_json()},
        )
    for p in players:
        deck, proof = shuffle_step(server.deck, p.secrets, context=p.context, rounds=ROUNDS)
        _send(
            p,
            server,
            log,
            {"type": "shuffle", "deck": deck_to_json(deck), "proof": proof.to_json()},
        )
    for p in players:
        deck, mproof = mask_step(server.deck, p.secrets, context=p.context)
        _send(
            p, server, log, {"type": "mask", "deck": deck_to_json(deck), "proof": mproof.to_json()}
        )

    # 4. deal: each player publishes its keys for the others' hands and the face-up card
    layout = standard_deal(3)
    for p in players:
        reveals = deal_reveals(p.secrets, p.index, layout)
        _send(p, server, log, {"type": "reveal", "reveals": [r.to_json() for r in reveals]})

    top = revealed_card(server.deck[layout.top])
    assert top in MACAUA_CARDS

    # each player opens its own hand privately
    hands = {
        p.name: [
            open_card(server.deck[pos], p.secrets.card_keys[pos]) for pos in layout.hands[p.index]
        ]
        for p in players
    }
    dealt = [c for h in hands.values() for c in h] + [top]
    assert len(set(dealt)) == 16
    assert set(dealt) <= set(MACAUA_CARDS)

    # 5. p1 draws the top of the fresh pile: p0 and p2 publish their key for that position
    drawn_pos = layout.fresh[0]
    for p in (players[0], players[2]):
        _send(
            p, server, log, {"type": "reveal", "reveals": [p.secrets.reveal(drawn_pos).to_json()]}
        )
    drawn = open_card(server.deck[drawn_pos], players[1].secrets.card_keys[drawn_pos])
    assert drawn not in dealt
    hands["p1"].append(drawn)

    # 6. p2 plays its first hand card: it publishes its own key, the card opens for everyone
    played_pos = layout.hands[2][0]
    _send(
        players[2],
        server,
        log,
        {"type": "reveal", "reveals": [players[2].secrets.reveal(played_pos).to_json()]},
    )
    assert verify_revealed_card(server.deck[played_pos], hands["p2"][0])

    open_positions = {layout.top, played_pos}
    hidden_of = {
        "p0": set(layout.hands[0]),
        "p1": set(layout.hands[1]) | {drawn_pos},
        "p2": set(layout.hands[2]) - {played_pos},
    }

    # each player learns exactly its own cards: with its own keys and every public key,
    # nothing opens outside its hand and the open cards
    for p in players:
        own = p.secrets
        for pos, card in enumerate(server.deck):
            if pos in open_positions:
                continue
            opened = (
                decode_card(unmasked_point(card, own.card_keys[pos])) if not card.is_open else None
            )
            if pos in hidden_of[p.name]:
                assert opened is not None
            else:
                assert opened is None, f"{p.name} can see position {pos}"

    # the observer replays the public log from scratch (as the server did) and sees nothing hidden
    observer = PublicState(signers)
    for wire in log:
        observer.apply(wire)
    assert observer.deck == server.deck
    published = [r.key for _, r in observer.reveals]
    for pos, card in enumerate(observer.deck):
        if pos in open_positions:
            assert card.is_open
            assert decode_card(card.msg) is not None
            continue
        assert not card.is_open
        assert decode_card(card.msg) is None
        # no published key, used at any position, opens a hidden card
        for key in published:
            assert decode_card(unmasked_point(card, key)) is None
    # the observer knows exactly the two open cards
    assert {revealed_card(observer.deck[pos]) for pos in open_positions} == {top, hands["p2"][0]}


def test_revealing_one_card_reveals_no_other() -> None:
    players = [PlayerSecrets.generate(N) for _ in range(3)]
    ctxs = [proof_context("iso", 0, f"p{i}") for i in range(3)]
    deck: Deck = open_deck()
    # shuffle and mask without proofs' cost: rounds=0 is allowed for the prover
    for s, c in zip(players, ctxs, strict=True):
        deck, _ = shuffle_step(deck, s, context=c, rounds=0)
    for s, c in zip(players, ctxs, strict=True):
        deck, _ = mask_step(deck, s, context=c)
    target = 20
    opened: MaskedCard = deck[target]
    for s in players:
        opened = partial_unmask(opened, s.card_keys[target])
    assert decode_card(opened.msg) is not None
    # the keys of position 20 do not open any other position, alone or together
    for pos, card in enumerate(deck):
        if pos == target:
            continue
        partly = card
        for s in players:
            partly = partial_unmask(partly, s.card_keys[target])
            assert decode_card(partly.msg) is None


def test_server_rejects_a_wrong_published_key() -> None:
    players = [Player(f"p{i}", i) for i in range(2)]
    server = PublicState({p.name: verify_key_hex(p.signing) for p in players})
    log: list[str] = []
    for p in players:
        _send(
            p,
            server,
            log,
            {"type": "keys", "keys": p.secrets.public_keys(context=p.context).to_json()},
        )
    bad = {"type": "reveal", "reveals": [KeyReveal(3, players[0].secrets.card_keys[4]).to_json()]}
    signed = sign_move(players[0].signing, GAME, server.seq, server.hash(), {"player": "p0", **bad})
    with pytest.raises(VerificationError, match="position 3"):
        server.apply(json.dumps(signed.to_json()))
    assert server.seq == 2  # nothing changed
    # a move signed by p1 but claiming to be p0's is rejected by the signature check
    forged = sign_move(
        players[1].signing,
        GAME,
        server.seq,
        server.hash(),
        {"player": "p0", "type": "reveal", "reveals": []},
    )
    with pytest.raises(VerificationError, match="signature"):
        server.apply(json.dumps(forged.to_json()))
