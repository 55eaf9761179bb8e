"""Where a card goes: pure functions over faces, shared by the rules and the bots."""

from __future__ import annotations

from collections.abc import Sequence


def target_row(rows: Sequence[Sequence[int]], face: int) -> int | None:
    """The row a card joins: the one whose last card is the highest below ``face``.

    ``None`` when the card is below every row (its player must choose a row to take).
    """
    best: int | None = None
    best_top = 0
    for index, row in enumerate(rows):
        top = row[-1]
        if best_top < top < face:
            best, best_top = index, top
    return best


def cheapest_row(rows: Sequence[Sequence[int]], bulls: Sequence[int]) -> int:
    """The row with the fewest bull heads (the first such row on a tie)."""
    costs = [sum(bulls[face] for face in row) for row in rows]
    return costs.index(min(costs))


def play_cost(
    rows: Sequence[Sequence[int]], face: int, stack_size: int, bulls: Sequence[int]
) -> int:
    """Bull heads this card would take if it were resolved first (0: it just joins a row)."""
    row = target_row(rows, face)
    if row is None:
        return min(sum(bulls[f] for f in r) for r in rows)
    if len(rows[row]) >= stack_size:
        return sum(bulls[f] for f in rows[row])
    return 0
