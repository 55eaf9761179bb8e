"""Tampering: every forged, replayed or cheating move is refused with a stable code and
changes nothing (``Harness.refused`` checks the state and the log stay as they were); a
shuffle that is no permutation is refused by its proof (the argument of a new table, or the
cut-and-choose proof of a table stored before it), or, with the proof switched off, found by
the audit at the end and reported in the outcome."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cardroom_games.macaua import (
    BAD_KEY,
    BAD_PROOF,
    BAD_SIGNATURE,
    CARD_MISMATCH,
    NOT_YOUR_CARD,
    REPLAYED_MOVE,
    STALE_STATE,
    WRONG_GAME,
)
from cardroom_mentalpoker import (
    MACAUA_CARDS,
    MaskedCard,
    Scalar,
    add_key,
    card_point,
    deck_from_json,
    deck_to_json,
    identity,
    prove_shuffle,
    prove_shuffle_argument,
    random_scalar,
    remask,
    shuffle_step,
    sign_move,
)
from cardroom_wire import ErrorCode
from macaua_support import Harness, rigged_game, shuffle_move
from nacl.signing import SigningKey

HANDS = [["2S", "3S", "BJ", "KH", "AD"], ["2H", "3H", "RJ", "5C", "6C"]]


def _resign(h: Harness, command: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    signed = sign_move(
        key, command["game_id"], command["seq"], command["prev_hash"], command["move"]
    )
    return {"type": "move", **signed.to_json()}


def test_a_forged_signature_is_refused() -> None:
    h = rigged_game(HANDS, "7S")
    honest = h.play_command("p0", ["2S"])
    # signed by somebody else's key (p1's, or a fresh one) in p0's name
    assert h.refused("p0", _resign(h, honest, h.bots["p1"].signing_key)) == BAD_SIGNATURE
    assert h.refused("p0", _resign(h, honest, SigningKey.generate())) == BAD_SIGNATURE
    # a bit flipped in the signature; the move changed after signing
    sig = honest["signature"]
    flipped = {**honest, "signature": ("0" if sig[0] != "0" else "1") + sig[1:]}
    assert h.refused("p0", flipped) == BAD_SIGNATURE
    assert h.refused("p0", {**honest, "move": {**honest["move"], "suit": "H"}}) == BAD_SIGNATURE
    # p1 sending p0's perfectly signed move is not p0's move: not p1's turn
    assert h.refused("p1", honest) == ErrorCode.NOT_YOUR_TURN
    h.send("p0", honest)  # the genuine article still works
    assert h.game.challenge == 2


def test_a_replayed_move_is_refused() -> None:
    h = rigged_game(HANDS, "7S")
    first = h.play_command("p0", ["2S"])
    h.send("p0", first)
    h.to_play()
    assert h.refused("p0", first) == REPLAYED_MOVE
    # an old keys move from the very start
    keys = next(s.event for s in h.local.steps if s.event["type"] == "macaua.keys")
    replay = {"type": "move", **keys["signed"]}
    assert h.refused(keys["player"], replay) == REPLAYED_MOVE


def test_a_move_on_another_state_or_game_is_refused() -> None:
    h = rigged_game(HANDS, "7S")
    honest = h.play_command("p0", ["2S"])
    bot = h.bots["p0"]
    stale = bot.sign({**h.gview("p0"), "hash": "ab" * 32}, honest["move"])
    assert h.refused("p0", stale) == STALE_STATE
    other = bot.sign({**h.gview("p0"), "binding": "macaua-other"}, honest["move"])
    assert h.refused("p0", other) == WRONG_GAME
    ahead = bot.sign({**h.gview("p0"), "seq": h.game.seq + 5}, honest["move"])
    assert h.refused("p0", ahead) == "bad_sequence"


def test_a_secret_that_does_not_match_its_commitment_is_refused() -> None:
    h = Harness(2)
    h.run(lambda s: s.phase == "deal")
    player = h.game.waiting[0]
    honest = h.bot_command(player)
    move = honest["move"]
    bad_keys = [dict(k) for k in move["keys"]]
    bad_keys[0]["key"] = random_scalar().hex()
    forged = h.bots[player].sign(h.gview(player), {**move, "keys": bad_keys})
    assert h.refused(player, forged) == BAD_KEY
    # the key of another position of one's own does not match either
    swapped = [dict(k) for k in move["keys"]]
    swapped[0]["key"], swapped[1]["key"] = swapped[1]["key"], swapped[0]["key"]
    assert (
        h.refused(player, h.bots[player].sign(h.gview(player), {**move, "keys": swapped}))
        == BAD_KEY
    )
    h.send(player, honest)
    # and when playing a card
    h.to_play()
    bot = h.bots["p0"]
    v = h.gview("p0")
    pos, card = bot.open_hand(v)[0]
    wrong = {
        "kind": "play",
        "cards": [{"deck": pos[0], "position": pos[1], "card": card, "key": random_scalar().hex()}],
        "suit": None,
    }
    assert h.refused("p0", bot.sign(v, wrong)) == BAD_KEY


def test_playing_a_card_one_does_not_own_is_refused() -> None:
    h = rigged_game(HANDS, "7S")
    bot = h.bots["p0"]
    v = h.gview("p0")
    theirs = h.game.hands["p1"][0]  # a position in p1's hand; p0 publishes its own key for it
    for card in ("3H", "2H", "RJ", "5C", "6C"):
        move = {"kind": "play", "cards": [{**bot.key_item(*theirs), "card": card}], "suit": None}
        assert h.refused("p0", bot.sign(v, move)) == NOT_YOUR_CARD
    fresh = (h.game.deck_no, h.game.fresh[0])  # an undealt card
    move = {"kind": "play", "cards": [{**bot.key_item(*fresh), "card": "7H"}], "suit": None}
    assert h.refused("p0", bot.sign(v, move)) == NOT_YOUR_CARD
    # one's own card, claimed to be another (a legal one that p0 does not hold)
    mine = h.position_of("p0", "KH")
    move = {"kind": "play", "cards": [{**bot.key_item(*mine), "card": "9S"}], "suit": None}
    assert h.refused("p0", bot.sign(v, move)) == CARD_MISMATCH


ROUNDS = {"shuffle_proof": "rounds"}
"""A table stored before the argument: its shuffles carry cut-and-choose proofs."""


def _substituted(h: Harness, player: str) -> tuple[Any, Any, Any]:
    """The keyed input deck, the honest step's proof, and a deck of fresh encryptions of a
    chosen order with the Ace of Spades twice and no King of Spades."""
    bot = h.bots[player]
    v = h.gview(player)
    deck = deck_from_json(v["cards"])
    secrets = bot.secrets[0]
    _, honest = shuffle_step(deck, secrets, context=bot.context(v, 0), rounds=0)
    keyed = tuple(add_key(c, secrets.shuffle_key) for c in deck)
    order = ["AS" if c == "KS" else c for c in MACAUA_CARDS]
    out = tuple(remask(MaskedCard(identity(), card_point(c), keyed[0].pk)) for c in order)
    return keyed, honest, out


def _cheating_argument(h: Harness, player: str) -> dict[str, Any]:
    """The substituted deck with honest keying proofs and the argument the honest prover's
    code makes for it (claiming the identity permutation and zero nonces): it cannot verify."""
    bot = h.bots[player]
    v = h.gview(player)
    keyed, honest, out = _substituted(h, player)
    zero = Scalar.from_int(0)
    argument = prove_shuffle_argument(
        keyed,
        out,
        tuple(range(len(out))),
        (zero,) * len(out),
        context=bot.context(v, 0) + b"|shuffle-argument",
    )
    move = shuffle_move(deck_to_json(out), honest, argument=argument.to_json())
    return bot.sign(v, move)


def _cheating_shuffle(h: Harness, player: str, claimed_rounds: int) -> dict[str, Any]:
    """The substituted deck with honest keying proofs and a cut-and-choose proof of 0 rounds
    claiming ``claimed_rounds``: the shuffle proof cannot be honest."""
    bot = h.bots[player]
    v = h.gview(player)
    deck = deck_from_json(v["cards"])
    secrets = bot.secrets[0]
    context = bot.context(v, 0)
    _, honest = shuffle_step(deck, secrets, context=context, rounds=0)
    keyed = tuple(add_key(c, secrets.shuffle_key) for c in deck)
    pk = keyed[0].pk
    order = ["AS" if c == "KS" else c for c in MACAUA_CARDS]
    out = tuple(remask(MaskedCard(identity(), card_point(c), pk)) for c in order)
    proof = prove_shuffle(
        keyed, out, tuple(range(len(out))), (), context=context + b"|shuffle", rounds=0
    )
    move = shuffle_move(
        deck_to_json(out), honest, digest=proof.digest.hex(), rounds=claimed_rounds, openings=[]
    )
    return bot.sign(v, move)


def test_a_substituted_deck_is_refused_by_the_argument() -> None:
    h = Harness(2)
    h.run(lambda s: s.phase == "shuffle")
    assert h.refused("p0", _cheating_argument(h, "p0")) == BAD_PROOF
    h.send("p0", h.bot_command("p0"))  # the honest shuffle is accepted, in one command
    assert h.game.pending is None
    assert h.game.waiting == ("p1",)
    assert h.refused("p1", _cheating_argument(h, "p1")) == BAD_PROOF


def _tamper_argument(field: str) -> Any:
    def change(move: dict[str, Any]) -> None:
        argument = move["argument"]
        if field == "swap":  # two output cards swapped: the argument is about the old order
            move["cards"][3], move["cards"][40] = move["cards"][40], move["cards"][3]
        elif field == "challenge":
            argument["challenge"] = random_scalar().hex()
        elif field == "commitments":  # two commitments swapped
            c = argument["commitments"]
            c[0], c[1] = c[1], c[0]
        else:
            argument[field][3] = random_scalar().hex()

    return change


@pytest.mark.parametrize(
    "field",
    ["swap", "challenge", "commitments", "responses", "chain_responses", "perm_responses"],
)
def test_a_tampered_argument_is_refused(field: str) -> None:
    h = Harness(2)
    h.run(lambda s: s.phase == "shuffle")
    command = h.bot_command("p0")
    move = json.loads(json.dumps(command["move"]))  # a copy: the honest one is sent below
    assert "argument" in move
    assert "digest" not in move
    _tamper_argument(field)(move)
    assert h.refused("p0", h.bots["p0"].sign(h.gview("p0"), move)) == BAD_PROOF
    h.send("p0", command)
    assert h.game.waiting == ("p1",)


def test_an_argument_from_another_player_or_deck_is_refused() -> None:
    h = Harness(3)
    h.run(lambda s: s.phase == "shuffle")
    honest = h.bot_command("p0")
    # p1's bot proves the same step under its own context: the argument names p1
    bot = h.bots["p1"]
    bot.secrets[0] = h.bots["p0"].secrets[0]
    move = bot.build(h.gview("p1"), [{"kind": "shuffle", "deck": 0, "proof": "argument"}], h.rng)
    keying = {k: honest["move"][k] for k in ("keyed", "key_proofs")}  # p0's: they verify
    assert move["keyed"] == keying["keyed"]
    forged = h.bots["p0"].sign(h.gview("p0"), {**move, **keying})
    assert h.refused("p0", forged) == BAD_PROOF


def test_a_shuffle_must_carry_the_proof_its_table_asks_for() -> None:
    argued = Harness(2)
    argued.run(lambda s: s.phase == "shuffle")
    assert argued.table.actions(argued.local.state, "p0")[0]["proof"] == "argument"
    rounds = _cheating_shuffle(argued, "p0", 2)
    assert argued.refused("p0", rounds) == ErrorCode.BAD_REQUEST  # digest: no such field here
    cut = Harness(2, ROUNDS)
    cut.run(lambda s: s.phase == "shuffle")
    assert argued.table.actions(cut.local.state, "p0")[0]["rounds"] == 2
    assert cut.refused("p0", _cheating_argument(cut, "p0")) == ErrorCode.BAD_REQUEST
    # a shuffle without its argument is malformed, not a failed proof
    v = argued.gview("p0")
    move = dict(argued.bot_command("p0")["move"])
    del move["argument"]
    assert argued.refused("p0", argued.bots["p0"].sign(v, move)) == ErrorCode.BAD_REQUEST


def test_a_substituted_deck_is_refused_by_the_cut_and_choose_proof() -> None:
    h = Harness(2, {**ROUNDS, "shuffle_rounds": 2})
    h.run(lambda s: s.phase == "shuffle")
    assert h.refused("p0", _cheating_shuffle(h, "p0", 0)) == BAD_PROOF  # too few rounds
    # claims 2 rounds: its first part is accepted, but the proof can never verify
    cheat = _cheating_shuffle(h, "p0", 2)
    honest = h.bot_command("p0")
    openings = honest["move"]["openings"]
    assert len(openings) == 2
    forged = h.bots["p0"].sign(h.gview("p0"), {**cheat["move"], "openings": openings})
    assert h.refused("p0", forged) == BAD_PROOF


@pytest.mark.parametrize("players", [2, 3])
def test_a_shuffle_that_is_no_permutation_is_reported_at_the_end(players: int) -> None:
    h = Harness(players, {**ROUNDS, "shuffle_rounds": 0}, seed=11)
    h.run(lambda s: s.phase == "shuffle")
    h.send("p0", _cheating_shuffle(h, "p0", 0))  # nothing on the way can tell
    h.finish()
    outcome = h.local.outcome
    assert outcome is not None
    audit = outcome.details["audit"]
    assert audit["ok"] is False
    assert audit["decks"][0]["missing"] == ["KS"]
    assert audit["decks"][0]["extra"] == ["AS"]
    assert outcome.details["result"] == "void"
    assert outcome.ranking == [sorted(h.seats)]  # a void game ranks nobody


def test_the_house_cannot_move_for_a_player() -> None:
    h = Harness(2)
    h.run(lambda s: s.phase == "shuffle")
    state = h.local.state
    assert h.table.house_move(state, h.game.waiting[0], h.rng) == []
    assert h.local.state is state


def test_a_proof_in_parts_counts_only_when_its_last_part_verifies() -> None:
    # 64 rounds, the default of the stored tables: too big for one command
    h = Harness(2, {**ROUNDS, "shuffle_rounds": 64})
    h.run(lambda s: s.phase == "shuffle")
    first = h.bot_command("p0")
    assert len(first["move"]["openings"]) < 64
    h.send("p0", first)
    assert h.game.pending is not None
    assert h.table.actions(h.local.state, "p0")[0]["kind"] == "shuffle_proof"
    while True:
        part = h.bot_command("p0")
        done = part["move"]["offset"] + len(part["move"]["openings"]) == 64
        if done:
            break
        h.send("p0", part)
    # the last part with one nonce changed: the whole proof fails, nothing changes
    openings = [dict(o) for o in part["move"]["openings"]]
    openings[0]["nonces"] = [random_scalar().hex(), *openings[0]["nonces"][1:]]
    forged = h.bots["p0"].sign(h.gview("p0"), {**part["move"], "openings": openings})
    assert h.refused("p0", forged) == BAD_PROOF
    assert h.game.waiting[0] == "p0"
    h.send("p0", part)
    assert h.game.pending is None
    assert h.game.waiting == ("p1",)


def test_a_silent_player_is_timed_out_and_ranks_last() -> None:
    assert Harness(2).table.deadlines(Harness(2).local.state) == []  # no timeout by default
    h = Harness(3, {"move_timeout": 30})
    h.run(lambda s: s.phase == "mask")
    silent = h.game.waiting[0]
    (deadline,) = h.table.deadlines(h.local.state)
    assert deadline.seconds == 30
    assert h.table.fire(h.local.state, "game:move:0:nobody", h.rng) == []  # not a live key
    ((house, events),) = h.table.fire(h.local.state, deadline.key, h.rng)
    assert house is None
    h.local.apply(events)
    outcome = h.local.outcome
    assert outcome is not None
    assert outcome.details["result"] == "aborted"
    assert outcome.details["stalled"] == silent
    assert outcome.ranking[-1] == [silent]
