"""6 nimmt! (take5): pure rules speaking the take5 JSON protocol
(that of nixpulvis/take5; the message shapes are in ``protocol``).

``GAME`` is the game object to register; see ``rules`` for the flow of events and messages
and the modules that hold each part, and ``protocol`` for the message shapes and the
seat-index player ids.
"""

from .bots import HeuristicBot
from .commands import ALREADY_PLAYED
from .config import ROWS, Take5Config, check_start, standard_bull
from .flow import game_is_over
from .rules import Take5
from .state import Take5State

GAME = Take5()

__all__ = [
    "ALREADY_PLAYED",
    "GAME",
    "ROWS",
    "HeuristicBot",
    "Take5",
    "Take5Config",
    "Take5State",
    "check_start",
    "game_is_over",
    "standard_bull",
]
