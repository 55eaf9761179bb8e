"""Play the real games in memory with random legal moves, timing decide + evolve only.

Shared by bench_engine (the timing), bench_memory (mid-game logs) and bench_replay (whole
logs to append). The loop is the gamemaster's hot path without I/O: ``Table.decide`` on a
command, ``Table.evolve`` of each event it returns, then ``Table.follow_up`` + ``evolve``
until the game waits for a player (every gate opens at once, as in
``cardroom_engine.simulate``). Choosing the move (legal actions, a bot) and the
notifications the bots need are computed outside the timed part.

A game whose moves a random pick cannot make (Macaua: moves are signed by the players'
keys) is played by the game's own ``random`` bot, which picks a random legal move too.
"""

from __future__ import annotations

import contextlib
import json
import random
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardroom_engine import Event, Game, Rejection, registry
from cardroom_engine.simulate import Chooser, Step, bots_chooser, new_game, random_chooser


@dataclass
class Played:
    """One game played: its log as stored, decision by decision, and the timed figures."""

    game_type: str
    game_id: str
    seats: list[str]
    # each decision's events (create, joins/start, every decide, every follow-up), with meta
    decisions: list[list[tuple[Event, dict[str, Any], frozenset[str]]]] = field(
        default_factory=list
    )
    command_ends: list[int] = field(default_factory=list)  # len(decisions) after each command
    commands: int = 0
    evolves: int = 0
    seconds: float = 0.0  # decide + evolve + follow_up, nothing else
    finished: bool = False

    @property
    def events(self) -> list[Event]:
        """The events as a reader of the store gets them back (JSON)."""
        return self.events_until(len(self.decisions))

    def events_until(self, decisions: int) -> list[Event]:
        return [json.loads(json.dumps(e)) for d in self.decisions[:decisions] for e, _, _ in d]

    def midgame(self) -> list[Event]:
        """The events up to the command halfway through the game."""
        if not self.command_ends:
            return self.events
        return self.events_until(self.command_ends[len(self.command_ends) // 2])


def load_real_games() -> list[str]:
    from cardroom_runtime.games import load_games

    load_games("")
    return sorted(registry.names())


def chooser_for(
    game: Game[Any], seats: Sequence[str], bots_kind: str = "random"
) -> tuple[Chooser, str, dict[str, str] | None]:
    """Random legal moves, or the game's own random bot where moves must be made by a bot;
    with another ``bots_kind`` (``heuristic``, say), the game's bots of that kind. The third
    item: the verify keys the seats join with, for a game that binds seats to keys."""
    if bots_kind == "random" and (
        getattr(game, "name", "") != "macaua" or "random" not in game.bots
    ):
        return random_chooser, "random legal moves", None
    if bots_kind not in game.bots:
        raise ValueError(f"{getattr(game, 'name', game)} has no {bots_kind!r} bot")
    bots = {p: game.bots[bots_kind](p) for p in seats}
    keys = {
        p: key for p, b in bots.items() if isinstance(key := getattr(b, "verify_key", None), str)
    }
    chooser = bots_chooser(game, dict.fromkeys(seats, bots_kind), bots)
    how = "its random bot" if bots_kind == "random" else f"its {bots_kind} bots"
    return chooser, how, keys or None


@contextlib.contextmanager
def seeded_secrets(seed: int) -> Iterator[None]:
    """``secrets``' draws (Macaua's bots: their keys and shuffles) from a seeded generator
    while a game is played here, so that a seed gives the same game, hence the same logs, in
    every run (a figure measured on them can be compared from run to run). For benchmarks
    only: no key made so is secret."""
    rng = random.Random(seed)
    saved = secrets.token_bytes, secrets.randbelow
    secrets.token_bytes = rng.randbytes  # type: ignore[assignment]
    secrets.randbelow = rng.randrange  # type: ignore[assignment]
    try:
        yield
    finally:
        secrets.token_bytes, secrets.randbelow = saved


def play_timed(
    game: Game[Any],
    seats: Sequence[str],
    seed: int,
    config: Mapping[str, Any] | None = None,
    *,
    stop_after_commands: int | None = None,
    max_commands: int = 100_000,
    game_id: str = "g1",
    bots_kind: str = "random",
) -> Played:
    with seeded_secrets(seed + 2_000_029):
        rules_rng = random.Random(seed)
        choose_rng = random.Random(seed + 1_000_003)
        choose, _, keys = chooser_for(game, seats, bots_kind)
        local = new_game(game, seats, rules_rng, config, game_id=game_id, keys=keys)
        table = local.table
        played = Played(game.name, game_id, list(seats))
        # the lobby and the deal, as the gamemaster appends them (untimed: once per game)
        lobby = [(s.event, {"actor": seats[0]}, frozenset(s.notifications)) for s in local.steps]
        played.decisions.append(lobby)
        needs_notes = choose is not random_chooser
        while local.state.status == "playing":
            if stop_after_commands is not None and played.commands >= stop_after_commands:
                return played
            movers = [(p, a) for p in local.state.seats if (a := table.actions(local.state, p))]
            if not movers:
                raise RuntimeError(f"{game.name}: nobody can move and the game is not over")
            player, actions = choose_rng.choice(movers)
            command = dict(choose(local, player, actions, choose_rng))
            trace: list[list[tuple[Any, Event, Any]]] = []
            t0 = time.perf_counter()
            state = local.state
            events = table.decide(state, player, command, rules_rng, gate_open=True)
            batch: list[tuple[Any, Event, Any]] = []
            for event in events:
                after = table.evolve(state, event)
                batch.append((state, event, after))
                state = after
            trace.append(batch)
            while True:
                events = table.follow_up(state, rules_rng)
                if not events:
                    break
                batch = []
                for event in events:
                    after = table.evolve(state, event)
                    batch.append((state, event, after))
                    state = after
                trace.append(batch)
            played.seconds += time.perf_counter() - t0
            played.commands += 1
            local.state = state
            for i, b in enumerate(trace):
                meta: dict[str, Any] = {"actor": player} if i == 0 else {}
                decision = []
                for before, event, after in b:
                    notes = table.notify(before, event, after)
                    played.evolves += 1
                    decision.append((event, meta, frozenset(notes)))
                    if needs_notes:
                        local.steps.append(Step(event, notes, after.version))
                played.decisions.append(decision)
            played.command_ends.append(len(played.decisions))
            if played.commands > max_commands:
                raise RuntimeError(f"{game.name}: no end after {max_commands} commands")
        played.finished = True
        return played


def try_game(game_type: str, players: int, seed: int = 1) -> tuple[Game[Any] | None, str]:
    """The game if one game of it plays through here, else None and the reason."""
    try:
        game = registry.get(game_type)
    except Rejection as exc:
        return None, f"not registered ({exc})"
    seats = [f"p{i}" for i in range(max(game.min_players, min(players, game.max_players)))]
    try:
        play_timed(game, seats, seed, stop_after_commands=5)
    except Exception as exc:  # a game being written may fail: reported, skipped
        return None, f"{type(exc).__name__}: {exc}"[:300]
    return game, ""


def seats_for(game: Game[Any], players: int) -> list[str]:
    return [f"p{i}" for i in range(max(game.min_players, min(players, game.max_players)))]
