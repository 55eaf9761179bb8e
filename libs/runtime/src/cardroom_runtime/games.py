"""Loading game definitions into the engine's registry.

Games are found through the ``cardroom.games`` entry point group (the games that ship with
cardroom, and any installed package that declares one), plus ``CARDROOM_GAMES``: a comma
separated list of ``module:attribute`` for games that are not installed as packages (tests,
experiments). So adding a game touches nothing in services/.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points
from typing import Any

from cardroom_engine import Game, registry

ENV_GAMES = "CARDROOM_GAMES"
GROUP = "cardroom.games"


def _load(spec: str) -> Game[Any]:
    module, _, attr = spec.partition(":")
    obj = importlib.import_module(module.strip())
    for part in (attr or "GAME").strip().split("."):
        obj = getattr(obj, part)
    return obj


def load_games(extra: str | None = None) -> list[str]:
    """Register every game found; returns the registered names."""
    for ep in entry_points(group=GROUP):
        registry.register(ep.load())
    specs = extra if extra is not None else os.environ.get(ENV_GAMES, "")
    for spec in specs.split(","):
        if spec.strip():
            registry.register(_load(spec))
    return registry.names()
