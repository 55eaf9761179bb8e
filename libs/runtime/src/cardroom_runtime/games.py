"""Loading game definitions into the engine's registry.

Games are found through the ``cardroom.games`` entry point group (the games that ship with
cardroom, and any installed package that declares one), plus ``CARDROOM_GAMES``: a comma
separated list of ``module:attribute`` for games that are not installed as packages (tests,
experiments). So adding a game touches nothing in services/.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import random
from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any

from cardroom_engine import Bot, Game, NoMove, registry

log = logging.getLogger("cardroom.bots")

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


async def bot_choice(
    bot: Bot,
    view: Mapping[str, Any],
    actions: Sequence[Mapping[str, Any]],
    rng: random.Random,
    *,
    who: str,
) -> dict[str, Any] | None:
    """What ``bot`` chooses, as every service that runs bots asks it: in a worker thread when
    its choices are heavy CPU work (``heavy_choices``: one bot's proofs must not hold up the
    other games on the event loop); None when it makes no move (:class:`NoMove`: a Macaua
    player whose own check of the game asks nothing of it), which is logged for ``who``."""
    try:
        if getattr(bot, "heavy_choices", False):
            return dict(await asyncio.to_thread(bot.choose, view, actions, rng))
        return dict(bot.choose(view, actions, rng))
    except NoMove as exc:
        log.warning("%s: no move (%s)", who, exc)
        return None
