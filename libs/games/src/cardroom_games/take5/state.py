"""take5's state and its event types (the internal log: the full truth, never sent as such)."""

from __future__ import annotations

from typing import Literal, NamedTuple

from cardroom_engine.kit import state

from .config import ROWS, Take5Config

Phase = Literal["setup", "dealt", "play", "resolve", "choose", "over"]

DEALT = "take5.dealt"
TURN_STARTED = "take5.turn_started"
CARD_PLAYED = "take5.card_played"
PLAYS_REVEALED = "take5.plays_revealed"
CARD_PLACED = "take5.card_placed"
CHOICE_REQUESTED = "take5.choice_requested"
ROW_TAKEN = "take5.row_taken"
GAME_ENDED = "take5.game_ended"

#: A row's index by its protocol name ("A" is 0).
ROW_INDEX = {name: index for index, name in enumerate(ROWS)}


@state
class Take5State(NamedTuple):
    """The whole truth of one game (immutable: a named tuple, fast to copy with a change)."""

    config: Take5Config
    seats: tuple[str, ...]
    bulls: tuple[int, ...]
    """Bull heads by face (index 0 unused)."""
    phase: Phase = "setup"
    round: int = 0
    turn: int = 0
    hands: tuple[tuple[int, ...], ...] = ()
    """Faces in each seat's hand, ascending (a played card has left it)."""
    rows: tuple[tuple[int, ...], ...] = ()
    scores: tuple[int, ...] = ()
    plays: tuple[int | None, ...] = ()
    """This turn's secret plays by seat (None: not played yet); cleared when revealed."""
    revealed: tuple[tuple[int, int], ...] = ()
    """This turn's plays as (face, seat), ascending: public once ``played`` was sent."""
    placed: int = 0
    """How many of ``revealed`` are resolved."""
    chooser: int | None = None

    def seat(self, player: str) -> int:
        return self.seats.index(player)
