"""The commands of both protocol generations and the legal ones in a state.

v2 (the protocol of the Kotlin implementation): TakeCardFromDeck,
TakeDiscardedCard, StopRound, PickOwnCard(cardIndex), Discard, ShowCards(cardIndexes),
PickAnothersCard(playerIndex, cardIndex), StartNextRound. Its sequence diagrams
name the power moves PeekOwnCard(cardIndex) / PeekAnothersCard(playerIndex, cardIndex):
both spellings are accepted for a power; ``actions`` lists the state diagram's names.

v1 (the earlier protocol): TakeCardFromDeck, ReplaceCardByDiscarded(cardIndex),
StopRound, ShowCards(cardIndexes), ReplaceCardsFromDeck, ReplaceCardsByDiscarded,
ReplaceCardFromDeck(cardIndex), Discard, PeekOwnCard(cardIndex),
PeekAnothersCard(anotherPlayerIndex, cardIndex),
ExchangeCards(cardIndex, anotherPlayerIndex, anotherPlayerCardIndex), StartNextRound.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Final

from .state import (
    CLAIM_REPLACE,
    DECK_TAKEN,
    DISCARD_TAKEN,
    EXCHANGE,
    PEEK_OTHER,
    PEEK_OWN,
    READY,
    ROUND_OVER,
    SWAP_OTHER,
    SWAP_OWN,
    V1,
    SixtySixState,
)

TAKE_CARD_FROM_DECK: Final = "TakeCardFromDeck"
TAKE_DISCARDED_CARD: Final = "TakeDiscardedCard"
STOP_ROUND: Final = "StopRound"
PICK_OWN_CARD: Final = "PickOwnCard"
DISCARD: Final = "Discard"
SHOW_CARDS: Final = "ShowCards"
PICK_ANOTHERS_CARD: Final = "PickAnothersCard"
START_NEXT_ROUND: Final = "StartNextRound"
PEEK_OWN_CARD: Final = "PeekOwnCard"
PEEK_ANOTHERS_CARD: Final = "PeekAnothersCard"
REPLACE_CARD_BY_DISCARDED: Final = "ReplaceCardByDiscarded"
REPLACE_CARDS_FROM_DECK: Final = "ReplaceCardsFromDeck"
REPLACE_CARDS_BY_DISCARDED: Final = "ReplaceCardsByDiscarded"
REPLACE_CARD_FROM_DECK: Final = "ReplaceCardFromDeck"
EXCHANGE_CARDS: Final = "ExchangeCards"


def claims(hand_size: int) -> list[list[int]]:
    """Every set of two or more distinct positions, in a stable order."""
    return [
        list(combo) for k in range(2, hand_size + 1) for combo in combinations(range(hand_size), k)
    ]


def _others_cards(state: SixtySixState) -> list[tuple[int, int]]:
    me = state.active
    return [(p, j) for p in range(state.n) if p != me for j in range(len(state.hands[p]))]


def legal(state: SixtySixState) -> list[dict[str, Any]]:
    """The complete legal commands of the seat that must move (see ``SixtySixState.mover``)."""
    phase = state.phase
    hand = len(state.hands[state.active]) if state.hands else 0
    own = range(hand)
    if phase == ROUND_OVER:
        return [{"type": START_NEXT_ROUND}]
    if state.protocol == V1:
        if phase == READY:
            moves: list[dict[str, Any]] = [{"type": TAKE_CARD_FROM_DECK}]
            if state.discard is not None:
                moves += [{"type": REPLACE_CARD_BY_DISCARDED, "cardIndex": i} for i in own]
            if state.stopper is None:
                moves.append({"type": STOP_ROUND})
            moves += [{"type": SHOW_CARDS, "cardIndexes": c} for c in claims(hand)]
            return moves
        if phase == DECK_TAKEN:
            return [{"type": REPLACE_CARD_FROM_DECK, "cardIndex": i} for i in own] + [
                {"type": DISCARD}
            ]
        if phase == CLAIM_REPLACE:
            moves = []
            if state.deck_size > 0:
                moves.append({"type": REPLACE_CARDS_FROM_DECK})
            if state.discard is not None:
                moves.append({"type": REPLACE_CARDS_BY_DISCARDED})
            return moves
        if phase == PEEK_OWN:
            return [{"type": PEEK_OWN_CARD, "cardIndex": i} for i in own]
        if phase == PEEK_OTHER:
            return [
                {"type": PEEK_ANOTHERS_CARD, "anotherPlayerIndex": p, "cardIndex": j}
                for p, j in _others_cards(state)
            ]
        if phase == EXCHANGE:
            return [
                {
                    "type": EXCHANGE_CARDS,
                    "cardIndex": i,
                    "anotherPlayerIndex": p,
                    "anotherPlayerCardIndex": j,
                }
                for i in own
                for p, j in _others_cards(state)
            ]
        return []
    if phase == READY:
        moves = [{"type": TAKE_CARD_FROM_DECK}]
        if state.discard is not None:
            moves.append({"type": TAKE_DISCARDED_CARD})
        if state.stopper is None:
            moves.append({"type": STOP_ROUND})
        return moves
    if phase in (DECK_TAKEN, DISCARD_TAKEN):
        moves = [{"type": PICK_OWN_CARD, "cardIndex": i} for i in own]
        if phase == DECK_TAKEN:
            moves.append({"type": DISCARD})
        moves += [{"type": SHOW_CARDS, "cardIndexes": c} for c in claims(hand)]
        return moves
    if phase in (PEEK_OWN, SWAP_OWN):
        return [{"type": PICK_OWN_CARD, "cardIndex": i} for i in own]
    if phase in (PEEK_OTHER, SWAP_OTHER):
        return [
            {"type": PICK_ANOTHERS_CARD, "playerIndex": p, "cardIndex": j}
            for p, j in _others_cards(state)
        ]
    return []


def action_names(state: SixtySixState) -> list[str]:
    """The names of the legal commands, in order, as v2's ``actions`` field lists them."""
    names: list[str] = []
    for move in legal(state):
        if move["type"] not in names:
            names.append(move["type"])
    return names
