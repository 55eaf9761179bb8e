"""Macaua's state: the decks as masked cards, the hands as positions, the hash chain of
accepted moves; and the event types.

The state is public: it holds masked cards and commitments, never a key that opens a hidden
card. Its parts are immutable (``@state`` NamedTuples, updated by name with ``_replace``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, Generic, Literal, NamedTuple, TypeVar, overload

from cardroom_engine.kit import state
from cardroom_mentalpoker import (
    GENESIS_HASH,
    MACAUA_CARDS,
    POINT_BYTES,
    CardKeys,
    DealLayout,
    MaskedCard,
    PackedPoints,
    Point,
    card_point,
    plain_state_hash,
    standard_deal,
    state_hash,
)

from .config import MacauaConfig, hashed_config

# -- the events (see the package docs) ----------------------------------------------------
STARTED: Final = "macaua.started"
KEYS: Final = "macaua.keys"
SHUFFLE: Final = "macaua.shuffle"
SHUFFLE_PROOF: Final = "macaua.shuffle_proof"
MASK: Final = "macaua.mask"
REVEAL: Final = "macaua.reveal"
PLAYED: Final = "macaua.played"
DRAW: Final = "macaua.draw"
DRAW_ASSIGNED: Final = "macaua.draw_assigned"
RESHUFFLED: Final = "macaua.reshuffled"
DRAW_ENDED: Final = "macaua.draw_ended"
AUDIT: Final = "macaua.audit"
AUDITED: Final = "macaua.audited"
AUDIT_WITHHELD: Final = "macaua.audit_withheld"
ABORTED: Final = "macaua.aborted"
REJECTED: Final = "macaua.rejected"

Phase = Literal["setup", "keys", "shuffle", "mask", "deal", "play", "draw", "audit", "over"]
Pos = tuple[int, int]  # (deck number, position in that deck)
DECK_SIZE = len(MACAUA_CARDS)

_T = TypeVar("_T")
_NOTHING: Mapping[Any, Any] = MappingProxyType({})
"""The empty default of a state's mappings (shared by every state: read-only)."""


class Lazy(Generic[_T]):
    """A value computed from its source when first read, once (the copies of a state share
    it); equal when the values are equal. For the hash chain's digest: evolve would compute
    it at every event, but a fold reads it for few states (decide, a view), and the canonical
    JSON of a move (~50 KB for a shuffle proof) costs more than the rest of its event."""

    __slots__ = ("_compute", "_source", "_value")

    _value: _T

    def __init__(self, source: Any, compute: Callable[[Any], _T]) -> None:
        self._source = source
        self._compute: Callable[[Any], _T] | None = compute

    @classmethod
    def of(cls, value: _T) -> Lazy[_T]:
        """A value that is known already."""
        lazy = cls.__new__(cls)
        lazy._value = value
        lazy._compute = lazy._source = None
        return lazy

    @property
    def value(self) -> _T:
        # the source is read before compute, and cleared after it (compute first): a
        # thread that reads a live compute read a live source, even while another thread
        # (decide runs in a worker thread) finishes the same value
        source = self._source
        compute = self._compute
        if compute is not None:
            self._value = compute(source)
            self._compute = None
            self._source = None  # the state no longer keeps the move alive
        return self._value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Lazy):
            return NotImplemented
        return self is other or bool(self.value == other.value)

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Lazy({self.value!r})"


# -- the hash chain -----------------------------------------------------------------------
def next_hash(previous: str, signed: Mapping[str, Any]) -> str:
    chained = {"prev": previous, "move": dict(signed)}
    # decide accepted the move only after canonical_json encoded it (for its signature) and
    # the event keeps that plain form, so plain_state_hash gives the same digest without a
    # second pass over a large proof; the envelope (its signer is unsigned) is looked at here
    if all(isinstance(v, (str, int)) for k, v in signed.items() if k != "move"):
        return plain_state_hash(chained)
    return state_hash(chained)


def chained(signed: Mapping[str, Any]) -> str:
    """The digest after an accepted move. It chains from the move's ``prev_hash``: decide
    accepted the move only if it was signed over the state's digest, so they are equal, and
    one digest never needs the ones before it."""
    return next_hash(signed["prev_hash"], signed)


def genesis_hash(binding: str, seats: Sequence[str], config: MacauaConfig) -> str:
    return state_hash(
        # the config as its JSON text: canonical JSON has no floats (move_timeout is one)
        {"binding": binding, "seats": list(seats), "config": hashed_config(config)}
    )


GENESIS_CHAIN: Lazy[str] = Lazy.of(GENESIS_HASH)


# -- the decks ----------------------------------------------------------------------------
CardJson = Mapping[str, str]
"""A masked card as the JSON of an accepted move (``MaskedCard.to_json``)."""


OPEN_CARDS: Final = tuple(MaskedCard.open(card_point(code)) for code in MACAUA_CARDS)
"""Every card face up, in the order of :data:`MACAUA_CARDS` (immutable: shared by every deck
and table it is played in)."""
_OPEN_INDEX: Final = {id(card): i for i, card in enumerate(OPEN_CARDS)}
_MASKED: Final = 255
"""A position of :class:`MaskedCards` whose card is in its bytes (else: an open card's index)."""
_CARD_BYTES: Final = 3 * POINT_BYTES


def open_code(card: MaskedCard) -> str | None:
    """The code of a shared open card (one of :data:`OPEN_CARDS`), else None."""
    index = _OPEN_INDEX.get(id(card))
    return None if index is None else MACAUA_CARDS[index]


def _start(at: bytes | bytearray, index: int) -> int:
    """Where the card at ``index`` (one kept as its bytes) starts in a deck's bytes."""
    return at.count(_MASKED, 0, index) * _CARD_BYTES


class MaskedCards(Sequence[MaskedCard]):
    """A deck's masked cards, kept as one byte a position and one bytes object for the deck:
    a position holds a shared open card (:data:`OPEN_CARDS`, by its index) or the 96 bytes of
    its card's three points (from the JSON of the accepted move that set it: the last mask
    step, a reveal), and a :class:`MaskedCard` is made each time one is read. A parsed card
    with its JSON's strings costs about 400 to 570 bytes, a bytes object of its own 144, and a
    table keeps up to 54 masked cards for each deck in play; a fold reads few of them (the
    face-up card of the deal). The cards of a step that the next step replaces whole (every
    shuffle, every mask step but the last) stay the move's JSON, packed only if a card of
    them is replaced (:meth:`deferred`). Equal to a tuple of the same cards (the tuple it
    stands for)."""

    __slots__ = ("_at", "_data", "_json")

    _at: bytes
    """Per position: :data:`_MASKED`, or the index of the open card it holds."""
    _data: bytes
    """The 96 bytes of each position's card that is not a shared open card, in order."""
    _json: list[CardJson] | None
    """A deferred step's cards, as the move's JSON (``_at`` and ``_data`` unused)."""

    def __init__(self, cards: Iterable[MaskedCard | CardJson | bytes]) -> None:
        at = bytearray()
        data = bytearray()
        for card in cards:
            kind, packed = _packed(card)
            at.append(kind)
            data += packed
        self._at, self._data, self._json = bytes(at), bytes(data), None

    @classmethod
    def from_json(cls, cards: Sequence[CardJson]) -> MaskedCards:
        """The cards of an accepted move, packed."""
        new = cls.__new__(cls)
        new._at = bytes([_MASKED]) * len(cards)
        new._data = _fromhex("".join(c["epk"] + c["msg"] + c["pk"] for c in cards))
        new._json = None
        return new

    @classmethod
    def deferred(cls, cards: Iterable[CardJson]) -> MaskedCards:
        """The cards of an accepted move kept as its JSON (each parsed when read): for a step
        whose cards the next step replaces whole, so that they are never packed."""
        new = cls.__new__(cls)
        new._at = new._data = b""
        new._json = list(cards)
        return new

    @property
    def is_deferred(self) -> bool:
        """Whether the cards are still the move's JSON (see :meth:`deferred`)."""
        return self._json is not None

    @classmethod
    def replacing(
        cls, deck: Sequence[MaskedCard], changes: Mapping[int, MaskedCard | CardJson]
    ) -> MaskedCards:
        """``deck`` with the cards at some positions replaced (none of them is parsed)."""
        if not isinstance(deck, MaskedCards):
            deck = cls(deck)
        elif deck._json is not None:
            deck = cls.from_json(deck._json)
        at = bytearray(deck._at)
        data = bytearray(deck._data)
        # from the last position back: a change moves the bytes of the positions after it
        for i in sorted(changes, reverse=True):
            kind, packed = _packed(changes[i])
            start = _start(at, i)
            end = start + _CARD_BYTES if at[i] == _MASKED else start
            data[start:end] = packed
            at[i] = kind
        new = cls.__new__(cls)
        new._at, new._data, new._json = bytes(at), bytes(data), None
        return new

    def pack(self) -> None:
        """Keep the cards of a deferred step packed from now on (the same cards: for a state
        kept a while, as ``Game.settle`` does, whose next step may be long in coming)."""
        if self._json is not None:
            packed = MaskedCards.from_json(self._json)
            self._at, self._data, self._json = packed._at, packed._data, None

    def __len__(self) -> int:
        return len(self._json) if self._json is not None else len(self._at)

    @overload
    def __getitem__(self, index: int) -> MaskedCard: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[MaskedCard, ...]: ...
    def __getitem__(self, index: int | slice) -> MaskedCard | tuple[MaskedCard, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if self._json is not None:
            return MaskedCard.from_json_unchecked(self._json[index])
        at = self._at
        kind = at[index]  # (raises IndexError as a tuple would)
        if kind != _MASKED:
            return OPEN_CARDS[kind]
        start = _start(at, index % len(at))
        return _unpacked(self._data[start : start + _CARD_BYTES])

    def __iter__(self) -> Iterator[MaskedCard]:
        if self._json is not None:
            for card in self._json:
                yield MaskedCard.from_json_unchecked(card)
            return
        data, start = self._data, 0
        for kind in self._at:
            if kind != _MASKED:
                yield OPEN_CARDS[kind]
            else:
                yield _unpacked(data[start : start + _CARD_BYTES])
                start += _CARD_BYTES

    def json_at(self, index: int) -> dict[str, str]:
        """``self[index].to_json()``, without making the card."""
        if self._json is not None:
            card = self._json[index]
            # (JSON that decide took in canonical form: what to_json writes, in its key order)
            return {"epk": card["epk"], "msg": card["msg"], "pk": card["pk"]}
        at = self._at
        kind = at[index]
        if kind != _MASKED:
            return OPEN_CARDS[kind].to_json()
        start = _start(at, index % len(at))
        text = self._data[start : start + _CARD_BYTES].hex()
        return {"epk": text[:64], "msg": text[64:128], "pk": text[128:]}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (tuple, MaskedCards)):
            return NotImplemented
        return tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"MaskedCards({tuple(self)!r})"


def _packed(card: MaskedCard | CardJson | bytes) -> tuple[int, bytes]:
    """How :class:`MaskedCards` keeps a card: a shared open card as its index; any other as
    the bytes of its points (from JSON decide took in canonical form: lowercase hex of
    canonical encodings)."""
    if isinstance(card, bytes):
        return _MASKED, card
    if isinstance(card, MaskedCard):
        index = _OPEN_INDEX.get(id(card))
        if index is not None:
            return index, b""
        return _MASKED, card.epk.value + card.msg.value + card.pk.value
    return _MASKED, _fromhex(card["epk"] + card["msg"] + card["pk"])


_unpacked = MaskedCard.from_bytes_unchecked
_fromhex = bytes.fromhex


def card_json(masked: Sequence[MaskedCard], index: int) -> dict[str, str]:
    """The JSON of the masked card at ``index`` (not parsed when it is still JSON)."""
    if isinstance(masked, MaskedCards):
        return masked.json_at(index)
    return masked[index].to_json()


@state
class DeckState(NamedTuple):
    """One deck: the initial deal (0) or a reshuffle of the discard pile (1, 2, ...)."""

    cards: tuple[str, ...]
    """The open cards it was made of (what an audit must find again)."""
    masked: Sequence[MaskedCard]
    """A tuple, or :class:`MaskedCards` (parsed when read) after a shuffle or mask step."""
    keys: Mapping[str, CardKeys] = _NOTHING
    """Each player's commitments for this deck (their proofs, checked by decide, stay in
    the log)."""
    masking: bytes = b""
    """Per position, whose keys are still on the card (after the mask phase): a bit per seat
    (``1 << seat``; :func:`keys_on` names them). A byte a position (six seats at most): a
    deck's maskings cost its length and nothing per player's name."""
    commitments: bytes = b""
    """After the mask phase (``keys`` is then empty): the commitment of each key still on a
    card, 32 bytes each, by position and then seat, as the maskings say whose
    (:func:`commitment`). A player publishes only a key still on a card (decide refuses any
    other), so no other commitment is ever read again, and a deck keeps one bytes object
    rather than a player's commitments each."""
    settled: int = 0
    """A played-out deck's size: every card open, and they were exactly the cards it was
    made of (checked as its last one opened). Nothing is published, opened or audited in it
    again, so it keeps nothing else (a long game plays out many decks); 0 while in play."""

    @property
    def size(self) -> int:
        return self.settled or len(self.cards)


@state
class PendingShuffle(NamedTuple):
    """A shuffle whose proof comes in parts. Kept as the JSON that was accepted: only decide
    reads it (to check the last part), so folding never parses it."""

    player: str
    move: Mapping[str, Any]
    """The first part's move (cards, keyed, key_proofs, digest, rounds, openings)."""
    size: int
    rounds: int
    openings: tuple[Any, ...] = ()
    """Every opening so far, as JSON."""


@state
class MacauaState(NamedTuple):
    config: MacauaConfig
    seats: tuple[str, ...]
    binding: str = ""
    table: str = ""  # the table's game id (Table calls bind_table)
    seq: int = 0
    chain: Lazy[str] = GENESIS_CHAIN
    """Where the state is in the hash chain; :attr:`hash` is its digest."""
    verify_keys: Mapping[str, str] = _NOTHING
    phase: Phase = "setup"
    decks: tuple[DeckState, ...] = ()
    waiting: tuple[str, ...] = ()
    """Who must move now, in order (``waiting[0]`` moves next)."""
    pending: PendingShuffle | None = None
    hands: Mapping[str, tuple[Pos, ...]] = _NOTHING
    fresh: tuple[int, ...] = ()
    """Positions of the newest deck still in the fresh pile, in drawing order."""
    discard: tuple[str, ...] = ()
    turn: int = 0
    declared: str | None = None
    challenge: int = 0
    drawer: str | None = None
    to_draw: int = 0
    assigned: tuple[Pos, ...] = ()
    need: Mapping[str, tuple[Pos, ...]] = _NOTHING
    """The card keys each player must publish now (deal or draw)."""
    turns: int = 0
    winner: str | None = None
    """The first player to empty its hand."""
    result: str | None = None
    """won, turn_limit, forfeited (someone withheld its audit keys), void or aborted."""
    audit_keys: Mapping[str, Mapping[Pos, str]] = _NOTHING
    audit: Mapping[str, Any] | None = None
    stalled: str | None = None
    withheld: tuple[str, ...] = ()
    """The players who had not published their audit keys by the audit's deadline."""
    rejected: Mapping[str, Any] | None = None
    """Why the table halted: who rejected which transition, whom it blames, the evidence."""

    @property
    def hash(self) -> str:
        """The hash chain's digest at this state: what the next move is signed over."""
        return self.chain.value

    @property
    def deck_no(self) -> int:
        return len(self.decks) - 1

    @property
    def current(self) -> str:
        return self.seats[self.turn]


_POPCOUNT: Final = bytes(bin(i).count("1") for i in range(256))
"""The number of seats a masking byte names, by its value (``bytes.translate`` table)."""


def commitment_index(masking: bytes, seat: int, position: int) -> int:
    """Where ``seat``'s commitment for ``position`` is in a masked deck's commitments (in
    points: the keys on the positions before it, and on it of the seats before it)."""
    return (
        sum(masking[:position].translate(_POPCOUNT))
        + _POPCOUNT[masking[position] & ((1 << seat) - 1)]
    )


def commitment(deck: DeckState, seat: int, position: int) -> Point:
    """The commitment of ``seat``'s key on ``position`` of a masked deck (the key must still
    be on the card: :attr:`DeckState.commitments` keeps no other)."""
    if not deck.masking[position] >> seat & 1:
        raise KeyError(f"no key of seat {seat} on position {position}")
    k = commitment_index(deck.masking, seat, position) * POINT_BYTES
    return PackedPoints(deck.commitments[k : k + POINT_BYTES])[0]


def without_commitments(deck: DeckState, gone: Mapping[int, int]) -> bytes:
    """``deck``'s commitments without those of the keys that left a card: ``gone`` maps a
    position to the seats' bits that left it."""
    data = bytearray(deck.commitments)
    masking = deck.masking
    # from the last position and seat back: a deletion moves the points after it
    for position in sorted(gone, reverse=True):
        bits = gone[position] & masking[position]
        for seat in range(7, -1, -1):
            if bits >> seat & 1:
                k = commitment_index(masking, seat, position) * POINT_BYTES
                del data[k : k + POINT_BYTES]
    return bytes(data)


def seat_bit(state: MacauaState, player: str) -> int:
    """``player``'s bit in a position's masking (0 for one who has no seat)."""
    return 1 << state.seats.index(player) if player in state.seats else 0


def keys_on(state: MacauaState, masking: int) -> list[str]:
    """The players whose keys a masking says are on the card, in seat order."""
    return [p for s, p in enumerate(state.seats) if masking >> s & 1]


def may_move(state: MacauaState, player: str) -> bool:
    """Whether ``player`` is to move now: the first waiting player, strictly in turn; in the
    audit, anyone who has not published its keys yet (so that one who keeps them holds
    nobody else's audit up)."""
    if state.phase == "audit":
        return player in state.waiting
    return bool(state.waiting) and state.waiting[0] == player


def deal_layout(state: MacauaState) -> DealLayout:
    """Which positions of deck 0 are whose hand, the face-up card and the fresh pile."""
    return standard_deal(len(state.seats), DECK_SIZE, state.config.hand_size)
