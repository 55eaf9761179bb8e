"""take5 bots. They decide from their player's view (hand, board, stack size) only."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from cardroom_engine import Message

from .config import ROWS


def _row_cost(row: Sequence[Mapping[str, Any]]) -> int:
    return sum(int(card["bull"]) for card in row)


class HeuristicBot:
    """Plays the lowest card that takes no row, otherwise the least costly card; when it
    must choose, takes the row with the fewest bull heads.

    "Takes a row" is judged as if the card were resolved first (the other plays are secret):
    a card below every row takes the cheapest row, a card on a full row takes that row.
    """

    def __init__(self, player: str) -> None:
        self.player = player

    def observe(self, message: Message) -> None:
        return None

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        if isinstance(view.get("state"), Mapping):  # the table's view wraps the game's
            view = view["state"]
        board = view.get("board") or {}
        rows = [board[name] for name in ROWS if name in board]
        if not rows:
            return actions[0]
        if actions[0].get("type") == "choose_response":
            costs = {name: _row_cost(board[name]) for name in ROWS if name in board}
            best = min(costs, key=lambda name: (costs[name], name))
            return next((a for a in actions if a.get("data") == best), actions[0])
        stack_size = int(view.get("stack_size", 5))
        tops = [int(row[-1]["face"]) for row in rows]
        cheapest = min(_row_cost(row) for row in rows)
        best_action = actions[0]
        best_key: tuple[int, int] | None = None
        for action in actions:
            face = int(action["data"]["face"])
            below = [i for i, top in enumerate(tops) if top < face]
            if not below:
                cost = cheapest
            else:
                row = max(below, key=lambda i: tops[i])
                cost = _row_cost(rows[row]) if len(rows[row]) >= stack_size else 0
            key = (cost, face)
            if best_key is None or key < best_key:
                best_key, best_action = key, action
        return best_action
