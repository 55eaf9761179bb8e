"""The leak property: nothing a player receives holds a card value it may not know.

Thousands of random games of both protocol generations and 2 to 5 players. Beside the
game runs an independent model of what each seat is entitled to know, written from the
rules of what a player may know and fed with the true events: its own first two cards, the cards it
peeked, the cards it placed from the discard or from a deck card it drew, every card
taken from the public discard top, the cards others showed it in a claim, and everything
once a round is over. Knowledge travels with a card when cards are swapped or shift.

Every message each player receives and every view (players' and the spectator's) is read
field by field: a card value may only appear where the model says the recipient may know
that very card, and must be its true value. Fields that cannot carry a card value are
listed; any other field fails the test (so a new field cannot leak unnoticed). The views
must also show *everything* the model allows, so knowledge is neither lost nor invented.
"""

from __future__ import annotations

import random
from collections import Counter

from cardroom_engine.simulate import new_game
from cardroom_games.sixtysix import GAME
from sixtysix_model import Entitlement, check_game, check_table_game


def test_no_player_ever_receives_a_card_it_may_not_know() -> None:
    seen: Counter[tuple[str, str, str]] = Counter()
    games = 0
    for protocol in ("v2", "v1"):
        for seed in range(1000):
            # 2 to 5 players; one round (two in a game of 4); views at every event in 1 of 8
            n, rounds, views = 2 + seed % 4, 1 + ((seed // 4) % 4 == 0), (seed // 8) % 8 == 0
            check_game(seed, protocol, n, views, seen, rounds)
            games += 1
    assert games == 2000
    # every kind of event and message of both generations was exercised
    v2_events = {kind for (protocol, what, kind) in seen if (protocol, what) == ("v2", "event")}
    v1_events = {kind for (protocol, what, kind) in seen if (protocol, what) == ("v1", "event")}
    common = {
        "sixtysix.round_dealt",
        "sixtysix.first_cards_shown",
        "sixtysix.turn_started",
        "sixtysix.turn_prompted",
        "sixtysix.deck_card_taken",
        "sixtysix.round_stopped",
        "sixtysix.cards_replaced",
        "sixtysix.cards_shown",
        "sixtysix.card_discarded",
        "sixtysix.power_prompted",
        "sixtysix.own_card_peeked",
        "sixtysix.anothers_card_peeked",
        "sixtysix.cards_exchanged",
        "sixtysix.round_finished",
        "sixtysix.next_round_prompted",
    }
    assert v2_events == common | {"sixtysix.discarded_card_taken", "sixtysix.swap_own_picked"}
    assert v1_events == common | {"sixtysix.claim_confirmed"}
    v1_messages = {kind for (protocol, what, kind) in seen if (protocol, what) == ("v1", "message")}
    assert v1_messages >= {
        "GameState",
        "FirstTwoCards",
        "NextTurn",
        "YourTurn",
        "TookDeckCard",
        "CardReplacedByDiscarded",
        "ReplacedCardByDiscarded",
        "IdenticalCardsShown",
        "ShowedIdenticalCards",
        "DifferentCardsShown",
        "ShowedDifferentCards",
        "StopInitiated",
        "InitiatedStop",
        "CardReplacedFromDeck",
        "ReplacedCardFromDeck",
        "CardDiscarded",
        "DiscardedCard",
        "PeekingOwnCard",
        "OwnCard",
        "OwnCardPeeked",
        "PeekingAnothersCard",
        "AnothersCard",
        "AnothersCardPeeked",
        "ExchangingCards",
        "CardsExchanged",
        "ExchangedCards",
        "CardsReplacedFromDeck",
        "ReplacedCardsFromDeck",
        "CardsReplacedByDiscarded",
        "ReplacedCardsByDiscarded",
        "RoundFinished",
    }
    v2_messages = {kind for (protocol, what, kind) in seen if (protocol, what) == ("v2", "message")}
    assert v2_messages >= {
        "BoardInitialized",
        "CardsRevealed",
        "BoardUpdated",
        "CardsReplaced",
        "CardExchanged",
        "RoundFinished",
    }


def test_whole_games_to_the_end_leak_nothing() -> None:
    """Fewer games, but played to the end of the game (GameFinished, GameOver)."""
    seen: Counter[tuple[str, str, str]] = Counter()
    for protocol in ("v2", "v1"):
        for seed in range(40):
            check_table_game(10_000 + seed, protocol, 2 + seed % 4, seen)
    assert seen["v1", "message", "GameFinished"] > 0
    assert seen["v2", "message", "GameOver"] > 0


def test_the_model_catches_a_leak() -> None:
    """The checker is not vacuous: a message with another player's card value fails it."""
    local = new_game(GAME, ["a", "b"], random.Random(1))
    model = Entitlement(2)
    for step in local.steps:
        if not step.event["type"].startswith("table."):
            model.apply(step.event)
    state = local.state.game
    leak = {
        "type": "CardsRevealed",
        "cards": [
            {
                "lookingPlayerIndexes": [0],
                "targetPlayerIndex": 1,
                "cardIndexes": [0],
                "values": [state.hands[1][0]],
            }
        ],
    }
    try:
        model.message(0, leak)
    except AssertionError:
        pass
    else:
        raise AssertionError("the leak went unnoticed")
    try:
        model.message(0, {"type": "BoardUpdated", "secret": 3})
    except AssertionError:
        pass
    else:
        raise AssertionError("an unknown field went unnoticed")
