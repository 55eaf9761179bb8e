"""How strong must a bot be for ``make strength`` to call it separated? A simulation.

``make strength`` (and ``arena.py``) rate the kinds at one table with analytics' openskill
Plackett-Luce model and call two kinds separated when the stronger one's mu is above the
other's by more than twice their combined sigma. This script asks how often that happens
when the stronger kind truly ranks above the other in a fraction ``p`` of the games (the
third kind always last, as the random bot nearly always is), over ``n`` games, with the
model as analytics uses it (its default ``tau``, which adds uncertainty before every game so
that a rating can follow a player whose skill changes) and with ``tau`` = 0 (skills that do
not change, as a bot's). Each cell is the share of ``RUNS`` simulated tournaments that end
separated, then the mean mu gap and the stronger kind's mean sigma.

``SEPARATION_TABLE=pairs``: the kinds play head to head instead, a round robin of pairs in
turn (strong against weak, weak against last, strong against last; the last kind loses
every game), so that ``n`` games hold ``n / 3`` of strong against weak.

Run: ``.venv/bin/python bench/separation.py`` (about a minute; ``SEPARATION_RUNS``, default
40).
"""

from __future__ import annotations

import math
import os
import random

from openskill.models import PlackettLuce

RATES = (0.55, 0.60, 0.65, 0.70, 0.75)
GAMES = (100, 200, 400)


PAIRS = (("strong", "weak"), ("weak", "last"), ("strong", "last"))


def tournament(
    p: float, n: int, seed: int, model: PlackettLuce, pairs: bool = False
) -> tuple[bool, float, float]:
    """One tournament of ``n`` games: whether it ends separated, the mu gap, the sigma
    (``pairs``: head to head, a round robin of the pairs in turn)."""
    rng = random.Random(seed)
    ratings = {k: model.rating() for k in ("strong", "weak", "last")}
    for i in range(n):
        if pairs and PAIRS[i % 3] != ("strong", "weak"):
            order = list(PAIRS[i % 3])
        else:
            order = ["strong", "weak"] if rng.random() < p else ["weak", "strong"]
            if not pairs:
                order.append("last")
        rated = model.rate([[ratings[k]] for k in order])
        for k, (new,) in zip(order, rated, strict=True):
            ratings[k] = new
    a, b = ratings["strong"], ratings["weak"]
    return a.mu - b.mu > 2 * math.hypot(a.sigma, b.sigma), a.mu - b.mu, a.sigma


def main() -> None:
    runs = int(os.environ.get("SEPARATION_RUNS", "40"))
    pairs = os.environ.get("SEPARATION_TABLE", "") == "pairs"
    if pairs:
        print("head to head: a round robin of the pairs")
    for name, model in (("default tau", PlackettLuce()), ("tau = 0", PlackettLuce(tau=0.0))):
        print(f"{name}: share of {runs} tournaments separated (mean mu gap, sigma)")
        print("  p     " + "".join(f"{n:>22}" for n in GAMES))
        for p in RATES:
            cells = []
            for n in GAMES:
                results = [tournament(p, n, seed, model, pairs) for seed in range(runs)]
                share = sum(r[0] for r in results) / runs
                gap = sum(r[1] for r in results) / runs
                sigma = sum(r[2] for r in results) / runs
                cells.append(f"{share:>6.0%} ({gap:5.2f}, {sigma:4.2f})")
            print(f"  {p:.2f}  " + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
