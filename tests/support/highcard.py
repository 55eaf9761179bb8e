"""A small test game with hidden values and follow-up steps: high card.

Each round every player is dealt a secret number. In seat order each player bets 1 to 3
chips into the pot or folds. When all have acted, a follow-up shows the cards of the players
who did not fold (a folded card stays secret forever), the highest shown card takes the pot,
and another follow-up deals the next round. After ``rounds`` rounds the most chips wins.

Turns are announced in two gated steps, as the real games do: the others learn whose turn it is,
then the active player alone is prompted, so the active player acts once the gate is open.

It exists to test the engine and the services without waiting for the real games.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from cardroom_engine import Command, Event, GameRules, Message, Outcome, Rejection, parse_command
from cardroom_engine.kit import Commands, Folds, state
from cardroom_wire import ErrorCode
from pydantic import BaseModel, ConfigDict, Field

# strict, as cardroom_engine.parse_command asks of a game: JSON true is not 1, "1" is no number


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    rounds: int = Field(default=3, ge=1, le=50)
    max_value: int = Field(default=100, ge=2, le=1_000_000)


class Bet(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["bet"]
    amount: int = Field(ge=1, le=3)


class Fold(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["fold"]


@state
class State(NamedTuple):
    seats: tuple[str, ...]
    rounds: int
    max_value: int
    round: int = 0
    cards: tuple[tuple[str, int], ...] = ()
    acted: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()
    pot: int = 0
    chips: tuple[tuple[str, int], ...] = ()
    turn: str | None = None
    prompted: bool = False
    phase: str = "dealing"  # dealing | betting | showdown | over
    think: float | None = None  # the timed variant's clock (support.timedhighcard)

    def card(self, player: str) -> int:
        return dict(self.cards)[player]


# -- events: <game>.<what_happened> ----------------------------------------------------------
DEALT = "highcard.dealt"
TURN_STARTED = "highcard.turn_started"
TURN_PROMPTED = "highcard.turn_prompted"
BET_PLACED = "highcard.bet_placed"
FOLDED = "highcard.folded"
SHOWDOWN = "highcard.showdown"


# -- commands ---------------------------------------------------------------------------------
COMMANDS = Commands[State]("highcard")


def _my_turn(s: State, actor: str) -> None:
    if s.phase != "betting" or s.turn != actor or not s.prompted:
        raise Rejection(ErrorCode.NOT_YOUR_TURN, "it is not your turn")


@COMMANDS.on("bet")
def _bet(s: State, actor: str, command: Command, rng: random.Random) -> list[Event]:
    _my_turn(s, actor)
    return [{"type": BET_PLACED, "player": actor, "amount": parse_command(Bet, command).amount}]


@COMMANDS.on("fold")
def _fold(s: State, actor: str, command: Command, rng: random.Random) -> list[Event]:
    _my_turn(s, actor)
    parse_command(Fold, command)
    return [{"type": FOLDED, "player": actor}]


# -- folds ------------------------------------------------------------------------------------
FOLDS = Folds[State]("highcard")


@FOLDS.on(DEALT)
def _dealt(s: State, event: Event) -> State:
    cards = tuple((p, int(event["cards"][p])) for p in s.seats)
    return s._replace(
        round=event["round"], cards=cards, acted=(), folded=(), pot=0, turn=None, phase="dealing"
    )


@FOLDS.on(TURN_STARTED)
def _turn_started(s: State, event: Event) -> State:
    return s._replace(turn=event["player"], prompted=False, phase="betting")


@FOLDS.on(TURN_PROMPTED)
def _turn_prompted(s: State, event: Event) -> State:
    return s._replace(prompted=True)


@FOLDS.on(BET_PLACED)
def _bet_placed(s: State, event: Event) -> State:
    return s._replace(acted=(*s.acted, event["player"]), pot=s.pot + event["amount"], turn=None)


@FOLDS.on(FOLDED)
def _folded(s: State, event: Event) -> State:
    p = event["player"]
    return s._replace(acted=(*s.acted, p), folded=(*s.folded, p), turn=None)


@FOLDS.on(SHOWDOWN)
def _showdown(s: State, event: Event) -> State:
    chips = dict(s.chips)
    if event["winner"] is not None:
        chips[event["winner"]] += event["pot"]
    over = s.round >= s.rounds
    return s._replace(chips=tuple(chips.items()), pot=0, phase="over" if over else "showdown")


# -- the game ---------------------------------------------------------------------------------
class HighCard(GameRules[State]):
    name = "highcard"
    min_players = 2
    max_players = 3
    config_model = Config
    # the prompt goes to the active player only: the others do not see the version move
    private_events = frozenset({TURN_PROMPTED})

    def audience(self, state: State, event: Event) -> tuple[str, ...] | None:
        return (event["player"],) if event["type"] == TURN_PROMPTED else None

    def setup(self, config: Any, seats: Sequence[str]) -> State:
        assert isinstance(config, Config)
        return State(
            seats=tuple(seats),
            rounds=config.rounds,
            max_value=config.max_value,
            chips=tuple((p, 0) for p in seats),
        )

    def start(self, state: State, rng: random.Random) -> list[Event]:
        return [self._deal(state, rng)]

    def _deal(self, state: State, rng: random.Random) -> Event:
        values = rng.sample(range(1, state.max_value + 1), len(state.seats))
        return {
            "type": DEALT,
            "round": state.round + 1,
            "cards": dict(zip(state.seats, values, strict=True)),
        }

    decide = COMMANDS.decide

    # the registry's own evolve: no extra call for every event of every replay
    evolve = staticmethod(FOLDS.evolve)

    def follow_up(self, state: State, rng: random.Random) -> list[Event]:
        if state.phase == "dealing":
            return [{"type": TURN_STARTED, "player": state.seats[0]}]
        if state.phase == "betting" and state.turn is not None and not state.prompted:
            # the two-step prompt of the seeds: the others first, then the active player
            return [{"type": TURN_PROMPTED, "player": state.turn}]
        if state.phase == "betting" and state.turn is None:
            waiting = [p for p in state.seats if p not in state.acted]
            if waiting:
                return [{"type": TURN_STARTED, "player": waiting[0]}]
            shown = {p: v for p, v in state.cards if p not in state.folded}
            winner = max(shown, key=lambda p: shown[p]) if shown else None
            return [{"type": SHOWDOWN, "shown": shown, "winner": winner, "pot": state.pot}]
        if state.phase == "showdown" and state.round < state.rounds:
            return [self._deal(state, rng)]
        return []

    def notify(self, before: State, event: Event, after: State) -> dict[str, Message]:
        kind = event["type"]
        if kind == DEALT:
            return {
                p: {"type": "YourCard", "round": event["round"], "card": event["cards"][p]}
                for p in after.seats
            }
        if kind == TURN_STARTED:
            others = [p for p in after.seats if p != event["player"]]
            return {p: {"type": "Turn", "player": event["player"]} for p in others}
        if kind == TURN_PROMPTED:
            return {event["player"]: {"type": "YourTurn", "pot": after.pot}}
        if kind == BET_PLACED:
            msg = {"type": "Bet", "player": event["player"], "amount": event["amount"]}
            return {p: dict(msg) for p in after.seats}
        if kind == FOLDED:
            return {p: {"type": "Fold", "player": event["player"]} for p in after.seats}
        if kind == SHOWDOWN:
            msg = {
                "type": "Showdown",
                "shown": event["shown"],
                "winner": event["winner"],
                "pot": event["pot"],
                "chips": dict(after.chips),
            }
            return {p: dict(msg) for p in after.seats}
        return {}

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        view: dict[str, Any] = {
            "round": state.round,
            "phase": state.phase,
            "turn": state.turn,
            "pot": state.pot,
            "chips": dict(state.chips),
            "folded": list(state.folded),
        }
        if player is not None and state.cards:
            view["card"] = state.card(player)
        return view

    def actions(self, state: State, player: str) -> list[dict[str, Any]]:
        if state.phase != "betting" or state.turn != player or not state.prompted:
            return []
        return [{"type": "bet", "amount": a} for a in (1, 2, 3)] + [{"type": "fold"}]

    def outcome(self, state: State) -> Outcome | None:
        if state.phase != "over":
            return None
        return Outcome.from_scores({p: float(c) for p, c in state.chips}, lower_is_better=False)


GAME = HighCard()
