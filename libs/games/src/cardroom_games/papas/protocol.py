"""What players see: the per-player notification of each event, and views.

Every notification has the ``type`` of the state machine's transition the event is (see the
package docs; :data:`MESSAGES` names it for each event type), the event's public fields, the
board as everyone sees it after the event (``state``, ``active``, ``order``, ``potatoes``,
``hand_counts``, ``deck_count``, ``discard_count``) and, for the addressee, ``hand``: their
own cards after the event.

A card is shown as a face ``{"id", "name", "kind", "value", "alarm"}`` and only to a player
who may see it: in their own hand, in the discard pile (face up), moved between their hand
and another's, or shown to them by a Potato Dawan. Everyone else gets counts. Blind-pick
tokens go to the picking player alone; the deck order never leaves the server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cardroom_engine import Event, Message
from cardroom_engine.kit import Handlers

from .cards import CARD_NAME, REVEALS_HAND, TYPES, WILDCARD_IDS
from .state import (
    ACTION_RESOLVED,
    AUTO_DRAWN,
    CARD_DISCARDED,
    CARD_DRAWN,
    CARD_NAME_SELECTED,
    CARD_PLAYED,
    CARD_SELECTED,
    DEALT,
    DISCARDED_AND_DRAWN,
    GAME_WON,
    INTERRUPT_PLAYED,
    NOT_INTERRUPTED,
    REACTION_PHASE,
    REACTION_SKIPPED,
    SELECTION_OFFERED,
    TARGETS_SELECTED,
    THREESOME_PLAYED,
    TURN_ENDED,
    TURN_PASSED,
    PapasState,
)

_FACES: dict[tuple[int, ...], tuple[dict[str, Any], ...]] = {}
_W0, _W1, _W2 = WILDCARD_IDS


Notifier = Callable[[PapasState, Event, PapasState], dict[str, Message]]
NOTIFIERS = Handlers[Notifier]("papas")
"""The notification of each event type, one function per type (``notify``)."""

MESSAGES: dict[str, str] = {
    DEALT: "GameStart",
    CARD_PLAYED: "PlayCard",
    THREESOME_PLAYED: "PlayThreesome",
    TARGETS_SELECTED: "SelectTargets",
    REACTION_SKIPPED: "SkipReaction",
    INTERRUPT_PLAYED: "InterruptPlayed",
    NOT_INTERRUPTED: "NoInterrupt",
    SELECTION_OFFERED: "CardSelection",
    CARD_SELECTED: "CardSelected",
    CARD_NAME_SELECTED: "CardNameSelected",
    ACTION_RESOLVED: "ActionResolved",
    TURN_ENDED: "EndTurn",
    DISCARDED_AND_DRAWN: "DiscardAndDraw",
    AUTO_DRAWN: "AutoDraw",
    CARD_DRAWN: "DrawCard",
    CARD_DISCARDED: "DiscardCards",
    TURN_PASSED: "NextTurn",
    GAME_WON: "EndScore",
}
"""The protocol's message name (the ``type`` of the notification) of each event type: the
events are named as stored facts (``papas.<what_happened>``), the messages after the state
machine's transitions, as the game was specified."""


def _faces_for(state: PapasState) -> tuple[dict[str, Any], ...]:
    """The face of every card id under this game's wildcard values (built once)."""
    values = state.values
    key = (values[_W0], values[_W1], values[_W2])
    table = _FACES.get(key)
    if table is None:
        table = tuple(
            {
                "id": card,
                "name": name,
                "kind": TYPES[name].kind,
                "value": state.values[card],
                "alarm": TYPES[name].alarm,
            }
            for card, name in enumerate(CARD_NAME)
        )
        _FACES[key] = table
    return table


def face(state: PapasState, card: int) -> dict[str, Any]:
    """``{"id", "name", "kind", "value", "alarm"}``: a fresh dict for each message."""
    return dict(_faces_for(state)[card])


def faces(state: PapasState, cards: Sequence[int]) -> list[dict[str, Any]]:
    table = _faces_for(state)
    return [dict(table[c]) for c in cards]


def _order(state: PapasState) -> list[str]:
    """The seats in playing order, starting with seat 0."""
    n = len(state.seats)
    return [state.seats[(state.direction * i) % n] for i in range(n)]


def board(state: PapasState) -> dict[str, Any]:
    """What everyone sees of the table."""
    seats = state.seats
    return {
        "state": state.phase,
        "active": seats[state.active] if seats else None,
        "order": _order(state),
        "potatoes": dict(zip(seats, state.potatoes, strict=True)),
        "hand_counts": {p: len(h) for p, h in zip(seats, state.hands, strict=True)},
        "deck_count": len(state.deck),
        "discard_count": len(state.discard),
    }


def _reaction(state: PapasState) -> dict[str, Any] | None:
    """The open reaction window, the same for everyone (who has passed stays private)."""
    if state.phase != REACTION_PHASE:
        return None
    return {
        "window": state.window,
        "seconds": state.reaction_seconds,
        "players": [p for i, p in enumerate(state.seats) if i != state.active],
    }


def _play(state: PapasState) -> dict[str, Any] | None:
    play = state.play
    if play is None:
        return None
    return {
        "player": state.seats[state.active],
        "kind": play.kind,
        "name": play.name,
        "cards": faces(state, play.cards),
        "reward": play.reward,
        "targets": [state.seats[t] for t in play.targets],
    }


Private = dict[str, dict[str, Any]]


def _send(
    event: Event,
    after: PapasState,
    public: dict[str, Any],
    private: Private | None = None,
    to: Sequence[str] | None = None,
) -> dict[str, Message]:
    shown = board(after)
    name = MESSAGES[event["type"]]
    out: dict[str, Message] = {}
    for seat, player in enumerate(after.seats):
        if to is not None and player not in to:
            continue
        message: Message = {"type": name, **public}
        if private and player in private:
            message.update(private[player])
        message.update(shown)
        message["hand"] = faces(after, after.hands[seat])
        out[player] = message
    return out


def _drawn(event: Event, after: PapasState, player: str, **public: Any) -> dict[str, Message]:
    drawn = event["drawn"]
    public.update(player=player, drawn_count=len(drawn), reshuffled=event["reshuffled"] is not None)
    return _send(event, after, public, {player: {"drawn": faces(after, drawn)}})


@NOTIFIERS.on(DEALT)
def _game_start(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    public = {
        "seats": list(after.seats),
        "threshold": after.threshold,
        "reaction_seconds": after.reaction_seconds,
        "wildcard_values": [after.values[c] for c in WILDCARD_IDS],
        "hand_size": event["hand_size"],
    }
    return _send(event, after, public)


@NOTIFIERS.on(CARD_PLAYED)
def _play_card(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    public = {
        "player": event["player"],
        "card": face(after, event["card"]),
        "targets": list(event["targets"]),
        "reaction": _reaction(after),
    }
    return _send(event, after, public)


@NOTIFIERS.on(THREESOME_PLAYED)
def _play_threesome(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    public = {
        "player": event["player"],
        "cards": faces(after, event["cards"]),
        "kind": event["kind"],
        "reward": event["reward"],
        "reaction": _reaction(after),
    }
    return _send(event, after, public)


@NOTIFIERS.on(TARGETS_SELECTED)
def _select_targets(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    assert after.play is not None
    public = {
        "player": event["player"],
        "card": face(after, after.play.card),
        "targets": list(event["targets"]),
        "reaction": _reaction(after),
    }
    return _send(event, after, public)


@NOTIFIERS.on(REACTION_SKIPPED)
def _skip(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    # Only the player who passed hears of it: who passed is nobody else's business.
    public = {"player": event["player"], "window": event["window"]}
    return _send(event, after, public, to=[event["player"]])


@NOTIFIERS.on(INTERRUPT_PLAYED)
def _interrupt(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    public = {
        "player": event["player"],
        "card": face(after, event["card"]),
        "window": event["window"],
        "cancelled": _play(before),
    }
    return _send(event, after, public)


@NOTIFIERS.on(NOT_INTERRUPTED)
def _no_interrupt(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    play = before.play
    assert play is not None
    public = {
        "window": event["window"],
        "reason": event["reason"],
        "play": _play(before),
        "awarded": play.reward if play.kind == "threesome" else 0,
    }
    return _send(event, after, public)


@NOTIFIERS.on(SELECTION_OFFERED)
def _card_selection(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    player = event["player"]
    reveal = bool(event["reveal"])
    options: list[dict[str, Any]] = []
    for token, card in event["options"]:
        option: dict[str, Any] = {"token": token}
        if reveal:  # Potato Dawan: the target's hand is shown to the actor alone
            option["card"] = face(after, card)
        options.append(option)
    public = {
        "player": player,
        "target": event["target"],
        "reveal": reveal,
        "count": len(options),
    }
    return _send(event, after, public, {player: {"options": options}})


@NOTIFIERS.on(CARD_SELECTED)
def _card_selected(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    assert before.play is not None
    target = before.seats[before.play.targets[0]]
    return _send(event, after, {"player": event["player"], "target": target})


@NOTIFIERS.on(CARD_NAME_SELECTED)
def _card_name_selected(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    assert before.play is not None
    target = before.seats[before.play.targets[0]]
    public = {"player": event["player"], "target": target, "name": event["name"]}
    return _send(event, after, public)


@NOTIFIERS.on(ACTION_RESOLVED)
def _action_resolved(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    player = event["player"]
    name = event["name"]
    targets = list(event["targets"])
    public: dict[str, Any] = {
        "player": player,
        "card": face(after, event["card"]),
        "name": name,
        "targets": targets,
    }
    private: Private = {}
    if "potatoes" in event:
        public["potatoes_moved"] = event["potatoes"]
    if "taken" in event:
        taken = event["taken"]
        public["took_card"] = taken is not None
        shown = face(after, taken) if taken is not None else None
        private[player] = {"taken": shown}
        private[targets[0]] = {"taken": shown}
    if "named" in event:
        public["named"] = event["named"]
    if "direction" in event:
        public["reversed"] = True
    if "runaway" in event:
        public["taken_from"] = sorted(event["runaway"])
        for victim, card in event["runaway"].items():
            private[victim] = {"lost": face(after, card)}
    if "discarded" in event:
        public["discarded"] = faces(after, event["discarded"])
    if "drawn" in event:
        drawer = targets[0] if "discarded" in event else player
        public["drawn_count"] = len(event["drawn"])
        public["reshuffled"] = event["reshuffled"] is not None
        private.setdefault(drawer, {})["drawn"] = faces(after, event["drawn"])
    if after.skip_next and not before.skip_next:
        public["skip_next"] = True
    return _send(event, after, public, private)


@NOTIFIERS.on(TURN_ENDED, AUTO_DRAWN, CARD_DRAWN)
def _end_turn(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    return _drawn(event, after, event["player"])


@NOTIFIERS.on(DISCARDED_AND_DRAWN)
def _discard_and_draw(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    return _drawn(event, after, event["player"], discarded=face(after, event["card"]))


@NOTIFIERS.on(CARD_DISCARDED)
def _discard(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    return _send(event, after, {"player": event["player"], "card": face(after, event["card"])})


@NOTIFIERS.on(TURN_PASSED)
def _next_turn(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    return _send(event, after, {"player": event["player"], "skipped": list(event["skipped"])})


@NOTIFIERS.on(GAME_WON)
def _end_score(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    return _send(event, after, {"winner": event["winner"], "scores": dict(event["scores"])})


def notify(before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
    notifier = NOTIFIERS.get(event["type"])
    if notifier is None:
        raise KeyError(event["type"])
    return notifier(before, event, after)


def view(state: PapasState, player: str | None) -> dict[str, Any]:
    """Everything ``player`` may see now (``None``: a spectator, public only)."""
    out = board(state)
    seats = state.seats
    out.update(
        seats=list(seats),
        threshold=state.threshold,
        reaction_seconds=state.reaction_seconds,
        wildcard_values=[state.values[c] for c in WILDCARD_IDS],
        discard=faces(state, state.discard),
        turn={"fresh": state.turn_fresh, "skip_next": state.skip_next},
        play=_play(state),
        reaction=_reaction(state),
        selection=None,
        named=state.named,
        winner=seats[state.winner] if state.winner is not None else None,
    )
    seat = seats.index(player) if player in seats else None
    if seat is not None:
        out["hand"] = faces(state, state.hands[seat])
        if out["reaction"] is not None:
            out["reaction"]["may_react"] = seat in state.reactors
    if state.selection and state.play is not None:
        reveal = state.play.name in REVEALS_HAND
        selection: dict[str, Any] = {
            "player": seats[state.active],
            "target": seats[state.play.targets[0]],
            "reveal": reveal,
            "count": len(state.selection),
        }
        if seat == state.active:
            selection["options"] = [
                {"token": t, "card": face(state, c)} if reveal else {"token": t}
                for t, c in state.selection
            ]
        out["selection"] = selection
    return out
