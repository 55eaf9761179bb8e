"""Memory benchmark: bytes per game held in the gamemaster's cache, per game type.

For each real game, BENCH_MEMORY_LOGS distinct mid-game logs (default 20; the events up to
the command halfway through a game played with random legal moves, or by the game's bots of
the kind BENCH_MEMORY_BOTS names, e.g. ``heuristic``, as JSON text) are made first. Then
BENCH_MEMORY_GAMES games (default 1000; Macaua BENCH_MEMORY_MACAUA_GAMES, default 100, its
tables being ~100x bigger and slow to replay) are loaded into an ``OrderedDict`` of
the gamemaster's own ``Loaded(table, state)`` exactly as ``Sessions.load`` does: the
events parsed from JSON (as they come from the store), ``Table.replay``, the events
dropped. Each table's players are named apart (``<type>-<k>-p0``, ...), as a real
gamemaster's are. Measured twice, per game:

- tracemalloc: the Python allocations still alive afterwards (the precise figure);
- RSS: the growth of the resident set (includes the allocator's overhead; noisier).
  Each game type is measured in a fresh process of its own (``multiprocessing`` spawn),
  handed the logs made here, so memory freed earlier cannot be reused unseen.

Beside it, as a yardstick measured from the same logs: the bytes of the JSON text of the
events the state was built from (what loading it from the store reads), and the state of an
empty lobby table (the per-table overhead before any game state).

Run alone: ``BENCH_MEMORY_GAMES=100 BENCH_MEMORY_LOGS=5 uv run --frozen python
bench/bench_memory.py`` (BENCH_MEMORY_TYPES restricts the game types).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import multiprocessing
import os
import re
import time
import tracemalloc
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from cardroom_engine import Table, registry
from cardroom_gamemaster.session import Loaded  # the gamemaster's own cache entry
from common import Report, env_float, env_int, env_list
from gamesim import load_real_games, play_timed, seats_for, try_game

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    """Resident bytes, after a full collection and giving free heap back to the system (so
    memory freed earlier, e.g. by making the logs, is not silently reused by the cache)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def fill(
    cache: OrderedDict[str, Any],
    game: Any,
    logs: list[str],
    prefix: str,
    k: int,
    seats: list[str],
) -> None:
    # each table's players named apart, as the players of a real gamemaster's tables are:
    # a name shared by every table would let the values built from names (the sets of
    # players a Macaua card's keys belong to, say) be one object across tables
    seat_name = re.compile("|".join(f'"{re.escape(p)}"' for p in seats))
    for i in range(k):
        names = {f'"{p}"': f'"{prefix}-{i}-{p}"' for p in seats}
        events = json.loads(seat_name.sub(_renamer(names), logs[i % len(logs)]))
        table = Table(game)
        state = table.replay(events)
        table.settle(state)  # as Sessions.load does
        cache[f"{prefix}-{i}"] = Loaded(table, state)
        del events


def _renamer(names: dict[str, str]) -> Callable[[re.Match[str]], str]:
    return lambda match: names[match.group(0)]


def measure(name: str, logs: list[str], k: int, seats: list[str]) -> dict[str, float]:
    """In a process of its own (nothing freed earlier to reuse): RSS growth, then tracemalloc,
    of ``k`` tables loaded from ``logs``; and an empty lobby table."""
    load_real_games()
    game = registry.get(name)
    before = rss()
    cache: OrderedDict[str, Any] = OrderedDict()
    fill(cache, game, logs, name, k, seats)
    rss_per_game = (rss() - before) / k

    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    traced: OrderedDict[str, Any] = OrderedDict()
    fill(traced, game, logs, f"{name}-traced", k, seats)  # named apart from the first
    gc.collect()
    now, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    traced_per_game = (now - base) / k
    del traced

    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    lobby_cache: OrderedDict[str, Any] = OrderedDict()
    table = Table(game)
    # a game that binds seats to verify keys (Macaua) is created with one: a key of its bot's
    key = getattr(game.bots["random"](seats[0]), "verify_key", None) if game.bots else None
    for i in range(200):
        created = table.create(f"l{i}", seats[0], {}, seats=len(seats), key=key)
        lobby_cache[f"l{i}"] = Loaded(table, table.replay(json.loads(json.dumps(created))))
    now, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"rss": rss_per_game, "traced": traced_per_game, "lobby": (now - base) / 200}


def main() -> None:
    k_default = env_int("BENCH_MEMORY_GAMES", 1000)
    # Macaua's tables are ~100x bigger and slow to replay: fewer of them measure it as well
    k_macaua = env_int("BENCH_MEMORY_MACAUA_GAMES", 100)
    n_logs = env_int("BENCH_MEMORY_LOGS", 20)
    gen_wall = env_float("BENCH_MEMORY_GEN_WALL", 60.0)
    players = env_int("BENCH_MEMORY_PLAYERS", 2)
    bots_kind = os.environ.get("BENCH_MEMORY_BOTS", "").strip() or "random"
    report = Report("memory")
    names = env_list("BENCH_MEMORY_TYPES", load_real_games())
    report.sizes = {
        "games": k_default,
        "macaua_games": k_macaua,
        "logs": n_logs,
        "players": players,
        "bots": bots_kind,
        "gen_wall": gen_wall,
        "types": names,
    }
    report.line(
        f"memory: {k_default} mid-game tables per game type (macaua {k_macaua})"
        " in a gamemaster-like cache"
    )
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    spawn = multiprocessing.get_context("spawn")
    for name in names:
        game, why = try_game(name, players)
        if game is None:
            skipped[name] = why
            report.line(f"  {name:9s} skipped: {why}")
            continue
        k = k_macaua if name == "macaua" else k_default
        seats = seats_for(game, players)
        logs: list[str] = []
        began = time.perf_counter()
        while len(logs) < n_logs and (not logs or time.perf_counter() - began < gen_wall):
            played = play_timed(
                game, seats, seed=len(logs) + 1, game_id=f"m{len(logs)}", bots_kind=bots_kind
            )
            logs.append(json.dumps(played.midgame()))
        log_bytes = sum(len(s.encode()) for s in logs) / len(logs)
        events_per_log = sum(len(json.loads(s)) for s in logs) / len(logs)
        with spawn.Pool(1) as pool:
            m = pool.apply(measure, (name, logs, k, seats))
        traced_per_game, rss_per_game, lobby = m["traced"], m["rss"], m["lobby"]

        results[name] = {
            "games": k,
            "distinct_logs": len(logs),
            "players": len(seats),
            "events_per_game": events_per_log,
            "tracemalloc_bytes_per_game": traced_per_game,
            "rss_bytes_per_game": rss_per_game,
            "log_json_bytes_per_game": log_bytes,
            "lobby_table_bytes": lobby,
            "state_over_log": traced_per_game / log_bytes,
        }
        report.line(
            f"  {name:9s} {traced_per_game / 1024:8.1f} KiB/game (tracemalloc)"
            f" {rss_per_game / 1024:8.1f} KiB/game (RSS)"
            f"  | its log {log_bytes / 1024:7.1f} KiB JSON ({events_per_log:.0f} events):"
            f" state/log {traced_per_game / log_bytes:.2f}x;"
            f" empty lobby table {lobby / 1024:.1f} KiB"
        )
    report.data.update({"results": results, "skipped": skipped})
    report.write()


if __name__ == "__main__":
    main()
