"""Macaua's folds: each event's change to the state (:func:`evolve` is the game's evolve).

Folding trusts what decide accepted: a fold parses an accepted move without checking it
again (its proofs were checked once, by decide), and keeps its cards as JSON until they
are read (:class:`~.state.MaskedCards`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, cast

from cardroom_engine import Event
from cardroom_engine.kit import Folds, interned, interned_as
from cardroom_mentalpoker import (
    MACAUA_CARDS,
    POINT_BYTES,
    CardKeys,
    MaskedCard,
    PackedPoints,
    Point,
    decode_card,
    open_deck,
)

from .cards import play_challenge, rank
from .state import (
    _NOTHING,
    ABORTED,
    AUDIT,
    AUDIT_WITHHELD,
    AUDITED,
    DRAW,
    DRAW_ASSIGNED,
    DRAW_ENDED,
    KEYS,
    MASK,
    OPEN_CARDS,
    PLAYED,
    REJECTED,
    RESHUFFLED,
    REVEAL,
    SHUFFLE,
    SHUFFLE_PROOF,
    STARTED,
    CardJson,
    DeckState,
    Lazy,
    MacauaState,
    MaskedCards,
    PendingShuffle,
    Phase,
    Pos,
    chained,
    deal_layout,
    genesis_hash,
    open_code,
    seat_bit,
    without_commitments,
)

FOLDS = Folds[MacauaState]("macaua")


class _Fold(Protocol):
    """A fold as :func:`evolve` calls it. ``head``: what evolve sets for a signed move
    (``seq``, ``chain``), in the same copy of the state as the event's own changes."""

    def __call__(self, state: MacauaState, event: Event, /, **head: Any) -> MacauaState: ...


def evolve(state: MacauaState, event: Event) -> MacauaState:
    """``FOLDS.evolve``, and for an event that carries a signed move its place in the hash
    chain: the fold sets it in its one copy of the state."""
    kind = event["type"]
    fold = cast("_Fold | None", FOLDS.get(kind))
    if fold is None:
        raise ValueError(f"unknown macaua event {kind!r}")
    if "signed" in event:
        return fold(state, event, seq=state.seq + 1, chain=Lazy(event["signed"], chained))
    return fold(state, event)


_OPEN: dict[str, MaskedCard] = dict(zip(MACAUA_CARDS, OPEN_CARDS, strict=True))
"""Every card face up, by its code (:data:`~.state.OPEN_CARDS`)."""
_CODE: dict[str, str] = {c: c for c in MACAUA_CARDS}
"""Each card's code as one string, whatever event it came in: a table's decks and discard
pile hold hundreds of codes, and a string each from the events' JSON adds up."""
_OPEN_DECK = open_deck()


@FOLDS.on(STARTED)
def on_started(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    binding = event["binding"]
    return state._replace(
        # (its own chain starts here)
        **{**head, "chain": Lazy.of(genesis_hash(binding, state.seats, state.config))},
        binding=binding,
        phase="keys",
        decks=(DeckState(MACAUA_CARDS, _OPEN_DECK),),
        waiting=state.seats,
        hands={p: () for p in state.seats},
    )


@FOLDS.on(KEYS)
def on_keys(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    move = event["signed"]["move"]
    player = event["player"]
    deck = state.decks[-1]
    # accepted keys: decide checked them (and their proofs); no second check here
    keys = CardKeys.from_json_unchecked(move["keys"])
    deck = deck._replace(keys={**deck.keys, player: keys})
    verify = state.verify_keys
    if "verify_key" in move and player not in verify:
        verify = {**verify, player: move["verify_key"]}
    return _advance(state, "shuffle", **head, decks=(*state.decks[:-1], deck), verify_keys=verify)


@FOLDS.on(SHUFFLE)
def on_shuffle(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    move = event["signed"]["move"]
    if "argument" in move:
        # complete in one command, checked by decide: its cards are all evolve needs (the
        # argument is never parsed again)
        deck = state.decks[-1]._replace(masked=MaskedCards.deferred(move["cards"]))
        return _advance(state, "mask", **head, decks=(*state.decks[:-1], deck))
    pending = PendingShuffle(
        player=event["player"],
        move=move,
        size=len(state.decks[-1].cards),
        rounds=move["rounds"],
        openings=tuple(move["openings"]),
    )
    return _shuffle_progress(state, pending, **head)


@FOLDS.on(SHUFFLE_PROOF)
def on_shuffle_proof(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    assert state.pending is not None
    more = tuple(event["signed"]["move"]["openings"])
    pending = state.pending._replace(openings=state.pending.openings + more)
    return _shuffle_progress(state, pending, **head)


def _shuffle_progress(state: MacauaState, pending: PendingShuffle, **head: Any) -> MacauaState:
    if len(pending.openings) < pending.rounds:
        return state._replace(**head, pending=pending)
    # the shuffle's proof verified in decide: only its cards matter from now on
    deck = state.decks[-1]._replace(masked=MaskedCards.deferred(pending.move["cards"]))
    return _advance(state, "mask", **head, pending=None, decks=(*state.decks[:-1], deck))


@FOLDS.on(MASK)
def on_mask(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    move_cards = event["signed"]["move"]["cards"]  # decide checked them
    deck = state.decks[-1]
    if state.waiting[1:]:  # the next player's step replaces these cards whole
        decks = (*state.decks[:-1], deck._replace(masked=MaskedCards.deferred(move_cards)))
        return state._replace(**head, decks=decks, waiting=state.waiting[1:])
    cards = MaskedCards.from_json(move_cards)  # the deck's cards from now on
    everyone = (1 << len(state.seats)) - 1
    # every seat's key is on every card: each position's commitments, in seat order (the
    # shuffle keys are never read again)
    seat_keys = [_encodings(deck.keys[p].cards) for p in state.seats]
    commitments = b"".join(
        k[i : i + POINT_BYTES] for i in range(0, len(seat_keys[0]), POINT_BYTES) for k in seat_keys
    )
    deck = deck._replace(
        masked=cards,
        masking=bytes([everyone]) * len(deck.cards),
        keys=_NOTHING,
        commitments=commitments,
    )
    decks = (*state.decks[:-1], deck)
    if state.deck_no == 0:
        layout = deal_layout(state)
        hands = {p: tuple(_pos(0, i) for i in layout.hands[s]) for s, p in enumerate(state.seats)}
        top = _pos(0, layout.top)
        need = {
            p: tuple(sorted([pos for q, h in hands.items() if q != p for pos in h] + [top]))
            for p in state.seats
        }
        return state._replace(
            **head,
            decks=decks,
            phase="deal",
            hands=hands,
            need=need,
            fresh=layout.fresh,
            waiting=state.seats,
        )
    # a reshuffled deck: every position is fresh; the pending draw goes on
    fresh = tuple(range(len(deck.cards) - 1, -1, -1))
    return state._replace(**head, decks=decks, phase="draw", fresh=fresh, waiting=())


@FOLDS.on(REVEAL)
def on_reveal(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    player = event["player"]
    off = ~seat_bit(state, player)
    decks = _set_cards(
        state.decks,
        (
            # decide computed the card, from the published key
            (d, i, card, state.decks[d].masking[i] & off)
            for d, i, card in event["opened"]
        ),
    )
    need = {p: v for p, v in state.need.items() if p != player}
    waiting = state.waiting[1:]
    if waiting:
        return state._replace(**head, decks=decks, need=need, waiting=waiting)
    if state.phase == "deal":
        top = decks[0].masked[deal_layout(state).top]
        card = decode_card(top.msg) if top.is_open else None
        return state._replace(
            **head,
            decks=decks,
            need=need,
            phase="play",
            discard=(card or "??",),
            waiting=(state.current,),
        )
    # a draw: the assigned positions join the drawer's hand
    assert state.drawer is not None
    hands = {**state.hands, state.drawer: state.hands[state.drawer] + state.assigned}
    left = state.to_draw - len(state.assigned)
    drawn: dict[str, Any] = {
        **head,
        "decks": decks,
        "need": need,
        "hands": hands,
        "to_draw": left,
        "assigned": (),
    }
    if left > 0:
        return state._replace(**drawn, waiting=())
    return _end_turn(state, **drawn, drawer=None)


@FOLDS.on(PLAYED)
def on_played(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    player = event["player"]
    decks = _set_cards(state.decks, ((d, i, _OPEN[card], 0) for d, i, card, _k in event["cards"]))
    codes: list[str] = [_CODE.get(card, card) for _d, _i, card, _k in event["cards"]]
    played = {(d, i) for d, i, _c, _k in event["cards"]}
    hand = tuple(pos for pos in state.hands[player] if pos not in played)
    changes: dict[str, Any] = {
        **head,
        "decks": decks,
        "hands": {**state.hands, player: hand},
        "discard": state.discard + tuple(codes),
        "declared": event["suit"] if rank(codes[0]) == "A" else None,
        "challenge": state.challenge + play_challenge(codes),
    }
    if not hand:
        return state._replace(
            **changes, winner=player, result="won", phase="audit", waiting=state.seats
        )
    return _end_turn(state, **changes)


@FOLDS.on(DRAW)
def on_draw(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    return state._replace(
        **head,
        phase="draw",
        drawer=event["player"],
        to_draw=event["count"],
        challenge=0,
        waiting=(),
    )


@FOLDS.on(DRAW_ASSIGNED)
def on_draw_assigned(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    deck = event["deck"]
    positions = tuple(_pos(deck, i) for i in event["positions"])
    drawer = event["player"]
    seat = state.seats.index(drawer)
    others = tuple(state.seats[(seat + k) % len(state.seats)] for k in range(1, len(state.seats)))
    return state._replace(
        **head,
        fresh=state.fresh[len(positions) :],
        assigned=positions,
        need=dict.fromkeys(others, positions),
        waiting=others,
    )


@FOLDS.on(RESHUFFLED)
def on_reshuffled(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    cards = tuple(_CODE.get(c, c) for c in event["cards"])
    return state._replace(
        **head,
        phase="keys",
        decks=(*state.decks, DeckState(cards, tuple(_OPEN[c] for c in cards))),
        discard=state.discard[-1:],
        waiting=state.seats,
    )


@FOLDS.on(DRAW_ENDED)
def on_draw_ended(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    return _end_turn(state, **head, drawer=None, to_draw=0)


@FOLDS.on(AUDIT)
def on_audit(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    player = event["player"]
    keys = {(k["deck"], k["position"]): k["key"] for k in event["signed"]["move"]["keys"]}
    return state._replace(
        **head,
        audit_keys={**state.audit_keys, player: keys},
        waiting=tuple(p for p in state.waiting if p != player),  # in any order
    )


@FOLDS.on(AUDITED)
def on_audited(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    audit = {k: v for k, v in event.items() if k != "type"}
    result = state.result if audit.get("ok") else "void"
    return state._replace(**head, audit=audit, phase="over", waiting=(), result=result)


@FOLDS.on(AUDIT_WITHHELD)
def on_audit_withheld(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    audit = {k: v for k, v in event.items() if k != "type"}
    # the decided game stands unless the keys that were published show a deck that is no
    # deck (then it is void, as after a complete audit); either way the withholders lose
    result = "void" if audit.get("tampered") else "forfeited"
    return state._replace(
        **head,
        audit=audit,
        withheld=tuple(event["withheld"]),
        phase="over",
        waiting=(),
        result=result,
    )


@FOLDS.on(REJECTED)
def on_rejected(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    rejected = {k: v for k, v in event.items() if k != "type"}
    return state._replace(**head, phase="over", waiting=(), result="rejected", rejected=rejected)


@FOLDS.on(ABORTED)
def on_aborted(state: MacauaState, event: Event, **head: Any) -> MacauaState:
    result = "aborted" if event.get("player") else "void"
    stalled = event.get("player")
    return state._replace(**head, phase="over", waiting=(), result=result, stalled=stalled)


# -- shared steps -------------------------------------------------------------------------
def _advance(state: MacauaState, then: Phase, **changes: Any) -> MacauaState:
    """``state`` with ``changes`` (not its phase or waiting), its mover done: the next
    one's turn, or phase ``then`` for everyone."""
    if state.waiting[1:]:
        return state._replace(**changes, waiting=state.waiting[1:])
    return state._replace(**changes, phase=then, waiting=state.seats)


def _end_turn(state: MacauaState, **changes: Any) -> MacauaState:
    """``state`` with ``changes`` (none of the turn's own fields), and its turn over: one
    copy of the state, not two (most events of a fold end a turn)."""
    turns = state.turns + 1
    if turns >= state.config.max_turns:
        return state._replace(
            **changes,
            turns=turns,
            result="turn_limit",
            phase="audit",
            waiting=state.seats,
        )
    turn = (state.turn + 1) % len(state.seats)
    return state._replace(
        **changes, turns=turns, turn=turn, phase="play", waiting=(state.seats[turn],)
    )


_POSITIONS: dict[Pos, Pos] = {}


def _pos(deck: int, position: int) -> Pos:
    """One tuple for a position, across tables (a hand holds its positions, and a tuple
    each adds up over a table's hands, draws and demands): at most a few thousand exist."""
    return interned(_POSITIONS, (deck, position))


def _set_cards(
    decks: tuple[DeckState, ...],
    changes: Iterable[tuple[int, int, MaskedCard | CardJson, int]],
) -> tuple[DeckState, ...]:
    """``decks`` with new cards and maskings at some ``(deck, position, card, masking)``, where
    a key left those cards (a reveal, a play: the only way one leaves a card); each deck
    touched is copied once, not once per card."""
    cards: dict[int, tuple[dict[int, MaskedCard | CardJson], bytearray]] = {}
    for d, i, card, masking in changes:
        if d not in cards:
            cards[d] = ({}, bytearray(decks[d].masking))
        cards[d][0][i] = card
        cards[d][1][i] = masking
    out = list(decks)
    for d, (masked, maskings) in cards.items():
        deck = out[d]
        # A deck with every card open keeps only its size, if whole; else the commitments of
        # the keys still on its cards (only those can be published and checked).
        cards_now = MaskedCards.replacing(deck.masked, masked)
        if not any(maskings) and _whole(cards_now, deck.cards):
            out[d] = _settled(len(deck.cards))
            continue
        old = deck.masking
        gone = {i: old[i] & ~maskings[i] for i in masked}
        out[d] = deck._replace(
            masked=cards_now,
            masking=bytes(maskings),
            commitments=without_commitments(deck, gone),
        )
    return tuple(out)


_SETTLED: dict[int, DeckState] = {}


def _settled(size: int) -> DeckState:
    """One played-out deck of each size, across tables (it holds nothing else; a long game
    keeps many)."""
    return interned_as(_SETTLED, size, DeckState((), (), settled=size))


def _encodings(points: Sequence[Point]) -> bytes:
    """Points' encodings one after another (packed already when read back from a keys move)."""
    return points.data if isinstance(points, PackedPoints) else b"".join(p.value for p in points)


def _whole(masked: MaskedCards, cards: tuple[str, ...]) -> bool:
    """Whether the open cards of a deck are exactly the cards it was made of."""
    found: list[str] = []
    for card in masked:
        code = open_code(card) or _decoded(card)
        if code is None:
            return False
        found.append(code)
    return sorted(found) == sorted(cards)


def _decoded(card: MaskedCard) -> str | None:
    return decode_card(card.msg) if card.is_open else None
