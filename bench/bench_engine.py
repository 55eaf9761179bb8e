"""Engine benchmark: decide + evolve per second for each real game, pure (no I/O).

Each game type plays whole games with random legal moves (gamesim.py: ``Table.decide``, then
``Table.evolve`` of every event, then follow-ups until the game waits; choosing the move is
not timed) for about BENCH_ENGINE_SECONDS of timed work (default 3; at least one game,
at most BENCH_ENGINE_WALL seconds of wall time, default 60), with BENCH_ENGINE_PLAYERS
seats (default 2, clamped to what the game allows). BENCH_ENGINE_GAMES restricts the game
types (comma-separated).

Figures per game type: commands per second (one ``decide`` with every evolve and follow-up
it causes) and events per second (evolves, decide and follow-up time included).
Floor, measured here on a mid-game state of the same game: ``dataclasses.replace`` of the
``TableState`` (bumping the version), the copy every ``Table.evolve`` makes at least once;
printed as events/s over floor/s (the share of the floor rate the rules reach).

Run alone: ``BENCH_ENGINE_SECONDS=0.5 uv run --frozen python bench/bench_engine.py``.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from cardroom_engine import Table
from common import Report, env_float, env_int, env_list
from gamesim import chooser_for, load_real_games, play_timed, seats_for, try_game


def replace_floor(state: Any, n: int = 50_000) -> float:
    """Copies per second of the table state (``dataclasses.replace``)."""
    t0 = time.perf_counter()
    s = state
    for _ in range(n):
        s = dataclasses.replace(s, version=s.version + 1)
    return n / (time.perf_counter() - t0)


def main() -> None:
    budget = env_float("BENCH_ENGINE_SECONDS", 3.0)
    wall = env_float("BENCH_ENGINE_WALL", 60.0)
    players = env_int("BENCH_ENGINE_PLAYERS", 2)
    report = Report("engine")
    names = env_list("BENCH_ENGINE_GAMES", load_real_games())
    report.sizes = {"seconds": budget, "wall": wall, "players": players, "games": names}
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    report.line(f"engine: decide + evolve, random legal moves, ~{budget:g} s timed per game")
    for name in names:
        game, why = try_game(name, players)
        if game is None:
            skipped[name] = why
            report.line(f"  {name:9s} skipped: {why}")
            continue
        seats = seats_for(game, players)
        _, how, _ = chooser_for(game, seats)
        commands = evolves = games = 0
        seconds = 0.0
        began = time.perf_counter()
        mid: Any = None
        while games == 0 or (seconds < budget and time.perf_counter() - began < wall):
            p = play_timed(game, seats, seed=games + 1)
            commands += p.commands
            evolves += p.evolves
            seconds += p.seconds
            games += 1
            if mid is None:
                half = play_timed(game, seats, seed=1, stop_after_commands=max(1, p.commands // 2))
                mid = Table(game).replay(half.events)
        floor = replace_floor(mid)
        eps = evolves / seconds
        results[name] = {
            "players": len(seats),
            "moves": how,
            "games": games,
            "commands": commands,
            "events": evolves,
            "seconds": seconds,
            "commands_per_second": commands / seconds,
            "events_per_second": eps,
            "floor_state_copies_per_second": floor,
            "events_over_floor": eps / floor,
        }
        report.line(
            f"  {name:9s} {commands / seconds:9.0f} commands/s {eps:9.0f} events/s"
            f"  | floor (TableState copy) {floor:9.0f}/s  ratio {eps / floor:.3g}"
            f"  ({games} games, {len(seats)} players, {how})"
        )
    report.data.update({"players": players, "budget_seconds": budget, "games": results})
    report.data["skipped"] = skipped
    report.write()


if __name__ == "__main__":
    main()
