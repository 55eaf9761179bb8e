"""How the 66 game moves by itself: the deal, the steps between commands, the round's end
and the game's outcome."""

from __future__ import annotations

import random

from cardroom_engine import Event, Outcome

from .cards import add_scores, deal, game_over, remaining_deck, round_scores, winners
from .state import (
    ANNOUNCED,
    BEGIN_TURN,
    CARD_DISCARDED,
    CARDS_REPLACED,
    CLAIM_CONFIRMED,
    CLAIM_SHOWN,
    DEALT,
    FIRST_CARDS_SHOWN,
    NEXT_ROUND_PROMPTED,
    POWER_PENDING,
    POWER_PROMPTED,
    ROUND_DEALT,
    ROUND_ENDED,
    ROUND_FINISHED,
    TURN_END,
    TURN_PROMPTED,
    TURN_STARTED,
    V1,
    SixtySixState,
)


def start(state: SixtySixState, rng: random.Random) -> list[Event]:
    return [round_dealt(state, rng.randrange(state.n), rng)]


def round_dealt(state: SixtySixState, starter: int, rng: random.Random) -> Event:
    """A new round's deal, which ``starter`` opens."""
    hands, discard = deal(state.n, state.protocol == V1, rng)
    return {
        "type": ROUND_DEALT,
        "round": state.round + 1,
        "starter": starter,
        "hands": hands,
        "discard": discard,
        "deck": remaining_deck(hands, discard),
    }


def follow_up(state: SixtySixState, rng: random.Random) -> list[Event]:
    phase = state.phase
    me = state.active
    if phase == DEALT:
        return [{"type": FIRST_CARDS_SHOWN}]
    if phase == BEGIN_TURN:
        return [{"type": TURN_STARTED, "player": me, "turn": state.turn + 1}]
    if phase == ANNOUNCED:
        return [{"type": TURN_PROMPTED, "player": me}]
    if phase == CLAIM_SHOWN:
        return [_resolve_claim(state)]
    if phase == POWER_PENDING:
        return [{"type": POWER_PROMPTED, "player": me, "value": state.power}]
    if phase == TURN_END:
        following = (me + 1) % state.n
        if state.deck_size == 0 or following == state.stopper:
            return [_finish_round(state, rng)]
        return [{"type": TURN_STARTED, "player": following, "turn": state.turn + 1}]
    if phase == ROUND_FINISHED:
        return [{"type": NEXT_ROUND_PROMPTED, "player": state.next_starter}]
    return []


def _resolve_claim(state: SixtySixState) -> Event:
    me = state.active
    hand = state.hands[me]
    shown = state.shown
    if state.protocol == V1:  # only a successful claim waits here
        return {"type": CLAIM_CONFIRMED, "player": me, "cardIndexes": list(shown)}
    if len({hand[i] for i in shown}) == 1:
        from_deck = state.drawn is not None
        return {
            "type": CARDS_REPLACED,
            "player": me,
            "cardIndexes": list(shown),
            "source": "deck" if from_deck else "discard",
            "value": state.drawn if from_deck else state.discard,
            "discardedValue": hand[min(shown)],
            "claim": True,
        }
    # A failed claim with a deck card: the card is discarded, with no power.
    return {"type": CARD_DISCARDED, "player": me, "value": state.drawn, "power": False}


def _finish_round(state: SixtySixState, rng: random.Random) -> Event:
    scores = round_scores(state.hands, state.stopper)
    totals = add_scores(state.totals, scores)
    finished = game_over(totals)
    zeros = [p for p, score in enumerate(scores) if score == 0]
    return {
        "type": ROUND_ENDED,
        "round": state.round,
        "turnCount": state.turn,
        "hands": [list(hand) for hand in state.hands],
        "stopper": state.stopper,
        "scores": scores,
        "totals": totals,
        "finished": finished,
        "nextStarter": None if finished else zeros[rng.randrange(len(zeros))],
    }


def outcome(state: SixtySixState) -> Outcome | None:
    if not state.finished:
        return None
    result = Outcome.from_scores(
        {p: state.totals[i] for i, p in enumerate(state.seats)}, lower_is_better=True
    )
    result.details.update(
        {
            "rounds": state.round,
            "totalScores": list(state.totals),
            "winners": [state.seats[i] for i in winners(state.totals)],
        }
    )
    return result
