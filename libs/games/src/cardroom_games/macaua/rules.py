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

This module assembles the game (:class:`Macaua`) and says what players see (``notify``,
``view``, ``actions``). The parts: :mod:`.state` (the state, the hash chain, the event
types), :mod:`.commands` (``decide``: a move's checks), :mod:`.folds` (``evolve``),
:mod:`.flow` (the start, draws, deadlines, the outcome), :mod:`.audit` (the audit's opening
of every deck) and :mod:`.config`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from cardroom_engine import (
    BotFactory,
    Command,
    Deadline,
    Event,
    GameRules,
    Message,
    Outcome,
)
from cardroom_mentalpoker import EncodingError, SignatureError, check_transition

from . import commands, flow, folds
from .audit import audit_positions
from .bots import BOTS
from .commands import (
    MOVE,
)
from .config import MacauaConfig
from .state import (
    ABORTED,
    AUDIT_WITHHELD,
    AUDITED,
    DRAW,
    DRAW_ASSIGNED,
    DRAW_ENDED,
    PLAYED,
    REJECTED,
    REVEAL,
    STARTED,
    MacauaState,
    MaskedCards,
    card_json,
    may_move,
)


class Macaua(GameRules[MacauaState]):
    name: ClassVar[str] = "macaua"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    config_model: ClassVar[type[MacauaConfig]] = MacauaConfig
    bots: ClassVar[Mapping[str, BotFactory]] = BOTS
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
    action_templates: ClassVar[bool] = True
    """``actions`` lists templates (which move is due, which positions), never a complete
    command: every move is built from its player's secrets and signed with its key, so only
    a player's program (the ``bots``) can turn one into a move."""

    # -- setup ------------------------------------------------------------------------------
    def check_start(self, config: MacauaConfig, seats: Sequence[str]) -> None:
        commands.check_start(config, seats)

    def setup(self, config: MacauaConfig, seats: Sequence[str]) -> MacauaState:
        return MacauaState(config=config, seats=tuple(seats))

    def bind_table(self, state: MacauaState, game_id: str) -> MacauaState:
        return state._replace(table=game_id)

    def settle(self, state: MacauaState) -> None:
        # the hash chain's digest of the last move: until read, its link keeps the move
        # (a shuffle's proof is tens of KB)
        state.hash  # noqa: B018 -- read for its effect: Lazy keeps the value, drops the move
        # the cards of a shuffle or mask step, kept as its JSON until the next step replaces
        # them (about four times their packed size)
        for deck in state.decks:
            if isinstance(deck.masked, MaskedCards):
                deck.masked.pack()

    def bind_keys(self, state: MacauaState, keys: Mapping[str, str]) -> MacauaState:
        # the table's mapping itself when there is none yet (neither is changed in place)
        verify = {**state.verify_keys, **keys} if state.verify_keys else keys
        return state._replace(verify_keys=verify)

    def start(self, state: MacauaState, rng: random.Random) -> list[Event]:
        return flow.start(state, rng)

    # -- commands, folds --------------------------------------------------------------------
    def decide(
        self, state: MacauaState, actor: str, command: Command, rng: random.Random
    ) -> list[Event]:
        return commands.decide(state, actor, command)

    def evolve(self, state: MacauaState, event: Event) -> MacauaState:
        return folds.evolve(state, event)

    # -- by itself --------------------------------------------------------------------------
    def follow_up(self, state: MacauaState, rng: random.Random) -> list[Event]:
        return flow.follow_up(state)

    def deadline(self, state: MacauaState) -> Deadline | None:
        return flow.deadline(state)

    def on_timeout(self, state: MacauaState, key: str, rng: random.Random) -> list[Event]:
        return flow.on_timeout(state, key)

    def house_action(
        self, state: MacauaState, player: str, rng: random.Random
    ) -> dict[str, Any] | None:
        """None: only the player holds the keys its moves need (see the package docs)."""
        return None

    def outcome(self, state: MacauaState) -> Outcome | None:
        return flow.outcome(state)

    # -- transition signing -----------------------------------------------------------------
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
        """The event that halts the table on a rejected transition (:func:`.flow.halt`)."""
        return flow.halt(state, version, player, rejection)

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
        if kind == STARTED:
            message["setup"] = {
                "config": after.config.model_dump(mode="json"),
                "seats": list(after.seats),
                "keys": dict(after.verify_keys),
            }
        if kind == PLAYED:
            message["cards"] = [c for _d, _i, c, _k in event["cards"]]
            message["suit"] = event["suit"]
            message["challenge"] = after.challenge
        elif kind in (DRAW, DRAW_ENDED):
            message["count"] = event.get("count", 0)
        elif kind == DRAW_ASSIGNED:
            message["count"] = len(event["positions"])
        elif kind == REVEAL and after.phase == "play" and before.phase == "deal":
            message["top"] = after.discard[-1]
        elif kind in (AUDITED, AUDIT_WITHHELD):
            message["audit"] = {k: v for k, v in event.items() if k != "type"}
        elif kind == ABORTED:
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
            "deck_sizes": [d.size for d in state.decks],
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
            view["cards"] = [card_json(masked, i) for i in range(len(masked))]
        if player is not None and player in state.seats:
            view["hand"] = [
                {"deck": d, "position": i, "masked": card_json(state.decks[d].masked, i)}
                for d, i in state.hands.get(player, ())
            ]
        return view

    def actions(self, state: MacauaState, player: str) -> list[dict[str, Any]]:
        if not may_move(state, player):
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


GAME = Macaua()
