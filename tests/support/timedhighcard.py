"""High card with a clock: a prompted player who does not act within ``think`` seconds folds.

The test game of the timers: the same rules as :mod:`support.highcard`, plus a game deadline
(``Deadline(think, "turn:<round>:<turn>")``) while a player is prompted; ``on_timeout`` folds
for them. The key names the turn, so a stale timeout (the player acted meanwhile) does nothing.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from cardroom_engine import Deadline, Event
from pydantic import Field
from support.highcard import TURN_PROMPTED, Config, HighCard, State


class TimedConfig(Config):
    think: float | None = Field(default=None, gt=0, le=3600, allow_inf_nan=False)


def turn_key(state: State) -> str:
    return f"turn:{state.round}:{len(state.acted)}"


class TimedHighCard(HighCard):
    name = "timedhighcard"
    config_model = TimedConfig

    def setup(self, config: Any, seats: Sequence[str]) -> State:
        assert isinstance(config, TimedConfig)
        return super().setup(config, seats)._replace(think=config.think)

    def deadline(self, state: State) -> Deadline | None:
        think = state.think
        if think is None or state.phase != "betting" or not state.prompted or not state.turn:
            return None
        return Deadline(think, turn_key(state))

    def on_timeout(self, state: State, key: str, rng: random.Random) -> list[Event]:
        if self.deadline(state) is None or key != turn_key(state):
            return []
        return [{"type": "highcard.folded", "player": state.turn}]


class EveryonePrompted(TimedHighCard):
    """Its prompt told to every seat (the others get ``Prompted``), as a reaction window in
    papas is opened to all: the gate that their acknowledgements hold can defer the prompt's
    deadline. Not in ``GAMES``: a test that wants it registers it for itself."""

    name = "everyoneprompted"
    private_events: frozenset[str] = frozenset()

    def audience(self, state: State, event: Event) -> tuple[str, ...] | None:
        return None

    def notify(self, before: State, event: Event, after: State) -> dict[str, Any]:
        told = super().notify(before, event, after)
        if event["type"] == TURN_PROMPTED:
            others = {"type": "Prompted", "player": event["player"]}
            return {p: told.get(p, others) for p in after.seats}
        return told


GAME = TimedHighCard()
