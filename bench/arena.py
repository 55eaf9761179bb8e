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
``ARENA_ORACLE=1``: the search bot's determinizer is handed the true state of the game
instead of a sample consistent with its view, so it searches with every card open. No bot
of the game ever does this (only this trial): it bounds what a better determinization could
buy a search of the same kind, the rest being its rollouts and its value.
``ARENA_ORACLE=hands``: the same, but the order of the deck (a state's ``deck`` tuple, top
first, as papas keeps it) is shuffled in each sample: the others' hands open, the draws not.
``ARENA_ORACLE=others`` (the 66 game): the others' hands open, while the bot's own unseen
cards and the deck are dealt afresh in each sample from the cards it cannot see: what the
best possible reading of the others could buy, short of seeing its own cards.
Games whose hidden cards are masked (Macaua) have no open state to hand and refuse all three.
``ARENA_HORIZON``, e.g. ``400``: the playouts' horizon, for games whose search module has
one (``HORIZON``: papas' events, Macaua's turns); a game without one refuses it.
``ARENA_KINDS``, e.g. ``search,heuristic``: the kinds at the table (default all three), in
the same rotation of seatings; two kinds play head to head, seats alternating.
"""

from __future__ import annotations

import importlib
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


def table_kinds() -> list[str]:
    """The kinds at the table: ``ARENA_KINDS`` (comma-separated) or all three."""
    named = [k.strip() for k in os.environ.get("ARENA_KINDS", "").split(",") if k.strip()]
    unknown = set(named) - set(KINDS)
    if unknown or len(named) == 1 or len(set(named)) != len(named):
        raise SystemExit(f"ARENA_KINDS: two or three of {', '.join(KINDS)}, each once")
    return named or list(KINDS)


def seating(index: int, kinds: list[str] = KINDS) -> list[str]:
    """The kinds by seat for game ``index``: both cyclic orders, each first seat in turn."""
    orders = [kinds, [kinds[0], *reversed(kinds[1:])]]
    order = orders[(index // len(kinds)) % 2]
    shift = index % len(kinds)
    return order[shift:] + order[:shift]


def one_game(game: str, index: int) -> tuple[list[list[str]], float, int]:
    """Game ``index``: the ranking by kind, and the search bot's seconds over its timed
    decisions."""
    from cardroom_engine import registry
    from cardroom_engine.simulate import bots_chooser, play
    from cardroom_games.macaua.config import weak_proofs
    from cardroom_runtime.games import load_games

    load_games()
    rules = registry.get(game)
    if horizon := os.environ.get("ARENA_HORIZON"):
        _set_horizon(game, int(horizon))
    kinds = seating(index, table_kinds())
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
    if os.environ.get("ARENA_ORACLE"):
        chooser = _oracle(game, made, chooser, os.environ["ARENA_ORACLE"])
    with weak_proofs():  # (Macaua's shuffles unproved, in this one process)
        local = play(rules, seats, random.Random(index), CONFIGS[game], chooser, keys=keys or None)
    outcome = local.outcome
    assert outcome is not None
    ranking = [[p.split("-")[0] for p in group] for group in outcome.ranking]
    return ranking, clock.spent, clock.count


def _set_horizon(game: str, horizon: int) -> None:
    """The game's search module's ``HORIZON``, read by its determinizer at each playout."""
    module = importlib.import_module(f"cardroom_games.{game}.search")
    if not hasattr(module, "HORIZON"):
        raise SystemExit(f"ARENA_HORIZON: {game}'s search has no horizon")
    module.HORIZON = horizon  # type: ignore[attr-defined]  # (imported by name)


def _oracle(game: str, made: Mapping[str, Any], chooser: Any, mode: str) -> Any:
    """``chooser``, with every search bot's samples replaced by the game's true state (mode
    ``hands``: its deck shuffled; ``others``: its own unseen cards dealt afresh)."""
    if game == "macaua":
        raise SystemExit("ARENA_ORACLE: Macaua's cards are masked; there is no open state")
    if mode == "others" and game != "sixtysix":
        raise SystemExit("ARENA_ORACLE=others: the 66 game only")
    now: dict[str, Any] = {}

    def true_state(view: Any, player: str, rng: random.Random) -> Any:
        state = now["local"].state.game
        deck = getattr(state, "deck", None)
        if mode == "others":
            return _own_unseen_dealt(state, view, player, rng)
        if mode == "hands" and isinstance(deck, tuple):
            order = list(deck)
            rng.shuffle(order)
            return state._replace(deck=tuple(order))
        return state

    for bot in made.values():
        determinizer = getattr(bot, "determinizer", None)
        if determinizer is not None:
            determinizer.sample = true_state

    def choose(local: Any, player: str, actions: Any, rng: random.Random) -> Any:
        now["local"] = local
        return chooser(local, player, actions, rng)

    return choose


def _own_unseen_dealt(state: Any, view: Any, player: str, rng: random.Random) -> Any:
    """The 66 game's true state, but ``player``'s own cards it has not seen and the deck (a
    count per value) dealt afresh from those cards together."""
    g = view.get("state", view)
    me = state.seats.index(player)
    own = list(state.hands[me])
    hidden = [j for j, value in enumerate(g["hands"][me]) if value is None]
    pool = [own[j] for j in hidden]
    pool += [value for value, count in enumerate(state.deck) for _ in range(count)]
    rng.shuffle(pool)
    for j in hidden:
        own[j] = pool.pop()
    deck = [0] * len(state.deck)
    for value in pool:
        deck[value] += 1
    hands = tuple(tuple(own) if p == me else hand for p, hand in enumerate(state.hands))
    return state._replace(hands=hands, deck=tuple(deck))


def ahead(rankings: list[list[list[str]]], a: str, b: str) -> int:
    """In how many games kind ``a`` ranked above kind ``b``."""
    return sum(
        1
        for ranking in rankings
        for i, group in enumerate(ranking)
        if a in group and any(b in later for later in ranking[i + 1 :])
    )


def rate(rankings: list[list[list[str]]], kinds: list[str] = KINDS) -> dict[str, Any]:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {k: model.rating() for k in kinds}
    wins = dict.fromkeys(kinds, 0.0)
    rank_sum = dict.fromkeys(kinds, 0.0)
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
        for k in kinds
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
    rankings = [r for r, _, _ in results]
    kinds = table_kinds()
    table = rate(rankings, kinds)
    oracle = {
        "1": " (ARENA_ORACLE: the search sees every card)",
        "hands": " (ARENA_ORACLE=hands: the search sees every hand, not the deck's order)",
        "others": " (ARENA_ORACLE=others: the search sees the others' hands, not its own)",
    }.get(os.environ.get("ARENA_ORACLE", ""), "")
    print(
        f"{game}{oracle}: {count} games (seeds {first}-{first + count - 1}) in "
        f"{time.perf_counter() - began:.0f} s; search {spent / max(timed, 1) * 1000:.0f} ms a "
        f"decision ({timed} timed)"
    )
    for k in kinds:
        r = table[k]
        figures = f"{r['mu']:6.2f} +- {r['sigma']:5.2f}  wins {r['wins']:5.1f}"
        print(f"  {k:<10} {figures}  rank {r['rank']:.2f}")
    for a, b in itertools.pairwise(kinds):
        over, under = ahead(rankings, a, b), ahead(rankings, b, a)
        print(
            f"  {a} ranked above {b} in {over} games, below in {under} "
            f"({over / max(over + under, 1):.0%} of the games they did not tie)"
        )
    print(
        "  "
        + "; ".join(
            f"{a} > {b}: {'separated' if separated(table[a], table[b]) else 'NOT separated'}"
            for a, b in itertools.pairwise(kinds)
        )
    )


if __name__ == "__main__":
    main()
