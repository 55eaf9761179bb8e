"""Folding defers what it seldom reads: the hash chain's digest (computed when first read,
from the move's ``prev_hash``) and the masked cards a shuffle or mask step leaves (each
parsed when first read). These pin down that every deferred value equals the eager, checked
computation at every state of whole games, whatever order the values are read in, and that
a command the chain could not hash is refused in decide."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from cardroom_engine import Event, Rejection, Table, TableState
from cardroom_games.macaua import BAD_SIGNATURE, HeuristicBot, MacauaBot, RandomMacauaBot, folds
from cardroom_games.macaua.state import MaskedCards, genesis_hash
from cardroom_mentalpoker import (
    MaskedCard,
    add_key,
    card_point,
    deck_from_json,
    open_deck,
    random_scalar,
    remask,
    state_hash,
)
from macaua_support import SHORT_PILE_HANDS, Harness, rigged_game

Bot = Callable[[str], MacauaBot]


def _random_games() -> list[Any]:
    return [
        pytest.param(2, {"max_turns": 300}, 1, HeuristicBot, id="2-heuristic"),
        # a table stored before the argument: cut-and-choose proofs
        pytest.param(
            2, {"shuffle_proof": "rounds", "max_turns": 300}, 1, HeuristicBot, id="2-rounds"
        ),
        pytest.param(3, {"max_turns": 300}, 2, RandomMacauaBot, id="3-random"),
        pytest.param(4, {"max_turns": 200}, 4, [HeuristicBot, RandomMacauaBot], id="4-mixed"),
    ]


def _play(players: int, config: dict[str, Any], seed: int, bot: Bot | Sequence[Bot]) -> Harness:
    h = Harness(players, config, seed=seed, bot=bot)
    h.finish()
    return h


def _reshuffled() -> Harness:
    """Six players whose fresh pile runs out at once: decks 1, 2, ... are reshuffles."""
    hands = [list(hand) for hand in SHORT_PILE_HANDS]
    h = rigged_game(hands, "5S", config={"hand_size": 8, "max_turns": 40})
    h.play("p0", ["BJ", "RJ"])
    h.draw("p1")
    h.finish()
    assert len(h.game.decks) >= 2
    return h


def _chunked() -> Harness:
    """64-round shuffle proofs: each comes in several ``shuffle_proof`` parts (slow: deal only)."""
    h = Harness(2, {"shuffle_proof": "rounds", "shuffle_rounds": 64}, seed=3)
    h.to_play()
    return h


def _folded(h: Harness, *, read: bool = False) -> tuple[list[Event], list[TableState]]:
    """The game's log and a fresh fold of it: every state, none of it read yet (``read``:
    every deferred value read as soon as its event is folded, as evolve computed them)."""
    events = [step.event for step in h.local.steps]
    table = Table(h.table.game)
    states: list[TableState] = []
    state: TableState | None = None
    for event in events:
        state = table.evolve(state, event)
        if read and state.game is not None:
            assert state.game.hash
            for deck in state.game.decks:
                tuple(deck.masked)
        states.append(state)
    return events, states


def _check_views(h: Harness, states: list[TableState]) -> None:
    """Every view of every state of a fold that read nothing (cards still JSON) equals the
    view of a fold that read everything."""
    _, read = _folded(h, read=True)
    for fresh, known in zip(states, read, strict=True):
        for player in [*h.seats, None]:
            assert h.table.view(fresh, player) == h.table.view(known, player)


class EagerDecks:
    """Every deck's masked cards as evolve computed them before it deferred them: at each
    event, with the checked parsers (the slow path)."""

    def __init__(self) -> None:
        self.decks: list[list[MaskedCard]] = []
        self.pending: list[Any] | None = None  # [cards, openings so far, rounds]

    def apply(self, event: Event) -> None:
        kind = event["type"]
        move = event["signed"]["move"] if "signed" in event else {}
        if kind == "macaua.started":
            self.decks = [list(open_deck())]
        elif kind == "macaua.reshuffled":
            self.decks.append(list(open_deck(event["cards"])))
        elif kind == "macaua.shuffle" and "argument" in move:
            self.decks[-1] = list(deck_from_json(move["cards"]))
        elif kind == "macaua.shuffle":
            self.pending = [move["cards"], len(move["openings"]), move["rounds"]]
        elif kind == "macaua.shuffle_proof":
            assert self.pending is not None
            self.pending[1] += len(move["openings"])
        elif kind == "macaua.mask":
            self.decks[-1] = list(deck_from_json(move["cards"]))
        elif kind == "macaua.reveal":
            for d, i, card in event["opened"]:
                self.decks[d][i] = MaskedCard.from_json(card)
        elif kind == "macaua.played":
            for d, i, code, _key in event["cards"]:
                self.decks[d][i] = MaskedCard.open(card_point(code))
        if self.pending is not None and self.pending[1] >= self.pending[2]:
            self.decks[-1] = list(deck_from_json(self.pending[0]))
            self.pending = None

    def snapshot(self) -> list[tuple[MaskedCard, ...]]:
        return [tuple(deck) for deck in self.decks]


def _check_chain(events: list[Event], states: list[TableState]) -> int:
    expected: list[str | None] = []
    digest: str | None = None
    for event, state in zip(events, states, strict=True):
        if event["type"] == "macaua.started":
            digest = genesis_hash(event["binding"], state.seats, state.game.config)
        elif "signed" in event:
            # what the deferred digest relies on: decide accepted it over the previous one
            assert event["signed"]["prev_hash"] == digest
            digest = state_hash({"prev": digest, "move": event["signed"]})
        expected.append(digest)
    # last state first: no deferred digest needs another one read before it
    checked = 0
    for state, want in reversed(list(zip(states, expected, strict=True))):
        if want is not None:
            assert state.game.hash == want
            checked += 1
    return checked


def _check_cards(events: list[Event], states: list[TableState]) -> int:
    eager = EagerDecks()
    wanted = []
    for event in events:
        eager.apply(event)
        wanted.append(eager.snapshot())
    deferred = 0
    # last state first, the JSON of each card before the card itself
    for state, decks in reversed(list(zip(states, wanted, strict=True))):
        if state.game is None:
            continue
        assert len(state.game.decks) == len(decks)
        for deck, want in zip(state.game.decks, decks, strict=True):
            if deck.settled:  # played out: only its size is kept, found whole then
                assert all(card.is_open for card in want)
                assert len(want) == deck.settled == deck.size
                continue
            masked = deck.masked
            assert len(masked) == len(want)
            if isinstance(masked, MaskedCards):
                texts = [masked.json_at(i) for i in range(len(masked))]
                assert texts == [card.to_json() for card in want]
                assert all(list(text) == ["epk", "msg", "pk"] for text in texts)  # its order
                deferred += 1
            assert tuple(masked) == want
            assert masked == want
            assert want == masked
    return deferred


@pytest.mark.parametrize(("players", "config", "seed", "bot"), _random_games())
def test_deferred_values_are_the_eager_ones(
    players: int, config: dict[str, Any], seed: int, bot: Bot | Sequence[Bot]
) -> None:
    h = _play(players, config, seed, bot)
    assert h.local.outcome is not None
    _check_views(h, _folded(h)[1])
    events, states = _folded(h)
    assert _check_chain(events, states) > 0
    assert _check_cards(events, states) > 0
    assert states[-1] == h.local.state  # the live game read its values as it went


@pytest.mark.parametrize("make", [_reshuffled, _chunked], ids=["reshuffles", "proof-parts"])
def test_deferred_values_are_the_eager_ones_in_special_games(make: Callable[[], Harness]) -> None:
    h = make()
    _check_views(h, _folded(h)[1])
    events, states = _folded(h)
    assert _check_chain(events, states) > 0
    assert _check_cards(events, states) > 0
    kinds = {event["type"] for event in events}
    assert {"macaua.reshuffled"} <= kinds or {"macaua.shuffle_proof"} <= kinds


@pytest.mark.parametrize("signer", [1.5, "\ud800", 7, ["x"], None, "ab" * 32])
def test_a_move_the_chain_could_not_hash_is_refused_in_its_command(signer: object) -> None:
    """The envelope's signer is not signed, but it is stored and hashed into the chain: only
    the player's own verify key may stand there, so evolve's deferred digest never meets one
    it cannot encode, and nothing else is changed by the refusal."""
    h = Harness(2, seed=3)
    h.to_play()
    player = h.game.waiting[0]
    command = h.bots[player].sign(h.gview(player), {"kind": "draw"})
    before = h.local.state
    with pytest.raises(Rejection) as refused:
        h.table.decide(before, player, {**command, "signer": signer}, h.rng, gate_open=True)
    assert refused.value.code == BAD_SIGNATURE
    assert h.local.state is before
    h.send(player, command)  # the same move with its true signer is taken
    assert h.game.seq == before.game.seq + 1


@pytest.mark.parametrize("make", [MaskedCards, MaskedCards.from_json, MaskedCards.deferred])
def test_masked_cards_behave_as_the_tuple(make: Callable[[Any], MaskedCards]) -> None:
    """Packed (as bytes) or deferred (the move's JSON, parsed when read), and once a card of
    them is replaced."""
    cards = tuple(MaskedCard.open(card_point(c)) for c in ("AS", "2H", "BJ"))
    masked = tuple(remask(add_key(c, random_scalar())) for c in cards)
    # JSON as the store gives it back (jsonb orders keys its own way)
    texts = [{"pk": c.pk.hex(), "msg": c.msg.hex(), "epk": c.epk.hex()} for c in masked]
    lazy = make(texts)
    assert len(lazy) == 3
    assert lazy.json_at(0) == masked[0].to_json()
    assert list(lazy.json_at(0)) == ["epk", "msg", "pk"]
    assert lazy[-1] == masked[-1]
    assert lazy[1:] == masked[1:]
    assert list(lazy) == list(masked)
    assert lazy == masked
    assert masked == lazy
    assert lazy != masked[:2]
    assert hash(lazy) == hash(masked)
    other = MaskedCards.replacing(lazy, {1: cards[0]})
    assert tuple(other) == (masked[0], cards[0], masked[2])
    assert tuple(lazy) == masked  # the original is untouched
    assert tuple(MaskedCards.replacing(masked, {0: texts[2]})) == (masked[2], *masked[1:])
    assert not other.is_deferred  # packed now
    # an open card shared by every deck is kept as its index, any other card as its bytes
    shared = folds._OPEN["2H"]
    mixed = MaskedCards.replacing(other, {2: shared})
    assert mixed[2] is shared
    assert tuple(mixed) == (masked[0], cards[0], shared)
    assert mixed.json_at(1) == cards[0].to_json()
    assert mixed[-1] is shared
    with pytest.raises(IndexError):
        mixed[3]
