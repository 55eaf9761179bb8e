"""The 66 game as a cardroom game: its table options and the rules object that assembles
the state (state.py), the commands (commands.py), the game's own moves (flow.py), the folds
(folds.py) and what the players are told and see (protocol.py)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from cardroom_engine import BotFactory, Event, GameRules, Outcome
from pydantic import BaseModel, ConfigDict

from . import commands, flow, moves, protocol
from .bots import BOTS
from .folds import FOLDS
from .protocol import Message
from .state import (
    CLAIM_CONFIRMED,
    DECK_CARD_TAKEN,
    DISCARD_TAKEN_EVENT,
    NEXT_ROUND_PROMPTED,
    POWER_PROMPTED,
    SWAP_OWN_PICKED,
    TURN_PROMPTED,
    V1,
    SixtySixState,
)
from .state import ROUND_DEALT as ROUND_DEALT  # read from here by tests/pipeline


class SixtySixConfig(BaseModel):
    """Options of a 66 table. ``protocol`` picks the protocol generation and its rules."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    protocol: Literal["v1", "v2"] = "v2"


class SixtySix(GameRules[SixtySixState]):
    name: ClassVar[str] = "sixtysix"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 5
    config_model: ClassVar[type[BaseModel]] = SixtySixConfig
    bots: ClassVar[Mapping[str, BotFactory]] = BOTS
    # events that may be told to one player only: the others must not see the version move
    private_events: ClassVar[frozenset[str]] = frozenset(
        {
            TURN_PROMPTED,
            DECK_CARD_TAKEN,
            POWER_PROMPTED,
            DISCARD_TAKEN_EVENT,
            SWAP_OWN_PICKED,
            CLAIM_CONFIRMED,
            NEXT_ROUND_PROMPTED,
        }
    )

    def audience(self, state: SixtySixState, event: Event) -> tuple[str, ...] | None:
        kind = event["type"]
        mover = (state.seats[state.active],)  # the player whose turn it is
        if kind in (TURN_PROMPTED, DECK_CARD_TAKEN, POWER_PROMPTED):
            return mover
        if kind in (DISCARD_TAKEN_EVENT, SWAP_OWN_PICKED):  # told in v2 only (v1: nobody)
            return None if state.protocol == V1 else mover
        if kind == CLAIM_CONFIRMED:  # told in v1 only (v2: nobody)
            return mover if state.protocol == V1 else None
        # the next round's starter (once a round: read from what it is told)
        told = tuple(protocol.notify(state, event, FOLDS.evolve(state, event)))
        return told if len(told) == 1 and len(state.seats) > 1 else None

    def setup(self, config: Any, seats: Sequence[str]) -> SixtySixState:
        generation = config.protocol if isinstance(config, SixtySixConfig) else "v2"
        return SixtySixState(protocol=generation, seats=tuple(seats), totals=(0,) * len(seats))

    def start(self, state: SixtySixState, rng: random.Random) -> list[Event]:
        return flow.start(state, rng)

    decide = staticmethod(commands.decide)

    # the registry's own evolve: no extra call for every event of every replay
    evolve = staticmethod(FOLDS.evolve)

    def notify(
        self, before: SixtySixState, event: Event, after: SixtySixState
    ) -> dict[str, Message]:
        return protocol.notify(before, event, after)

    def follow_up(self, state: SixtySixState, rng: random.Random) -> list[Event]:
        return flow.follow_up(state, rng)

    def actions(self, state: SixtySixState, player: str) -> list[dict[str, Any]]:
        if player not in state.seats or state.mover() != state.seat_of(player):
            return []
        return moves.legal(state)

    def view(self, state: SixtySixState, player: str | None) -> dict[str, Any]:
        return protocol.view(state, player)

    def outcome(self, state: SixtySixState) -> Outcome | None:
        return flow.outcome(state)


GAME = SixtySix()
