"""Macaua: the server side. It relays, validates and records; it never holds a secret.

Every player command is one signed move (:func:`cardroom_mentalpoker.sign_move`)::

    {"type": "move", "game_id": <binding>, "seq": n, "prev_hash": h, "move": {...},
     "signer": <verify key hex>, "signature": <hex>}

``move["kind"]`` is one of ``keys``, ``shuffle``, ``shuffle_proof``, ``mask``, ``reveal``,
``play``, ``draw``, ``audit``. ``seq`` must be the state's ``seq + 1`` and ``prev_hash`` its
``hash``: a hash chain over every accepted move, from a genesis hash of the binding, seats
and config. ``binding`` is ``"<the table's game id>/<a 128-bit nonce drawn at start>"``
(the table tells the game its id through ``bind_table``).

Events (each accepted move is one event carrying the signed move, so the whole game can be
verified again from the store; server steps are unsigned and deterministic):

    macaua.started        binding; phase keys of deck 0
    macaua.keys           a player's commitments for a deck (+ its Ed25519 key, deck 0)
    macaua.shuffle        a shuffle step (with its argument; with a cut-and-choose proof,
                          complete or its first part when chunked)
    macaua.shuffle_proof  more openings of a chunked cut-and-choose proof
    macaua.mask           a mask step
    macaua.reveal         published card keys (deal or draw), with the unmasked cards
    macaua.played         an owner's keys for the played cards, with the open cards
    macaua.draw           a draw request (1 card, or the pending challenge)
    macaua.draw_assigned  (server) the fresh-pile positions the drawer gets next
    macaua.reshuffled     (server) the discard pile but its top becomes a new deck
    macaua.draw_ended     (server) nothing left to draw anywhere
    macaua.audit          a player's keys for every position that still has them (game over)
    macaua.audited        (server) the result of opening every position
    macaua.audit_withheld (server) the audit deadline passed: the result of opening what the
                          published keys open, and who withheld its keys
    macaua.aborted        (server) a stalled player (deadline) or a deck that is no deck
    macaua.rejected       (server) a player rejected a transition, or acknowledged one without
                          a valid signature: the table halts, with the evidence and whom it
                          blames (a player, or ``server``)

Transition signing: every event above is a transition. Each reaches every player whole (the
notification's ``transition``; the first also carries the table's ``setup``: config, seats
and the verify keys bound to the seats at their joins), and each player's program checks it
against its own copy of the state (:mod:`.verify`) and acknowledges it with its signature
over ``(binding, version, transition)`` (:func:`cardroom_mentalpoker.sign_transition`), or
with a rejection and its reason. A transition counts once every player has signed it: the
server checks the signatures before the next step and halts the table on a rejection or a
missing or bad signature (``macaua.rejected``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar, overload

from cardroom_engine import (
    NEW_TABLE,
    BotFactory,
    Command,
    Deadline,
    Event,
    GameRules,
    Message,
    Outcome,
    Rejection,
    inputs,
)
from cardroom_engine.game import cut
from cardroom_mentalpoker import (
    GENESIS_HASH,
    MACAUA_CARDS,
    DealLayout,
    DleqProof,
    EncodingError,
    MaskedCard,
    MaskStepProof,
    MentalPokerError,
    Point,
    PublicKeys,
    Scalar,
    ShuffleArgument,
    ShuffleOpening,
    ShuffleProof,
    ShuffleStepProof,
    SignatureError,
    SignedMove,
    VerificationError,
    card_point,
    check_mask_step,
    check_move,
    check_shuffle_step,
    check_transition,
    deck_from_json,
    deck_from_json_unchecked,
    decode_card,
    key_matches,
    open_deck,
    partial_unmask,
    plain_state_hash,
    proof_context,
    standard_deal,
    state_hash,
)
from cardroom_wire import ErrorCode
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from .bots import BOTS
from .cards import SUITS, check_play, play_challenge, rank

# -- stable rejection codes (besides the wire's ErrorCode) ----------------------------------
BAD_SIGNATURE = "bad_signature"
REPLAYED_MOVE = "replayed_move"
BAD_SEQUENCE = "bad_sequence"
STALE_STATE = "stale_state"
WRONG_GAME = "wrong_game"
BAD_KEY = "bad_key"
BAD_PROOF = "bad_proof"
NOT_YOUR_CARD = "not_your_card"
CARD_MISMATCH = "card_mismatch"

MOVE = "move"
DECK_SIZE = len(MACAUA_CARDS)
MAX_SHUFFLE_ROUNDS = 256
MAX_POSITIONS = 256
"""The most card positions one move may name (a deal or an audit names at most 54)."""
MAX_DEPTH = 8
"""The deepest nesting of a move command (an honest one nests 5 levels): signing and
hashing walk a move recursively."""
MOVE_FIELDS: dict[str, frozenset[str]] = {
    "keys": frozenset({"kind", "deck", "keys", "verify_key"}),
    "shuffle": frozenset(
        {"kind", "deck", "cards", "keyed", "key_proofs", "digest", "rounds", "openings"}
    ),
    "shuffle_proof": frozenset({"kind", "offset", "openings"}),
    "mask": frozenset({"kind", "deck", "cards", "proof"}),
    "reveal": frozenset({"kind", "deck", "keys"}),
    "play": frozenset({"kind", "cards", "suit"}),
    "draw": frozenset({"kind"}),
    "audit": frozenset({"kind", "keys"}),
}
"""The fields each kind of move may have. The accepted move is stored whole, so a field no
check reads could carry anything into the log: there are none."""
ARGUMENT_SHUFFLE_FIELDS = frozenset({"kind", "deck", "cards", "keyed", "key_proofs", "argument"})
"""A shuffle's fields at a table whose config says ``shuffle_proof = "argument"``."""
KEY_FIELDS = frozenset({"deck", "position", "key"})
PLAYED_FIELDS = KEY_FIELDS | {"card"}

_D = TypeVar("_D")
_T = TypeVar("_T")

if TYPE_CHECKING:
    from dataclasses import replace as _update  # type-checked as dataclasses.replace
else:

    def _update(obj: _D, /, **changes: Any) -> _D:
        """``dataclasses.replace`` without running ``__init__`` over every field again: folding
        calls it several times per event, and for MacauaState's 28 fields replace is ~8x
        slower. Only for these frozen dataclasses (no ``__post_init__``, no slots)."""
        if not changes.keys() <= obj.__dataclass_fields__.keys():
            raise TypeError(f"unknown fields {sorted(changes.keys() - obj.__dataclass_fields__)}")
        new = object.__new__(type(obj))
        new.__dict__.update(obj.__dict__)
        new.__dict__.update(changes)
        return new


AUDIT_TIMEOUT = 60.0
"""Seconds every player has, once the game is decided, to publish its audit keys."""
AUDIT_TIMEOUT_MIN = 1.0
AUDIT_TIMEOUT_MAX = 3600.0
AUDIT_DEADLINE = "audit"
"""The key of the audit's deadline (one per game: it keeps its first due time)."""

ShuffleProofKind = Literal["argument", "rounds"]

Phase = Literal["setup", "keys", "shuffle", "mask", "deal", "play", "draw", "audit", "over"]
REJECTED = "macaua.rejected"
Pos = tuple[int, int]  # (deck number, position in that deck)


class MacauaConfig(BaseModel):
    """Options of a Macaua table. Numbers are strict (``true`` is no 1, ``"5"`` no number)
    and bounded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hand_size: int = Field(5, ge=1, le=8, strict=True, description="cards dealt to each player")
    shuffle_proof: ShuffleProofKind = Field(
        "rounds",
        description="how every shuffle is proved: 'argument', the Terelius-Wikström argument "
        "(about 27 KB of proof, one command; the default of a new table), or 'rounds', the "
        "cut-and-choose proof of shuffle_rounds rounds (about 250 KB at 64, sent in parts). A "
        "config stored without this field is read as 'rounds': its games replay as played.",
    )
    shuffle_rounds: int = Field(
        64,
        ge=0,
        le=MAX_SHUFFLE_ROUNDS,
        strict=True,
        description="cut-and-choose rounds of every shuffle proof (soundness 2^-rounds), "
        "with shuffle_proof 'rounds' (the argument has no rounds). "
        "0 disables the proof: a substituted deck is then only found by the audit at the "
        "end. Tests lower it for speed; keep the default in production.",
    )
    max_turns: int = Field(
        2000, ge=1, le=100_000, strict=True, description="turns after which the game ends undecided"
    )
    move_timeout: float | None = Field(
        None,
        ge=0.1,
        le=86_400,
        strict=True,
        allow_inf_nan=False,
        description="seconds a player has for a move before the game is aborted and they "
        "lose (null: wait forever); nobody else can make a player's move (keys)",
    )
    audit_timeout: float = Field(
        AUDIT_TIMEOUT,
        ge=AUDIT_TIMEOUT_MIN,
        le=AUDIT_TIMEOUT_MAX,
        strict=True,
        allow_inf_nan=False,
        description="seconds every player has, once the game is decided, to publish its "
        "audit keys; then the game ends and whoever has not ranks last (the winner keeps "
        "its win)",
    )

    @model_validator(mode="before")
    @classmethod
    def _new_tables_argue(cls, data: Any, info: ValidationInfo) -> Any:
        # the argument came after games were stored with the cut-and-choose proof and no
        # such field: only a table being created now gets the argument by default
        if (
            isinstance(data, dict)
            and "shuffle_proof" not in data
            and (info.context or {}).get(NEW_TABLE)
        ):
            return {**data, "shuffle_proof": "argument"}
        return data

    @field_validator("audit_timeout", mode="before")
    @classmethod
    def _audit_ends(cls, value: object) -> object:
        if value is None:
            raise ValueError(
                f"a number of seconds from {AUDIT_TIMEOUT_MIN:g} to {AUDIT_TIMEOUT_MAX:g} is "
                "required (there is no 'never': a player who keeps its keys must not hold "
                "the game open)"
            )
        return value


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


def _chained(signed: Mapping[str, Any]) -> str:
    """The digest after an accepted move. It chains from the move's ``prev_hash``: decide
    accepted the move only if it was signed over the state's digest, so they are equal, and
    one digest never needs the ones before it."""
    return _next_hash(signed["prev_hash"], signed)


GENESIS_CHAIN: Lazy[str] = Lazy.of(GENESIS_HASH)


CardJson = Mapping[str, str]
"""A masked card as the JSON of an accepted move (``MaskedCard.to_json``)."""


class MaskedCards(Sequence[MaskedCard]):
    """A deck's masked cards, each kept as the JSON of the accepted move that set it (a
    shuffle or mask step, a reveal) and parsed when first read. After a step a fold reads one
    card of the 54 (the face-up card of the deal) and replaces the others as events open
    them, until the next step replaces them all. Equal to a tuple of the same cards (the
    tuple it stands for)."""

    __slots__ = ("_cards",)

    def __init__(self, cards: Iterable[MaskedCard | CardJson]) -> None:
        self._cards: list[MaskedCard | CardJson] = list(cards)

    @classmethod
    def replacing(
        cls, deck: Sequence[MaskedCard], changes: Mapping[int, MaskedCard | CardJson]
    ) -> MaskedCards:
        """``deck`` with the cards at some positions replaced (none of them is parsed)."""
        new = cls(deck._cards if isinstance(deck, MaskedCards) else deck)
        for i, card in changes.items():
            new._cards[i] = card
        return new

    def __len__(self) -> int:
        return len(self._cards)

    @overload
    def __getitem__(self, index: int) -> MaskedCard: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[MaskedCard, ...]: ...
    def __getitem__(self, index: int | slice) -> MaskedCard | tuple[MaskedCard, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        card = self._cards[index]
        if not isinstance(card, MaskedCard):
            card = self._cards[index] = MaskedCard.from_json_unchecked(card)
        return card

    def __iter__(self) -> Iterator[MaskedCard]:
        for i in range(len(self._cards)):
            yield self[i]

    def json_at(self, index: int) -> dict[str, str]:
        """``self[index].to_json()``, without parsing a card that is still JSON: decide took
        it in canonical form (lowercase hex of a canonical encoding), which is what
        ``to_json`` writes (in its key order)."""
        card = self._cards[index]
        if isinstance(card, MaskedCard):
            return card.to_json()
        return {"epk": card["epk"], "msg": card["msg"], "pk": card["pk"]}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (tuple, MaskedCards)):
            return NotImplemented
        return tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"MaskedCards({tuple(self)!r})"


@dataclass(frozen=True)
class DeckState:
    """One deck: the initial deal (0) or a reshuffle of the discard pile (1, 2, ...)."""

    cards: tuple[str, ...]
    """The open cards it was made of (what an audit must find again)."""
    masked: Sequence[MaskedCard]
    """A tuple, or :class:`MaskedCards` (parsed when read) after a shuffle or mask step."""
    keys: Mapping[str, PublicKeys] = field(default_factory=dict)
    masking: tuple[frozenset[str], ...] = ()
    """Per position: the players whose key is still on the card (after the mask phase)."""


@dataclass(frozen=True)
class PendingShuffle:
    """A shuffle whose proof comes in parts. Kept as the JSON that was accepted: only decide
    reads it (:func:`_accepted_shuffle`, to check the last part), so folding never parses it."""

    player: str
    move: Mapping[str, Any]
    """The first part's move (cards, keyed, key_proofs, digest, rounds, openings)."""
    size: int
    rounds: int
    openings: tuple[Any, ...] = ()
    """Every opening so far, as JSON."""


@dataclass(frozen=True)
class ShuffleClaim:
    """A shuffle move parsed for its check."""

    player: str
    cards: tuple[MaskedCard, ...]
    keyed: tuple[Point, ...]
    key_proofs: tuple[DleqProof, ...]
    digest: bytes
    rounds: int
    openings: tuple[ShuffleOpening, ...] = ()


@dataclass(frozen=True)
class MacauaState:
    config: MacauaConfig
    seats: tuple[str, ...]
    binding: str = ""
    table: str = ""  # the table's game id (Table calls bind_table)
    seq: int = 0
    chain: Lazy[str] = GENESIS_CHAIN
    """Where the state is in the hash chain; :attr:`hash` is its digest."""
    verify_keys: Mapping[str, str] = field(default_factory=dict)
    phase: Phase = "setup"
    decks: tuple[DeckState, ...] = ()
    waiting: tuple[str, ...] = ()
    """Who must move now, in order (``waiting[0]`` moves next)."""
    pending: PendingShuffle | None = None
    hands: Mapping[str, tuple[Pos, ...]] = field(default_factory=dict)
    fresh: tuple[int, ...] = ()
    """Positions of the newest deck still in the fresh pile, in drawing order."""
    discard: tuple[str, ...] = ()
    turn: int = 0
    declared: str | None = None
    challenge: int = 0
    drawer: str | None = None
    to_draw: int = 0
    assigned: tuple[Pos, ...] = ()
    need: Mapping[str, tuple[Pos, ...]] = field(default_factory=dict)
    """The card keys each player must publish now (deal or draw)."""
    turns: int = 0
    winner: str | None = None
    """The first player to empty its hand."""
    result: str | None = None
    """won, turn_limit, forfeited (someone withheld its audit keys), void or aborted."""
    audit_keys: Mapping[str, Mapping[Pos, str]] = field(default_factory=dict)
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


def _reject(code: str | ErrorCode, message: str) -> Rejection:
    return Rejection(code, message)


def _int(value: Any, what: str) -> int:
    return inputs.integer(value, what)


def _positions_of(data: Any, what: str) -> list[dict[str, Any]]:
    return inputs.objects(data, what, 0, MAX_POSITIONS)


def _next_hash(previous: str, signed: Mapping[str, Any]) -> str:
    chained = {"prev": previous, "move": dict(signed)}
    # decide accepted the move only after canonical_json encoded it (for its signature) and
    # the event keeps that plain form, so plain_state_hash gives the same digest without a
    # second pass over a large proof; the envelope (its signer is unsigned) is looked at here
    if all(isinstance(v, (str, int)) for k, v in signed.items() if k != "move"):
        return plain_state_hash(chained)
    return state_hash(chained)


def genesis_hash(binding: str, seats: Sequence[str], config: MacauaConfig) -> str:
    return state_hash(
        # the config as its JSON text: canonical JSON has no floats (move_timeout is one)
        {"binding": binding, "seats": list(seats), "config": _hashed_config(config)}
    )


def _hashed_config(config: MacauaConfig) -> str:
    """The config's JSON as the genesis hash takes it. ``audit_timeout`` and ``shuffle_proof``
    came later: at the values of the games stored before them (the default timeout, the
    cut-and-choose proof) they are left out, so those games hash as they always did."""
    exclude: set[str] = set()
    if config.audit_timeout == AUDIT_TIMEOUT:
        exclude.add("audit_timeout")
    if config.shuffle_proof == "rounds":
        exclude.add("shuffle_proof")
    return config.model_dump_json(exclude=exclude)


class _Fold(Protocol):
    """An event's handler in evolve. ``head``: what evolve sets for a signed move (``seq``,
    ``chain``), in the same copy of the state as the event's own changes."""

    def __call__(self, state: MacauaState, event: Event, /, **head: Any) -> MacauaState: ...


class Macaua(GameRules[MacauaState]):
    name: ClassVar[str] = "macaua"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    config_model: ClassVar[type[MacauaConfig]] = MacauaConfig
    bots: ClassVar[Mapping[str, BotFactory]] = BOTS
    signed_moves: ClassVar[bool] = True
    """Every command is a move signed with its player's key and built from its player's
    secrets: ``actions`` lists templates (which move is due, which positions), never a
    complete command, so only a player's program (the ``bots``) can turn one into a move."""
    heavy: ClassVar[bool] = True
    """``decide`` checks proofs (a shuffle: about 0.1 s): the gamemaster runs it in a worker
    thread, off its event loop."""
    seat_keys: ClassVar[bool] = True
    """Every seat is bound at its join to its player's Ed25519 verify key (the lobby records
    it in ``table.joined`` and refuses a join without one): every move is checked against
    that key, so neither the server nor another player can swap in a key of its own. Seats
    of tables that started before keys were bound keep the key their first move published."""

    signed_transitions: ClassVar[bool] = True
    """Every transition is signed by every player who checked it (see the module docs): the
    acknowledgements carry the signatures, and the server checks them before moving on."""

    def bind_keys(self, state: MacauaState, keys: Mapping[str, str]) -> MacauaState:
        return _update(state, verify_keys={**state.verify_keys, **keys})

    def signature_holds(
        self,
        state: MacauaState,
        player: str,
        version: int,
        transition: Mapping[str, Any],
        signature: str,
    ) -> bool:
        """Whether ``signature`` is ``player``'s, by its seat key, of the transition at
        ``version`` (:func:`cardroom_mentalpoker.check_transition`)."""
        key = state.verify_keys.get(player)
        if key is None:
            return False
        try:
            check_transition(signature, key, state.binding, version, dict(transition))
        except (SignatureError, EncodingError, ValueError):
            return False
        return True

    def halt(
        self, state: MacauaState, version: int, player: str, rejection: Mapping[str, Any]
    ) -> list[Event]:
        """The event that halts the table because ``player`` rejected the transition at
        ``version`` (``rejection``: its ``code``, ``reason``, ``blame`` and ``evidence``) or
        acknowledged it without a valid signature (then the blame is the player's)."""
        if state.phase == "over":
            return []
        blame = rejection.get("blame")
        if blame != "server" and blame not in state.seats:
            blame = player
        return [
            {
                "type": REJECTED,
                "player": player,
                "version": version,
                "blame": blame,
                "code": cut(str(rejection.get("code", "rejected")), 64),
                "reason": cut(str(rejection.get("reason", "")), 500),
                "evidence": rejection.get("evidence") or {},
            }
        ]

    def __init__(self) -> None:
        self._movers: dict[str, Callable[[MacauaState, str, SignedMove], list[Event]]] = {
            "keys": self._decide_keys,
            "shuffle": self._decide_shuffle,
            "shuffle_proof": self._decide_shuffle_proof,
            "mask": self._decide_mask,
            "reveal": self._decide_reveal,
            "play": self._decide_play,
            "draw": self._decide_draw,
            "audit": self._decide_audit,
        }
        # evolve's handler of each event (_on_<name> for macaua.<name>)
        self._folds: dict[str, _Fold] = {
            name.removeprefix("_on_"): getattr(self, name)
            for name in dir(self)
            if name.startswith("_on_")
        }
        self._phases: dict[str, tuple[Phase, ...]] = {
            "keys": ("keys",),
            "shuffle": ("shuffle",),
            "shuffle_proof": ("shuffle",),
            "mask": ("mask",),
            "reveal": ("deal", "draw"),
            "play": ("play",),
            "draw": ("play",),
            "audit": ("audit",),
        }

    # -- setup ------------------------------------------------------------------------------
    def check_start(self, config: MacauaConfig, seats: Sequence[str]) -> None:
        if len(seats) * config.hand_size + 2 > DECK_SIZE:
            raise _reject(ErrorCode.BAD_CONFIG, "not enough cards for that many hands")

    def setup(self, config: MacauaConfig, seats: Sequence[str]) -> MacauaState:
        return MacauaState(config=config, seats=tuple(seats))

    def bind_table(self, state: MacauaState, game_id: str) -> MacauaState:
        return _update(state, table=game_id)

    def start(self, state: MacauaState, rng: random.Random) -> list[Event]:
        # the table's id, and a nonce: a move signed in one game (or one deployment that
        # reuses a game id) is worthless in any other
        binding = f"{state.table or 'macaua'}/{rng.getrandbits(128):032x}"
        return [{"type": "macaua.started", "binding": binding}]

    # -- commands ---------------------------------------------------------------------------
    def decide(
        self, state: MacauaState, actor: str, command: Command, rng: random.Random
    ) -> list[Event]:
        if not isinstance(command, Mapping) or command.get("type") != MOVE:
            raise _reject(ErrorCode.UNKNOWN_COMMAND, "macaua knows one command: a signed 'move'")
        if not inputs.within_depth(dict(command), MAX_DEPTH):
            raise _reject(ErrorCode.BAD_REQUEST, f"a move nests at most {MAX_DEPTH} levels")
        try:
            signed = SignedMove.from_json({k: v for k, v in command.items() if k != "type"})
        except EncodingError as exc:
            raise _reject(ErrorCode.BAD_REQUEST, str(exc)) from None
        if signed.game_id != state.binding:
            raise _reject(WRONG_GAME, "the move is signed for another game")
        seq = _int(signed.seq, "seq")
        if seq <= state.seq:
            raise _reject(REPLAYED_MOVE, f"move {seq} was already made (now at {state.seq})")
        if seq != state.seq + 1:
            raise _reject(BAD_SEQUENCE, f"the next move is number {state.seq + 1}")
        if signed.prev_hash != state.hash:
            raise _reject(STALE_STATE, "the move is not signed over the current state")
        move = signed.move
        kind = move.get("kind") if isinstance(move, dict) else None
        if not isinstance(kind, str) or kind not in self._movers:
            raise _reject(ErrorCode.BAD_REQUEST, f"move.kind must be one of {sorted(self._movers)}")
        if state.phase not in self._phases[kind] or not _may_move(state, actor):
            raise _reject(ErrorCode.NOT_YOUR_TURN, f"a {kind!r} move is not yours to make now")
        fields = MOVE_FIELDS[kind]
        if kind == "shuffle" and state.config.shuffle_proof == "argument":
            fields = ARGUMENT_SHUFFLE_FIELDS
        unexpected = move.keys() - fields
        if unexpected:
            raise _reject(ErrorCode.BAD_REQUEST, f"move: unexpected field {cut(min(unexpected))!r}")
        key = state.verify_keys.get(actor)
        if key is None:  # the first move publishes the player's Ed25519 key (deck 0 keys)
            key = move.get("verify_key") if kind == "keys" else None
            if not isinstance(key, str):
                raise _reject(BAD_SIGNATURE, "the first move must publish your verify key")
        # the signer is not signed, but it is stored with the move and hashed into the chain:
        # only the key the move is checked with may stand there (and in a move, only it)
        if signed.signer != key or move.get("verify_key", key) != key:
            raise _reject(BAD_SIGNATURE, "the signer must be your verify key")
        try:
            check_move(signed, key, game_id=state.binding, seq=seq, prev_hash=state.hash)
        except SignatureError as exc:
            raise _reject(BAD_SIGNATURE, str(exc)) from None
        except UnicodeError:  # a lone surrogate: text that has no UTF-8 encoding to sign
            raise _reject(ErrorCode.BAD_REQUEST, "the move holds text with no UTF-8 form") from None
        try:
            return self._movers[kind](state, actor, signed)
        except EncodingError as exc:
            raise _reject(ErrorCode.BAD_REQUEST, str(exc)) from None

    def _deck_arg(self, state: MacauaState, move: Mapping[str, Any]) -> int:
        deck = _int(move.get("deck"), "move.deck")
        if deck != state.deck_no:
            raise _reject(ErrorCode.BAD_REQUEST, f"move.deck must be {state.deck_no}")
        return deck

    def _decide_keys(self, state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
        move = signed.move
        deck = self._deck_arg(state, move)
        others = {key for player, key in state.verify_keys.items() if player != actor}
        if deck == 0 and move.get("verify_key") in others:
            raise _reject(BAD_SIGNATURE, "that verify key belongs to another player")
        keys = PublicKeys.from_json(move.get("keys"))
        size = len(state.decks[deck].cards)
        try:
            keys.check(context=proof_context(state.binding, deck, actor), deck_size=size)
        except VerificationError as exc:
            raise _reject(BAD_PROOF, str(exc)) from None
        return [{"type": "macaua.keys", "player": actor, "signed": signed.to_json()}]

    def _decide_shuffle(self, state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
        move = signed.move
        deck = self._deck_arg(state, move)
        n = len(state.decks[deck].cards)
        if state.config.shuffle_proof == "argument":
            self._check_argument(state, actor, move, n)
            return [{"type": "macaua.shuffle", "player": actor, "signed": signed.to_json()}]
        claim = _shuffle_from_move(actor, move, n)
        if not state.config.shuffle_rounds <= claim.rounds <= MAX_SHUFFLE_ROUNDS:
            raise _reject(
                BAD_PROOF, f"a shuffle proof needs at least {state.config.shuffle_rounds} rounds"
            )
        if len(claim.openings) > claim.rounds:
            raise _reject(ErrorCode.BAD_REQUEST, "more openings than rounds")
        if len(claim.openings) == claim.rounds:
            self._check_shuffle(state, claim)
        return [{"type": "macaua.shuffle", "player": actor, "signed": signed.to_json()}]

    def _decide_shuffle_proof(
        self, state: MacauaState, actor: str, signed: SignedMove
    ) -> list[Event]:
        move = signed.move
        pending = state.pending
        if pending is None or pending.player != actor:
            raise _reject(ErrorCode.NOT_YOUR_TURN, "no shuffle of yours awaits its proof")
        if _int(move.get("offset"), "move.offset") != len(pending.openings):
            raise _reject(ErrorCode.BAD_REQUEST, f"move.offset must be {len(pending.openings)}")
        n = pending.size
        more = tuple(ShuffleOpening.from_json(o, n) for o in _openings(move.get("openings")))
        if not more or len(pending.openings) + len(more) > pending.rounds:
            raise _reject(ErrorCode.BAD_REQUEST, "move.openings: wrong number of openings")
        if len(pending.openings) + len(more) == pending.rounds:
            claim = _accepted_shuffle(pending)
            self._check_shuffle(state, _update(claim, openings=claim.openings + more))
        return [{"type": "macaua.shuffle_proof", "player": actor, "signed": signed.to_json()}]

    def _check_argument(
        self, state: MacauaState, actor: str, move: Mapping[str, Any], n: int
    ) -> None:
        """Parse (every point and scalar validated) and check a shuffle with its argument."""
        cards = deck_from_json(move.get("cards"))
        if len(cards) != n:
            raise _reject(ErrorCode.BAD_REQUEST, f"move.cards: the deck has {n} cards")
        proof = ShuffleStepProof(
            _points_from_json(move.get("keyed"), n, "move.keyed"),
            _proofs_from_json(move.get("key_proofs"), n, "move.key_proofs"),
            ShuffleArgument.from_json(move.get("argument"), n),
        )
        deck = state.decks[-1]
        try:
            check_shuffle_step(
                deck.masked,
                cards,
                deck.keys[actor],
                proof,
                context=proof_context(state.binding, state.deck_no, actor),
            )
        except VerificationError as exc:
            raise _reject(BAD_PROOF, str(exc)) from None

    def _check_shuffle(self, state: MacauaState, claim: ShuffleClaim) -> None:
        deck = state.decks[-1]
        proof = ShuffleStepProof(
            claim.keyed, claim.key_proofs, ShuffleProof(claim.digest, claim.openings)
        )
        try:
            check_shuffle_step(
                deck.masked,
                claim.cards,
                deck.keys[claim.player],
                proof,
                context=proof_context(state.binding, state.deck_no, claim.player),
                min_rounds=state.config.shuffle_rounds,
            )
        except VerificationError as exc:
            raise _reject(BAD_PROOF, str(exc)) from None

    def _decide_mask(self, state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
        move = signed.move
        deck_no = self._deck_arg(state, move)
        deck = state.decks[deck_no]
        n = len(deck.cards)
        cards = deck_from_json(move.get("cards"))
        proof = MaskStepProof.from_json(move.get("proof"), n)
        try:
            check_mask_step(
                deck.masked,
                cards,
                deck.keys[actor],
                proof,
                context=proof_context(state.binding, deck_no, actor),
            )
        except VerificationError as exc:
            raise _reject(BAD_PROOF, str(exc)) from None
        return [{"type": "macaua.mask", "player": actor, "signed": signed.to_json()}]

    def _published(
        self,
        state: MacauaState,
        actor: str,
        items: Sequence[Mapping[str, Any]],
        fields: frozenset[str] = KEY_FIELDS,
    ) -> dict[Pos, Scalar]:
        """Check published card keys of ``actor`` against their commitments."""
        out: dict[Pos, Scalar] = {}
        for item in items:
            if item.keys() - fields:
                raise _reject(
                    ErrorCode.BAD_REQUEST, f"a published key has the fields {sorted(fields)}"
                )
            pos = (_int(item.get("deck"), "deck"), _int(item.get("position"), "position"))
            if not 0 <= pos[0] < len(state.decks) or not 0 <= pos[1] < len(
                state.decks[pos[0]].cards
            ):
                raise _reject(ErrorCode.BAD_REQUEST, f"no position {pos[1]} in deck {pos[0]}")
            if pos in out:
                raise _reject(ErrorCode.BAD_REQUEST, "a position is given twice")
            key = Scalar.from_hex(item.get("key"))
            if not key_matches(key, state.decks[pos[0]].keys[actor].cards[pos[1]]):
                raise _reject(
                    BAD_KEY,
                    f"your key for position {pos[1]} of deck {pos[0]} does not match "
                    "your commitment",
                )
            out[pos] = key
        return out

    def _decide_reveal(self, state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
        self._deck_arg(state, signed.move)
        keys = self._published(state, actor, _positions_of(signed.move.get("keys"), "keys"))
        need = state.need.get(actor, ())
        if set(keys) != set(need):
            raise _reject(ErrorCode.BAD_REQUEST, "publish exactly the card keys asked for")
        opened = []
        for pos, key in sorted(keys.items()):
            card = state.decks[pos[0]].masked[pos[1]]
            if actor not in state.decks[pos[0]].masking[pos[1]] or card.is_open:
                raise _reject(ErrorCode.BAD_REQUEST, "that key was already published")
            opened.append([pos[0], pos[1], partial_unmask(card, key).to_json()])
        events: list[Event] = [
            {"type": "macaua.reveal", "player": actor, "signed": signed.to_json(), "opened": opened}
        ]
        if state.phase == "deal" and state.waiting == (actor,):
            after = self.evolve(state, events[0])
            top = after.decks[0].masked[_layout(after).top]
            if decode_card(top.msg) is None or not top.is_open:
                events.append({"type": "macaua.aborted", "reason": "the face-up card is no card"})
        return events

    def _decide_play(self, state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
        move = signed.move
        items = _positions_of(move.get("cards"), "cards")
        claims = [item.get("card") for item in items]
        if not all(isinstance(c, str) for c in claims):
            raise _reject(ErrorCode.BAD_REQUEST, "every played card names its card")
        hand = set(state.hands.get(actor, ()))
        order = [(_int(i.get("deck"), "deck"), _int(i.get("position"), "position")) for i in items]
        if not order:
            raise _reject(ErrorCode.BAD_REQUEST, "a play needs at least one card")
        if any(pos not in hand for pos in order):
            raise _reject(NOT_YOUR_CARD, "that card is not in your hand")
        keys = self._published(state, actor, items, PLAYED_FIELDS)
        played: list[list[Any]] = []
        for pos, claim in zip(order, claims, strict=True):
            masked = state.decks[pos[0]].masked[pos[1]]
            if state.decks[pos[0]].masking[pos[1]] != frozenset({actor}):
                raise _reject(NOT_YOUR_CARD, "that card is not yours alone to open")
            opened = partial_unmask(masked, keys[pos])
            if not opened.is_open or decode_card(opened.msg) != claim:
                raise _reject(CARD_MISMATCH, "the key you published does not open that card")
            played.append([pos[0], pos[1], claim, keys[pos].hex()])
        suit_arg = move.get("suit")
        new_suit = suit_arg if isinstance(suit_arg, str) else None
        if suit_arg is not None and new_suit not in SUITS:
            raise _reject(ErrorCode.BAD_REQUEST, f"suit must be one of {', '.join(SUITS)}")
        why = check_play(
            [str(c) for c in claims], state.discard[-1], state.declared, state.challenge, new_suit
        )
        if why is not None:
            raise _reject(ErrorCode.ILLEGAL_MOVE, why)
        return [
            {
                "type": "macaua.played",
                "player": actor,
                "signed": signed.to_json(),
                "cards": played,
                "suit": new_suit,
            }
        ]

    def _decide_draw(self, state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
        count = max(state.challenge, 1)
        return [
            {"type": "macaua.draw", "player": actor, "signed": signed.to_json(), "count": count}
        ]

    def _decide_audit(self, state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
        keys = self._published(state, actor, _positions_of(signed.move.get("keys"), "keys"))
        if set(keys) != set(audit_positions(state, actor)):
            raise _reject(
                ErrorCode.BAD_REQUEST, "publish your key of every position that still has it"
            )
        events: list[Event] = [
            {"type": "macaua.audit", "player": actor, "signed": signed.to_json()}
        ]
        if state.waiting == (actor,):
            after = self.evolve(state, events[0])
            events.append({"type": "macaua.audited", **audit_decks(after)})
        return events

    # -- by itself --------------------------------------------------------------------------
    def follow_up(self, state: MacauaState, rng: random.Random) -> list[Event]:
        if state.phase != "draw" or state.waiting or state.drawer is None:
            return []
        if state.to_draw <= 0:
            return []
        if state.fresh:
            positions = list(state.fresh[: state.to_draw])
            return [
                {
                    "type": "macaua.draw_assigned",
                    "player": state.drawer,
                    "deck": state.deck_no,
                    "positions": positions,
                }
            ]
        if len(state.discard) > 1:
            return [
                {
                    "type": "macaua.reshuffled",
                    "deck": state.deck_no + 1,
                    "cards": list(state.discard[:-1]),
                }
            ]
        return [{"type": "macaua.draw_ended", "player": state.drawer, "short": state.to_draw}]

    def deadline(self, state: MacauaState) -> Deadline | None:
        if not state.waiting or state.phase == "over":
            return None
        if state.phase == "audit":
            # one deadline for the whole audit (its key stays, so it keeps its first due
            # time), whatever move_timeout says: the game is decided, only keys are missing
            return Deadline(state.config.audit_timeout, key=AUDIT_DEADLINE)
        timeout = state.config.move_timeout
        if timeout is None:
            return None
        return Deadline(timeout, key=f"move:{state.seq}:{state.waiting[0]}")

    def on_timeout(self, state: MacauaState, key: str, rng: random.Random) -> list[Event]:
        if not state.waiting or state.phase == "over":
            return []
        if state.phase == "audit":
            if key != AUDIT_DEADLINE:
                return []
            audit = audit_decks(state, withheld=state.waiting)
            return [{"type": "macaua.audit_withheld", **audit}]
        if key != f"move:{state.seq}:{state.waiting[0]}":
            return []
        return [{"type": "macaua.aborted", "reason": "stalled", "player": state.waiting[0]}]

    def house_action(
        self, state: MacauaState, player: str, rng: random.Random
    ) -> dict[str, Any] | None:
        """None: only the player holds the keys its moves need (see the package docs)."""
        return None

    # -- folding ----------------------------------------------------------------------------
    def evolve(self, state: MacauaState, event: Event) -> MacauaState:
        kind = event["type"]
        handler = self._folds.get(kind.removeprefix("macaua."))
        if handler is None:
            raise ValueError(f"unknown macaua event {kind!r}")
        if "signed" in event:
            # the move's place in the chain: the handler sets it in its one copy of the state
            return handler(state, event, seq=state.seq + 1, chain=Lazy(event["signed"], _chained))
        return handler(state, event)

    def _on_started(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        binding = event["binding"]
        return _update(
            state,
            # (its own chain starts here)
            **{**head, "chain": Lazy.of(genesis_hash(binding, state.seats, state.config))},
            binding=binding,
            phase="keys",
            decks=(DeckState(MACAUA_CARDS, _OPEN_DECK),),
            waiting=state.seats,
            hands={p: () for p in state.seats},
        )

    def _on_keys(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        move = event["signed"]["move"]
        player = event["player"]
        deck = state.decks[-1]
        # accepted keys: decide checked them (and their proofs); no second check here
        keys = PublicKeys.from_json_unchecked(move["keys"])
        deck = _update(deck, keys={**deck.keys, player: keys})
        verify = dict(state.verify_keys)
        if "verify_key" in move and player not in verify:
            verify[player] = move["verify_key"]
        return self._advance(
            state, "shuffle", **head, decks=(*state.decks[:-1], deck), verify_keys=verify
        )

    def _on_shuffle(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        move = event["signed"]["move"]
        if "argument" in move:
            # complete in one command, checked by decide: its cards are all evolve needs (the
            # argument is never parsed again)
            deck = _update(state.decks[-1], masked=MaskedCards(move["cards"]))
            return self._advance(state, "mask", **head, decks=(*state.decks[:-1], deck))
        pending = PendingShuffle(
            player=event["player"],
            move=move,
            size=len(state.decks[-1].cards),
            rounds=move["rounds"],
            openings=tuple(move["openings"]),
        )
        return self._shuffle_progress(state, pending, **head)

    def _on_shuffle_proof(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        assert state.pending is not None
        more = tuple(event["signed"]["move"]["openings"])
        pending = _update(state.pending, openings=state.pending.openings + more)
        return self._shuffle_progress(state, pending, **head)

    def _shuffle_progress(
        self, state: MacauaState, pending: PendingShuffle, **head: Any
    ) -> MacauaState:
        if len(pending.openings) < pending.rounds:
            return _update(state, **head, pending=pending)
        # the shuffle's proof verified in decide: only its cards matter from now on
        deck = _update(state.decks[-1], masked=MaskedCards(pending.move["cards"]))
        return self._advance(state, "mask", **head, pending=None, decks=(*state.decks[:-1], deck))

    def _on_mask(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        cards = MaskedCards(event["signed"]["move"]["cards"])  # decide checked them
        deck = state.decks[-1]
        if state.waiting[1:]:
            decks = (*state.decks[:-1], _update(deck, masked=cards))
            return _update(state, **head, decks=decks, waiting=state.waiting[1:])
        everyone = frozenset(state.seats)
        deck = _update(deck, masked=cards, masking=(everyone,) * len(deck.cards))
        decks = (*state.decks[:-1], deck)
        if state.deck_no == 0:
            layout = _layout(state)
            hands = {p: tuple((0, i) for i in layout.hands[s]) for s, p in enumerate(state.seats)}
            need = {
                p: tuple(
                    sorted(
                        [pos for q, h in hands.items() if q != p for pos in h] + [(0, layout.top)]
                    )
                )
                for p in state.seats
            }
            return _update(
                state,
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
        return _update(state, **head, decks=decks, phase="draw", fresh=fresh, waiting=())

    def _on_reveal(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        player = event["player"]
        decks = _set_cards(
            state.decks,
            (
                # decide computed the card, from the published key
                (d, i, card, state.decks[d].masking[i] - {player})
                for d, i, card in event["opened"]
            ),
        )
        need = {p: v for p, v in state.need.items() if p != player}
        waiting = state.waiting[1:]
        if waiting:
            return _update(state, **head, decks=decks, need=need, waiting=waiting)
        if state.phase == "deal":
            top = decks[0].masked[_layout(state).top]
            card = decode_card(top.msg) if top.is_open else None
            return _update(
                state,
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
            return _update(state, **drawn, waiting=())
        return self._end_turn(state, **drawn, drawer=None)

    def _on_played(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        player = event["player"]
        nobody: frozenset[str] = frozenset()
        decks = _set_cards(
            state.decks, ((d, i, _OPEN[card], nobody) for d, i, card, _k in event["cards"])
        )
        codes: list[str] = [card for _d, _i, card, _k in event["cards"]]
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
            return _update(
                state, **changes, winner=player, result="won", phase="audit", waiting=state.seats
            )
        return self._end_turn(state, **changes)

    def _on_draw(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        return _update(
            state,
            **head,
            phase="draw",
            drawer=event["player"],
            to_draw=event["count"],
            challenge=0,
            waiting=(),
        )

    def _on_draw_assigned(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        deck = event["deck"]
        positions = tuple((deck, i) for i in event["positions"])
        drawer = event["player"]
        seat = state.seats.index(drawer)
        others = tuple(
            state.seats[(seat + k) % len(state.seats)] for k in range(1, len(state.seats))
        )
        return _update(
            state,
            **head,
            fresh=state.fresh[len(positions) :],
            assigned=positions,
            need=dict.fromkeys(others, positions),
            waiting=others,
        )

    def _on_reshuffled(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        cards = tuple(event["cards"])
        return _update(
            state,
            **head,
            phase="keys",
            decks=(*state.decks, DeckState(cards, tuple(_OPEN[c] for c in cards))),
            discard=state.discard[-1:],
            waiting=state.seats,
        )

    def _on_draw_ended(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        return self._end_turn(state, **head, drawer=None, to_draw=0)

    def _on_audit(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        player = event["player"]
        keys = {(k["deck"], k["position"]): k["key"] for k in event["signed"]["move"]["keys"]}
        return _update(
            state,
            **head,
            audit_keys={**state.audit_keys, player: keys},
            waiting=tuple(p for p in state.waiting if p != player),  # in any order
        )

    def _on_audited(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        audit = {k: v for k, v in event.items() if k != "type"}
        result = state.result if audit.get("ok") else "void"
        return _update(state, **head, audit=audit, phase="over", waiting=(), result=result)

    def _on_audit_withheld(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        audit = {k: v for k, v in event.items() if k != "type"}
        # the decided game stands unless the keys that were published show a deck that is no
        # deck (then it is void, as after a complete audit); either way the withholders lose
        result = "void" if audit.get("tampered") else "forfeited"
        return _update(
            state,
            **head,
            audit=audit,
            withheld=tuple(event["withheld"]),
            phase="over",
            waiting=(),
            result=result,
        )

    def _on_rejected(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        rejected = {k: v for k, v in event.items() if k != "type"}
        return _update(
            state, **head, phase="over", waiting=(), result="rejected", rejected=rejected
        )

    def _on_aborted(self, state: MacauaState, event: Event, **head: Any) -> MacauaState:
        result = "aborted" if event.get("player") else "void"
        stalled = event.get("player")
        return _update(state, **head, phase="over", waiting=(), result=result, stalled=stalled)

    def _advance(self, state: MacauaState, then: Phase, **changes: Any) -> MacauaState:
        """``state`` with ``changes`` (not its phase or waiting), its mover done: the next
        one's turn, or phase ``then`` for everyone."""
        if state.waiting[1:]:
            return _update(state, **changes, waiting=state.waiting[1:])
        return _update(state, **changes, phase=then, waiting=state.seats)

    def _end_turn(self, state: MacauaState, **changes: Any) -> MacauaState:
        """``state`` with ``changes`` (none of the turn's own fields), and its turn over: one
        copy of the state, not two (most events of a fold end a turn)."""
        turns = state.turns + 1
        if turns >= state.config.max_turns:
            return _update(
                state,
                **changes,
                turns=turns,
                result="turn_limit",
                phase="audit",
                waiting=state.seats,
            )
        turn = (state.turn + 1) % len(state.seats)
        return _update(
            state, **changes, turns=turns, turn=turn, phase="play", waiting=(state.seats[turn],)
        )

    # -- outputs ----------------------------------------------------------------------------
    def notify(self, before: MacauaState, event: Event, after: MacauaState) -> dict[str, Message]:
        message: Message = {
            "type": "MacauaUpdate",
            "event": event["type"].removeprefix("macaua."),
            "seq": after.seq,
            "phase": after.phase,
            "waiting": list(after.waiting),
        }
        if "player" in event:
            message["player"] = event["player"]
        kind = event["type"]
        # the whole transition, for every player to check and sign (it is public: the server
        # itself sees it, and it holds no key that opens a hidden card)
        message["transition"] = dict(event)
        if kind == "macaua.started":
            message["setup"] = {
                "config": after.config.model_dump(mode="json"),
                "seats": list(after.seats),
                "keys": dict(after.verify_keys),
            }
        if kind == "macaua.played":
            message["cards"] = [c for _d, _i, c, _k in event["cards"]]
            message["suit"] = event["suit"]
            message["challenge"] = after.challenge
        elif kind in ("macaua.draw", "macaua.draw_ended"):
            message["count"] = event.get("count", 0)
        elif kind == "macaua.draw_assigned":
            message["count"] = len(event["positions"])
        elif kind == "macaua.reveal" and after.phase == "play" and before.phase == "deal":
            message["top"] = after.discard[-1]
        elif kind in ("macaua.audited", "macaua.audit_withheld"):
            message["audit"] = {k: v for k, v in event.items() if k != "type"}
        elif kind == "macaua.aborted":
            message["reason"] = event["reason"]
        elif kind == REJECTED:
            message["rejected"] = dict(after.rejected or {})
        return dict.fromkeys(after.seats, message)

    def view(self, state: MacauaState, player: str | None) -> dict[str, Any]:
        view: dict[str, Any] = {
            "phase": state.phase,
            "seats": list(state.seats),
            "binding": state.binding,
            "seq": state.seq,
            "hash": state.hash,
            "deck": state.deck_no,
            "deck_sizes": [len(d.cards) for d in state.decks],
            "shuffle_proof": state.config.shuffle_proof,
            "shuffle_rounds": state.config.shuffle_rounds,
            "waiting": list(state.waiting),
            "turn": state.current if state.phase in ("play", "draw") else None,
            "discard": list(state.discard),
            "top": state.discard[-1] if state.discard else None,
            "declared": state.declared,
            "challenge": state.challenge,
            "fresh": len(state.fresh),
            "hand_counts": {p: len(state.hands.get(p, ())) for p in state.seats},
            "drawer": state.drawer,
            "to_draw": state.to_draw,
            "winner": state.winner,
            "result": state.result,
            "turns": state.turns,
            "audit": dict(state.audit) if state.audit is not None else None,
            "withheld": list(state.withheld),
            "rejected": dict(state.rejected) if state.rejected is not None else None,
        }
        if state.pending is not None:
            view["pending_shuffle"] = {
                "player": state.pending.player,
                "openings": len(state.pending.openings),
                "rounds": state.pending.rounds,
            }
        if state.phase in ("shuffle", "mask"):
            masked = state.decks[-1].masked
            view["cards"] = [_card_json(masked, i) for i in range(len(masked))]
        if player is not None and player in state.seats:
            view["hand"] = [
                {"deck": d, "position": i, "masked": _card_json(state.decks[d].masked, i)}
                for d, i in state.hands.get(player, ())
            ]
        return view

    def actions(self, state: MacauaState, player: str) -> list[dict[str, Any]]:
        if not _may_move(state, player):
            return []
        base = {"type": MOVE, "deck": state.deck_no}
        phase = state.phase
        if phase == "keys":
            return [{**base, "kind": "keys"}]
        if phase == "shuffle":
            if state.pending is not None and state.pending.player == player:
                return [{**base, "kind": "shuffle_proof", "offset": len(state.pending.openings)}]
            if state.config.shuffle_proof == "argument":
                return [{**base, "kind": "shuffle", "proof": "argument"}]
            return [{**base, "kind": "shuffle", "rounds": state.config.shuffle_rounds}]
        if phase == "mask":
            return [{**base, "kind": "mask"}]
        if phase in ("deal", "draw"):
            positions = [list(pos) for pos in state.need.get(player, ())]
            return [{**base, "kind": "reveal", "positions": positions}]
        if phase == "play":
            return [
                {**base, "kind": "play"},
                {**base, "kind": "draw", "count": max(state.challenge, 1)},
            ]
        if phase == "audit":
            positions = [list(pos) for pos in audit_positions(state, player)]
            return [{**base, "kind": "audit", "positions": positions}]
        return []

    def outcome(self, state: MacauaState) -> Outcome | None:
        if state.phase != "over":
            return None
        details: dict[str, Any] = {"result": state.result, "turns": state.turns}
        if state.audit is not None:
            details["audit"] = dict(state.audit)
        if state.rejected is not None:
            # halted: the blamed player ranks last; when the server is blamed, nobody wins
            blame = state.rejected.get("blame")
            details["rejected"] = {k: v for k, v in state.rejected.items() if k != "evidence"}
            details["blame"] = blame
            scores = {p: (-1.0 if p == blame else 0.0) for p in state.seats}
            outcome = Outcome.from_scores(scores, lower_is_better=False)
        elif state.result == "won" and state.winner is not None:
            scores = {p: (1.0 if p == state.winner else 0.0) for p in state.seats}
            outcome = Outcome.from_scores(scores, lower_is_better=False)
        elif state.result == "aborted" and state.stalled is not None:
            details["stalled"] = state.stalled
            scores = {p: (-1.0 if p == state.stalled else 0.0) for p in state.seats}
            outcome = Outcome.from_scores(scores, lower_is_better=False)
        elif state.withheld:
            # forfeited: whoever withheld its audit keys ranks last; a winner who published
            # its own keys keeps the win (unless the keys published show a deck that is no
            # deck: void, and the others tie)
            details["withheld"] = list(state.withheld)
            winner = state.winner if state.result == "forfeited" else None
            if winner in state.withheld:
                winner = None
            if winner is not None:
                details["winner"] = winner
            scores = {
                p: -1.0 if p in state.withheld else 1.0 if p == winner else 0.0 for p in state.seats
            }
            outcome = Outcome.from_scores(scores, lower_is_better=False)
        else:  # turn limit, or void: a deck that is no permutation of its cards
            outcome = Outcome(scores=dict.fromkeys(state.seats, 0.0), ranking=[sorted(state.seats)])
        return Outcome(outcome.scores, outcome.ranking, details)


# -- helpers ------------------------------------------------------------------------------


def _openings(value: Any) -> list[Any]:
    return inputs.items(value, "move.openings", 0, MAX_SHUFFLE_ROUNDS)


def _set_cards(
    decks: tuple[DeckState, ...],
    changes: Iterable[tuple[int, int, MaskedCard | CardJson, frozenset[str]]],
) -> tuple[DeckState, ...]:
    """``decks`` with new cards and maskings at some ``(deck, position, card, masking)``; each
    deck touched is copied once, not once per card."""
    cards: dict[int, tuple[dict[int, MaskedCard | CardJson], list[frozenset[str]]]] = {}
    for d, i, card, masking in changes:
        if d not in cards:
            cards[d] = ({}, list(decks[d].masking))
        cards[d][0][i] = card
        cards[d][1][i] = masking
    out = list(decks)
    for d, (masked, maskings) in cards.items():
        deck = out[d]
        out[d] = _update(
            deck, masked=MaskedCards.replacing(deck.masked, masked), masking=tuple(maskings)
        )
    return tuple(out)


def _card_json(masked: Sequence[MaskedCard], index: int) -> dict[str, str]:
    if isinstance(masked, MaskedCards):
        return masked.json_at(index)
    return masked[index].to_json()


def _layout(state: MacauaState) -> DealLayout:
    return standard_deal(len(state.seats), DECK_SIZE, state.config.hand_size)


_OPEN: dict[str, MaskedCard] = {c: MaskedCard.open(card_point(c)) for c in MACAUA_CARDS}
"""Every card face up (immutable: shared by every deck it is played in)."""
_OPEN_DECK = open_deck()


def _points_from_json(data: Any, n: int, what: str) -> tuple[Point, ...]:
    if not isinstance(data, list) or len(data) != n:
        raise _reject(ErrorCode.BAD_REQUEST, f"{what}: expected a list of {n} points")
    return tuple(Point.from_hex(x) for x in data)


def _proofs_from_json(data: Any, n: int, what: str) -> tuple[DleqProof, ...]:
    if not isinstance(data, list) or len(data) != n:
        raise _reject(ErrorCode.BAD_REQUEST, f"{what}: expected a list of {n} proofs")
    return tuple(DleqProof.from_json(x) for x in data)


def _shuffle_from_move(player: str, move: Mapping[str, Any], n: int) -> ShuffleClaim:
    """Parse and check a shuffle command (every point and scalar is validated)."""
    cards = deck_from_json(move.get("cards"))
    if len(cards) != n:
        raise _reject(ErrorCode.BAD_REQUEST, f"move.cards: the deck has {n} cards")
    digest = move.get("digest")
    if not isinstance(digest, str) or len(digest) != 128:
        raise _reject(ErrorCode.BAD_REQUEST, "move.digest: 128 hex digits")
    try:
        raw = bytes.fromhex(digest)
    except ValueError:
        raise _reject(ErrorCode.BAD_REQUEST, "move.digest: not hex") from None
    return ShuffleClaim(
        player=player,
        cards=cards,
        keyed=_points_from_json(move.get("keyed"), n, "move.keyed"),
        key_proofs=_proofs_from_json(move.get("key_proofs"), n, "move.key_proofs"),
        digest=raw,
        rounds=_int(move.get("rounds"), "move.rounds"),
        openings=tuple(ShuffleOpening.from_json(o, n) for o in _openings(move.get("openings"))),
    )


def _accepted_shuffle(pending: PendingShuffle) -> ShuffleClaim:
    """The pending shuffle's parts, all accepted by decide already: parsed, not checked again."""
    move = pending.move
    return ShuffleClaim(
        player=pending.player,
        cards=deck_from_json_unchecked(move["cards"]),
        keyed=tuple(Point.from_hex_unchecked(x) for x in move["keyed"]),
        key_proofs=tuple(DleqProof.from_json_unchecked(x) for x in move["key_proofs"]),
        digest=bytes.fromhex(move["digest"]),
        rounds=pending.rounds,
        openings=tuple(ShuffleOpening.from_json_unchecked(o) for o in pending.openings),
    )


def _may_move(state: MacauaState, player: str) -> bool:
    """Whether ``player`` is to move now: the first waiting player, strictly in turn; in the
    audit, anyone who has not published its keys yet (so that one who keeps them holds
    nobody else's audit up)."""
    if state.phase == "audit":
        return player in state.waiting
    return bool(state.waiting) and state.waiting[0] == player


def audit_positions(state: MacauaState, player: str) -> list[Pos]:
    """The positions that still carry ``player``'s key (at most the 54 live cards): its own
    hand and the fresh pile. Every other key it had was published when it was needed."""
    return [
        (d, i)
        for d, deck in enumerate(state.decks)
        for i, masking in enumerate(deck.masking)
        if player in masking
    ]


def audit_decks(state: MacauaState, withheld: Sequence[str] = ()) -> dict[str, Any]:
    """Open every position of every deck with every published key; check each deck holds
    exactly the cards it was made of (a shuffle that is no permutation shows here).

    A position that still carries the key of a player in ``withheld`` stays sealed: the
    deck is then not verified (``ok`` is false), but a card it was not made of, or a
    position that opens to no card, among the rest still proves it is no deck
    (``tampered``). ``revealed`` names who published its keys; ``at_fault`` who the result
    holds responsible (those who withheld theirs: a bad deck is not laid at anyone's door,
    as the keys cannot tell which shuffle it was)."""
    missing_keys = frozenset(withheld)
    reports: list[dict[str, Any]] = []
    ok = True
    tampered = False
    for d, deck in enumerate(state.decks):
        found: list[str | None] = []
        sealed = 0
        for i, card in enumerate(deck.masked):
            masking = deck.masking[i] if deck.masking else frozenset()
            if masking & missing_keys:
                sealed += 1
                continue
            current = card
            try:
                for player in sorted(masking):
                    key = Scalar.from_hex(state.audit_keys[player][(d, i)])
                    current = partial_unmask(current, key)
            except (MentalPokerError, KeyError):
                found.append(None)
                continue
            found.append(decode_card(current.msg) if current.is_open else None)
        want = Counter(deck.cards)
        got = Counter(c for c in found if c is not None)
        missing = sorted((want - got).elements())
        extra = sorted((got - want).elements())
        unreadable = sum(1 for c in found if c is None)
        deck_tampered = bool(extra) or unreadable > 0
        deck_ok = not missing and not deck_tampered
        ok = ok and deck_ok
        tampered = tampered or deck_tampered
        report: dict[str, Any] = {
            "deck": d,
            "ok": deck_ok,
            "missing": missing,
            "extra": extra,
            "unreadable": unreadable,
        }
        if missing_keys:
            report["sealed"] = sealed
        reports.append(report)
    audit: dict[str, Any] = {"ok": ok, "decks": reports}
    if missing_keys:
        audit |= {
            "tampered": tampered,
            "revealed": [p for p in state.seats if p in state.audit_keys],
            "withheld": [p for p in state.seats if p in missing_keys],
            "at_fault": [p for p in state.seats if p in missing_keys],
        }
    return audit
