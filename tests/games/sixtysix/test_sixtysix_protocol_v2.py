"""Every exchange of the 66 game's second protocol generation, scripted.

Each test reaches the exchange's situation with chosen cards and asserts, gate by gate (one
engine event = one "wait for all acks"), the addressees, the message names and every field.
Client 1, 2, 3 are seats 0, 1, 2 (players c1, c2, c3); Client 2 is the active player.
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


def turn_gates(
    active: str, turn: int, actions: list[str], stop_counter: int | None = None
) -> list[dict[str, Any]]:
    """Phase 2: BoardUpdated to the others, then (its own gate) to the active player."""
    seat = ["c1", "c2", "c3"].index(active)
    board = {
        "type": "BoardUpdated",
        "activePlayerIndex": seat,
        "deckCard": None,
        "stopCounter": stop_counter,
        "turn": turn,
    }
    return [
        {p: board for p in ALL - {active}},
        {active: {**board, "actions": actions}},
    ]


def revealed(
    looking: list[int], target: int, indexes: list[int], values: list[int] | None
) -> dict[str, Any]:
    return {
        "lookingPlayerIndexes": looking,
        "targetPlayerIndex": target,
        "cardIndexes": indexes,
        "values": values,
    }


def c2_with_discard(discard: int = 3) -> Script:
    """C1 starts, draws ``discard`` and discards it: C2's turn with a discard top."""
    game = Script(HANDS, starter=0)
    game.do("c1", {"type": "TakeCardFromDeck"}, draw=discard)
    game.do("c1", {"type": "Discard"})
    game.set_mark()
    return game


# -- phase 1 and 2 --------------------------------------------------------------------------


def test_phase1_round_start_and_phase2_first_turn() -> None:
    game = Script(HANDS, starter=1)
    board = {
        "type": "BoardInitialized",
        "deckSize": 40,
        "deckCard": None,
        "discardedValue": None,
        "handSizes": [4, 4, 4],
        "stopCounter": None,
        "round": 1,
        "turn": 0,
    }
    first = [[1, 2], [5, 5], [0, 6]]

    def cards_for(seat: int) -> dict[str, Any]:
        return {
            "type": "CardsRevealed",
            "cards": [revealed([q], q, [0, 1], first[q] if q == seat else None) for q in range(3)],
        }

    assert gates(game.since_mark()) == [
        {p: board for p in ALL},
        {"c1": cards_for(0), "c2": cards_for(1), "c3": cards_for(2)},
        *turn_gates("c2", 1, ["TakeCardFromDeck", "StopRound"]),
    ]


def test_phase1_through_the_real_start() -> None:
    """The StartGame path of the engine: GameStarted and BoardInitialized in one batch, then
    the same gates as drawn, with the deal drawn from the RNG."""
    local = new_game(GAME, ["c1", "c2", "c3"], random.Random(7))
    steps = [s for s in local.steps if s.notifications]
    kinds = [{p: m["type"] for p, m in s.notifications.items()} for s in steps]
    assert kinds[0] == dict.fromkeys(ALL, "GameStarted")
    assert kinds[1] == dict.fromkeys(ALL, "BoardInitialized")
    assert kinds[2] == dict.fromkeys(ALL, "CardsRevealed")
    state = local.state.game
    active = local.state.seats[state.active]
    assert kinds[3] == dict.fromkeys(ALL - {active}, "BoardUpdated")
    assert kinds[4] == {active: "BoardUpdated"}
    assert len(steps) == 5
    for p, message in steps[2].notifications.items():
        seat = local.state.seats.index(p)
        own = message["cards"][seat]
        assert own["values"] == list(state.hands[seat][:2])
        assert all(c["values"] is None for i, c in enumerate(message["cards"]) if i != seat)


def test_phase2_turn_passes_clockwise() -> None:
    game = Script(HANDS, starter=1)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=4)
    steps = game.do("c2", {"type": "Discard"})
    assert gates(steps)[1:] == turn_gates(
        "c3", 2, ["TakeCardFromDeck", "TakeDiscardedCard", "StopRound"]
    )


# -- phase 3 --------------------------------------------------------------------------------


def test_phase3_take_card_from_deck() -> None:
    game = Script(HANDS, starter=1)
    steps = game.do("c2", {"type": "TakeCardFromDeck"}, draw=11)
    assert gates(steps) == [
        {
            "c2": {
                "type": "BoardUpdated",
                "deckSize": 39,
                "deckCard": 11,
                "actions": ["PickOwnCard", "Discard", "ShowCards"],
            }
        }
    ]


def test_phase3_take_discarded_card() -> None:
    game = c2_with_discard(3)
    steps = game.do("c2", {"type": "TakeDiscardedCard"})
    assert gates(steps) == [
        {"c2": {"type": "BoardUpdated", "actions": ["PickOwnCard", "ShowCards"]}}
    ]


def test_phase3_stop_round() -> None:
    game = Script(HANDS, starter=1)
    steps = game.do("c2", {"type": "StopRound"})
    assert gates(steps) == [
        {p: {"type": "BoardUpdated", "stopCounter": 2} for p in ALL},
        *turn_gates("c3", 2, ["TakeCardFromDeck"], stop_counter=2),
    ]


# -- phase 4a -------------------------------------------------------------------------------


def test_phase4a_replace_with_the_picked_card() -> None:
    game = Script(HANDS, starter=1)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=0)
    steps = game.do("c2", {"type": "PickOwnCard", "cardIndex": 3})
    replaced = {
        "type": "CardsReplaced",
        "playerIndex": 1,
        "cardIndexes": [3],
        "fromDeck": True,
        "discardedValue": 10,
        "deckSize": 39,
    }
    assert gates(steps) == [
        {p: replaced for p in ALL},
        *turn_gates("c3", 2, ["TakeCardFromDeck", "TakeDiscardedCard", "StopRound"]),
    ]
    assert game.state.hands[1] == (5, 5, 9, 0)


def test_phase4a_replace_with_the_discarded_card() -> None:
    game = c2_with_discard(3)
    game.do("c2", {"type": "TakeDiscardedCard"})
    steps = game.do("c2", {"type": "PickOwnCard", "cardIndex": 2})
    assert gates(steps)[0] == {
        p: {
            "type": "CardsReplaced",
            "playerIndex": 1,
            "cardIndexes": [2],
            "fromDeck": False,
            "discardedValue": 9,
            "deckSize": 39,
        }
        for p in ALL
    }
    assert game.state.hands[1] == (5, 5, 3, 10)


def test_phase4a_claim_identical_cards_and_succeed() -> None:
    game = Script(HANDS, starter=1)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=2)
    steps = game.do("c2", {"type": "ShowCards", "cardIndexes": [1, 0]})
    shown = revealed([0, 2], 1, [1, 0], [5, 5])
    hidden = revealed([0, 2], 1, [1, 0], None)
    replaced = {
        "type": "CardsReplaced",
        "playerIndex": 1,
        "cardIndexes": [1, 0],
        "fromDeck": True,
        "discardedValue": 5,
        "deckSize": 39,
    }
    assert gates(steps) == [
        {
            "c1": {"type": "CardsRevealed", "cards": [shown]},
            "c2": {"type": "CardsRevealed", "cards": [hidden]},
            "c3": {"type": "CardsRevealed", "cards": [shown]},
        },
        {p: replaced for p in ALL},
        *turn_gates("c3", 2, ["TakeCardFromDeck", "TakeDiscardedCard", "StopRound"]),
    ]
    assert game.state.hands[1] == (2, 9, 10)
    assert game.state.discard == 5


def test_phase4a_claim_identical_cards_and_fail() -> None:
    """As drawn: the taken card was the discard top, so it simply stays there."""
    game = c2_with_discard(3)
    game.do("c2", {"type": "TakeDiscardedCard"})
    steps = game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 2]})
    shown = revealed([0, 2], 1, [0, 2], [5, 9])
    hidden = revealed([0, 2], 1, [0, 2], None)
    assert gates(steps) == [
        {
            "c1": {"type": "CardsRevealed", "cards": [shown]},
            "c2": {"type": "CardsRevealed", "cards": [hidden]},
            "c3": {"type": "CardsRevealed", "cards": [shown]},
        },
        *turn_gates("c3", 3, ["TakeCardFromDeck", "TakeDiscardedCard", "StopRound"]),
    ]
    assert game.state.hands[1] == (5, 5, 9, 10)
    assert game.state.discard == 3


def test_phase4a_failed_claim_with_a_deck_card_discards_it_plainly() -> None:
    """The implementation's DISCARDING_PLAIN after a failed claim: the deck card becomes the
    discard top (no power, even for a 7..12), told to everyone as a plain discard."""
    game = Script(HANDS, starter=1)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=8)
    steps = game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 2, 3]})
    plain = {"type": "BoardUpdated", "deckSize": 39, "deckCard": None, "discardedValue": 8}
    assert [set(g) for g in gates(steps)][:2] == [ALL, ALL]
    assert gates(steps)[1] == {p: plain for p in ALL}
    assert gates(steps)[2:] == turn_gates(
        "c3", 2, ["TakeCardFromDeck", "TakeDiscardedCard", "StopRound"]
    )


# -- phase 4b -------------------------------------------------------------------------------


def test_phase4b_discard_plain() -> None:
    game = Script(HANDS, starter=1)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=13)
    steps = game.do("c2", {"type": "Discard"})
    board = {"type": "BoardUpdated", "deckSize": 39, "deckCard": None, "discardedValue": 13}
    assert gates(steps) == [
        {p: board for p in ALL},
        *turn_gates("c3", 2, ["TakeCardFromDeck", "TakeDiscardedCard", "StopRound"]),
    ]


def power_gates(value: int, actions: list[str]) -> list[dict[str, Any]]:
    """The two-step notification of a discarded power card: others, then the active."""
    return [
        {
            p: {"type": "BoardUpdated", "deckSize": 39, "discardedValue": value}
            for p in ("c1", "c3")
        },
        {
            "c2": {
                "type": "BoardUpdated",
                "deckSize": 39,
                "deckCard": None,
                "discardedValue": value,
                "actions": actions,
            }
        },
    ]


@pytest.mark.parametrize("value", [7, 8])
def test_phase4b_discard_7_or_8(value: int) -> None:
    game = Script(HANDS, starter=1)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=value)
    steps = game.do("c2", {"type": "Discard"})
    assert gates(steps) == power_gates(value, ["PickOwnCard"])
    steps = game.do("c2", {"type": "PeekOwnCard", "cardIndex": 3})
    assert gates(steps)[0] == {
        "c1": {"type": "CardsRevealed", "cards": [revealed([1], 1, [3], None)]},
        "c2": {"type": "CardsRevealed", "cards": [revealed([1], 1, [3], [10])]},
        "c3": {"type": "CardsRevealed", "cards": [revealed([1], 1, [3], None)]},
    }
    assert gates(steps)[1:] == turn_gates(
        "c3", 2, ["TakeCardFromDeck", "TakeDiscardedCard", "StopRound"]
    )


@pytest.mark.parametrize("value", [9, 10])
def test_phase4b_discard_9_or_10(value: int) -> None:
    game = Script(HANDS, starter=1)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=value)
    steps = game.do("c2", {"type": "Discard"})
    assert gates(steps) == power_gates(value, ["PickAnothersCard"])
    steps = game.do("c2", {"type": "PeekAnothersCard", "playerIndex": 2, "cardIndex": 3})
    assert gates(steps)[0] == {
        "c1": {"type": "CardsRevealed", "cards": [revealed([1], 2, [3], None)]},
        "c2": {"type": "CardsRevealed", "cards": [revealed([1], 2, [3], [8])]},
        "c3": {"type": "CardsRevealed", "cards": [revealed([1], 2, [3], None)]},
    }
    assert len(gates(steps)) == 3  # then the next turn


@pytest.mark.parametrize("value", [11, 12])
def test_phase4b_discard_11_or_12(value: int) -> None:
    game = Script(HANDS, starter=1)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=value)
    steps = game.do("c2", {"type": "Discard"})
    assert gates(steps) == power_gates(value, ["PickOwnCard"])
    steps = game.do("c2", {"type": "PeekOwnCard", "cardIndex": 3})
    assert gates(steps) == [{"c2": {"type": "BoardUpdated", "actions": ["PickAnothersCard"]}}]
    steps = game.do("c2", {"type": "PeekAnothersCard", "playerIndex": 0, "cardIndex": 0})
    exchanged = {
        "type": "CardExchanged",
        "playerIndex": 1,
        "cardIndex": 3,
        "anotherPlayerIndex": 0,
        "anotherPlayerCardIndex": 0,
    }
    assert gates(steps)[0] == {p: exchanged for p in ALL}
    assert gates(steps)[1:] == turn_gates(
        "c3", 2, ["TakeCardFromDeck", "TakeDiscardedCard", "StopRound"]
    )
    assert game.state.hands[0] == (10, 2, 3, 4)
    assert game.state.hands[1] == (5, 5, 9, 1)


# -- phase 5 --------------------------------------------------------------------------------


def stop_and_play_out(game: Script, settle: tuple[int, ...] = ()) -> list[Any]:
    """C2 stops; C3 and C1 each draw a 13 and discard it; the round ends."""
    game.do("c2", {"type": "StopRound"})
    for player in ("c3", "c1"):
        game.do(player, {"type": "TakeCardFromDeck"}, draw=13)
        steps = game.do(player, {"type": "Discard"}, settle=settle if player == "c1" else ())
    return steps


def test_phase5_round_finished_and_the_game_continues() -> None:
    # c1 holds 10 (the unique lowest), c2 stops with 24, c3 holds 21
    game = Script([[1, 2, 3, 4], [5, 5, 6, 8], [0, 6, 7, 8]], starter=1)
    steps = stop_and_play_out(game)
    finished = {
        "type": "RoundFinished",
        "cards": [[1, 2, 3, 4], [5, 5, 6, 8], [0, 6, 7, 8]],
        "scores": [0, 29, 21],
        "totalScores": [0, 29, 21],
        "isGameFinished": False,
    }
    plain = {"type": "BoardUpdated", "deckSize": 38, "deckCard": None, "discardedValue": 13}
    assert gates(steps) == [
        {p: plain for p in ALL},
        {p: finished for p in ALL},
        {"c1": {"type": "BoardUpdated", "actions": ["StartNextRound"]}},
    ]
    assert game.actions("c1") == [{"type": "StartNextRound"}]
    assert game.actions("c2") == []
    # C1 starts the next round: phase 1 again (with a fresh deal), then phase 2 for C1
    game.set_mark()
    steps = game.do("c1", {"type": "StartNextRound"})
    kinds = [{p: m["type"] for p, m in g.items()} for g in gates(steps)]
    assert kinds == [
        dict.fromkeys(ALL, "BoardInitialized"),
        dict.fromkeys(ALL, "CardsRevealed"),
        {"c2": "BoardUpdated", "c3": "BoardUpdated"},
        {"c1": "BoardUpdated"},
    ]
    initialized = gates(steps)[0]["c1"]
    assert initialized["round"] == 2
    assert initialized["turn"] == 0
    assert initialized["deckSize"] == 40
    assert gates(steps)[3]["c1"]["activePlayerIndex"] == 0


def test_phase5_game_finished() -> None:
    game = Script([[1, 2, 3, 4], [5, 5, 6, 8], [0, 6, 7, 8]], starter=1, totals=[10, 40, 50])
    steps = stop_and_play_out(game)
    finished = {
        "type": "RoundFinished",
        "cards": [[1, 2, 3, 4], [5, 5, 6, 8], [0, 6, 7, 8]],
        "scores": [0, 29, 21],
        "totalScores": [10, 69, 71],
        "isGameFinished": True,
    }
    assert gates(steps)[1] == {p: finished for p in ALL}
    # then only the engine's end of the table (GameOver to all); nobody is prompted
    assert [set(g) for g in gates(steps)[2:]] == [ALL]
    assert {m["type"] for m in gates(steps)[2].values()} == {"GameOver"}
    assert game.local.state.status == "finished"
    outcome = game.local.outcome
    assert outcome is not None
    assert outcome.ranking == [["c1"], ["c2"], ["c3"]]
    assert outcome.details["winners"] == ["c1"]
