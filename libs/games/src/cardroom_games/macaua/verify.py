"""A player's check of every Macaua transition: nobody has to trust the server.

Each player's program keeps its own copy of the game's public state, built only from the
transitions it was sent and the game's rules, and for each transition (one notification's
``transition``) it decides, as the server's ``decide`` did:

- a player's move: it must be signed by that player's seat key over this copy's sequence
  number and hash, and be legal here (proofs, keys, cards), and the server's record of it
  (the event, with what the server derived: unmasked cards, opened cards) must be exactly
  what the move yields here;
- a server step (a draw's positions, a reshuffle, the audit, a deadline's effect): it must be
  one the rules produce from this copy;
- a halt (``macaua.rejected``: a player rejected a transition, or acknowledged it without a
  valid signature): it must name a seat, blame that seat and refer to a transition already
  sent. Nobody else can tell whether that player rejected or signed (an acknowledgement
  goes to the server alone, as a timeout's silence does), but the player named can: its own
  copy refuses a halt that names it when it signed every transition (``false_halt``, the
  server's fault), so a server that frames a player never gets that player's signature on
  the frame;
- the first one (``macaua.started``) also brings the setup (config, seats, the verify keys
  bound to the seats): this player's own key must be the one it holds, and the binding must
  name the table it joined.

If the transition holds, the player signs it (:func:`cardroom_mentalpoker.sign_transition`)
and the signature goes with its acknowledgement. If not, the acknowledgement carries a
rejection instead (``code``, ``reason``, ``blame``, ``evidence``), and the server halts the
table. Whom a rejection blames follows from what failed: a move that does not verify under
its player's key, or a record that differs from what the move yields, or a server step the
rules do not produce, cannot have come from a player, so the blame is the ``server``'s; a
move its player signed that breaks the rules is that player's (and a server that relayed it
failed to refuse it). The evidence is the transition as received.

Checking is CPU work (a shuffle's argument about 0.1 s), so a client calls :meth:`check` off
its event loop (the SDK does).
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardroom_engine import NoMove, Rejection
from cardroom_mentalpoker import sign_transition, state_hash, verify_key_hex
from nacl.signing import SigningKey

from .commands import BAD_SEQUENCE, BAD_SIGNATURE, REPLAYED_MOVE, STALE_STATE, WRONG_GAME
from .config import MIN_SHUFFLE_ROUNDS, MacauaConfig
from .rules import Macaua
from .state import REJECTED, MacauaState

__all__ = ["TransitionVerifier", "Untrusted", "Unverifiable", "Verdict"]

# Refusals of a move that only a forged or misplaced envelope earns: its player signs only
# over the state it was shown, so such a move did not come from it as relayed.
SERVER_FAULTS = frozenset({BAD_SIGNATURE, WRONG_GAME, BAD_SEQUENCE, STALE_STATE, REPLAYED_MOVE})
EVIDENCE_BYTES = 16_000  # of the transition kept in a rejection (the rest is cut)

_RULES = Macaua()


@dataclass(frozen=True)
class Verdict:
    """What the acknowledgement carries: a ``signature`` (hex), or a ``rejection``."""

    signature: str | None = None
    rejection: dict[str, Any] | None = None

    def ack_fields(self) -> dict[str, Any]:
        if self.rejection is not None:
            return {"reject": self.rejection}
        return {"signature": self.signature} if self.signature is not None else {}


class Unverifiable(Exception):
    """This copy cannot check the transition (it did not see the game from its start: a
    program restarted mid-game has lost its keys too). Nothing to sign, nothing to blame:
    the player acknowledges nothing, as if away."""


class Untrusted(NoMove):
    """There is nothing checked to act on: this copy failed a transition (the table halts)
    or has not seen the start, or the rules ask nothing of this player in it. The player's
    program makes no move."""


class Rejected(Exception):
    def __init__(self, code: str, reason: str, blame: str) -> None:
        super().__init__(reason)
        self.code, self.reason, self.blame = code, reason, blame


class TransitionVerifier:
    """One player's copy of one game, and its verdict on each transition (see the module)."""

    def __init__(
        self,
        player: str,
        signing_key: SigningKey,
        game_id: str,
        min_rounds: int = MIN_SHUFFLE_ROUNDS,
    ) -> None:
        self.player = player
        self.min_rounds = min_rounds  # the fewest shuffle proof rounds it plays with
        self.game_id = game_id
        self._key = signing_key
        self.state: MacauaState | None = None
        self.checked = 0  # the last version checked
        self.failed: dict[str, Any] | None = None
        # the events a move yields after its own (the last audit's result): the next
        # transitions must be these
        self._owed: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def check(self, version: int, message: Mapping[str, Any]) -> Verdict:
        """The verdict on the transition a notification at ``version`` carries. Once one
        failed, every later one is refused with the same rejection (the table halts).
        Raises :class:`Unverifiable` when this copy missed the game's start."""
        with self._lock:
            if self.failed is not None:
                return Verdict(rejection=self.failed)
            transition = message.get("transition")
            try:
                if not isinstance(transition, Mapping):
                    raise Rejected(
                        "no_transition", "the notification carries no transition", "server"
                    )
                if version <= self.checked:
                    raise Rejected(
                        "replayed_transition", f"version {version} was checked already", "server"
                    )
                self.state = self._apply(dict(transition), message, version)
            except Rejected as exc:
                self.failed = {
                    "code": exc.code,
                    "reason": exc.reason,
                    "blame": exc.blame,
                    "version": version,
                    "evidence": _evidence(transition),
                }
                return Verdict(rejection=self.failed)
            self.checked = version
            binding = self.state.binding
            return Verdict(signature=sign_transition(self._key, binding, version, transition))

    def asked(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """This player's view of its own checked copy, and the actions the rules ask of it
        there: what its moves are built from, never the server's view or actions. (A server
        that listed the position of a card in this player's hand, or of the next fresh
        card, as a key to publish would otherwise learn that card; one that sent other
        cards to shuffle or mask would learn this player's keys on them.) Raises
        :class:`Untrusted` when there is nothing checked to act on."""
        with self._lock:
            state, failed = self.state, self.failed
        if failed is not None:
            raise Untrusted(f"a transition was rejected ({failed['code']}): the table halts")
        if state is None:
            raise Untrusted("this copy has not seen the game's start")
        actions = _RULES.actions(state, self.player)
        if not actions:
            raise Untrusted("the rules ask nothing of this player now")
        # (as the server sends them: JSON, whose arrays are lists)
        view: dict[str, Any] = json.loads(json.dumps(_RULES.view(state, self.player)))
        return view, json.loads(json.dumps(actions))

    # -- the checks --------------------------------------------------------------------------
    def _apply(
        self, transition: dict[str, Any], message: Mapping[str, Any], version: int
    ) -> MacauaState:
        kind = transition.get("type")
        if kind == "macaua.started":
            start = self._setup(message.get("setup"))
            binding = transition.get("binding")
            if not isinstance(binding, str) or not binding.startswith(f"{self.game_id}/"):
                raise Rejected("wrong_game", "the binding does not name this table", "server")
            return _fold(start, transition)
        state = self.state
        if state is None:
            raise Unverifiable("a transition before the game's start: this copy cannot check it")
        if self._owed:
            if transition != self._owed.pop(0):
                raise Rejected(
                    "altered_record",
                    "the recorded transition is not what the move yields",
                    "server",
                )
            return _fold(state, transition)
        if "signed" in transition:
            return self._move(state, transition)
        if kind == REJECTED:
            return self._halt(state, transition, version)
        return self._server_step(state, transition)

    def _setup(self, setup: object) -> MacauaState:
        if self.state is not None:
            raise Rejected("restarted", "the game started twice", "server")
        if not isinstance(setup, Mapping):
            raise Rejected("no_setup", "the start carries no setup", "server")
        try:
            config = MacauaConfig.model_validate(setup.get("config"))
            seats = [str(p) for p in setup.get("seats") or ()]
            keys = {str(p): str(k) for p, k in dict(setup.get("keys") or {}).items()}
        except Exception:
            raise Rejected("bad_setup", "the setup is malformed", "server") from None
        if self.player not in seats:
            raise Rejected("not_seated", "this player has no seat in the setup", "server")
        if config.shuffle_proof == "rounds" and config.shuffle_rounds < self.min_rounds:
            # a shuffler could then stack the deck (MIN_SHUFFLE_ROUNDS): no fair game
            raise Rejected(
                "weak_proof",
                f"shuffles proved by {config.shuffle_rounds} rounds: fewer than {self.min_rounds}",
                "server",
            )
        if keys.get(self.player) != verify_key_hex(self._key):
            # the key bound at this player's join is its own: another one here is a swap
            raise Rejected("key_swapped", "this player's seat key is not its own", "server")
        if set(keys) != set(seats):
            raise Rejected("missing_key", "a seat has no key bound", "server")
        state = _RULES.setup(config, seats)
        state = _RULES.bind_table(state, self.game_id)
        return _RULES.bind_keys(state, keys)

    def _move(self, state: MacauaState, transition: dict[str, Any]) -> MacauaState:
        player = transition.get("player")
        if not isinstance(player, str) or player not in state.seats:
            raise Rejected("unknown_player", "a move of nobody at this table", "server")
        signed = transition["signed"]
        if not isinstance(signed, Mapping):
            raise Rejected("bad_move", "the move is not an object", "server")
        try:
            events = _RULES.decide(state, player, {"type": "move", **signed}, random.Random(0))
        except Rejection as exc:
            blame = "server" if exc.code in SERVER_FAULTS else player
            raise Rejected(str(exc.code), exc.message, blame) from None
        # (as the store keeps it: JSON, whose arrays come back as lists)
        recorded, *self._owed = json.loads(json.dumps(events))
        if recorded != transition:
            raise Rejected(
                "altered_record", "the recorded transition is not what the move yields", "server"
            )
        return _fold(state, transition)

    def _halt(self, state: MacauaState, transition: dict[str, Any], version: int) -> MacauaState:
        player, halted = transition.get("player"), transition.get("version")
        if (
            not isinstance(player, str)
            or player not in state.seats
            or transition.get("blame") != player
            or not isinstance(halted, int)
            or isinstance(halted, bool)
            or not 0 < halted < version
        ):
            raise Rejected(
                "bad_halt", "a halt that names no seat or no earlier transition", "server"
            )
        if player == self.player:
            # this copy signed every transition so far (a rejection stops checking for good)
            raise Rejected(
                "false_halt",
                "the table halted on a rejection or a bad signature this player never sent",
                "server",
            )
        return _fold(state, transition)  # nothing follows it

    def _server_step(self, state: MacauaState, transition: dict[str, Any]) -> MacauaState:
        rng = random.Random(0)
        candidates = _RULES.follow_up(state, rng)
        due = _RULES.deadline(state)
        if due is not None:
            candidates += _RULES.on_timeout(state, due.key, rng)
        if transition not in json.loads(json.dumps(candidates)):
            raise Rejected(
                "unexpected_step", "a server step the rules do not produce here", "server"
            )
        return _fold(state, transition)


def _fold(state: MacauaState, transition: dict[str, Any]) -> MacauaState:
    try:
        return _RULES.evolve(state, transition)
    except Exception:
        raise Rejected("bad_transition", "the transition does not apply", "server") from None


def _evidence(transition: object) -> dict[str, Any]:
    """The transition as received: its kind, its player, its hash (which anyone can compare
    with the hash of what the server recorded: a difference shows the server relayed one
    thing and recorded another), and the transition itself, cut to a size an
    acknowledgement can carry."""
    if not isinstance(transition, Mapping):
        return {"transition": None}
    evidence: dict[str, Any] = {"type": str(transition.get("type", ""))[:64]}
    if isinstance(transition.get("player"), str):
        evidence["player"] = transition["player"][:64]
    try:
        evidence["hash"] = state_hash(transition)
    except Exception:  # not canonical JSON: the cut text below is all there is
        evidence["hash"] = None
    text = json.dumps(transition, sort_keys=True, default=str)
    evidence["transition"] = transition if len(text) <= EVIDENCE_BYTES else text[:EVIDENCE_BYTES]
    return evidence
