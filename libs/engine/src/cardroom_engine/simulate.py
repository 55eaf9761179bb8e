"""Play whole games in memory, exactly as the services would, minus the I/O.

Used by game tests (random play, leak properties), the engine benchmark and bots' offline
trials. The gate is modelled as "every addressee acknowledges at once": after each batch
of events the follow-ups run until the game waits for a player; then one player who has
legal actions (chosen at random: in simultaneous games several have) makes a move.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .game import Bot, Event, Game, Message, Outcome
from .table import Table, TableState


@dataclass(frozen=True)
class Step:
    """One appended event with the notifications it caused (``{player: message}``)."""

    event: Event
    notifications: dict[str, Message]
    version: int


@dataclass
class LocalGame:
    table: Table
    state: TableState
    steps: list[Step] = field(default_factory=list)
    commands: int = 0

    @property
    def outcome(self) -> Outcome | None:
        return self.table.outcome(self.state)

    def apply(self, events: Sequence[Event]) -> None:
        for produced in events:
            # The store keeps events as JSON: evolve must work on what comes back from it.
            event = json.loads(json.dumps(produced))
            before = self.state
            self.state = self.table.evolve(before, event)
            notes = self.table.notify(before, event, self.state)
            self.steps.append(Step(event, notes, self.state.version))

    def settle(self, rng: random.Random, limit: int = 10_000) -> None:
        """Run follow-ups until the game waits for a player (or is over)."""
        for _ in range(limit):
            events = self.table.follow_up(self.state, rng)
            if not events:
                return
            self.apply(events)
        raise RuntimeError("follow_up did not settle")

    def seen_by(self, player: str | None) -> list[Message]:
        """Every message a player received so far (``None``: none, spectators only see views)."""
        if player is None:
            return []
        return [s.notifications[player] for s in self.steps if player in s.notifications]


def new_game(
    game: Game[Any],
    seats: Sequence[str],
    rng: random.Random,
    config: Mapping[str, Any] | None = None,
    game_id: str = "g1",
    keys: Mapping[str, str] | None = None,
) -> LocalGame:
    """Create a table, seat everyone (each with its verify key from ``keys``, if any), start
    and settle."""
    table = Table(game)
    key = dict(keys or {}).get
    created = table.create(game_id, seats[0], config or {}, seats=len(seats), key=key(seats[0]))
    local = LocalGame(table, table.replay(created))
    local.steps.extend(Step(e, {}, i + 1) for i, e in enumerate(created))
    for player in seats[1:]:
        local.apply(table.join(local.state, player, rng, key=key(player)))
    if local.state.status == "lobby":
        local.apply(table.start(local.state, seats[0], rng))
    local.settle(rng)
    return local


Chooser = Callable[[LocalGame, str, list[dict[str, Any]], random.Random], Mapping[str, Any]]


def random_chooser(
    local: LocalGame, player: str, actions: list[dict[str, Any]], rng: random.Random
) -> Mapping[str, Any]:
    return rng.choice(actions)


def bots_chooser(
    game: Game[Any], kinds: Mapping[str, str], bots: Mapping[str, Bot] | None = None
) -> Chooser:
    """Let each player be played by one of the game's bots (``{player: bot name}``); each bot
    observes exactly the messages its player received, in order. ``bots``: bots made
    beforehand (a game whose seats are bound to keys needs their keys before it is created:
    ``play(..., keys={p: bot.verify_key})``); the others are made here."""
    made = dict(bots or {})
    bots = {p: made[p] if p in made else game.bots[kind](p) for p, kind in kinds.items()}
    fed: dict[str, int] = dict.fromkeys(kinds, 0)

    def choose(
        local: LocalGame, player: str, actions: list[dict[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        bot = bots[player]
        seen = local.seen_by(player)
        for message in seen[fed[player] :]:
            bot.observe(message)
        fed[player] = len(seen)
        return bot.choose(local.table.view(local.state, player), actions, rng)

    return choose


def play(
    game: Game[Any],
    seats: Sequence[str],
    rng: random.Random,
    config: Mapping[str, Any] | None = None,
    choose: Chooser = random_chooser,
    max_commands: int = 100_000,
    keys: Mapping[str, str] | None = None,
) -> LocalGame:
    """Play one whole game; every command goes through ``decide`` like a real one. ``keys``:
    the verify keys the seats join with (see :func:`new_game`)."""
    local = new_game(game, seats, rng, config, keys=keys)
    table = local.table
    while local.state.status == "playing":
        movers = [(p, a) for p in local.state.seats if (a := table.actions(local.state, p))]
        if not movers:
            raise RuntimeError(f"{game.name}: nobody can move and the game is not over")
        player, actions = rng.choice(movers)
        command = dict(choose(local, player, actions, rng))
        local.apply(table.decide(local.state, player, command, rng, gate_open=True))
        local.commands += 1
        local.settle(rng)
        if local.commands > max_commands:
            raise RuntimeError(f"{game.name}: no end after {max_commands} commands")
    return local
