"""Macaua benchmark: the time to shuffle, mask and deal one deck for 2, 4 and 6 players,
beside its floor measured in the same run.

The deal is played in memory exactly as the services would run it (``Table.decide`` with
JSON round trips, real bots holding the keys), so each phase splits into:

- clients: what the players' programs compute (keys and proofs, shuffles, masks, opening
  their hands), one after the other as the protocol is sequential;
- server: what ``decide`` verifies (every proof, signature and published key).

Floors, measured here: one raw variable-base scalar multiplication (libsodium
``crypto_scalarmult_ed25519_noclamp``) times the multiplications that the bare masking
needs without any proof (per card and player: 2 to shuffle, 2 to mask; 1 per published key),
and "bare ops": the library's steps timed alone (``shuffle_step`` with 0 proof rounds, which
still makes its Chaum-Pedersen proofs, ``mask_step``, the deal's unmasking), with no
verification, no signatures and no JSON.

Run: ``uv run --frozen python bench/bench_macaua.py [--rounds 64] [--players 2 4 6]``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from typing import Any

from cardroom_engine import Table
from cardroom_engine.simulate import new_game
from cardroom_games.macaua import GAME, HeuristicBot, MacauaBot
from cardroom_mentalpoker import (
    PlayerSecrets,
    card_point,
    deal_reveals,
    mask_step,
    open_deck,
    partial_unmask,
    proof_context,
    random_scalar,
    shuffle_step,
    standard_deal,
)
from nacl import bindings

PHASES = ("keys", "shuffle", "mask", "deal")


def deal_once(players: int, rounds: int) -> dict[str, dict[str, float]]:
    """One real deal; seconds per phase, split into clients and server."""
    rng = random.Random(players)
    seats = [f"p{i}" for i in range(players)]
    local = new_game(GAME, seats, rng, {"shuffle_rounds": rounds})
    table: Table = local.table
    bots: dict[str, MacauaBot] = {p: HeuristicBot(p) for p in seats}
    times: dict[str, dict[str, float]] = defaultdict(lambda: {"clients": 0.0, "server": 0.0})
    while local.state.game.phase in PHASES:
        phase = local.state.game.phase
        player = local.state.game.waiting[0]
        t0 = time.perf_counter()
        actions = table.actions(local.state, player)
        command = json.loads(
            json.dumps(bots[player].choose(table.view(local.state, player), actions, rng))
        )
        t1 = time.perf_counter()
        events = table.decide(local.state, player, command, rng, gate_open=True)
        t2 = time.perf_counter()
        local.apply(events)
        local.settle(rng)
        times[phase]["clients"] += t1 - t0
        times[phase]["server"] += t2 - t1
    t0 = time.perf_counter()
    for p in seats:  # every player opens its hand privately
        bots[p].open_hand(table.view(local.state, p)["state"])
    times["deal"]["clients"] += time.perf_counter() - t0
    return dict(times)


def bare(players: int) -> float:
    """Shuffle, mask and deal with the bare masking operations: no proofs, no checks."""
    n = 54
    secrets = [PlayerSecrets.generate(n) for _ in range(players)]
    t0 = time.perf_counter()
    deck = open_deck()
    for i, s in enumerate(secrets):
        deck, _ = shuffle_step(deck, s, context=proof_context("b", 0, f"p{i}"), rounds=0)
    for i, s in enumerate(secrets):
        deck, _ = mask_step(deck, s, context=proof_context("b", 0, f"p{i}"))
    layout = standard_deal(players)
    cards = list(deck)
    for i, s in enumerate(secrets):
        for reveal in deal_reveals(s, i, layout):
            cards[reveal.position] = partial_unmask(cards[reveal.position], reveal.key)
    return time.perf_counter() - t0


def scalarmult_floor(count: int = 2000) -> float:
    point = card_point("AS").value
    scalar = random_scalar().value
    t0 = time.perf_counter()
    for _ in range(count):
        bindings.crypto_scalarmult_ed25519_noclamp(scalar, point)
    return (time.perf_counter() - t0) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=64, help="shuffle proof rounds")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 6])
    args = parser.parse_args()
    one = scalarmult_floor()
    print(f"floor: one scalar multiplication = {one * 1e6:.1f} µs")
    print(f"shuffle proof rounds: {args.rounds} (production default 64)\n")
    header = f"{'players':>7} {'phase':>8} {'clients s':>10} {'server s':>9} {'total s':>8}"
    print(header)
    results: list[dict[str, Any]] = []
    for players in args.players:
        times = deal_once(players, args.rounds)
        total = 0.0
        for phase in PHASES:
            c, s = times[phase]["clients"], times[phase]["server"]
            total += c + s
            print(f"{players:>7} {phase:>8} {c:>10.3f} {s:>9.3f} {c + s:>8.3f}")
        published = (players - 1) * (players * 5) + players  # keys for other hands + top
        mults = 54 * players * 4 + published
        floor = mults * one
        bare_s = bare(players)
        print(
            f"{players:>7} {'ALL':>8} {'':>10} {'':>9} {total:>8.3f}   "
            f"bare ops {bare_s:.3f} s, floor {mults} mults × {one * 1e6:.0f} µs = {floor:.3f} s "
            f"(×{total / floor:.0f})"
        )
        results.append(
            {"players": players, "phases": times, "total": total, "bare": bare_s, "floor": floor}
        )
    print()
    print(json.dumps({"rounds": args.rounds, "scalarmult_s": one, "results": results}))


if __name__ == "__main__":
    main()
