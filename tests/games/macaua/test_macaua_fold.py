"""Folding trusts what decide accepted: evolve parses accepted moves without checking them
again, so these pin down that decide still refuses every malformed group element, and that
the hash chain evolve computes is exactly the canonical one the players sign over."""

from __future__ import annotations

from typing import Any

import pytest
from cardroom_engine import Table
from cardroom_games.macaua import GAME, folds
from cardroom_games.macaua.bots import RandomMacauaBot
from cardroom_games.macaua.state import (
    DeckState,
    MacauaState,
    MaskedCards,
    commitment,
    genesis_hash,
    keys_on,
    without_commitments,
)
from cardroom_games.macaua.state import next_hash as _next_hash
from cardroom_mentalpoker import (
    GENESIS_HASH,
    GROUP_ORDER,
    CardKeys,
    state_hash,
)
from cardroom_wire import ErrorCode
from macaua_support import Harness

# an 8-torsion point (small order): a valid curve point, not in the prime-order subgroup
SMALL_ORDER = "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"
NOT_CANONICAL = (GROUP_ORDER + 1).to_bytes(32, "little").hex()  # a scalar >= the group order


def _forged(h: Harness, player: str, change: Any) -> dict[str, Any]:
    """The player's honest next move, changed by ``change`` (in place) and signed again."""
    move = h.bot_command(player)["move"]
    change(move)
    return h.bots[player].sign(h.gview(player), move)


@pytest.mark.parametrize(
    ("config", "kinds"),
    [
        # 64 rounds: every shuffle proof comes in several parts (the deal only: it is slow)
        (
            {"shuffle_proof": "rounds", "shuffle_rounds": 64},
            {"keys", "shuffle", "shuffle_proof", "mask", "reveal"},
        ),
        # (the keys are random, so is the deal: a game need not have a draw)
        ({}, {"keys", "shuffle", "mask", "reveal", "play", "audit"}),
    ],
)
def test_the_hash_chain_is_the_canonical_one(config: dict[str, Any], kinds: set[str]) -> None:
    h = Harness(2, config, seed=3)
    if config:
        h.to_play()
    else:
        h.finish()
    events = [s.event for s in h.local.steps]
    started = next(e for e in events if e["type"] == "macaua.started")
    state = h.game
    expected = genesis_hash(started["binding"], state.seats, state.config)
    assert expected != GENESIS_HASH
    seen = set()
    for event in events:
        if "signed" in event:
            signed = event["signed"]
            assert signed["prev_hash"] == expected  # what the player signed over
            seen.add(signed["move"]["kind"])
            expected = state_hash({"prev": expected, "move": signed})
    assert expected == state.hash == h.gview(None)["hash"]
    assert kinds <= seen


def test_an_unusual_envelope_is_hashed_the_canonical_way() -> None:
    signed = {"game_id": "g/1", "seq": 1, "prev_hash": "0" * 64, "move": {"kind": "draw"}}
    for signer in ("ab" * 32, 7, ["x"]):
        event = {**signed, "signer": signer, "signature": "cd" * 64}
        assert _next_hash("1" * 64, event) == state_hash({"prev": "1" * 64, "move": event})
    with pytest.raises(TypeError):  # as before: canonical JSON has no floats
        _next_hash("1" * 64, {**signed, "signer": 1.5, "signature": "cd" * 64})


def _point(path: str) -> Any:
    """A change that puts the small-order point at ``path`` (dotted keys and indexes)."""

    def change(move: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = move
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = SMALL_ORDER
        else:
            target[last] = SMALL_ORDER

    return change


@pytest.mark.parametrize("path", ["keys.shuffle", "keys.cards.3"])
def test_a_key_that_is_no_group_element_is_refused(path: str) -> None:
    h = Harness(2)
    assert h.game.phase == "keys"
    assert h.refused("p0", _forged(h, "p0", _point(path))) == ErrorCode.BAD_REQUEST


@pytest.mark.parametrize(
    ("proof", "path"),
    [
        ("argument", "cards.0.epk"),
        ("argument", "cards.5.msg"),
        ("argument", "cards.53.pk"),
        ("argument", "keyed.7"),
        ("argument", "argument.commitments.3"),
        ("argument", "argument.chain.53"),
        ("rounds", "cards.0.epk"),
        ("rounds", "keyed.7"),
    ],
)
def test_a_shuffle_with_a_point_outside_the_group_is_refused(proof: str, path: str) -> None:
    h = Harness(2, {"shuffle_proof": proof})
    h.run(lambda s: s.phase == "shuffle")
    player = h.game.waiting[0]
    assert h.refused(player, _forged(h, player, _point(path))) == ErrorCode.BAD_REQUEST


@pytest.mark.parametrize("field", ["challenge", "responses.2", "perm_responses.40"])
def test_an_argument_with_a_non_canonical_scalar_is_refused(field: str) -> None:
    h = Harness(2)
    h.run(lambda s: s.phase == "shuffle")

    def change(move: dict[str, Any]) -> None:
        name, *index = field.split(".")
        if index:
            move["argument"][name][int(index[0])] = NOT_CANONICAL
        else:
            move["argument"][name] = NOT_CANONICAL

    assert h.refused("p0", _forged(h, "p0", change)) == ErrorCode.BAD_REQUEST


def test_a_shuffle_opening_with_a_non_canonical_nonce_is_refused() -> None:
    h = Harness(2, {"shuffle_proof": "rounds"})
    h.run(lambda s: s.phase == "shuffle")

    def change(move: dict[str, Any]) -> None:
        move["openings"][0]["nonces"][0] = NOT_CANONICAL

    assert h.refused("p0", _forged(h, "p0", change)) == ErrorCode.BAD_REQUEST


def test_a_proof_part_with_a_non_canonical_nonce_is_refused() -> None:
    h = Harness(2, {"shuffle_proof": "rounds", "shuffle_rounds": 64})
    h.run(lambda s: s.phase == "shuffle")
    h.send("p0", h.bot_command("p0"))
    assert h.game.pending is not None

    def change(move: dict[str, Any]) -> None:
        assert move["kind"] == "shuffle_proof"
        move["openings"][-1]["nonces"][-1] = NOT_CANONICAL

    assert h.refused("p0", _forged(h, "p0", change)) == ErrorCode.BAD_REQUEST


@pytest.mark.parametrize("path", ["cards.0.msg", "cards.20.epk", "proof.swapped.9"])
def test_a_mask_with_a_point_outside_the_group_is_refused(path: str) -> None:
    h = Harness(2)
    h.run(lambda s: s.phase == "mask")
    player = h.game.waiting[0]
    assert h.refused(player, _forged(h, player, _point(path))) == ErrorCode.BAD_REQUEST


def test_a_stored_log_folds_to_the_same_state() -> None:
    h = Harness(3, seed=5)
    h.finish()
    events = [s.event for s in h.local.steps]
    again = h.table.replay(events)
    for player in [*h.seats, None]:
        assert h.table.view(again, player) == h.view(player)
    assert GAME.outcome(again.game) == GAME.outcome(h.game)


def test_a_table_keeps_no_proofs_and_maskings_as_seat_bits() -> None:
    """What a table holds of a masked deck: the commitments of the keys still on its cards
    without their proofs (checked by decide, kept in the log), 32 bytes each in one bytes
    object, and the positions' maskings as one byte each, a bit per seat whose key is on
    the card; the proofs held were most of a Macaua table's memory."""
    h = Harness(2, {}, seed=5)
    h.to_play()
    # the same from the log alone, as a gamemaster loads a table
    loaded = Table(GAME).replay([s.event for s in h.local.steps]).game
    assert loaded == h.game
    for state in (h.game, loaded):
        for deck in state.decks:
            assert not deck.keys  # (the players' CardKeys: until the deck is masked)
            on = sum(bin(m).count("1") for m in deck.masking)
            assert len(deck.commitments) == 32 * on
            assert type(deck.masking) is bytes
            assert len(deck.masking) == len(deck.cards)
            assert set(deck.masking) <= set(range(4))  # two seats: bits 1 and 2
        # a dealt card carries its owner's key alone (the others published theirs)
        for player in state.seats:
            for d, i in state.hands[player]:
                assert keys_on(state, state.decks[d].masking[i]) == [player]


def test_a_deck_every_position_of_which_is_open_keeps_only_its_size() -> None:
    """Once every card of a deck is open (a reshuffled deck played out), nothing is checked
    against its commitments or opened again: the table keeps only its size (the deck found
    whole as the last card opened), and the audit at the end still passes. The keys are
    random, so is the deal: games are played until one plays a deck out and ends audited
    (about half of them do)."""

    def played_out(s: MacauaState) -> list[DeckState]:
        return [d for d in s.decks[:-1] if d.settled]

    for seed in range(30):
        h = Harness(2, {}, seed=seed, bot=RandomMacauaBot)
        h.run(lambda s: bool(played_out(s)), limit=1_000_000)
        old = played_out(h.game)
        if not old:
            continue
        assert all(not (d.cards or d.keys or d.masked or d.masking) for d in old)
        assert all(d is folds._settled(d.settled) for d in old)  # one per size, shared
        assert all(d.commitments for d in h.game.decks if any(d.masking))
        h.finish()
        if h.game.audit is not None:
            assert h.game.audit["ok"], h.game.audit
            assert h.game.result == "won"
            return
    pytest.fail("no game in 30 played a deck out and ended audited")


def test_a_key_no_longer_on_a_card_is_refused_where_its_commitment_is_gone() -> None:
    """A table drops a player's commitments for a deck once its key is on none of the
    deck's cards. A move that still publishes a key for such a position (here an audit
    naming every position of a played-out deck) is refused with a clear code and changes
    nothing; it used to fail looking up the dropped commitment."""

    def played_out(s: MacauaState) -> list[int]:
        return [d for d, deck in enumerate(s.decks[:-1]) if deck.settled]

    for seed in range(30):
        h = Harness(2, {}, seed=seed, bot=RandomMacauaBot)
        h.run(lambda s: bool(played_out(s)) and s.phase == "audit", limit=1_000_000)
        if h.game.phase != "audit" or not played_out(h.game):
            continue
        player = h.game.waiting[0]
        honest = h.bot_command(player)["move"]
        old = played_out(h.game)[0]
        stale = [{"deck": old, "position": i, "key": "01" + "00" * 31} for i in range(3)]
        forged = h.bots[player].sign(h.gview(player), {**honest, "keys": stale})
        assert h.refused(player, forged) == ErrorCode.BAD_REQUEST
        for deck in h.game.decks:  # no commitment kept for a key off its card
            assert len(deck.commitments) == 32 * sum(bin(m).count("1") for m in deck.masking)
        h.send(player, h.bot_command(player))  # its honest audit is still taken
        return
    pytest.fail("no game in 30 reached its audit with a deck played out")


def test_tables_of_one_config_share_its_parsed_object() -> None:
    """Equal immutable configs are one object across tables (a parsed config costs a table
    about 1.5 KiB); a different config is its own."""
    one, two = Harness(2, {}, seed=1), Harness(2, {}, seed=2)
    other = Harness(2, {"hand_size": 4}, seed=3)
    assert one.game.config == two.game.config
    assert one.game.config is two.game.config
    assert other.game.config is not one.game.config
    assert other.game.config.hand_size == 4


def test_a_settled_state_keeps_the_digest_not_the_move() -> None:
    """A replayed state computes the hash chain's last digest when first read, and until
    then its link keeps the last signed move (tens of KB after a shuffle proof).
    ``Table.settle`` (a gamemaster's load) computes it: the same state, the move let go."""
    h = Harness(2, {}, seed=5)
    h.to_play()
    events = [s.event for s in h.local.steps]
    table = Table(GAME)
    lazy = table.replay(events)
    settled = table.replay(events)
    assert lazy.game.chain._source is not None  # the last move, kept until the digest is read
    table.settle(settled)
    assert settled.game.chain._source is None
    assert settled == lazy
    assert settled.game.hash == lazy.game.hash == h.game.hash


def test_a_settled_state_packs_the_cards_of_a_step_kept_as_json() -> None:
    """The cards of a shuffle or mask step stay the move's JSON until the next step replaces
    them; ``Table.settle`` packs them (the same cards, a quarter of the memory)."""

    def deferred(s: MacauaState) -> bool:
        masked = s.decks[-1].masked if s.decks else ()
        return isinstance(masked, MaskedCards) and masked.is_deferred

    h = Harness(3, {}, seed=7)
    h.run(deferred, limit=1_000)
    assert deferred(h.game)
    events = [s.event for s in h.local.steps]
    table = Table(GAME)
    lazy, settled = table.replay(events), table.replay(events)
    table.settle(settled)
    assert deferred(lazy.game)
    assert not deferred(settled.game)
    packed = settled.game.decks[-1].masked
    assert isinstance(packed, MaskedCards)
    assert len(packed._data) == 96 * len(packed)  # every card's three points, nothing more
    assert settled == lazy
    assert list(settled.game.decks[-1].masked) == list(h.game.decks[-1].masked)


def test_commitments_are_kept_only_where_their_key_is_on_a_card() -> None:
    """A table keeps the commitments of a masked deck's keys that are still on a card, and
    no other: every commitment a later key can be checked against is there, unchanged, at
    every state of a whole game, and nothing else is."""
    h = Harness(3, {}, seed=11)
    h.finish()
    events = [s.event for s in h.local.steps]
    table = Table(GAME)
    committed: dict[tuple[int, str], Any] = {}  # (deck, player) -> the accepted commitments
    state = table.evolve(None, events[0])
    checked = 0
    for event in events[1:]:
        state = table.evolve(state, event)
        game = state.game
        if game is None:
            continue
        if event["type"] == "macaua.keys":
            committed[len(game.decks) - 1, event["player"]] = CardKeys.from_json_unchecked(
                event["signed"]["move"]["keys"]
            ).cards
        for d, deck in enumerate(game.decks):
            if not deck.masking:
                continue
            kept = []
            for i, masking in enumerate(deck.masking):
                for seat in range(len(game.seats)):
                    if masking >> seat & 1:
                        point = commitment(deck, seat, i)
                        assert point == committed[d, game.seats[seat]][i]
                        kept.append(point.value)
                        checked += 1
                    else:
                        with pytest.raises(KeyError):
                            commitment(deck, seat, i)
            assert deck.commitments == b"".join(kept)
    assert checked > 1_000


def test_commitments_of_keys_that_left_their_cards_are_let_go() -> None:
    """``without_commitments``: the points of the keys that left a card go, from any
    position and seat; the others stay where ``commitment`` finds them."""
    n, seats = 5, 3
    points = {(i, s): bytes([i * seats + s + 1]) * 32 for i in range(n) for s in range(seats)}
    masking = bytes([0b111, 0b101, 0b010, 0b111, 0b000])
    deck = DeckState(
        ("AS",) * n,
        (),
        masking=masking,
        commitments=b"".join(
            points[i, s] for i in range(n) for s in range(seats) if masking[i] >> s & 1
        ),
    )
    assert [commitment(deck, s, 3).value for s in range(3)] == [points[3, s] for s in range(3)]
    gone = {0: 0b010, 1: 0b101, 3: 0b100, 2: 0b001}  # (seat 0 was never on position 2)
    after = bytes(m & ~gone.get(i, 0) for i, m in enumerate(masking))
    smaller = deck._replace(masking=after, commitments=without_commitments(deck, gone))
    for i in range(n):
        for s in range(seats):
            if after[i] >> s & 1:
                assert commitment(smaller, s, i).value == points[i, s]
    assert len(smaller.commitments) == 32 * sum(bin(m).count("1") for m in after)
