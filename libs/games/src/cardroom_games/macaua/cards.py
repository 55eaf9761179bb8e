"""Macaua card logic on card codes: ranks, suits, matching.

Card codes are those of :mod:`cardroom_mentalpoker.cards`: rank then suit (``"AS"``,
``"10H"``, ``"QD"``) and ``"BJ"`` / ``"RJ"`` for the jokers, which have no suit.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardroom_mentalpoker import MACAUA_CARDS, SUITS

__all__ = [
    "ACE",
    "CHALLENGE",
    "JOKER",
    "JOKERS",
    "MACAUA_CARDS",
    "SUITS",
    "check_play",
    "legal_first",
    "play_challenge",
    "rank",
    "suit",
]

JOKER = "JOKER"
JOKERS = frozenset({"BJ", "RJ"})
ACE = "A"
CHALLENGE: dict[str, int] = {"2": 2, "3": 3, JOKER: 5}
"""A 2 makes the next player draw 2, a 3 three, a Joker five; counters add up."""


def rank(card: str) -> str:
    return JOKER if card in JOKERS else card[:-1]


def suit(card: str) -> str | None:
    return None if card in JOKERS else card[-1]


def legal_first(card: str, top: str, declared: str | None, challenge: int) -> bool:
    """Whether ``card`` may be placed on ``top`` (the first card of a play).

    - During a challenge only a 2, 3 or Joker counters it, whatever its suit (Decisions).
    - Otherwise an Ace or a Joker goes on anything; anything goes on a Joker.
    - After an Ace the declared suit must be matched (or an Ace or Joker played).
    - Else the card matches the top by suit or rank.
    """
    r = rank(card)
    if challenge > 0:
        return r in CHALLENGE
    if r in (ACE, JOKER) or top in JOKERS:
        return True
    if declared is not None:
        return suit(card) == declared
    return suit(card) == suit(top) or r == rank(top)


def check_play(
    cards: Sequence[str], top: str, declared: str | None, challenge: int, new_suit: str | None
) -> str | None:
    """Why a play of ``cards`` (in the order placed) is illegal, or None when it is legal.

    Several cards must share one rank and the first must be legal on the top; Aces need a
    declared suit, and only Aces may declare one.
    """
    if not cards:
        return "a play needs at least one card"
    if len(set(cards)) != len(cards):
        return "a card is given twice"
    if len({rank(c) for c in cards}) != 1:
        return "cards played together must share one rank"
    if not legal_first(cards[0], top, declared, challenge):
        if challenge > 0:
            return "a challenge is pending: only a 2, 3 or Joker counters it"
        return f"{cards[0]} does not match the top of the discard pile"
    if rank(cards[0]) == ACE:
        if new_suit not in SUITS:
            return f"an Ace declares a suit, one of {', '.join(SUITS)}"
    elif new_suit is not None:
        return "only an Ace declares a suit"
    return None


def play_challenge(cards: Sequence[str]) -> int:
    """The number of cards a play adds to the pending challenge."""
    return sum(CHALLENGE.get(rank(c), 0) for c in cards)
