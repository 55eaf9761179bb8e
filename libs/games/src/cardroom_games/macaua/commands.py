"""What Macaua refuses. Its one command is a signed ``move``: the checks of its envelope
(:func:`decide`), then one handler per ``move["kind"]`` (the ``MOVES`` registry) that checks
the move's proofs, keys and cards on public data and returns its events. Also the check of
the seats against the config at the start (:func:`check_start`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from cardroom_engine import Command, Event, Rejection, inputs
from cardroom_engine.kit import Handlers, state
from cardroom_mentalpoker import (
    DleqProof,
    EncodingError,
    MaskedCard,
    MaskStepProof,
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
    check_mask_step,
    check_move,
    check_shuffle_step,
    deck_from_json,
    deck_from_json_unchecked,
    decode_card,
    key_matches,
    partial_unmask,
    proof_context,
)
from cardroom_wire import ErrorCode
from cardroom_wire.messages import cut

from .audit import audit_decks, audit_positions
from .cards import SUITS, check_play
from .config import MAX_SHUFFLE_ROUNDS, MacauaConfig
from .folds import evolve
from .state import (
    ABORTED,
    AUDIT,
    AUDITED,
    DECK_SIZE,
    DRAW,
    KEYS,
    MASK,
    PLAYED,
    REVEAL,
    SHUFFLE,
    SHUFFLE_PROOF,
    MacauaState,
    PendingShuffle,
    Phase,
    Pos,
    commitment,
    deal_layout,
    may_move,
    seat_bit,
)

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
MOVE_PHASES: dict[str, tuple[Phase, ...]] = {
    "keys": ("keys",),
    "shuffle": ("shuffle",),
    "shuffle_proof": ("shuffle",),
    "mask": ("mask",),
    "reveal": ("deal", "draw"),
    "play": ("play",),
    "draw": ("play",),
    "audit": ("audit",),
}
"""The phases in which each kind of move may be made."""


def check_start(config: MacauaConfig, seats: Sequence[str]) -> None:
    """Refuse a start (``bad_config``) with too many seats for the hand size."""
    if len(seats) * config.hand_size + 2 > DECK_SIZE:
        raise Rejection(ErrorCode.BAD_CONFIG, "not enough cards for that many hands")


Mover = Callable[[MacauaState, str, SignedMove], list[Event]]
MOVES = Handlers[Mover]("macaua")
"""The handler of each kind of move, given a move whose envelope :func:`decide` checked."""


def decide(state: MacauaState, actor: str, command: Command) -> list[Event]:
    """The events of ``actor``'s signed move, or a Rejection: the envelope (game, sequence,
    chain, turn, fields, signature by the seat's key) here, the move by its kind's handler."""
    if not isinstance(command, Mapping) or command.get("type") != MOVE:
        raise Rejection(ErrorCode.UNKNOWN_COMMAND, "macaua knows one command: a signed 'move'")
    if not inputs.within_depth(dict(command), MAX_DEPTH):
        raise Rejection(ErrorCode.BAD_REQUEST, f"a move nests at most {MAX_DEPTH} levels")
    try:
        signed = SignedMove.from_json({k: v for k, v in command.items() if k != "type"})
    except EncodingError as exc:
        raise Rejection(ErrorCode.BAD_REQUEST, str(exc)) from None
    if signed.game_id != state.binding:
        raise Rejection(WRONG_GAME, "the move is signed for another game")
    seq = inputs.integer(signed.seq, "seq")
    if seq <= state.seq:
        raise Rejection(REPLAYED_MOVE, f"move {seq} was already made (now at {state.seq})")
    if seq != state.seq + 1:
        raise Rejection(BAD_SEQUENCE, f"the next move is number {state.seq + 1}")
    if signed.prev_hash != state.hash:
        raise Rejection(STALE_STATE, "the move is not signed over the current state")
    move = signed.move
    kind = move.get("kind") if isinstance(move, dict) else None
    mover = MOVES.get(kind) if isinstance(kind, str) else None
    if not isinstance(kind, str) or mover is None:
        raise Rejection(ErrorCode.BAD_REQUEST, f"move.kind must be one of {sorted(MOVES)}")
    if state.phase not in MOVE_PHASES[kind] or not may_move(state, actor):
        raise Rejection(ErrorCode.NOT_YOUR_TURN, f"a {kind!r} move is not yours to make now")
    fields = MOVE_FIELDS[kind]
    if kind == "shuffle" and state.config.shuffle_proof == "argument":
        fields = ARGUMENT_SHUFFLE_FIELDS
    unexpected = move.keys() - fields
    if unexpected:
        raise Rejection(ErrorCode.BAD_REQUEST, f"move: unexpected field {cut(min(unexpected))!r}")
    key = state.verify_keys.get(actor)
    if key is None:  # the first move publishes the player's Ed25519 key (deck 0 keys)
        key = move.get("verify_key") if kind == "keys" else None
        if not isinstance(key, str):
            raise Rejection(BAD_SIGNATURE, "the first move must publish your verify key")
    # the signer is not signed, but it is stored with the move and hashed into the chain:
    # only the key the move is checked with may stand there (and in a move, only it)
    if signed.signer != key or move.get("verify_key", key) != key:
        raise Rejection(BAD_SIGNATURE, "the signer must be your verify key")
    try:
        check_move(signed, key, game_id=state.binding, seq=seq, prev_hash=state.hash)
    except SignatureError as exc:
        raise Rejection(BAD_SIGNATURE, str(exc)) from None
    except UnicodeError:  # a lone surrogate: text that has no UTF-8 encoding to sign
        raise Rejection(ErrorCode.BAD_REQUEST, "the move holds text with no UTF-8 form") from None
    try:
        return mover(state, actor, signed)
    except EncodingError as exc:
        raise Rejection(ErrorCode.BAD_REQUEST, str(exc)) from None


# -- the moves ----------------------------------------------------------------------------
@MOVES.on("keys")
def decide_keys(state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
    move = signed.move
    deck = _deck_arg(state, move)
    others = {key for player, key in state.verify_keys.items() if player != actor}
    if deck == 0 and move.get("verify_key") in others:
        raise Rejection(BAD_SIGNATURE, "that verify key belongs to another player")
    keys = PublicKeys.from_json(move.get("keys"))
    size = len(state.decks[deck].cards)
    try:
        keys.check(context=proof_context(state.binding, deck, actor), deck_size=size)
    except VerificationError as exc:
        raise Rejection(BAD_PROOF, str(exc)) from None
    return [{"type": KEYS, "player": actor, "signed": signed.to_json()}]


@MOVES.on("shuffle")
def decide_shuffle(state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
    move = signed.move
    deck = _deck_arg(state, move)
    n = len(state.decks[deck].cards)
    if state.config.shuffle_proof == "argument":
        _check_argument(state, actor, move, n)
        return [{"type": SHUFFLE, "player": actor, "signed": signed.to_json()}]
    claim = _shuffle_from_move(actor, move, n)
    if not state.config.shuffle_rounds <= claim.rounds <= MAX_SHUFFLE_ROUNDS:
        raise Rejection(
            BAD_PROOF, f"a shuffle proof needs at least {state.config.shuffle_rounds} rounds"
        )
    if len(claim.openings) > claim.rounds:
        raise Rejection(ErrorCode.BAD_REQUEST, "more openings than rounds")
    if len(claim.openings) == claim.rounds:
        _check_shuffle(state, claim)
    return [{"type": SHUFFLE, "player": actor, "signed": signed.to_json()}]


@MOVES.on("shuffle_proof")
def decide_shuffle_proof(state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
    move = signed.move
    pending = state.pending
    if pending is None or pending.player != actor:
        raise Rejection(ErrorCode.NOT_YOUR_TURN, "no shuffle of yours awaits its proof")
    if inputs.integer(move.get("offset"), "move.offset") != len(pending.openings):
        raise Rejection(ErrorCode.BAD_REQUEST, f"move.offset must be {len(pending.openings)}")
    n = pending.size
    more = tuple(ShuffleOpening.from_json(o, n) for o in _openings(move.get("openings")))
    if not more or len(pending.openings) + len(more) > pending.rounds:
        raise Rejection(ErrorCode.BAD_REQUEST, "move.openings: wrong number of openings")
    if len(pending.openings) + len(more) == pending.rounds:
        claim = _accepted_shuffle(pending)
        _check_shuffle(state, claim._replace(openings=claim.openings + more))
    return [{"type": SHUFFLE_PROOF, "player": actor, "signed": signed.to_json()}]


@MOVES.on("mask")
def decide_mask(state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
    move = signed.move
    deck_no = _deck_arg(state, move)
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
        raise Rejection(BAD_PROOF, str(exc)) from None
    return [{"type": MASK, "player": actor, "signed": signed.to_json()}]


@MOVES.on("reveal")
def decide_reveal(state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
    _deck_arg(state, signed.move)
    keys = _published(state, actor, _positions(signed.move.get("keys"), "keys"))
    need = state.need.get(actor, ())
    if set(keys) != set(need):
        raise Rejection(ErrorCode.BAD_REQUEST, "publish exactly the card keys asked for")
    opened = []
    for pos, key in sorted(keys.items()):
        card = state.decks[pos[0]].masked[pos[1]]
        if card.is_open:  # (_published refused a position without the actor's key)
            raise Rejection(ErrorCode.BAD_REQUEST, "that key was already published")
        opened.append([pos[0], pos[1], partial_unmask(card, key).to_json()])
    events: list[Event] = [
        {"type": REVEAL, "player": actor, "signed": signed.to_json(), "opened": opened}
    ]
    if state.phase == "deal" and state.waiting == (actor,):
        after = evolve(state, events[0])
        top = after.decks[0].masked[deal_layout(after).top]
        if decode_card(top.msg) is None or not top.is_open:
            events.append({"type": ABORTED, "reason": "the face-up card is no card"})
    return events


@MOVES.on("play")
def decide_play(state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
    move = signed.move
    items = _positions(move.get("cards"), "cards")
    claims = [item.get("card") for item in items]
    if not all(isinstance(c, str) for c in claims):
        raise Rejection(ErrorCode.BAD_REQUEST, "every played card names its card")
    hand = set(state.hands.get(actor, ()))
    order = [
        (inputs.integer(i.get("deck"), "deck"), inputs.integer(i.get("position"), "position"))
        for i in items
    ]
    if not order:
        raise Rejection(ErrorCode.BAD_REQUEST, "a play needs at least one card")
    if any(pos not in hand for pos in order):
        raise Rejection(NOT_YOUR_CARD, "that card is not in your hand")
    keys = _published(state, actor, items, PLAYED_FIELDS)
    played: list[list[Any]] = []
    for pos, claim in zip(order, claims, strict=True):
        masked = state.decks[pos[0]].masked[pos[1]]
        if state.decks[pos[0]].masking[pos[1]] != seat_bit(state, actor):
            raise Rejection(NOT_YOUR_CARD, "that card is not yours alone to open")
        opened = partial_unmask(masked, keys[pos])
        if not opened.is_open or decode_card(opened.msg) != claim:
            raise Rejection(CARD_MISMATCH, "the key you published does not open that card")
        played.append([pos[0], pos[1], claim, keys[pos].hex()])
    suit_arg = move.get("suit")
    new_suit = suit_arg if isinstance(suit_arg, str) else None
    if suit_arg is not None and new_suit not in SUITS:
        raise Rejection(ErrorCode.BAD_REQUEST, f"suit must be one of {', '.join(SUITS)}")
    why = check_play(
        [str(c) for c in claims], state.discard[-1], state.declared, state.challenge, new_suit
    )
    if why is not None:
        raise Rejection(ErrorCode.ILLEGAL_MOVE, why)
    return [
        {
            "type": PLAYED,
            "player": actor,
            "signed": signed.to_json(),
            "cards": played,
            "suit": new_suit,
        }
    ]


@MOVES.on("draw")
def decide_draw(state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
    count = max(state.challenge, 1)
    return [{"type": DRAW, "player": actor, "signed": signed.to_json(), "count": count}]


@MOVES.on("audit")
def decide_audit(state: MacauaState, actor: str, signed: SignedMove) -> list[Event]:
    keys = _published(state, actor, _positions(signed.move.get("keys"), "keys"))
    if set(keys) != set(audit_positions(state, actor)):
        raise Rejection(
            ErrorCode.BAD_REQUEST, "publish your key of every position that still has it"
        )
    events: list[Event] = [{"type": AUDIT, "player": actor, "signed": signed.to_json()}]
    if state.waiting == (actor,):
        after = evolve(state, events[0])
        events.append({"type": AUDITED, **audit_decks(after)})
    return events


# -- checks -------------------------------------------------------------------------------
def _deck_arg(state: MacauaState, move: Mapping[str, Any]) -> int:
    deck = inputs.integer(move.get("deck"), "move.deck")
    if deck != state.deck_no:
        raise Rejection(ErrorCode.BAD_REQUEST, f"move.deck must be {state.deck_no}")
    return deck


def _published(
    state: MacauaState,
    actor: str,
    items: Sequence[Mapping[str, Any]],
    fields: frozenset[str] = KEY_FIELDS,
) -> dict[Pos, Scalar]:
    """Check published card keys of ``actor`` against their commitments."""
    out: dict[Pos, Scalar] = {}
    for item in items:
        if item.keys() - fields:
            raise Rejection(
                ErrorCode.BAD_REQUEST, f"a published key has the fields {sorted(fields)}"
            )
        pos = (
            inputs.integer(item.get("deck"), "deck"),
            inputs.integer(item.get("position"), "position"),
        )
        if not 0 <= pos[0] < len(state.decks) or not 0 <= pos[1] < state.decks[pos[0]].size:
            raise Rejection(ErrorCode.BAD_REQUEST, f"no position {pos[1]} in deck {pos[0]}")
        if pos in out:
            raise Rejection(ErrorCode.BAD_REQUEST, "a position is given twice")
        deck = state.decks[pos[0]]
        # only a key still on the card is published (the table keeps no commitment for one
        # that is not: see the folds' _set_cards)
        if pos[1] >= len(deck.masking) or not deck.masking[pos[1]] & seat_bit(state, actor):
            raise Rejection(
                ErrorCode.BAD_REQUEST,
                f"your key is not on position {pos[1]} of deck {pos[0]} (published already)",
            )
        key = Scalar.from_hex(item.get("key"))
        if not key_matches(key, commitment(deck, state.seats.index(actor), pos[1])):
            raise Rejection(
                BAD_KEY,
                f"your key for position {pos[1]} of deck {pos[0]} does not match your commitment",
            )
        out[pos] = key
    return out


def _check_argument(state: MacauaState, actor: str, move: Mapping[str, Any], n: int) -> None:
    """Parse (every point and scalar validated) and check a shuffle with its argument."""
    cards = deck_from_json(move.get("cards"))
    if len(cards) != n:
        raise Rejection(ErrorCode.BAD_REQUEST, f"move.cards: the deck has {n} cards")
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
        raise Rejection(BAD_PROOF, str(exc)) from None


def _check_shuffle(state: MacauaState, claim: ShuffleClaim) -> None:
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
        raise Rejection(BAD_PROOF, str(exc)) from None


# -- parsing ------------------------------------------------------------------------------
@state
class ShuffleClaim(NamedTuple):
    """A shuffle move parsed for its check."""

    player: str
    cards: tuple[MaskedCard, ...]
    keyed: tuple[Point, ...]
    key_proofs: tuple[DleqProof, ...]
    digest: bytes
    rounds: int
    openings: tuple[ShuffleOpening, ...] = ()


def _shuffle_from_move(player: str, move: Mapping[str, Any], n: int) -> ShuffleClaim:
    """Parse and check a shuffle command (every point and scalar is validated)."""
    cards = deck_from_json(move.get("cards"))
    if len(cards) != n:
        raise Rejection(ErrorCode.BAD_REQUEST, f"move.cards: the deck has {n} cards")
    digest = move.get("digest")
    if not isinstance(digest, str) or len(digest) != 128:
        raise Rejection(ErrorCode.BAD_REQUEST, "move.digest: 128 hex digits")
    try:
        raw = bytes.fromhex(digest)
    except ValueError:
        raise Rejection(ErrorCode.BAD_REQUEST, "move.digest: not hex") from None
    return ShuffleClaim(
        player=player,
        cards=cards,
        keyed=_points_from_json(move.get("keyed"), n, "move.keyed"),
        key_proofs=_proofs_from_json(move.get("key_proofs"), n, "move.key_proofs"),
        digest=raw,
        rounds=inputs.integer(move.get("rounds"), "move.rounds"),
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


def _points_from_json(data: Any, n: int, what: str) -> tuple[Point, ...]:
    if not isinstance(data, list) or len(data) != n:
        raise Rejection(ErrorCode.BAD_REQUEST, f"{what}: expected a list of {n} points")
    return tuple(Point.from_hex(x) for x in data)


def _proofs_from_json(data: Any, n: int, what: str) -> tuple[DleqProof, ...]:
    if not isinstance(data, list) or len(data) != n:
        raise Rejection(ErrorCode.BAD_REQUEST, f"{what}: expected a list of {n} proofs")
    return tuple(DleqProof.from_json(x) for x in data)


def _openings(value: Any) -> list[Any]:
    return inputs.items(value, "move.openings", 0, MAX_SHUFFLE_ROUNDS)


def _positions(data: Any, what: str) -> list[dict[str, Any]]:
    return inputs.objects(data, what, 0, MAX_POSITIONS)
