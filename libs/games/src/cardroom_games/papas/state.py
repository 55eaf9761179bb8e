"""The configuration and the immutable state of one game of Dónde las papas queman."""

from __future__ import annotations

from typing import Annotated, Final, Literal, NamedTuple

from cardroom_engine.kit import state
from pydantic import BaseModel, ConfigDict, Field

# The state machine's states (see the package docs), plus Setup (before the deal) and GameEnd.
SETUP: Final = "Setup"
PLAYER_TURN: Final = "PlayerTurn"
TARGET_SELECTION: Final = "TargetSelection"
REACTION_PHASE: Final = "ReactionPhase"
CARD_SELECTION: Final = "CardSelection"
CARD_NAME_SELECTION: Final = "CardNameSelection"
ACTION_RESOLUTION: Final = "ActionResolution"
DISCARD_PHASE: Final = "DiscardPhase"
NEXT_PLAYER: Final = "NextPlayer"
END_SCORE: Final = "EndScore"
GAME_END: Final = "GameEnd"

# Event types (``folds.FOLDS.types`` lists them all). Each event's notification keeps the name
# of the state machine's transition it reports (``protocol.MESSAGES``).
DEALT: Final = "papas.dealt"
CARD_PLAYED: Final = "papas.card_played"
THREESOME_PLAYED: Final = "papas.threesome_played"
TARGETS_SELECTED: Final = "papas.targets_selected"
REACTION_SKIPPED: Final = "papas.reaction_skipped"
INTERRUPT_PLAYED: Final = "papas.interrupt_played"
NOT_INTERRUPTED: Final = "papas.not_interrupted"
SELECTION_OFFERED: Final = "papas.selection_offered"
CARD_SELECTED: Final = "papas.card_selected"
CARD_NAME_SELECTED: Final = "papas.card_name_selected"
ACTION_RESOLVED: Final = "papas.action_resolved"
TURN_ENDED: Final = "papas.turn_ended"
DISCARDED_AND_DRAWN: Final = "papas.discarded_and_drawn"
AUTO_DRAWN: Final = "papas.auto_drawn"
CARD_DRAWN: Final = "papas.card_drawn"
CARD_DISCARDED: Final = "papas.card_discarded"
TURN_PASSED: Final = "papas.turn_passed"
GAME_WON: Final = "papas.game_won"

HAND_SIZE: Final = 5
"""Cards dealt to each player."""
HAND_LIMIT: Final = 7
"""Most cards a player may keep at the end of a turn."""

WildcardValue = Annotated[int, Field(ge=0, le=3, strict=True)]


class PapasConfig(BaseModel):
    """The options of a game. Every field has a default: ``{}`` is the standard game.
    Numbers are strict (``true`` is no 1, ``"7"`` no number) and bounded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reaction_seconds: float = Field(default=7.0, ge=0.1, le=300, strict=True, allow_inf_nan=False)
    """How long a reaction window stays open unless every other player skips first."""
    wildcard_values: tuple[WildcardValue, WildcardValue, WildcardValue] = (0, 0, 0)
    """The value (0-3) of each of the three wildcards; a wildcard of value 3 may join a
    three-of-value-3 threesome. The default is 0 for all three."""
    win_threshold: int | None = Field(default=None, ge=1, le=100, strict=True)
    """Golden potatoes needed to win; ``None``: by player count (2-3: 8, 4-5: 6, 6: 5)."""


class Play(NamedTuple):
    """The card or threesome being played: waiting for targets, reactions or resolution."""

    kind: Literal["card", "threesome"]
    cards: tuple[int, ...]
    name: str  # the card's name, or the threesome's kind (a potato name or "value")
    reward: int = 0  # golden potatoes of a threesome
    targets: tuple[int, ...] = ()  # seat indexes

    @property
    def card(self) -> int:
        return self.cards[0]


@state
class PapasState(NamedTuple):
    """Everything, including what no player may see. Seats are referred to by index.

    Immutable: the folds copy it with the changed fields named (``state._replace``)."""

    seats: tuple[str, ...]
    threshold: int
    reaction_seconds: float
    values: tuple[int, ...]  # the value of each card id (wildcards per the config)
    phase: str = SETUP
    active: int = 0  # whose turn it is
    direction: int = 1  # +1: seat order, -1: reversed by a Papageddon
    deck: tuple[int, ...] = ()  # top first
    discard: tuple[int, ...] = ()  # oldest first; face up
    hands: tuple[tuple[int, ...], ...] = ()
    potatoes: tuple[int, ...] = ()  # golden potatoes
    turn_fresh: bool = True  # nothing played yet this turn (Discard & Draw, auto-draw)
    draw_due: bool = False  # NextPlayer still has to draw the end-of-turn card
    skip_next: bool = False  # Jump to the side: the next player loses their turn
    play: Play | None = None
    window: int = 0  # number of the current (or last) reaction window
    reactors: tuple[int, ...] = ()  # who may still react in the open window
    window_interrupted: bool = False  # the last window was closed by an interrupt
    selection: tuple[tuple[str, int], ...] = ()  # CardSelection: (token, card), shuffled
    selected: int | None = None  # the card chosen in CardSelection
    named: str | None = None  # the name chosen in CardNameSelection
    winner: int | None = None

    def seat(self, player: str) -> int:
        return self.seats.index(player)

    def next_seat(self, seat: int, steps: int = 1) -> int:
        return (seat + self.direction * steps) % len(self.seats)
