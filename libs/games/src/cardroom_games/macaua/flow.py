"""What Macaua does by itself: the start, a draw's next step, the deadlines (a stalled
move, the audit's), a halt on a rejected transition, and the outcome."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from cardroom_engine import Deadline, Event, Outcome
from cardroom_wire.messages import cut

from .audit import audit_decks
from .state import (
    ABORTED,
    AUDIT_WITHHELD,
    DRAW_ASSIGNED,
    DRAW_ENDED,
    REJECTED,
    RESHUFFLED,
    STARTED,
    MacauaState,
)

AUDIT_DEADLINE = "audit"
"""The key of the audit's deadline (one per game: it keeps its first due time)."""


def start(state: MacauaState, rng: random.Random) -> list[Event]:
    # the table's id, and a nonce: a move signed in one game (or one deployment that
    # reuses a game id) is worthless in any other
    binding = f"{state.table or 'macaua'}/{rng.getrandbits(128):032x}"
    return [{"type": STARTED, "binding": binding}]


def follow_up(state: MacauaState) -> list[Event]:
    """A draw's next step once every key asked for is published: assign the next fresh
    positions, or turn the discard pile into a new deck, or end the draw short."""
    if state.phase != "draw" or state.waiting or state.drawer is None:
        return []
    if state.to_draw <= 0:
        return []
    if state.fresh:
        positions = list(state.fresh[: state.to_draw])
        return [
            {
                "type": DRAW_ASSIGNED,
                "player": state.drawer,
                "deck": state.deck_no,
                "positions": positions,
            }
        ]
    if len(state.discard) > 1:
        return [
            {
                "type": RESHUFFLED,
                "deck": state.deck_no + 1,
                "cards": list(state.discard[:-1]),
            }
        ]
    return [{"type": DRAW_ENDED, "player": state.drawer, "short": state.to_draw}]


def deadline(state: MacauaState) -> Deadline | None:
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


def on_timeout(state: MacauaState, key: str) -> list[Event]:
    if not state.waiting or state.phase == "over":
        return []
    if state.phase == "audit":
        if key != AUDIT_DEADLINE:
            return []
        audit = audit_decks(state, withheld=state.waiting)
        return [{"type": AUDIT_WITHHELD, **audit}]
    if key != f"move:{state.seq}:{state.waiting[0]}":
        return []
    return [{"type": ABORTED, "reason": "stalled", "player": state.waiting[0]}]


def halt(
    state: MacauaState, version: int, player: str, rejection: Mapping[str, Any]
) -> list[Event]:
    """The event that halts the table because ``player`` rejected the transition at
    ``version`` (``rejection``: its ``code``, ``reason``, ``blame`` and ``evidence``) or
    acknowledged it without a valid signature.

    The blame is ``player``'s whatever the rejection names. The server records only what
    its own rules decided or produced, so in its eyes a rejected transition holds and the
    rejection is unfounded: were the named blame believed, any player could halt a game it
    is losing and have another seat ranked last, or nobody win. Whom the rejecter blamed is
    kept as its ``claim``, with its evidence, for anyone who holds the signed transcript to
    judge."""
    if state.phase == "over":
        return []
    claim = rejection.get("blame")
    return [
        {
            "type": REJECTED,
            "player": player,
            "version": version,
            "blame": player,
            "claim": cut(claim, 64) if isinstance(claim, str) else None,
            "code": cut(str(rejection.get("code", "rejected")), 64),
            "reason": cut(str(rejection.get("reason", "")), 500),
            "evidence": rejection.get("evidence") or {},
        }
    ]


def outcome(state: MacauaState) -> Outcome | None:
    if state.phase != "over":
        return None
    details: dict[str, Any] = {"result": state.result, "turns": state.turns}
    if state.audit is not None:
        details["audit"] = dict(state.audit)
    if state.rejected is not None:
        # halted: the blamed player (the one that halted it) ranks last
        blame = state.rejected.get("blame")
        details["rejected"] = {k: v for k, v in state.rejected.items() if k != "evidence"}
        details["blame"] = blame
        scores = {p: (-1.0 if p == blame else 0.0) for p in state.seats}
        result = Outcome.from_scores(scores, lower_is_better=False)
    elif state.result == "won" and state.winner is not None:
        scores = {p: (1.0 if p == state.winner else 0.0) for p in state.seats}
        result = Outcome.from_scores(scores, lower_is_better=False)
    elif state.result == "aborted" and state.stalled is not None:
        details["stalled"] = state.stalled
        scores = {p: (-1.0 if p == state.stalled else 0.0) for p in state.seats}
        result = Outcome.from_scores(scores, lower_is_better=False)
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
        result = Outcome.from_scores(scores, lower_is_better=False)
    else:  # turn limit, or void: a deck that is no permutation of its cards
        result = Outcome(scores=dict.fromkeys(state.seats, 0.0), ranking=[sorted(state.seats)])
    return Outcome(result.scores, result.ranking, details)
