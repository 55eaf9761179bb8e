"""Games by name. Filled by whoever composes a process (see cardroom_runtime.games)."""

from __future__ import annotations

from typing import Any

from cardroom_wire import ErrorCode, check_id

from .game import Game, Rejection
from .table import TABLE_PREFIX


class Registry:
    def __init__(self) -> None:
        self._games: dict[str, Game[Any]] = {}

    def register(self, game: Game[Any]) -> None:
        check_id(game.name, "game type")
        if game.name.startswith(TABLE_PREFIX.rstrip(".")):
            raise ValueError("game names may not start with 'table'")
        known = self._games.get(game.name)
        if known is not None and known is not game:
            raise ValueError(f"a different game is already registered as {game.name!r}")
        self._games[game.name] = game

    def get(self, name: str) -> Game[Any]:
        try:
            return self._games[name]
        except KeyError:
            raise Rejection(ErrorCode.UNKNOWN_GAME_TYPE, f"no game type {name!r}") from None

    def names(self) -> list[str]:
        return sorted(self._games)

    def __contains__(self, name: object) -> bool:
        return name in self._games


registry = Registry()
"""The process-wide registry."""
