"""6 nimmt! (take5): pure rules speaking the take5 JSON protocol
(that of nixpulvis/take5; the message shapes are in ``protocol``).

``GAME`` is the game object to register; see ``rules`` for the flow of events and messages
and ``protocol`` for the message shapes and the seat-index player ids.
"""

from .bots import HeuristicBot
from .config import ROWS, Take5Config, check_start, standard_bull
from .rules import ALREADY_PLAYED, Take5, Take5State, game_is_over

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
