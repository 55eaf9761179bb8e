"""The 66 game (a Cabo-family memory game), in both of its protocol generations.

``GAME`` is the game object the registry hosts as ``sixtysix``; the table option
``protocol`` ("v2", the default, or "v1") selects the rules and messages of
each generation.
"""

from .bots import HeuristicBot, Memory
from .cards import add_scores, game_over, round_scores, winners
from .commands import MUST_TARGET_ANOTHER_PLAYER, STOP_ALREADY_REQUESTED
from .rules import GAME, SixtySix, SixtySixConfig
from .state import SixtySixState

__all__ = [
    "GAME",
    "MUST_TARGET_ANOTHER_PLAYER",
    "STOP_ALREADY_REQUESTED",
    "HeuristicBot",
    "Memory",
    "SixtySix",
    "SixtySixConfig",
    "SixtySixState",
    "add_scores",
    "game_over",
    "round_scores",
    "winners",
]
