"""6 nimmt! (take5): the rules object, assembled from the game's modules.

Flow (one event per protocol message; every "send to each player" of the protocol is one gate):

    start       -> dealt                 deal to every player (their own hand only)
    follow_up   -> turn_started          play_request (the board) to every player
    decide      -> card_played           no message: a play is secret until everyone played
                   [+ plays_revealed]    the last play reveals all: played to every player
    follow_up   -> card_placed*          no message (the next play_request shows the board)
                   then one of: row_taken (taken to all, a full row: the sixth card),
                   choice_requested (choose_request to its player only), turn_started,
                   dealt (a new round) or game_ended (game_over to all)
    decide      -> row_taken             the choose_response of the chooser: taken to all

Players are named in the events by their cardroom id and in the messages by their seat
index (see ``protocol``). Commands are the protocol's response messages themselves:
``{"type": "play_response", "data": CARD}`` and ``{"type": "choose_response", "data": "A"}``.

    state.py     Take5State and the event types
    commands.py  decide: the commands, their checks and refusals; the legal actions
    flow.py      the deal, follow-ups, the turn timeout, the house's moves, the outcome
    folds.py     evolve: each event's change to the state
    protocol.py  the message shapes, notify and view
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from cardroom_engine import (
    BotFactory,
    Deadline,
    Event,
    GameRules,
    Message,
    Outcome,
    RandomBot,
)

from . import commands, flow
from . import protocol as p
from .bots import HeuristicBot
from .config import MAX_PLAYERS, MIN_PLAYERS, Take5Config, check_start
from .folds import FOLDS
from .state import Take5State


def _search_bot(player: str) -> Any:
    """The information-set search bot (``.search``, which imports these rules)."""
    from .search import search_bot

    return search_bot(player)


class Take5(GameRules[Take5State]):
    name: ClassVar[str] = "take5"
    min_players: ClassVar[int] = MIN_PLAYERS
    max_players: ClassVar[int] = MAX_PLAYERS
    config_model: ClassVar[type[Take5Config]] = Take5Config
    bots: ClassVar[Mapping[str, BotFactory]] = {
        "random": RandomBot,
        "heuristic": HeuristicBot,
        "search": lambda player: _search_bot(player),
    }

    def check_start(self, config: Take5Config, seats: Sequence[str]) -> None:
        check_start(config, seats)

    def setup(self, config: Take5Config, seats: Sequence[str]) -> Take5State:
        return Take5State(
            config=config,
            seats=tuple(seats),
            bulls=config.bull_values(),
            scores=(0,) * len(seats),
        )

    def start(self, state: Take5State, rng: random.Random) -> list[Event]:
        return [flow.deal(state, rng)]

    decide = staticmethod(commands.COMMANDS.decide)

    # the registry's own evolve: no extra call for every event of every replay
    evolve = staticmethod(FOLDS.evolve)

    def follow_up(self, state: Take5State, rng: random.Random) -> list[Event]:
        return flow.follow_up(state, rng)

    def deadline(self, state: Take5State) -> Deadline | None:
        return flow.deadline(state)

    def on_timeout(self, state: Take5State, key: str, rng: random.Random) -> list[Event]:
        return flow.on_timeout(state, key)

    def house_action(
        self, state: Take5State, player: str, rng: random.Random
    ) -> dict[str, Any] | None:
        return flow.house_action(state, player)

    def notify(self, before: Take5State, event: Event, after: Take5State) -> dict[str, Message]:
        return p.notify(before, event, after)

    def view(self, state: Take5State, player: str | None) -> dict[str, Any]:
        return p.view(state, player)

    def actions(self, state: Take5State, player: str) -> list[dict[str, Any]]:
        return commands.actions(state, player)

    def outcome(self, state: Take5State) -> Outcome | None:
        return flow.outcome(state)
