"""What happens by itself: the setup and the deal, the automatic states (``follow_up``), the
reaction window's deadline, the away player's move and the outcome.

Every random outcome (the deal, a reshuffle, a Runaway potatoes pick, the selection tokens)
is drawn here or in :mod:`.commands` and written into the event, so the folds never draw.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from cardroom_engine import Deadline, Event, Outcome

from . import cards as C
from .cards import CARD_NAME
from .state import (
    ACTION_RESOLUTION,
    ACTION_RESOLVED,
    AUTO_DRAWN,
    CARD_DRAWN,
    CARD_SELECTION,
    DEALT,
    END_SCORE,
    GAME_END,
    GAME_WON,
    HAND_SIZE,
    NEXT_PLAYER,
    NOT_INTERRUPTED,
    PLAYER_TURN,
    REACTION_PHASE,
    SELECTION_OFFERED,
    TURN_PASSED,
    PapasConfig,
    PapasState,
)

REACTION_KEY = "reaction"

Draw = tuple[list[int], list[int] | None]


def draw_cards(deck: Sequence[int], discard: Sequence[int], n: int, rng: random.Random) -> Draw:
    """Draw ``n`` cards from the top; when the deck runs out, the discard pile is shuffled
    into a new deck (the permutation is returned to be written in the event)."""
    if len(deck) >= n:
        return list(deck[:n]), None
    drawn = list(deck)
    if not discard:
        return drawn, None
    order = list(discard)
    rng.shuffle(order)
    drawn += order[: n - len(drawn)]
    return drawn, order


def _token(rng: random.Random, taken: set[str]) -> str:
    while True:
        token = f"{rng.getrandbits(64):016x}"
        if token not in taken:
            taken.add(token)
            return token


def no_interrupt(state: PapasState, reason: str) -> Event:
    """The open reaction window closes unopposed (all skipped, or its deadline)."""
    return {"type": NOT_INTERRUPTED, "window": state.window, "reason": reason}


# -- setup and the deal ------------------------------------------------------------------------


def setup(config: Any, seats: Sequence[str]) -> PapasState:
    if not isinstance(config, PapasConfig):
        config = PapasConfig.model_validate(config)
    n = len(seats)
    return PapasState(
        seats=tuple(seats),
        threshold=config.win_threshold or C.win_threshold(n),
        reaction_seconds=config.reaction_seconds,
        values=C.card_values(config.wildcard_values),
        hands=((),) * n,
        potatoes=(0,) * n,
    )


def start(state: PapasState, rng: random.Random) -> list[Event]:
    order = list(range(C.DECK_SIZE))
    rng.shuffle(order)
    return [{"type": DEALT, "deck": order, "hand_size": HAND_SIZE}]


# -- the automatic states ----------------------------------------------------------------------


def follow_up(state: PapasState, rng: random.Random) -> list[Event]:
    phase = state.phase
    seat = state.active
    player = state.seats[seat] if state.seats else ""
    if phase == PLAYER_TURN:
        # on every entry into the turn, its start or back from a reaction window (a threesome
        # or an interrupted card may have played the last card): an empty hand draws three
        if not state.hands[seat]:
            drawn, reshuffled = draw_cards(state.deck, state.discard, 3, rng)
            return [
                {"type": AUTO_DRAWN, "player": player, "drawn": drawn, "reshuffled": reshuffled}
            ]
        return []
    if phase == CARD_SELECTION and not state.selection:
        assert state.play is not None
        target = state.play.targets[0]
        hand = list(state.hands[target])
        rng.shuffle(hand)
        taken: set[str] = set()
        options = [[_token(rng, taken), card] for card in hand]
        return [
            {
                "type": SELECTION_OFFERED,
                "player": player,
                "target": state.seats[target],
                "reveal": state.play.name in C.REVEALS_HAND,
                "options": options,
            }
        ]
    if phase == ACTION_RESOLUTION:
        return [_resolve(state, rng)]
    if phase == NEXT_PLAYER:
        if state.draw_due:
            drawn, reshuffled = draw_cards(state.deck, state.discard, 1, rng)
            return [
                {"type": CARD_DRAWN, "player": player, "drawn": drawn, "reshuffled": reshuffled}
            ]
        nxt = state.next_seat(seat)
        skipped = []
        if state.skip_next:
            skipped = [state.seats[nxt]]
            nxt = state.next_seat(nxt)
        return [{"type": TURN_PASSED, "player": state.seats[nxt], "skipped": skipped}]
    if phase == END_SCORE:
        assert state.winner is not None
        return [
            {
                "type": GAME_WON,
                "winner": state.seats[state.winner],
                "scores": dict(zip(state.seats, state.potatoes, strict=True)),
            }
        ]
    return []


def _resolve(state: PapasState, rng: random.Random) -> Event:
    """ActionResolution: the effect of an action card that nobody interrupted."""
    play = state.play
    assert play is not None
    seat = state.active
    name = play.name
    event: Event = {
        "type": ACTION_RESOLVED,
        "player": state.seats[seat],
        "card": play.card,
        "name": name,
        "targets": [state.seats[t] for t in play.targets],
    }
    target = play.targets[0] if play.targets else seat
    if name in (C.GET_OFF_THE_PONY, C.LOOK_AHEAD):  # never below 0
        event["potatoes"] = 1 if state.potatoes[target] > 0 else 0
    elif name == C.POTATO_OF_THE_YEAR:
        event["potatoes"] = 1
    elif name in (C.LEND_ME_A_BUCK, C.POTATO_DAWAN):
        event["taken"] = state.selected
    elif name == C.PAPAGEDDON:
        event["taken"] = state.selected
        event["direction"] = -state.direction
    elif name == C.POPE_POTATO:
        event["named"] = state.named
        event["taken"] = next((c for c in state.hands[target] if CARD_NAME[c] == state.named), None)
    elif name == C.RUNAWAY_POTATOES:
        taken: dict[str, int] = {}
        for other in range(len(state.seats)):
            if other != seat and state.hands[other]:
                taken[state.seats[other]] = rng.choice(state.hands[other])
        event["runaway"] = taken
        deck: list[int] | None = None
        if taken:  # the taken cards go into the deck, which is shuffled
            deck = [*state.deck, *taken.values()]
            rng.shuffle(deck)
        event["deck"] = deck
    elif name in (C.HARRY_POTATO, C.JUMP_TO_THE_SIDE):
        count = 2 if name == C.HARRY_POTATO else 1
        event["drawn"], event["reshuffled"] = draw_cards(state.deck, state.discard, count, rng)
    elif name == C.POTATO_OF_DESTINY:
        lost = state.hands[target]
        event["discarded"] = list(lost)
        discard = (*state.discard, *lost)
        event["drawn"], event["reshuffled"] = draw_cards(state.deck, discard, 2, rng)
    # Spider potato needs nothing more than its two targets.
    return event


# -- the reaction window's deadline, the away player -------------------------------------------


def deadline(state: PapasState) -> Deadline | None:
    if state.phase == REACTION_PHASE:
        return Deadline(state.reaction_seconds, f"{REACTION_KEY}:{state.window}")
    return None


def on_timeout(state: PapasState, key: str, rng: random.Random) -> list[Event]:
    if state.phase == REACTION_PHASE and key == f"{REACTION_KEY}:{state.window}":
        return [no_interrupt(state, "deadline")]
    return []


def house_action(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any] | None:
    """For an away player, among its legal ``actions``: pass in reaction windows; on its turn
    play a threesome it holds (the only way to golden potatoes: a table whose players are all
    away must still come to an end), else end the turn; otherwise pick at random."""
    for kind in ("SkipReaction", "PlayThreesome", "EndTurn"):
        for action in actions:
            if action["type"] == kind:
                return action
    return rng.choice(actions) if actions else None


# -- outcome -----------------------------------------------------------------------------------


def outcome(state: PapasState) -> Outcome | None:
    if state.phase != GAME_END or state.winner is None:
        return None
    scores = {p: float(n) for p, n in zip(state.seats, state.potatoes, strict=True)}
    ranked = Outcome.from_scores(scores, lower_is_better=False)
    details = {"winner": state.seats[state.winner], "threshold": state.threshold}
    return replace(ranked, details=details)
