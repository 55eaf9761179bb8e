"""The 66 game's deck, its random draws and deals, and the scoring of rounds and games.

A deck is kept as per-value counts (how many cards of each value 0..13 are left); hands and
the discard pile hold card values.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

# -- the deck -------------------------------------------------------------------------------

DECK_COUNTS: Final[tuple[int, ...]] = (2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2)
"""How many cards of each value 0..13: two 0s, four each of 1..12, two 13s (52 cards)."""
DECK_SIZE: Final = 52
HAND_SIZE: Final = 4
FIRST_LOOK: Final[tuple[int, ...]] = (0, 1)
"""The positions each player privately looks at when a round starts."""

GAME_LIMIT: Final = 66
"""The game ends after a round in which some total is strictly greater than this."""
EXACT_HIT: Final = 66
EXACT_HIT_BECOMES: Final = 33
STOP_PENALTY: Final = 5

PEEK_OWN_VALUES: Final = frozenset({7, 8})
PEEK_OTHER_VALUES: Final = frozenset({9, 10})
SWAP_VALUES: Final = frozenset({11, 12})
POWER_VALUES: Final = PEEK_OWN_VALUES | PEEK_OTHER_VALUES | SWAP_VALUES


# -- randomness -----------------------------------------------------------------------------


def draw(deck: Sequence[int], size: int, rng: random.Random) -> int:
    """One uniformly random card value from a deck of per-value counts (``size`` cards)."""
    k = rng.randrange(size)
    for value, count in enumerate(deck):
        if k < count:
            return value
        k -= count
    raise ValueError("the deck is smaller than its size says")


def deal(n: int, with_discard: bool, rng: random.Random) -> tuple[list[list[int]], int | None]:
    """Four random cards for each of ``n`` players, then (v1) one face-up discard."""
    deck = list(DECK_COUNTS)
    size = DECK_SIZE
    hands: list[list[int]] = []
    for _ in range(n):
        hand: list[int] = []
        for _ in range(HAND_SIZE):
            value = draw(deck, size, rng)
            deck[value] -= 1
            size -= 1
            hand.append(value)
        hands.append(hand)
    discard = draw(deck, size, rng) if with_discard else None
    return hands, discard


def remaining_deck(hands: Sequence[Sequence[int]], discard: int | None) -> list[int]:
    deck = list(DECK_COUNTS)
    for hand in hands:
        for value in hand:
            deck[value] -= 1
    if discard is not None:
        deck[discard] -= 1
    return deck


# -- scoring ---------------------------------------------------------------------------------


def round_scores(hands: Sequence[Sequence[int]], stopper: int | None) -> list[int]:
    """The round score of each player.

    1. raw score = the sum of the hand; 2. ``low`` = the lowest raw score; 3. a stopper whose
    raw score is not the unique lowest gets +5; 4. every score equal to ``low`` (after the
    penalty) becomes 0 -- so a stopper tied for lowest keeps low+5 while the others score 0.
    """
    raw = [sum(hand) for hand in hands]
    low = min(raw)
    scores = list(raw)
    if stopper is not None and (raw[stopper] > low or raw.count(low) > 1):
        scores[stopper] += STOP_PENALTY
    return [0 if score == low else score for score in scores]


def add_scores(totals: Sequence[int], scores: Sequence[int]) -> list[int]:
    """Positive round scores are added; a total of exactly 66 drops to 33."""
    result = []
    for total, score in zip(totals, scores, strict=True):
        if score > 0:
            total += score
            if total == EXACT_HIT:
                total = EXACT_HIT_BECOMES
        result.append(total)
    return result


def game_over(totals: Sequence[int]) -> bool:
    return any(total > GAME_LIMIT for total in totals)


def winners(totals: Sequence[int]) -> list[int]:
    low = min(totals)
    return [i for i, total in enumerate(totals) if total == low]
