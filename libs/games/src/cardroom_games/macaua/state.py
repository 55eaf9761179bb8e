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
    CardKeys,
    DealLayout,
    MaskedCard,
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


class MaskedCards(Sequence[MaskedCard]):
    """A deck's masked cards, each kept as the 96 bytes of its three points (from the JSON of
    the accepted move that set it: the last mask step, a reveal) and made a
    :class:`MaskedCard` each time it is read, or as a card itself (an open card, shared by
    every deck). A parsed card with its JSON's strings costs about 400 to 570 bytes against
    129, and a table keeps up to 54 masked cards for each deck in play; a fold reads few of
    them (the face-up card of the deal). The cards of a step that the next step replaces
    whole (every shuffle, every mask step but the last) stay the move's JSON, packed only if
    a card of them is replaced (:meth:`deferred`). Equal to a tuple of the same cards (the
    tuple it stands for)."""

    __slots__ = ("_cards", "_deferred")

    def __init__(self, cards: Iterable[MaskedCard | CardJson | bytes]) -> None:
        self._cards: list[MaskedCard | bytes | CardJson] = [_packed(card) for card in cards]
        self._deferred = False

    @classmethod
    def from_json(cls, cards: Iterable[CardJson]) -> MaskedCards:
        """The cards of an accepted move, packed (as :func:`_packed` keeps a card's JSON)."""
        new = cls.__new__(cls)
        new._cards = [_json_bytes(c) for c in cards]
        new._deferred = False
        return new

    @classmethod
    def deferred(cls, cards: Iterable[CardJson]) -> MaskedCards:
        """The cards of an accepted move kept as its JSON (each parsed when read): for a step
        whose cards the next step replaces whole, so that they are never packed."""
        new = cls.__new__(cls)
        new._cards = list(cards)
        new._deferred = True
        return new

    @classmethod
    def replacing(
        cls, deck: Sequence[MaskedCard], changes: Mapping[int, MaskedCard | CardJson]
    ) -> MaskedCards:
        """``deck`` with the cards at some positions replaced (none of them is parsed)."""
        new = cls.__new__(cls)
        if not isinstance(deck, MaskedCards):
            new._cards = list(deck)
        elif deck._deferred:
            new._cards = [_packed(card) for card in deck._cards]
        else:
            new._cards = list(deck._cards)
        new._deferred = False
        cards = new._cards
        for i, card in changes.items():
            cards[i] = card if isinstance(card, (MaskedCard, bytes)) else _packed(card)
        return new

    def pack(self) -> None:
        """Keep the cards of a deferred step packed from now on (the same cards: for a state
        kept a while, as ``Game.settle`` does, whose next step may be long in coming)."""
        if self._deferred:
            self._cards = [_packed(card) for card in self._cards]
            self._deferred = False

    def __len__(self) -> int:
        return len(self._cards)

    @overload
    def __getitem__(self, index: int) -> MaskedCard: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[MaskedCard, ...]: ...
    def __getitem__(self, index: int | slice) -> MaskedCard | tuple[MaskedCard, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        return _card(self._cards[index])

    def __iter__(self) -> Iterator[MaskedCard]:
        for card in self._cards:
            yield _card(card)

    def json_at(self, index: int) -> dict[str, str]:
        """``self[index].to_json()``, without making the card."""
        card = self._cards[index]
        if isinstance(card, bytes):
            text = card.hex()
            return {"epk": text[:64], "msg": text[64:128], "pk": text[128:]}
        if isinstance(card, MaskedCard):
            return card.to_json()
        # (JSON that decide took in canonical form: what to_json writes, in its key order)
        return {"epk": card["epk"], "msg": card["msg"], "pk": card["pk"]}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (tuple, MaskedCards)):
            return NotImplemented
        return tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"MaskedCards({tuple(self)!r})"


def _card(card: MaskedCard | bytes | CardJson) -> MaskedCard:
    if isinstance(card, bytes):
        return _unpacked(card)
    if isinstance(card, MaskedCard):
        return card
    return MaskedCard.from_json_unchecked(card)


def _packed(card: MaskedCard | CardJson | bytes) -> MaskedCard | bytes:
    """How :class:`MaskedCards` keeps a card: its JSON (decide took it in canonical form,
    lowercase hex of canonical encodings) as the bytes of its points; a card as it is."""
    if isinstance(card, (MaskedCard, bytes)):
        return card
    return _json_bytes(card)


def _json_bytes(card: CardJson) -> bytes:
    return _fromhex(card["epk"] + card["msg"] + card["pk"])


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
    masking: tuple[frozenset[str], ...] = ()
    """Per position: the players whose key is still on the card (after the mask phase)."""
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
