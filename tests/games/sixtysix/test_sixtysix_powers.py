"""The powers of a discarded deck card, in both protocol generations:
7/8 peek at an own card, 9/10 peek at another player's card, 11/12 blind swap. Mandatory,
aimed at another player, and only when a drawn deck card is discarded."""

from __future__ import annotations

import random

import pytest
from cardroom_games.sixtysix import GAME, MUST_TARGET_ANOTHER_PLAYER
from sixtysix_harness import Script

HANDS = [[1, 2, 3, 4], [5, 5, 9, 10], [0, 6, 7, 8]]
PROTOCOLS = ["v2", "v1"]


def discarded(protocol: str, value: int) -> Script:
    """C2 draws ``value`` and discards it."""
    game = Script(HANDS, protocol=protocol, discard=2 if protocol == "v1" else None)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=value)
    game.do("c2", {"type": "Discard"})
    return game


def peek_own(protocol: str, index: int) -> dict[str, object]:
    kind = "PickOwnCard" if protocol == "v2" else "PeekOwnCard"
    return {"type": kind, "cardIndex": index}


def peek_other(protocol: str, player: int, index: int) -> dict[str, object]:
    if protocol == "v2":
        return {"type": "PickAnothersCard", "playerIndex": player, "cardIndex": index}
    return {"type": "PeekAnothersCard", "anotherPlayerIndex": player, "cardIndex": index}


def swap(game: Script, protocol: str, own: int, player: int, index: int) -> None:
    if protocol == "v2":
        game.do("c2", {"type": "PickOwnCard", "cardIndex": own})
        game.do("c2", {"type": "PickAnothersCard", "playerIndex": player, "cardIndex": index})
    else:
        game.do(
            "c2",
            {
                "type": "ExchangeCards",
                "cardIndex": own,
                "anotherPlayerIndex": player,
                "anotherPlayerCardIndex": index,
            },
        )


# -- 7 / 8 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("value", [7, 8])
def test_7_or_8_shows_one_own_card_to_its_owner_only(protocol: str, value: int) -> None:
    game = discarded(protocol, value)
    assert game.actions("c2") == [peek_own(protocol, i) for i in range(4)]
    assert game.view("c2")["hands"][1] == [5, 5, None, None]
    game.do("c2", peek_own(protocol, 3))
    assert game.view("c2")["hands"][1] == [5, 5, None, 10]
    assert game.view("c1")["hands"][1] == [None] * 4
    assert game.view("c3")["hands"][1] == [None] * 4
    assert game.state.active == 2  # the turn is over
    assert game.state.discard == value


# -- 9 / 10 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("value", [9, 10])
def test_9_or_10_shows_another_players_card_to_the_looker_only(protocol: str, value: int) -> None:
    game = discarded(protocol, value)
    targets = {
        (a.get("playerIndex", a.get("anotherPlayerIndex")), a["cardIndex"])
        for a in game.actions("c2")
    }
    assert targets == {(p, i) for p in (0, 2) for i in range(4)}  # never the looker's own
    game.do("c2", peek_other(protocol, 2, 2))
    assert game.view("c2")["hands"][2] == [None, None, 7, None]
    assert game.view("c1")["hands"][2] == [None] * 4
    assert game.view("c3")["hands"][2] == [0, 6, None, None]  # the owner learns nothing


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_9_or_10_must_target_another_player(protocol: str) -> None:
    game = discarded(protocol, 9)
    exc = game.refuse("c2", peek_other(protocol, 1, 0))
    assert exc.code == MUST_TARGET_ANOTHER_PLAYER
    assert game.refuse("c2", peek_other(protocol, 3, 0)).code == "illegal_move"
    assert game.refuse("c2", peek_other(protocol, -1, 0)).code == "illegal_move"
    assert game.refuse("c2", peek_other(protocol, 0, 4)).code == "illegal_move"


# -- 11 / 12 --------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("value", [11, 12])
def test_11_or_12_swaps_blindly_and_knowledge_travels_with_the_cards(
    protocol: str, value: int
) -> None:
    game = discarded(protocol, value)
    swap(game, protocol, own=0, player=0, index=3)
    assert game.state.hands[0] == (1, 2, 3, 5)
    assert game.state.hands[1] == (4, 5, 9, 10)
    # c2 knew its card 0 (a 5): it now knows c1's card 3; nobody learnt c1's old card 3
    assert game.view("c2")["hands"] == [[None, None, None, 5], [None, 5, None, None], [None] * 4]
    # c1 knew its cards 0 and 1 only: still those; it does not learn what it received
    assert game.view("c1")["hands"] == [[1, 2, None, None], [None] * 4, [None] * 4]
    assert game.view("c3")["hands"][0] == [None] * 4
    assert game.view("c3")["hands"][1] == [None] * 4


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_11_or_12_must_target_another_player(protocol: str) -> None:
    game = discarded(protocol, 11)
    if protocol == "v2":
        game.do("c2", {"type": "PickOwnCard", "cardIndex": 0})
        assert game.actions("c2")[0]["type"] == "PickAnothersCard"
        bad = {"type": "PickAnothersCard", "playerIndex": 1, "cardIndex": 2}
    else:
        bad = {
            "type": "ExchangeCards",
            "cardIndex": 0,
            "anotherPlayerIndex": 1,
            "anotherPlayerCardIndex": 2,
        }
    assert game.refuse("c2", bad).code == MUST_TARGET_ANOTHER_PLAYER
    assert all(a.get("playerIndex", a.get("anotherPlayerIndex")) != 1 for a in game.actions("c2"))


def test_v2_the_first_step_of_a_swap_is_told_to_the_swapper_only() -> None:
    game = discarded("v2", 12)
    steps = game.do("c2", {"type": "PickOwnCard", "cardIndex": 1})
    assert [set(s.notifications) for s in steps] == [{"c2"}]
    assert game.state.hands[1] == (5, 5, 9, 10)  # nothing moved yet
    assert game.refuse("c2", {"type": "PickOwnCard", "cardIndex": 2}).code == "illegal_move"


# -- mandatory, and only for a discarded deck card -------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("value", [7, 9, 11])
def test_a_power_is_mandatory(protocol: str, value: int) -> None:
    game = discarded(protocol, value)
    actions = game.actions("c2")
    kinds = {a["type"] for a in actions}
    assert kinds <= {
        "PickOwnCard",
        "PickAnothersCard",
        "PeekOwnCard",
        "PeekAnothersCard",
        "ExchangeCards",
    }
    for other in ("TakeCardFromDeck", "StopRound", "Discard", "TakeDiscardedCard"):
        code = game.refuse("c2", {"type": other}).code
        assert code in ("illegal_move", "unknown_command")
    assert game.actions("c1") == game.actions("c3") == []
    assert GAME.house_action(game.state, "c2", random.Random(1)) in actions


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_power_when_a_power_card_leaves_a_hand_by_replacement(protocol: str) -> None:
    game = Script(HANDS, protocol=protocol, discard=2 if protocol == "v1" else None)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=1)
    kind = "PickOwnCard" if protocol == "v2" else "ReplaceCardFromDeck"
    game.do("c2", {"type": kind, "cardIndex": 3})  # the 10 goes to the discard
    assert game.state.discard == 10
    assert game.state.active == 2  # straight to the next turn
    assert game.state.phase == "ready"


def test_v1_no_power_when_a_power_card_leaves_by_the_discard_swap() -> None:
    game = Script(HANDS, protocol="v1", discard=2)
    game.do("c2", {"type": "ReplaceCardByDiscarded", "cardIndex": 2})  # the 9 goes
    assert game.state.discard == 9
    assert game.state.active == 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_power_after_a_successful_claim_of_power_cards(protocol: str) -> None:
    hands = [[1, 2, 3, 4], [7, 7, 9, 10], [0, 6, 7, 8]]
    game = Script(hands, protocol=protocol, discard=2 if protocol == "v1" else None)
    if protocol == "v2":
        game.do("c2", {"type": "TakeCardFromDeck"}, draw=3)
        game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 1]})
    else:
        game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 1]})
        game.do("c2", {"type": "ReplaceCardsByDiscarded"})
    assert game.state.discard == 7
    assert game.state.hands[1] == ((3 if protocol == "v2" else 2), 9, 10)
    assert game.state.active == 2


def test_v2_no_power_for_a_deck_card_discarded_after_a_failed_claim() -> None:
    game = Script(HANDS)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=11)
    game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 3]})
    assert game.state.discard == 11
    assert game.state.active == 2
    assert game.state.phase == "ready"


def test_v2_the_discard_top_once_taken_cannot_be_discarded_again() -> None:
    game = Script(HANDS, starter=0)
    game.do("c1", {"type": "TakeCardFromDeck"}, draw=7)
    game.do("c1", {"type": "Discard"})
    game.do("c1", {"type": "PickOwnCard", "cardIndex": 0})
    game.do("c2", {"type": "TakeDiscardedCard"})
    assert game.refuse("c2", {"type": "Discard"}).code == "illegal_move"
    assert {a["type"] for a in game.actions("c2")} == {"PickOwnCard", "ShowCards"}
