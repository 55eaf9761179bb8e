"""The 103 cards of Dónde las papas queman and the threesome rules.

Every physical card has a fixed id 0..102, assigned in the order of the table below, so a
card id tells its face: ids are therefore only ever sent to players who may see that face.
The 18 card names are stable snake_case strings (they are also what Pope Potato names).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

Kind = Literal["potato", "wildcard", "action"]
Target = Literal["none", "opponent", "two_players", "next_player"]

POTATO: Final = "potato"
DUCHESSES: Final = "duchesses_potatoes"
FRENCH_FRIES: Final = "french_fries"
WILDCARD: Final = "wildcard"
NO_DUDE: Final = "no_dude"
I_TOLD_YOU: Final = "i_told_you_no_dude"
GET_OFF_THE_PONY: Final = "get_off_the_pony"
LEND_ME_A_BUCK: Final = "lend_me_a_buck"
RUNAWAY_POTATOES: Final = "runaway_potatoes"
HARRY_POTATO: Final = "harry_potato"
POPE_POTATO: Final = "pope_potato"
LOOK_AHEAD: Final = "look_ahead"
POTATO_OF_THE_YEAR: Final = "potato_of_the_year"
POTATO_OF_DESTINY: Final = "potato_of_destiny"
POTATO_DAWAN: Final = "potato_dawan"
JUMP_TO_THE_SIDE: Final = "jump_to_the_side"
PAPAGEDDON: Final = "papageddon"
SPIDER_POTATO: Final = "spider_potato"


@dataclass(frozen=True)
class CardType:
    """One of the 18 card names with its printed properties."""

    name: str
    title: str  # the English title of the BGA implementation
    kind: Kind
    copies: int
    value: int  # wildcards: the default; the config may give each copy another value
    alarm: bool = False
    target: Target = "none"
    reward: int = 0  # golden potatoes for a potato threesome of this name


CARD_TYPES: Final[tuple[CardType, ...]] = (
    CardType(POTATO, "Potato", "potato", 16, 0, reward=1),
    CardType(DUCHESSES, "Duchesses potatoes", "potato", 12, 0, reward=2),
    CardType(FRENCH_FRIES, "French fries", "potato", 5, 0, reward=3),
    CardType(WILDCARD, "Wildcard", "wildcard", 3, 0),
    CardType(NO_DUDE, "No dude", "action", 10, 0),
    CardType(I_TOLD_YOU, "I told you no dude", "action", 3, 0),
    CardType(GET_OFF_THE_PONY, "Get off the pony", "action", 5, 2, True, "opponent"),
    CardType(LEND_ME_A_BUCK, "Lend me a buck", "action", 10, 1, False, "opponent"),
    CardType(RUNAWAY_POTATOES, "Runaway potatoes", "action", 3, 3),
    CardType(HARRY_POTATO, "Harry Potato", "action", 10, 1, True),
    CardType(POPE_POTATO, "Pope Potato", "action", 3, 3, False, "opponent"),
    CardType(LOOK_AHEAD, "Look ahead", "action", 3, 3, True, "opponent"),
    CardType(POTATO_OF_THE_YEAR, "The potato of the year", "action", 5, 2),
    CardType(POTATO_OF_DESTINY, "Potato of destiny", "action", 3, 3, False, "opponent"),
    CardType(POTATO_DAWAN, "Potato Dawan", "action", 3, 3, False, "opponent"),
    CardType(JUMP_TO_THE_SIDE, "Jump to the side", "action", 3, 3, True),
    CardType(PAPAGEDDON, "Papageddon", "action", 3, 3, True, "next_player"),
    CardType(SPIDER_POTATO, "Spider potato", "action", 3, 3, False, "two_players"),
)  # fmt: skip

TYPES: Final[dict[str, CardType]] = {t.name: t for t in CARD_TYPES}
NAMES: Final[tuple[str, ...]] = tuple(t.name for t in CARD_TYPES)
"""The 18 names, in table order: what Pope Potato may name."""

DECK_SIZE: Final = sum(t.copies for t in CARD_TYPES)

CARD_NAME: Final[tuple[str, ...]] = tuple(t.name for t in CARD_TYPES for _ in range(t.copies))
"""The name of each card id."""

WILDCARD_IDS: Final[tuple[int, ...]] = tuple(i for i, n in enumerate(CARD_NAME) if n == WILDCARD)
INTERRUPTS: Final = frozenset({NO_DUDE, I_TOLD_YOU})
PLAYABLE: Final = frozenset(
    t.name for t in CARD_TYPES if t.kind == "action" and t.name not in INTERRUPTS
)
"""Action cards that may be played alone (A3-A14)."""
NEEDS_TARGET: Final = frozenset(
    t.name for t in CARD_TYPES if t.target in ("opponent", "two_players")
)
NEEDS_CARD_SELECTION: Final = frozenset({LEND_ME_A_BUCK, POTATO_DAWAN, PAPAGEDDON})
REVEALS_HAND: Final = frozenset({POTATO_DAWAN})

assert DECK_SIZE == 103


def card_values(wildcard_values: Sequence[int]) -> tuple[int, ...]:
    """The value of each card id, wildcards taking ``wildcard_values`` in id order."""
    values = [TYPES[name].value for name in CARD_NAME]
    for card, value in zip(WILDCARD_IDS, wildcard_values, strict=True):
        values[card] = value
    return tuple(values)


def win_threshold(players: int) -> int:
    """Golden potatoes needed to win (``Game::getWinThreshold``)."""
    if players <= 3:
        return 8
    if players <= 5:
        return 6
    return 5


def threesome_reward(cards: Sequence[int], values: Sequence[int]) -> int:
    """Golden potatoes a threesome of these three card ids earns, 0 if it is not one.

    Checked in the source's order: type-based (potatoes and wildcards), then value-based.
    """
    if len(cards) != 3 or len(set(cards)) != 3:
        return 0
    names = [CARD_NAME[c] for c in cards]
    kinds = [TYPES[n].kind for n in names]
    if all(k in ("potato", "wildcard") for k in kinds):
        potatoes = {n for n in names if n != WILDCARD}
        if not potatoes:
            return TYPES[FRENCH_FRIES].reward  # three wildcards count as french fries
        if len(potatoes) == 1:
            return TYPES[potatoes.pop()].reward
    if all(values[c] == 3 for c in cards):
        return 1
    return 0


def threesome_kind(cards: Sequence[int], values: Sequence[int]) -> str:
    """A label for a legal threesome (for messages): the potato name, or ``value``."""
    names = [CARD_NAME[c] for c in cards]
    if all(TYPES[n].kind in ("potato", "wildcard") for n in names):
        potatoes = {n for n in names if n != WILDCARD}
        if not potatoes:
            return FRENCH_FRIES
        if len(potatoes) == 1:
            return potatoes.pop()
    return "value"
