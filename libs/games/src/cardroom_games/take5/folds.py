"""take5's folds: each event's change to the state (``FOLDS.evolve`` is the game's evolve)."""

from __future__ import annotations

from cardroom_engine import Event
from cardroom_engine.kit import Folds, put, without

from .state import (
    CARD_PLACED,
    CARD_PLAYED,
    CHOICE_REQUESTED,
    DEALT,
    GAME_ENDED,
    PLAYS_REVEALED,
    ROW_INDEX,
    ROW_TAKEN,
    TURN_STARTED,
    Take5State,
)

FOLDS = Folds[Take5State]("take5")


@FOLDS.on(DEALT)
def on_dealt(state: Take5State, event: Event) -> Take5State:
    hands = event["hands"]
    return state._replace(
        phase="dealt",
        round=event["round"],
        turn=0,
        hands=tuple(tuple(sorted(hands[player])) for player in state.seats),
        rows=tuple((face,) for face in event["rows"]),
        plays=(None,) * len(state.seats),
        revealed=(),
        placed=0,
        chooser=None,
    )


@FOLDS.on(TURN_STARTED)
def on_turn_started(state: Take5State, event: Event) -> Take5State:
    return state._replace(
        phase="play",
        turn=event["turn"],
        plays=(None,) * len(state.seats),
        revealed=(),
        placed=0,
        chooser=None,
    )


@FOLDS.on(CARD_PLAYED)
def on_card_played(state: Take5State, event: Event) -> Take5State:
    seat = state.seat(event["player"])
    face = event["face"]
    return state._replace(
        hands=put(state.hands, seat, without(state.hands[seat], face)),
        plays=put(state.plays, seat, face),
    )


@FOLDS.on(PLAYS_REVEALED)
def on_plays_revealed(state: Take5State, event: Event) -> Take5State:
    revealed = tuple((play["face"], state.seat(play["player"])) for play in event["plays"])
    return state._replace(
        phase="resolve", plays=(None,) * len(state.seats), revealed=revealed, placed=0
    )


@FOLDS.on(CARD_PLACED)
def on_card_placed(state: Take5State, event: Event) -> Take5State:
    row = ROW_INDEX[event["row"]]
    return state._replace(
        rows=put(state.rows, row, (*state.rows[row], event["face"])),
        placed=state.placed + 1,
    )


@FOLDS.on(CHOICE_REQUESTED)
def on_choice_requested(state: Take5State, event: Event) -> Take5State:
    return state._replace(phase="choose", chooser=state.seat(event["player"]))


@FOLDS.on(ROW_TAKEN)
def on_row_taken(state: Take5State, event: Event) -> Take5State:
    seat = state.seat(event["player"])
    return state._replace(
        phase="resolve",
        rows=put(state.rows, ROW_INDEX[event["row"]], (event["face"],)),
        scores=put(state.scores, seat, state.scores[seat] + event["bulls"]),
        placed=state.placed + 1,
        chooser=None,
    )


@FOLDS.on(GAME_ENDED)
def on_game_ended(state: Take5State, event: Event) -> Take5State:
    return state._replace(phase="over")
