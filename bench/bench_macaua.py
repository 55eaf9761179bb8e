"""Macaua benchmark: the time to shuffle, mask and deal one deck for 2, 4 and 6 players,
beside its floor measured in the same run (target: at most 20x the floor).

The deal is played in memory exactly as the services would run it (``Table.decide`` with
JSON round trips, real bots holding the keys), so each phase splits into:

- clients: what the players' programs compute (keys and proofs, shuffles, masks, opening
  their hands), one after the other as the protocol is sequential;
- server: what ``decide`` verifies (every proof, signature and published key);
- checks: what one player's program spends checking and signing each transition
  (``TransitionVerifier``): every player checks every transition, each on its own machine
  and at the same time, so the deal waits for one check per transition. Until 2026-11-27
  players checked nothing and the deal's time had no such column; the ratio without it is
  still printed ("w/o checks").

The game's deal is a new table's: its shuffles are proved by the Terelius-Wikström argument
(config ``shuffle_proof = "argument"``, one command each). ``--cut-and-choose`` adds the
deal of a table stored before it (``shuffle_proof = "rounds"``, ``--rounds`` rounds, the
proof sent in parts); ``--library`` the same steps as the argument deal at the library's
level (keys, shuffles, masks and the deal's published keys, every move through JSON and
parsed as a server parses a command, every proof checked; no signatures, no table).

Floor: one variable-base scalar multiplication through the library's own call (libsodium
``crypto_scalarmult_ed25519_noclamp`` through cffi, as every product of the deal is made)
times the multiplications that the bare masking needs without any proof (per card and
player: 2 to shuffle, 2 to mask; 1 per published key). The multiplication is sampled between
the moves of each deal (48 of them, outside the timed sections) and each move's time is
weighted by the speed around it: this machine's speed drifts by 1.5x within a 6-player deal.
Until 2026-11-26 the floor was one multiplication through ``nacl.bindings`` (a few µs slower
a call) timed once before all deals; the ratio to it is still printed ("old floor").

Also printed: "bare ops", the library's steps timed alone (``shuffle_step`` with 0 proof
rounds, which still makes its Chaum-Pedersen proofs, ``mask_step``, the deal's unmasking),
with no verification, no signatures and no JSON.

Run: ``uv run --frozen python bench/bench_macaua.py [--players 2 4 6] [--cut-and-choose
[--rounds 64]] [--library]``.
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
    KeyReveal,
    MaskedCard,
    MaskStepProof,
    PlayerSecrets,
    PublicKeys,
    ShuffleStepProof,
    apply_reveals,
    card_point,
    check_mask_step,
    check_shuffle_step,
    deal_reveals,
    deck_from_json,
    deck_to_json,
    mask_step,
    open_card,
    open_deck,
    partial_unmask,
    proof_context,
    random_scalar,
    shuffle_step,
    standard_deal,
)
from cardroom_mentalpoker.group import _scalarmult
from common import Report, verdict
from nacl import bindings

PHASES = ("keys", "shuffle", "mask", "deal")
TARGET = 20.0
"""The deal (keys, shuffle, mask, deal; clients and server) at most this many floors."""
N = 54


class FloorProbe:
    """The floor's scalar multiplication, sampled between the moves of a deal (outside the
    timed sections): each move's time is weighted by the speed measured around it, since
    this machine's speed drifts by 1.5x within one 6-player deal."""

    def __init__(self, count: int = 48) -> None:
        self.count = count
        self.bases = [
            (random_scalar() * card_point(c)).value
            for c in ("2S", "3H", "4D", "5C", "6S", "7H", "8D", "9C")
        ]
        self.scalars = [random_scalar().value for _ in range(16)]
        self.samples: list[float] = []
        self.last = self.sample()
        self.weighted = 0.0
        self.span = 0.0

    def sample(self) -> float:
        """Seconds per variable-base multiplication through the library's own call, over
        varied points and scalars."""
        bases, scalars = self.bases, self.scalars
        t0 = time.perf_counter()
        for i in range(self.count):
            _scalarmult(scalars[i & 15], bases[i & 7])
        one = (time.perf_counter() - t0) / self.count
        self.samples.append(one)
        return one

    def tick(self, span: float) -> None:
        """A timed section of ``span`` seconds just ended: weigh it by the speed around it."""
        now = self.sample()
        self.weighted += span * (self.last + now) / 2
        self.span += span
        self.last = now

    def per_mult(self) -> float:
        return self.weighted / self.span if self.span else self.last


def deal_once(
    players: int, config: dict[str, Any], probe: FloorProbe
) -> dict[str, dict[str, float]]:
    """One real deal of a table with ``config``; seconds per phase, clients and server."""
    rng = random.Random(players)
    seats = [f"p{i}" for i in range(players)]
    bots: dict[str, MacauaBot] = {p: HeuristicBot(p) for p in seats}
    local = new_game(GAME, seats, rng, config, keys={p: b.verify_key for p, b in bots.items()})
    table: Table = local.table
    times: dict[str, dict[str, float]] = defaultdict(
        lambda: {"clients": 0.0, "server": 0.0, "checks": 0.0}
    )
    watcher = bots[seats[0]].verifier(local.state.game_id)  # every player's check costs alike
    checked = 0

    def check_new() -> float:
        nonlocal checked
        t0 = time.perf_counter()
        for step in local.steps[checked:]:
            message = step.notifications.get(seats[0])
            if message is not None and "transition" in message:
                verdict = watcher.check(step.version, json.loads(json.dumps(message)))
                assert verdict.signature is not None, verdict.rejection
        checked = len(local.steps)
        return time.perf_counter() - t0

    check_new()  # the start (not a phase of the deal)
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
        spent = check_new()
        times[phase]["checks"] += spent
        probe.tick(t2 - t0 + spent)
    t0 = time.perf_counter()
    for p in seats:  # every player opens its hand privately
        bots[p].open_hand(table.view(local.state, p)["state"])
    t1 = time.perf_counter()
    times["deal"]["clients"] += t1 - t0
    probe.tick(t1 - t0)
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


def library_deal(players: int, probe: FloorProbe) -> dict[str, dict[str, float]]:
    """The deal at the library's level, the shuffles proved by the argument; seconds per
    phase, clients and server. Every move goes through JSON and is parsed as a command."""
    seats = [f"p{i}" for i in range(players)]
    ctx = {p: proof_context("bench-argument", 0, p) for p in seats}
    times: dict[str, dict[str, float]] = defaultdict(lambda: {"clients": 0.0, "server": 0.0})
    clock = time.perf_counter

    def timed(phase: str, side: str, t0: float) -> float:
        t1 = clock()
        times[phase][side] += t1 - t0
        probe.tick(t1 - t0)
        return clock()

    secrets: dict[str, PlayerSecrets] = {}
    keys: dict[str, PublicKeys] = {}
    for p in seats:
        t = clock()
        secrets[p] = PlayerSecrets.generate(N)
        wire = json.dumps(secrets[p].public_keys(context=ctx[p]).to_json())
        t = timed("keys", "clients", t)
        keys[p] = PublicKeys.from_json(json.loads(wire))
        keys[p].check(context=ctx[p], deck_size=N)
        timed("keys", "server", t)
    deck: tuple[MaskedCard, ...] = open_deck()  # the server's copy
    view = json.dumps(deck_to_json(deck))  # what the players see
    for phase in ("shuffle", "mask"):
        for p in seats:
            t = clock()
            mine = deck_from_json(json.loads(view))
            if phase == "shuffle":
                cards, proof = shuffle_step(mine, secrets[p], context=ctx[p], argument=True)
            else:
                cards, mproof = mask_step(mine, secrets[p], context=ctx[p])
            move = {
                "cards": deck_to_json(cards),
                "proof": (proof if phase == "shuffle" else mproof).to_json(),
            }
            wire = json.dumps(move)
            t = timed(phase, "clients", t)
            data = json.loads(wire)
            new = deck_from_json(data["cards"])
            if phase == "shuffle":
                check_shuffle_step(
                    deck, new, keys[p], ShuffleStepProof.from_json(data["proof"], N), context=ctx[p]
                )
            else:
                check_mask_step(
                    deck, new, keys[p], MaskStepProof.from_json(data["proof"], N), context=ctx[p]
                )
            deck = new
            view = json.dumps(data["cards"])
            timed(phase, "server", t)
    layout = standard_deal(players)
    for i, p in enumerate(seats):
        t = clock()
        wire = json.dumps([r.to_json() for r in deal_reveals(secrets[p], i, layout)])
        t = timed("deal", "clients", t)
        reveals = [KeyReveal.from_json(x) for x in json.loads(wire)]
        deck = apply_reveals(deck, keys[p], reveals)
        timed("deal", "server", t)
    t = clock()
    view = json.dumps(deck_to_json(deck))
    for i, p in enumerate(seats):  # every player opens its hand privately
        mine = deck_from_json(json.loads(view))
        hand = [open_card(mine[pos], secrets[p].card_key(pos)) for pos in layout.hands[i]]
        assert len(hand) == len(layout.hands[i])
    timed("deal", "clients", t)
    return dict(times)


def old_floor(count: int = 2000) -> float:
    """The floor as measured until 2026-11-26: one point and scalar through nacl.bindings."""
    point = card_point("AS").value
    scalar = random_scalar().value
    t0 = time.perf_counter()
    for _ in range(count):
        bindings.crypto_scalarmult_ed25519_noclamp(scalar, point)
    return (time.perf_counter() - t0) / count


def floor_mults(players: int) -> int:
    published = (players - 1) * (players * 5) + players  # keys for other hands + top
    return N * players * 4 + published


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument(
        "--cut-and-choose",
        action="store_true",
        help="also the deal of a stored table (cut-and-choose shuffle proofs)",
    )
    parser.add_argument("--rounds", type=int, default=64, help="its cut-and-choose rounds")
    parser.add_argument(
        "--library", action="store_true", help="also the argument deal at the library's level"
    )
    args = parser.parse_args()
    report = Report("macaua")
    report.sizes = {"players": args.players}
    if args.cut_and_choose:
        report.sizes["rounds"] = args.rounds
    report.settings = {"cut_and_choose": args.cut_and_choose, "library": args.library}
    old = old_floor()
    report.line(f"old floor: one scalar multiplication through nacl.bindings = {old * 1e6:.1f} µs")
    if args.cut_and_choose:
        report.line(f"cut-and-choose rounds of a stored table: {args.rounds} (its default 64)")
    report.line("")
    header = (
        f"{'players':>7} {'deal':>9} {'phase':>8} {'clients s':>10} {'server s':>9} "
        f"{'checks s':>9} {'total s':>8}"
    )
    report.line(header)
    rows: list[dict[str, Any]] = []
    kinds = ["game"]
    kinds += ["rounds"] if args.cut_and_choose else []
    kinds += ["library"] if args.library else []
    for players in args.players:
        for kind in kinds:
            probe = FloorProbe()
            if kind == "game":
                times = deal_once(players, {"shuffle_proof": "argument"}, probe)
            elif kind == "rounds":
                config = {"shuffle_proof": "rounds", "shuffle_rounds": args.rounds}
                times = deal_once(players, config, probe)
            else:
                times = library_deal(players, probe)
            one = probe.per_mult()
            total = checks = 0.0
            for phase in PHASES:
                c, s = times[phase]["clients"], times[phase]["server"]
                k = times[phase].get("checks", 0.0)
                total += c + s + k
                checks += k
                report.line(
                    f"{players:>7} {kind:>9} {phase:>8} {c:>10.3f} {s:>9.3f} {k:>9.3f} "
                    f"{c + s + k:>8.3f}"
                )
            mults = floor_mults(players)
            floor = mults * one
            ratio = total / floor
            row: dict[str, Any] = {
                "players": players,
                "deal": kind,
                "phases": times,
                "total": total,
                "scalarmult_s": one,
                "scalarmult_samples": [min(probe.samples), max(probe.samples)],
                "floor": floor,
                "ratio": ratio,
                "checks": checks,
                "ratio_without_checks": (total - checks) / floor,
                "old_floor": mults * old,
                "old_ratio": total / (mults * old),
                "verdict": verdict(ratio, TARGET, at_most=True),
            }
            if kind == "game":
                row["bare"] = bare(players)
            rows.append(row)
            report.line(
                f"{players:>7} {kind:>9} {'ALL':>8} {'':>10} {'':>9} {checks:>9.3f} "
                f"{total:>8.3f}   "
                f"floor {mults} mults × {one * 1e6:.0f} µs = {floor:.3f} s "
                f"(samples {min(probe.samples) * 1e6:.0f}-{max(probe.samples) * 1e6:.0f} µs)"
                + (f", bare ops {row['bare']:.3f} s" if "bare" in row else "")
            )
    report.line(f"\ndeal time beside its floor (target <= {TARGET:.0f}x the floor):")
    report.line(
        f"{'players':>7} {'deal':<40} {'time s':>7} {'floor s':>8} {'ratio':>7} "
        f"{'w/o checks':>10} {'old floor':>10} {'verdict':>7}"
    )
    names = {
        "game": "game (Terelius-Wikström argument)",
        "rounds": f"stored table (cut-and-choose, {args.rounds})",
        "library": "library (Terelius-Wikström argument)",
    }
    for row in rows:
        report.line(
            f"{row['players']:>7} {names[row['deal']]:<40} {row['total']:>7.3f} "
            f"{row['floor']:>8.3f} {row['ratio']:>6.1f}x {row['ratio_without_checks']:>9.1f}x "
            f"{row['old_ratio']:>9.1f}x "
            f"{row['verdict']:>7}"
        )
    report.data = {
        "shuffle_proof": "argument",
        "rounds": args.rounds if args.cut_and_choose else None,
        "target": TARGET,
        "old_scalarmult_s": old,
        "results": rows,
    }
    report.write()


if __name__ == "__main__":
    main()
