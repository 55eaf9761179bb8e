"""The rules object, assembled from the game's modules:

- :mod:`.commands`: ``decide`` and the legal ``actions``;
- :mod:`.folds`: ``evolve``;
- :mod:`.flow`: the setup and the deal, ``follow_up``, the reaction deadline, the away
  player's move, the outcome;
- :mod:`.protocol`: what players see (``notify``, ``view``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from cardroom_engine import Deadline, Event, GameRules, Message, Outcome
from cardroom_engine.game import BotFactory

from . import commands, flow, protocol
from .bots import BOTS
from .folds import FOLDS
from .state import REACTION_SKIPPED, PapasConfig, PapasState


class Papas(GameRules[PapasState]):
    """Dónde las papas queman: the rules of the package docs."""

    name = "papas"
    min_players = 2
    max_players = 6
    config_model = PapasConfig
    bots: ClassVar[Mapping[str, BotFactory]] = BOTS
    # a pass is told to the passer only: the others must not see the version move either
    private_events: ClassVar[frozenset[str]] = frozenset({REACTION_SKIPPED})

    def audience(self, state: PapasState, event: Event) -> tuple[str, ...] | None:
        return (event["player"],) if event["type"] == REACTION_SKIPPED else None

    def setup(self, config: Any, seats: Sequence[str]) -> PapasState:
        return flow.setup(config, seats)

    def start(self, state: PapasState, rng: random.Random) -> list[Event]:
        return flow.start(state, rng)

    decide = staticmethod(commands.decide)

    # the registry's own evolve: no extra call for every event of every replay
    evolve = staticmethod(FOLDS.evolve)

    def follow_up(self, state: PapasState, rng: random.Random) -> list[Event]:
        return flow.follow_up(state, rng)

    def deadline(self, state: PapasState) -> Deadline | None:
        return flow.deadline(state)

    def on_timeout(self, state: PapasState, key: str, rng: random.Random) -> list[Event]:
        return flow.on_timeout(state, key, rng)

    def house_action(
        self, state: PapasState, player: str, rng: random.Random
    ) -> dict[str, Any] | None:
        return flow.house_action(self.actions(state, player), rng)

    def actions(self, state: PapasState, player: str) -> list[dict[str, Any]]:
        return commands.actions(state, player)

    def outcome(self, state: PapasState) -> Outcome | None:
        return flow.outcome(state)

    def notify(self, before: PapasState, event: Event, after: PapasState) -> dict[str, Message]:
        return protocol.notify(before, event, after)

    def view(self, state: PapasState, player: str | None) -> dict[str, Any]:
        return protocol.view(state, player)
