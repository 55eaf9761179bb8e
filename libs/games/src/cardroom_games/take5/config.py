"""The take5 configuration: the protocol's five numbers, plus the turn timeout.

The defaults are those of ``Configuration`` in nixpulvis/take5: 10 turns per round,
rows of at most 5 cards, the game ends at 66 bull heads, 104 cards, bull values in [1, 7].
``bulls`` optionally replaces the standard bull heads with one value per face (a "custom
dealer"); either way every value must lie inside ``bull_range``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from cardroom_engine import Rejection
from cardroom_wire import ErrorCode
from pydantic import BaseModel, ConfigDict, Field, model_validator

ROWS = ("A", "B", "C", "D")
"""The protocol's STACK_IDs, in board order."""

MIN_PLAYERS = 2
MAX_PLAYERS = 10
MAX_DECK = 1000
"""A bound against absurd configurations (memory per table); the take6 variant uses 210."""
MAX_BULL = 1000
"""The most bull heads one card may carry (the standard deck's most is 7)."""


def standard_bull(face: int) -> int:
    """Bull heads of one card of the standard deck (first matching rule wins)."""
    if face == 55:
        return 7
    if face % 11 == 0:
        return 5
    if face % 10 == 0:
        return 3
    if face % 5 == 0:
        return 2
    return 1


Bull = Annotated[int, Field(ge=1, le=MAX_BULL, strict=True)]
"""One card's bull heads. At least 1: every taken card must score, or tied games at 0 could
go on for ever."""


class Take5Config(BaseModel):
    """Options of one take5 table. Every field has a default; unknown fields are refused.
    Numbers are strict (``true`` is no 1, ``"10"`` no number) and bounded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn_count: int = Field(10, ge=1, le=100, strict=True, description="cards per player per round")
    stack_size: int = Field(5, ge=1, le=100, strict=True, description="most cards in a row")
    win_score: int = Field(
        66, ge=1, le=100_000, strict=True, description="bull heads that end the game"
    )
    deck_size: int = Field(
        104, ge=1, le=MAX_DECK, strict=True, description="cards numbered 1..deck_size"
    )
    bull_range: tuple[Bull, Bull] = Field((1, 7), description="inclusive range of bull values")
    bulls: tuple[Bull, ...] | None = Field(
        None,
        max_length=MAX_DECK,
        description="custom bull heads for faces 1..deck_size; None: the standard deck",
    )
    turn_timeout: float = Field(
        30.0,
        ge=0.1,
        le=86_400,
        strict=True,
        allow_inf_nan=False,
        description="seconds before the house plays for a silent player",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Take5Config:
        low, high = self.bull_range
        if low > high:
            raise ValueError("bull_range: the first value must not exceed the second")
        if self.bulls is not None and len(self.bulls) != self.deck_size:
            raise ValueError("bulls: give exactly one bull value per card (deck_size values)")
        for face, bull in enumerate(self.bull_values()[1:], start=1):
            if not low <= bull <= high:
                raise ValueError(
                    f"bull value {bull} of card {face} is outside bull_range [{low}, {high}]"
                )
        if self.turn_count * MIN_PLAYERS + len(ROWS) > self.deck_size:
            raise ValueError(
                "deck_size: too few cards for turn_count cards to each of "
                f"{MIN_PLAYERS} players plus {len(ROWS)} rows"
            )
        return self

    def bull_values(self) -> tuple[int, ...]:
        """Bull heads by face; index 0 is unused (faces start at 1)."""
        if self.bulls is not None:
            return (0, *self.bulls)
        return (0, *(standard_bull(face) for face in range(1, self.deck_size + 1)))

    def max_players(self) -> int:
        """The most players this deck can deal to: turn_count x players + 4 <= deck_size."""
        return min(MAX_PLAYERS, (self.deck_size - len(ROWS)) // self.turn_count)


def check_start(config: Take5Config, seats: Sequence[str]) -> None:
    """Refuse a start the deck cannot deal (``bad_config``)."""
    players = len(seats)
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise Rejection(
            ErrorCode.BAD_CONFIG, f"take5 is for {MIN_PLAYERS} to {MAX_PLAYERS} players"
        )
    needed = config.turn_count * players + len(ROWS)
    if needed > config.deck_size:
        raise Rejection(
            ErrorCode.BAD_CONFIG,
            f"{players} players need turn_count x players + {len(ROWS)} = {needed} cards; "
            f"deck_size is {config.deck_size}",
        )
