"""Bot strength: tournaments through the services, ranked by analytics' openskill ratings.

For each game with a search bot, the search, heuristic and random bots play
``BENCH_STRENGTH_GAMES`` games at one table through every service (its own database and
subject root on the servers the tests use), exactly as ``cardroom tournament`` plays them,
half of them in each cyclic order of the seats (the first seat rotates in each half); the
ratings are analytics' (openskill Plackett-Luce), over all the games. The order is shown
when each kind's mu is above the next one's by more than twice their combined sigma
("separated"); beside it, in how many games each kind ranked above the next and below it
(analytics' results of each game): a tournament of a few hundred games separates two kinds
reliably only when the stronger ranks above the other in about 75% of their games
(``bench/separation.py``). The search bot's time per decision (a choice among two actions
or more) at its default strength, timed in memory games of search bots, is printed beside.

Run: ``make strength`` (``BENCH_STRENGTH_GAMES``, default 60, or per game
``BENCH_STRENGTH_GAMES_<GAME>``, e.g. ``BENCH_STRENGTH_GAMES_PAPAS``;
``BENCH_STRENGTH_GAMES_ONLY``: a comma-separated subset of games).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

from arena import ahead
from common import (
    DecisionClock,
    Report,
    env_int,
    env_list,
    fresh_database,
    servers,
    start_watchdog,
    unique_name,
)

# game, the kinds from the expected strongest to the weakest, config
TOURNAMENTS: list[tuple[str, list[str], dict[str, Any]]] = [
    ("take5", ["search", "heuristic", "random"], {"win_score": 66}),
    ("papas", ["search", "heuristic", "random"], {}),
    ("sixtysix", ["search", "heuristic", "random"], {}),
    # a new table's shuffle proof (the argument); a game that has not ended after 400 turns
    # is undecided (a tie), so no game runs for ever
    ("macaua", ["search", "heuristic", "random"], {"max_turns": 400}),
]


def separated(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return float(a["mu"]) - float(b["mu"]) > 2 * math.hypot(float(a["sigma"]), float(b["sigma"]))


def move_time(game: str, config: dict[str, Any]) -> tuple[float, int]:
    """Seconds per decision of the search bot at its default strength (a choice among two
    actions or more; in-memory games of search bots only), and how many were timed."""
    import random

    from cardroom_engine import registry
    from cardroom_engine.simulate import bots_chooser, play

    rules = registry.get(game)
    made = {p: rules.bots["search"](p) for p in ("s0", "s1", "s2")}
    clock = DecisionClock()
    for bot in made.values():
        searcher = clock.searcher(bot)
        if searcher is not None:
            clock.wrap(searcher)
    keys = {p: k for p, b in made.items() if isinstance(k := getattr(b, "verify_key", None), str)}
    chooser = bots_chooser(rules, dict.fromkeys(made, "search"), made)
    play(rules, list(made), random.Random(1), config, chooser, keys=keys or None)
    return clock.spent / max(clock.count, 1), clock.count


@dataclass
class Balanced:
    games: list[str]
    failed: int
    seconds: float
    leaderboard: dict[str, Any]
    orders: list[tuple[list[str], dict[str, int]]]  # each seating, its wins per kind
    rankings: list[list[list[str]]]  # each game's kinds, best first (ties share a group)


async def balanced(
    nats_url: str, root: str, game: str, kinds: list[str], count: int, config: dict[str, Any]
) -> Balanced:
    """``cardroom tournament``'s games in both cyclic orders of the seats, half the games each
    (a tournament only rotates the first seat, so with three kinds each would always sit
    right after the same other kind: in the 66 game, after whom a player sits moves its
    results more than its play does), rated together by analytics."""
    from cardroom_runtime.nats import connect

    from cardroom.analytics_cli import ask
    from cardroom.tournament_cli import bot_players, run_tournament

    orders = [kinds] if len(kinds) < 3 else [kinds, [kinds[0], *reversed(kinds[1:])]]
    began = time.perf_counter()
    played: list[str] = []
    failed = 0
    per_order: list[tuple[list[str], dict[str, int]]] = []
    for i, order in enumerate(orders):
        n = count // len(orders) + (1 if i < count % len(orders) else 0)
        result = await run_tournament(
            nats_url, root, game, order, n, concurrency=4, config=config, timeout=600
        )
        played += result.games
        failed += result.failed
        wins = {r["kind"]: int(r["wins"]) for r in result.leaderboard["ratings"]}
        per_order.append((order, wins))
    nc = await connect(nats_url, "cardroom-strength")
    try:
        players = [p for p, _ in bot_players(kinds)]
        board = await ask(
            nc,
            root,
            "leaderboard",
            {"game_type": game, "players": players, "games": played},
            timeout=60,
        )
        kind_of = dict(bot_players(kinds))
        rankings: list[list[list[str]]] = []
        for game_id in played:
            answer = await ask(nc, root, "game", {"game": game_id}, timeout=60)
            by_rank: dict[int, list[str]] = {}
            for row in answer["results"]:
                player = str(row["player_id"])
                by_rank.setdefault(int(row["rank"]), []).append(kind_of.get(player, player))
            rankings.append([by_rank[r] for r in sorted(by_rank)])
    finally:
        await nc.close()
    return Balanced(played, failed, time.perf_counter() - began, board, per_order, rankings)


async def main() -> None:
    from cardroom_runtime.games import load_games
    from cardroom_runtime.host import Host

    from cardroom.services import SERVICES, ServiceName

    load_games()
    start_watchdog()
    games = env_int("BENCH_STRENGTH_GAMES", 60)
    only = set(env_list("BENCH_STRENGTH_GAMES_ONLY", [t[0] for t in TOURNAMENTS]))
    report = Report("strength")
    report.sizes = {"games": games}
    rows: list[dict[str, Any]] = []
    async with servers() as services, fresh_database(services, "strength") as (_, url):
        root = unique_name("strength")
        host = Host(
            SERVICES[ServiceName.all],
            nats_url=services.nats_url,
            database_url=url,
            subject_root=root,
        )
        await host.start()
        try:
            for game, kinds, config in TOURNAMENTS:
                if game not in only:
                    continue
                count = env_int(f"BENCH_STRENGTH_GAMES_{game.upper()}", games)
                report.sizes[f"games_{game}"] = count
                result = await balanced(services.nats_url, root, game, kinds, count, config)
                per_move, timed = await asyncio.to_thread(move_time, game, config)
                ratings = {r["kind"]: r for r in result.leaderboard["ratings"]}
                report.line(
                    f"\n{game}: {len(result.games)} games ({result.failed} failed) in "
                    f"{result.seconds:.0f} s; search bot {per_move * 1000:.0f} ms a decision "
                    f"({timed} timed in memory)"
                )
                for order, wins in result.orders:
                    report.line(f"  seats {' -> '.join(order)}: wins {wins}")
                report.line(f"{'kind':<10} {'mu':>7} {'sigma':>6} {'wins':>5} {'avg rank':>9}")
                for kind in kinds:
                    r = ratings[kind]
                    report.line(
                        f"{kind:<10} {r['mu']:>7.2f} {r['sigma']:>6.2f} {r['wins']:>5} "
                        f"{r['avg_rank']:>9.2f}"
                    )
                order = [
                    f"{a} > {b}: "
                    + ("separated" if separated(ratings[a], ratings[b]) else "NOT separated")
                    for a, b in itertools.pairwise(kinds)
                ]
                report.line("  " + "; ".join(order))
                above = [
                    (ahead(result.rankings, a, b), ahead(result.rankings, b, a))
                    for a, b in itertools.pairwise(kinds)
                ]
                report.line(
                    "  "
                    + "; ".join(
                        f"{a} above {b} in {over} games, below in {under} "
                        f"({over / max(over + under, 1):.0%})"
                        for (a, b), (over, under) in zip(
                            itertools.pairwise(kinds), above, strict=True
                        )
                    )
                    + " (separation needs about 75%: bench/separation.py)"
                )
                rows.append(
                    {
                        "game": game,
                        "games": len(result.games),
                        "failed": result.failed,
                        "ratings": {
                            k: {"mu": ratings[k]["mu"], "sigma": ratings[k]["sigma"]} for k in kinds
                        },
                        "separated": [
                            separated(ratings[a], ratings[b]) for a, b in itertools.pairwise(kinds)
                        ],
                        "above_below": above,
                        "search_move_s": per_move,
                        "orders": [{"seats": o, "wins": w} for o, w in result.orders],
                    }
                )
        finally:
            await host.stop()
    report.line("\nsummary (mu +- sigma per kind; ms per decision of the search bot)")
    for row in rows:
        figures = ", ".join(
            f"{k} {r['mu']:.1f}+-{r['sigma']:.1f}" for k, r in row["ratings"].items()
        )
        verdict = "separated" if all(row["separated"]) else "NOT all separated"
        report.line(
            f"  {row['game']}: {row['games']} games: {figures}: {verdict}; "
            f"{row['search_move_s'] * 1000:.0f} ms"
        )
    report.data = {"results": rows}
    report.write()


if __name__ == "__main__":
    asyncio.run(main())
