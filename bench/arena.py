"""Bot strength in memory: seeded games of the search, heuristic and random bots at one table.

The cheap, reproducible counterpart of ``strength.py`` (which plays through the services): the
same three kinds at one table, every game played in memory through the real rules (Macaua's
cryptography included) by ``cardroom_engine.simulate``. The seatings go round both cyclic
orders of the kinds, each with each first seat (six seatings, in turn), so no kind always sits
after the same other kind; game ``i`` is seeded with ``i``, so two runs of one commit play the
same games. The ratings are openskill's Plackett-Luce over the games in order, as analytics
rates them; wins share a tie; the search bot's time per decision (a choice among two actions
or more) is measured in these games.

Run: ``.venv/bin/python bench/arena.py GAME [GAMES] [FIRST_SEED] [WORKERS]``
(``WORKERS`` processes, default 1: the machine is shared). ``ARENA_SET``, e.g.
``iterations=240,confidence=2``: knobs of the search bots' search, for trials.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from common import DecisionClock

KINDS = ["search", "heuristic", "random"]
CONFIGS: dict[str, dict[str, Any]] = {
    "take5": {"win_score": 66},
    "papas": {},
    "sixtysix": {},
    # the shuffles unproved (no argument, no cut-and-choose rounds): the same play, far less
    # cryptography; a game undecided after 400 turns is a tie, as in strength.py
    "macaua": {"shuffle_proof": "rounds", "shuffle_rounds": 0, "max_turns": 400},
}


def seating(index: int) -> list[str]:
    """The kinds by seat for game ``index``: both cyclic orders, each first seat in turn."""
    orders = [KINDS, [KINDS[0], *reversed(KINDS[1:])]]
    order = orders[(index // 3) % 2]
    shift = index % 3
    return order[shift:] + order[:shift]


def one_game(game: str, index: int) -> tuple[list[list[str]], float, int]:
    """Game ``index``: the ranking by kind, and the search bot's seconds over its timed
    decisions."""
    from cardroom_engine import registry
    from cardroom_engine.simulate import bots_chooser, play
    from cardroom_runtime.games import load_games

    load_games()
    rules = registry.get(game)
    kinds = seating(index)
    seats = [f"{kind}-{i}" for i, kind in enumerate(kinds)]
    made = {p: rules.bots[k](p) for p, k in zip(seats, kinds, strict=True)}
    clock = DecisionClock()
    for bot in made.values():
        searcher = clock.searcher(bot)
        if searcher is None:
            continue
        for knob in filter(None, os.environ.get("ARENA_SET", "").split(",")):
            name, value = knob.split("=")
            setattr(searcher, name.strip(), type(getattr(searcher, name.strip()))(float(value)))
        clock.wrap(searcher)
    keys = {p: k for p, b in made.items() if isinstance(k := getattr(b, "verify_key", None), str)}
    chooser = bots_chooser(rules, dict(zip(seats, kinds, strict=True)), made)
    local = play(rules, seats, random.Random(index), CONFIGS[game], chooser, keys=keys or None)
    outcome = local.outcome
    assert outcome is not None
    ranking = [[p.split("-")[0] for p in group] for group in outcome.ranking]
    return ranking, clock.spent, clock.count


def rate(rankings: list[list[list[str]]]) -> dict[str, Any]:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {k: model.rating() for k in KINDS}
    wins = dict.fromkeys(KINDS, 0.0)
    rank_sum = dict.fromkeys(KINDS, 0.0)
    for ranking in rankings:
        ranked: list[tuple[str, int]] = []
        place = 1
        for group in ranking:
            ranked += [(k, place) for k in group]
            for k in group:
                rank_sum[k] += place
            place += len(group)
        for k in ranking[0]:
            wins[k] += 1.0 / len(ranking[0])
        names = [k for k, _ in ranked]
        after = model.rate([[ratings[k]] for k in names], ranks=[r for _, r in ranked])
        for k, (new,) in zip(names, after, strict=True):
            ratings[k] = new
    n = max(len(rankings), 1)
    return {
        k: {
            "mu": ratings[k].mu,
            "sigma": ratings[k].sigma,
            "wins": wins[k],
            "rank": rank_sum[k] / n,
        }
        for k in KINDS
    }


def separated(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    return a["mu"] - b["mu"] > 2 * math.hypot(a["sigma"], b["sigma"])


def main() -> None:
    game = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    began = time.perf_counter()
    indices = range(first, first + count)
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(one_game, itertools.repeat(game), indices))
    spent = sum(s for _, s, _ in results)
    timed = sum(t for _, _, t in results)
    table = rate([r for r, _, _ in results])
    print(
        f"{game}: {count} games (seeds {first}-{first + count - 1}) in "
        f"{time.perf_counter() - began:.0f} s; search {spent / max(timed, 1) * 1000:.0f} ms a "
        f"decision ({timed} timed)"
    )
    for k in KINDS:
        r = table[k]
        figures = f"{r['mu']:6.2f} +- {r['sigma']:5.2f}  wins {r['wins']:5.1f}"
        print(f"  {k:<10} {figures}  rank {r['rank']:.2f}")
    print(
        "  "
        + "; ".join(
            f"{a} > {b}: {'separated' if separated(table[a], table[b]) else 'NOT separated'}"
            for a, b in itertools.pairwise(KINDS)
        )
    )


if __name__ == "__main__":
    main()
