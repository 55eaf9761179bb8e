"""Helpers for the papas tests: build exact positions and drive them like the services do
(every event through a JSON round trip, follow-ups run as soon as everyone acknowledged)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
from cardroom_engine import Event, Message, Rejection
from cardroom_games.papas import GAME
from cardroom_games.papas.cards import CARD_NAME, DECK_SIZE
from cardroom_games.papas.state import PLAYER_TURN, PapasConfig, PapasState

Card = int | str  # a card id, or a name meaning "a fresh copy of that name"


class Pool:
    """Hands out card ids by name, each id at most once."""

    def __init__(self) -> None:
        self.used: set[int] = set()

    def take(self, card: Card) -> int:
        if isinstance(card, int):
            assert card not in self.used, f"card {card} used twice"
            self.used.add(card)
            return card
        for cid, name in enumerate(CARD_NAME):
            if name == card and cid not in self.used:
                self.used.add(cid)
                return cid
        raise AssertionError(f"no copy of {card} left")

    def rest(self) -> list[int]:
        return [c for c in range(DECK_SIZE) if c not in self.used]


def make_state(
    hands: Mapping[str, Sequence[Card]],
    *,
    deck: Sequence[Card] | None = None,
    discard: Sequence[Card] | None = None,
    potatoes: Mapping[str, int] | None = None,
    active: int = 0,
    config: Mapping[str, Any] | None = None,
    rest_to: str = "deck",
) -> PapasState:
    """A position in PlayerTurn with exactly these hands; every one of the 103 cards is
    somewhere (the unnamed ones go to the bottom of the deck, or the discard pile)."""
    seats = tuple(hands)
    state = GAME.setup(PapasConfig.model_validate(dict(config or {})), seats)
    pool = Pool()
    built_hands = tuple(tuple(pool.take(c) for c in hands[p]) for p in seats)
    built_deck = [pool.take(c) for c in deck or []]
    built_discard = [pool.take(c) for c in discard or []]
    if rest_to == "deck":
        built_deck += pool.rest()
    else:
        built_discard += pool.rest()
    return state._replace(
        phase=PLAYER_TURN,
        active=active,
        hands=built_hands,
        deck=tuple(built_deck),
        discard=tuple(built_discard),
        potatoes=tuple((potatoes or {}).get(p, 0) for p in seats),
        turn_fresh=True,
    )


def card_count(state: PapasState) -> int:
    return len(state.deck) + len(state.discard) + sum(len(h) for h in state.hands)


class Harness:
    """One game in memory: decide, then evolve + notify each event, then follow-ups."""

    def __init__(self, state: PapasState, seed: int = 0) -> None:
        self.state = state
        self.rng = random.Random(seed)
        self.log: list[tuple[Event, dict[str, Message]]] = []

    def apply(self, events: Iterable[Event]) -> None:
        for produced in events:
            event = json.loads(json.dumps(produced))
            before = self.state
            self.state = GAME.evolve(before, event)
            self.log.append((event, GAME.notify(before, event, self.state)))
            assert card_count(self.state) == DECK_SIZE, event

    def settle(self) -> None:
        for _ in range(100):
            events = GAME.follow_up(self.state, self.rng)
            if not events:
                return
            self.apply(events)
        raise AssertionError("follow_up does not settle")

    def do(self, player: str, command: Mapping[str, Any]) -> list[Event]:
        """Play a command; return every event it caused, follow-ups included."""
        start = len(self.log)
        self.apply(GAME.decide(self.state, player, command, self.rng))
        self.settle()
        return [event for event, _ in self.log[start:]]

    def refuse(self, player: str, command: Mapping[str, Any], code: str) -> Rejection:
        before = self.state
        with pytest.raises(Rejection) as info:
            GAME.decide(self.state, player, command, self.rng)
        assert info.value.code == code, (info.value.code, info.value.message)
        assert self.state == before
        return info.value

    # -- shortcuts -------------------------------------------------------------------------
    def seat(self, player: str) -> int:
        return self.state.seats.index(player)

    def hand(self, player: str) -> tuple[int, ...]:
        return self.state.hands[self.seat(player)]

    def names(self, player: str) -> list[str]:
        return sorted(CARD_NAME[c] for c in self.hand(player))

    def held(self, player: str, name: str) -> int:
        return next(c for c in self.hand(player) if CARD_NAME[c] == name)

    def potatoes(self, player: str) -> int:
        return self.state.potatoes[self.seat(player)]

    def play(self, player: str, name: str, *targets: str) -> list[Event]:
        events = self.do(player, {"type": "PlayCard", "card": self.held(player, name)})
        if targets:
            events += self.do(player, {"type": "SelectTargets", "targets": list(targets)})
        return events

    def skip_all(self) -> list[Event]:
        events: list[Event] = []
        window = self.state.window
        for seat in list(self.state.reactors):
            events += self.do(self.state.seats[seat], {"type": "SkipReaction", "window": window})
        return events

    def types(self, events: Iterable[Event] | None = None) -> list[str]:
        chosen = events if events is not None else (e for e, _ in self.log)
        return [e["type"] for e in chosen]

    def messages(self, event_type: str) -> dict[str, Message]:
        """The notifications of the last event of this type."""
        for event, notes in reversed(self.log):
            if event["type"] == event_type:
                return notes
        raise AssertionError(f"no {event_type} event")

    def last(self, event_type: str) -> Event:
        for event, _ in reversed(self.log):
            if event["type"] == event_type:
                return event
        raise AssertionError(f"no {event_type} event")


CARD_ID = re.compile(r'"id": (-?\d+)')


def card_ids(value: Any) -> set[int]:
    """Every card id shown anywhere inside a message or view: the ``id`` of any object
    (card faces are the only objects with an ``id``), found in its JSON text."""
    return {int(m) for m in CARD_ID.findall(json.dumps(value))}


def strings(value: Any) -> set[str]:
    """Every string (keys included) anywhere inside a message or view."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            found.add(item)
        elif kind is dict:
            found.update(item)
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
    return found


def mentions(value: Any, secrets: Iterable[str]) -> set[str]:
    """The secrets (e.g. tokens) that appear anywhere in the JSON text of ``value``."""
    wanted = list(secrets)
    if not wanted:
        return set()
    text = json.dumps(value)
    return {s for s in wanted if s in text}
