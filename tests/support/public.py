"""What a spectator is sent of a game's log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cardroom_engine import Game, Table, TableState


def public_versions(game: Game[Any], events: Sequence[dict[str, Any]]) -> list[int]:
    """The versions of the events a spectator is updated for: every event but those the game
    told some seats only (they count in ``TableState.private``)."""
    table, out = Table(game), []
    state: TableState | None = None
    for version, event in enumerate(events, start=1):
        private = 0 if state is None else state.private
        state = table.evolve(state, event)
        if state.private == private:
            out.append(version)
    return out
