"""What happens by itself in take5: the deal, the turns, the placement of the revealed
cards, the turn timeout and the house's moves, the end of the game."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from cardroom_engine import Deadline, Event, Outcome

from . import protocol as p
from .commands import play, take
from .config import ROWS
from .folds import on_card_placed, on_card_played
from .placement import cheapest_row, target_row
from .state import CARD_PLACED, CHOICE_REQUESTED, DEALT, GAME_ENDED, TURN_STARTED, Take5State


def game_is_over(scores: Sequence[int], win_score: int) -> bool:
    """The game loop: play on while everyone is below win_score or the lowest is tied."""
    if max(scores) < win_score:
        return False
    low = sorted(scores)
    return low[0] != low[1]


def deal(state: Take5State, rng: random.Random) -> Event:
    """A fresh full deck, shuffled: turn_count cards to each player, then four rows."""
    deck = list(range(1, state.config.deck_size + 1))
    rng.shuffle(deck)
    count = state.config.turn_count
    hands = {
        player: sorted(deck[i * count : (i + 1) * count]) for i, player in enumerate(state.seats)
    }
    dealt = len(state.seats) * count
    return {
        "type": DEALT,
        "round": state.round + 1,
        "hands": hands,
        "rows": deck[dealt : dealt + len(ROWS)],
    }


def follow_up(state: Take5State, rng: random.Random) -> list[Event]:
    if state.phase == "dealt":
        return [{"type": TURN_STARTED, "round": state.round, "turn": state.turn + 1}]
    if state.phase != "resolve":
        return []
    # Silent placements run on until an event that someone must see (and acknowledge).
    events: list[Event] = []
    while True:
        event = _next(state, rng)
        events.append(event)
        if event["type"] != CARD_PLACED:
            return events
        state = on_card_placed(state, event)


def _next(state: Take5State, rng: random.Random) -> Event:
    """The next step of the resolution: the next revealed card, else the next turn, round
    or the end."""
    if state.placed < len(state.revealed):
        face, seat = state.revealed[state.placed]
        row = target_row(state.rows, face)
        if row is None:
            return {"type": CHOICE_REQUESTED, "player": state.seats[seat], "face": face}
        if len(state.rows[row]) >= state.config.stack_size:
            return take(state, row, chosen=False, house=False)
        return {"type": CARD_PLACED, "player": state.seats[seat], "face": face, "row": ROWS[row]}
    if state.turn < state.config.turn_count:
        return {"type": TURN_STARTED, "round": state.round, "turn": state.turn + 1}
    if game_is_over(state.scores, state.config.win_score):
        return {
            "type": GAME_ENDED,
            "rounds": state.round,
            "scores": dict(zip(state.seats, state.scores, strict=True)),
        }
    return deal(state, rng)


def window(state: Take5State) -> str | None:
    """The key of the open turn window, or None while nobody is asked for anything."""
    if state.phase == "play":
        return f"play:{state.round}:{state.turn}"
    if state.phase == "choose":
        return f"choose:{state.round}:{state.turn}"
    return None


def deadline(state: Take5State) -> Deadline | None:
    key = window(state)
    return None if key is None else Deadline(state.config.turn_timeout, key)


def on_timeout(state: Take5State, key: str) -> list[Event]:
    """The turn timeout: the house plays for every player still missing."""
    if key != window(state):
        return []
    if state.phase == "choose" and state.chooser is not None:
        row = cheapest_row(state.rows, state.bulls)
        return [take(state, row, chosen=True, house=True)]
    events: list[Event] = []
    for seat, played in enumerate(state.plays):
        if played is None:
            produced = play(state, seat, state.hands[seat][0], house=True)
            events += produced
            state = on_card_played(state, produced[0])
    return events


def house_action(state: Take5State, player: str) -> dict[str, Any] | None:
    """RULES: the lowest card; when choosing, the row with the fewest bull heads."""
    if player not in state.seats:
        return None
    seat = state.seat(player)
    if state.phase == "play" and state.plays[seat] is None:
        return p.play_response(state.hands[seat][0], state.bulls)
    if state.phase == "choose" and state.chooser == seat:
        return p.choose_response(cheapest_row(state.rows, state.bulls))
    return None


def outcome(state: Take5State) -> Outcome | None:
    if state.phase != "over":
        return None
    ranked = Outcome.from_scores(
        dict(zip(state.seats, state.scores, strict=True)), lower_is_better=True
    )
    return Outcome(
        scores=ranked.scores,
        ranking=ranked.ranking,
        details={"rounds": state.round, "ids": p.ids(state.seats)},
    )
