"""Every exchange of the 66 game's first protocol generation, scripted (table option
``protocol: v1``).

Gate by gate (one engine event = one "wait for all acks"): the addressees, the message
names and every field. Client 1, 2, 3 are seats 0, 1, 2; Client 2 is the active player.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from cardroom_engine.simulate import new_game
from cardroom_games.sixtysix import GAME
from sixtysix_harness import Script, gates

HANDS = [[1, 2, 3, 4], [5, 5, 9, 10], [0, 6, 7, 8]]
ALL = {"c1", "c2", "c3"}
OTHERS = ("c1", "c3")


def v1(hands: list[list[int]] = HANDS, **kwargs: Any) -> Script:
    kwargs.setdefault("discard", 2)
    kwargs.setdefault("starter", 1)
    return Script(hands, protocol="v1", **kwargs)


def turn_gates(active: str) -> list[dict[str, Any]]:
    """Phase B: NextTurn to the others, then YourTurn (its own gate) to the active player."""
    seat = ["c1", "c2", "c3"].index(active)
    return [
        {p: {"type": "NextTurn", "playerIndex": seat} for p in ALL - {active}},
        {active: {"type": "YourTurn"}},
    ]


def split(theirs: dict[str, Any], mine: dict[str, Any]) -> dict[str, Any]:
    return {"c1": theirs, "c2": mine, "c3": theirs}


# -- phase A and B --------------------------------------------------------------------------


def test_phase_a_round_start_and_phase_b_first_turn() -> None:
    game = v1()

    def state(seat: int) -> dict[str, Any]:
        return {
            "type": "GameState",
            "deckSize": 39,
            "discardedValue": 2,
            "handSizes": [4, 4, 4],
            "playerIndex": seat,
        }

    assert gates(game.since_mark()) == [
        {"c1": state(0), "c2": state(1), "c3": state(2)},
        {
            "c1": {"type": "FirstTwoCards", "value1": 1, "value2": 2},
            "c2": {"type": "FirstTwoCards", "value1": 5, "value2": 5},
            "c3": {"type": "FirstTwoCards", "value1": 0, "value2": 6},
        },
        *turn_gates("c2"),
    ]


def test_phase_a_through_the_real_start_deals_one_face_up_card() -> None:
    local = new_game(GAME, ["c1", "c2", "c3"], random.Random(3), {"protocol": "v1"})
    steps = [s for s in local.steps if s.notifications]
    kinds = [{p: m["type"] for p, m in s.notifications.items()} for s in steps]
    assert kinds[:3] == [
        dict.fromkeys(ALL, "GameStarted"),
        dict.fromkeys(ALL, "GameState"),
        dict.fromkeys(ALL, "FirstTwoCards"),
    ]
    game = local.state.game
    assert game.discard is not None
    assert steps[1].notifications["c1"]["discardedValue"] == game.discard
    assert steps[1].notifications["c1"]["deckSize"] == 39 == game.deck_size
    assert [kinds[3], kinds[4]] == [
        {p: "NextTurn" for p in ALL - {local.state.seats[game.active]}},
        {local.state.seats[game.active]: "YourTurn"},
    ]


# -- phase C --------------------------------------------------------------------------------


def test_phase_c_take_card_from_deck() -> None:
    game = v1()
    steps = game.do("c2", {"type": "TakeCardFromDeck"}, draw=6)
    assert gates(steps) == [{"c2": {"type": "TookDeckCard", "value": 6, "deckSize": 38}}]


def test_phase_c_replace_card_by_discarded() -> None:
    game = v1()
    steps = game.do("c2", {"type": "ReplaceCardByDiscarded", "cardIndex": 3})
    assert gates(steps) == [
        split(
            {
                "type": "CardReplacedByDiscarded",
                "playerIndex": 1,
                "cardIndex": 3,
                "discardedValue": 10,
            },
            {"type": "ReplacedCardByDiscarded", "cardIndex": 3, "discardedValue": 10},
        ),
        *turn_gates("c3"),
    ]
    assert game.state.hands[1] == (5, 5, 9, 2)


def test_phase_c_claim_identical_cards_and_succeed() -> None:
    game = v1()
    steps = game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 1]})
    assert gates(steps) == [
        {
            p: {"type": "IdenticalCardsShown", "playerIndex": 1, "cardIndexes": [0, 1], "value": 5}
            for p in OTHERS
        },
        {"c2": {"type": "ShowedIdenticalCards", "cardIndexes": [0, 1]}},
    ]
    assert game.actions("c2") == [
        {"type": "ReplaceCardsFromDeck"},
        {"type": "ReplaceCardsByDiscarded"},
    ]


def test_phase_c_claim_identical_cards_and_fail() -> None:
    game = v1()
    steps = game.do("c2", {"type": "ShowCards", "cardIndexes": [3, 0]})
    assert gates(steps) == [
        split(
            {
                "type": "DifferentCardsShown",
                "playerIndex": 1,
                "cardIndexes": [3, 0],
                "values": [10, 5],
            },
            {"type": "ShowedDifferentCards", "cardIndexes": [3, 0]},
        ),
        *turn_gates("c3"),
    ]
    assert game.state.hands[1] == (5, 5, 9, 10)  # nothing moves; the turn is simply over
    assert game.state.deck_size == 39


def test_phase_c_stop_the_round() -> None:
    game = v1()
    steps = game.do("c2", {"type": "StopRound"})
    assert gates(steps) == [
        split({"type": "StopInitiated", "playerIndex": 1}, {"type": "InitiatedStop"}),
        *turn_gates("c3"),
    ]


# -- phase D --------------------------------------------------------------------------------


def test_phase_d_replace_card_from_deck() -> None:
    game = v1()
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=0)
    steps = game.do("c2", {"type": "ReplaceCardFromDeck", "cardIndex": 2})
    assert gates(steps) == [
        split(
            {"type": "CardReplacedFromDeck", "playerIndex": 1, "cardIndex": 2, "discardedValue": 9},
            {"type": "ReplacedCardFromDeck", "cardIndex": 2, "discardedValue": 9},
        ),
        *turn_gates("c3"),
    ]
    assert game.state.hands[1] == (5, 5, 0, 10)


def test_phase_d_discard_plain() -> None:
    game = v1()
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=13)
    steps = game.do("c2", {"type": "Discard"})
    assert gates(steps) == [
        split(
            {"type": "CardDiscarded", "playerIndex": 1, "discardedValue": 13},
            {"type": "DiscardedCard", "discardedValue": 13},
        ),
        *turn_gates("c3"),
    ]


def power_gates(value: int, prompt: str) -> list[dict[str, Any]]:
    return [
        {p: {"type": "CardDiscarded", "playerIndex": 1, "discardedValue": value} for p in OTHERS},
        {"c2": {"type": prompt, "discardedValue": value}},
    ]


@pytest.mark.parametrize("value", [7, 8])
def test_phase_d_discard_7_or_8(value: int) -> None:
    game = v1()
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=value)
    assert gates(game.do("c2", {"type": "Discard"})) == power_gates(value, "PeekingOwnCard")
    steps = game.do("c2", {"type": "PeekOwnCard", "cardIndex": 2})
    assert gates(steps) == [
        split(
            {"type": "OwnCardPeeked", "playerIndex": 1, "cardIndex": 2},
            {"type": "OwnCard", "cardIndex": 2, "value": 9},
        ),
        *turn_gates("c3"),
    ]


@pytest.mark.parametrize("value", [9, 10])
def test_phase_d_discard_9_or_10(value: int) -> None:
    game = v1()
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=value)
    assert gates(game.do("c2", {"type": "Discard"})) == power_gates(value, "PeekingAnothersCard")
    steps = game.do("c2", {"type": "PeekAnothersCard", "anotherPlayerIndex": 0, "cardIndex": 3})
    assert gates(steps) == [
        split(
            {
                "type": "AnothersCardPeeked",
                "playerIndex": 1,
                "anotherPlayerIndex": 0,
                "cardIndex": 3,
            },
            {"type": "AnothersCard", "anotherPlayerIndex": 0, "cardIndex": 3, "value": 4},
        ),
        *turn_gates("c3"),
    ]


@pytest.mark.parametrize("value", [11, 12])
def test_phase_d_discard_11_or_12(value: int) -> None:
    game = v1()
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=value)
    assert gates(game.do("c2", {"type": "Discard"})) == power_gates(value, "ExchangingCards")
    steps = game.do(
        "c2",
        {
            "type": "ExchangeCards",
            "cardIndex": 2,
            "anotherPlayerIndex": 2,
            "anotherPlayerCardIndex": 0,
        },
    )
    assert gates(steps) == [
        split(
            {
                "type": "CardsExchanged",
                "playerIndex": 1,
                "cardIndex": 2,
                "anotherPlayerIndex": 2,
                "anotherPlayerCardIndex": 0,
            },
            {
                "type": "ExchangedCards",
                "cardIndex": 2,
                "anotherPlayerIndex": 2,
                "anotherPlayerCardIndex": 0,
            },
        ),
        *turn_gates("c3"),
    ]
    assert game.state.hands[1] == (5, 5, 0, 10)
    assert game.state.hands[2] == (9, 6, 7, 8)


# -- phase E --------------------------------------------------------------------------------


def test_phase_e_replace_multiple_cards_with_a_card_from_deck() -> None:
    game = v1()
    game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 1]})
    steps = game.do("c2", {"type": "ReplaceCardsFromDeck"}, draw=12)
    assert gates(steps) == [
        split(
            {
                "type": "CardsReplacedFromDeck",
                "playerIndex": 1,
                "cardIndexes": [0, 1],
                "discardedValue": 5,
            },
            {"type": "ReplacedCardsFromDeck", "cardIndexes": [0, 1], "discardedValue": 5},
        ),
        *turn_gates("c3"),
    ]
    assert game.state.hands[1] == (12, 9, 10)
    assert game.state.deck_size == 38
    # a blind replacement: not even the player sees the new card
    assert game.view("c2")["hands"][1] == [None, None, None]


def test_phase_e_replace_multiple_cards_with_the_discarded_card() -> None:
    game = v1()
    game.do("c2", {"type": "ShowCards", "cardIndexes": [1, 0]})
    steps = game.do("c2", {"type": "ReplaceCardsByDiscarded"})
    assert gates(steps) == [
        split(
            {
                "type": "CardsReplacedByDiscarded",
                "playerIndex": 1,
                "cardIndexes": [1, 0],
                "discardedValue": 5,
            },
            {"type": "ReplacedCardsByDiscarded", "cardIndexes": [1, 0], "discardedValue": 5},
        ),
        *turn_gates("c3"),
    ]
    assert game.state.hands[1] == (2, 9, 10)
    assert game.state.discard == 5
    assert game.view("c3")["hands"][1] == [2, None, None]


# -- final phase ----------------------------------------------------------------------------


def stop_and_play_out(game: Script) -> list[Any]:
    """C2 stops; C3 and C1 each draw a 13 and discard it; the round ends."""
    game.do("c2", {"type": "StopRound"})
    steps: list[Any] = []
    for player in ("c3", "c1"):
        game.do(player, {"type": "TakeCardFromDeck"}, draw=13)
        steps = game.do(player, {"type": "Discard"})
    return steps


def test_final_round_finished_and_the_game_continues() -> None:
    # c2 stops and holds the unique lowest sum: no penalty, c2 starts the next round
    game = v1([[6, 6, 6, 6], [0, 1, 2, 3], [0, 6, 7, 8]])
    steps = stop_and_play_out(game)
    finished = {
        "type": "RoundFinished",
        "turnCount": 3,
        "scores": [24, 0, 21],
        "totalScores": [24, 0, 21],
        "nextPlayerIndex": 1,
    }
    assert gates(steps)[1:] == [
        {p: finished for p in OTHERS},
        {"c2": finished},
    ]
    assert game.actions("c2") == [{"type": "StartNextRound"}]
    assert game.actions("c1") == []
    steps = game.do("c2", {"type": "StartNextRound"})
    kinds = [{p: m["type"] for p, m in g.items()} for g in gates(steps)]
    assert kinds == [
        dict.fromkeys(ALL, "GameState"),
        dict.fromkeys(ALL, "FirstTwoCards"),
        {"c1": "NextTurn", "c3": "NextTurn"},
        {"c2": "YourTurn"},
    ]
    assert gates(steps)[0]["c3"]["playerIndex"] == 2
    assert gates(steps)[2]["c1"] == {"type": "NextTurn", "playerIndex": 1}


def test_final_game_finished() -> None:
    game = v1([[6, 6, 6, 6], [0, 1, 2, 3], [0, 6, 7, 8]], totals=[60, 0, 5])
    steps = stop_and_play_out(game)
    finished = {
        "type": "GameFinished",
        "roundCount": 1,
        "scores": [24, 0, 21],
        "totalScores": [84, 0, 26],
    }
    assert gates(steps)[1] == {p: finished for p in ALL}
    assert [{m["type"] for m in g.values()} for g in gates(steps)[2:]] == [{"GameOver"}]
    assert game.local.state.status == "finished"
