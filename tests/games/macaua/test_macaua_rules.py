"""Macaua's rules (and the project's choices where they are open) through the real protocol:
rigged deals, real keys, real signatures; every play is revealed by its owner's key and judged
by the server."""

from __future__ import annotations

import pytest
from cardroom_games.macaua import check_play, legal_first, play_challenge
from cardroom_wire import ErrorCode
from macaua_support import SHORT_PILE_HANDS, Harness, rigged_game

FRESH10 = ["4D", "4H", "4S", "4C", "5D", "5H", "5S", "6D", "6H", "6S"]


def test_matching_rules_on_codes() -> None:
    assert legal_first("9S", "7S", None, 0)  # suit
    assert legal_first("7H", "7S", None, 0)  # rank
    assert not legal_first("9H", "7S", None, 0)
    assert legal_first("AH", "7S", None, 0)
    assert legal_first("RJ", "7S", None, 0)
    assert legal_first("9H", "BJ", None, 0)  # anything on a Joker
    assert legal_first("9C", "AS", "C", 0)
    assert not legal_first("9S", "AS", "C", 0)
    assert legal_first("AD", "AS", "C", 0)  # an Ace on a declared suit
    # a challenge: only 2, 3, Joker, whatever the suit; never an Ace
    assert legal_first("3H", "2S", None, 2)
    assert legal_first("BJ", "2S", None, 2)
    assert not legal_first("AS", "2S", None, 2)
    assert not legal_first("9S", "2S", None, 2)
    assert play_challenge(["2S", "2H"]) == 4
    assert play_challenge(["RJ"]) == 5
    assert (
        check_play(["5H", "9H"], "9H", None, 0, None) == "cards played together must share one rank"
    )
    assert check_play(["AH"], "9S", None, 0, None) is not None  # an Ace must declare
    assert check_play(["9S"], "9H", None, 0, "S") == "only an Ace declares a suit"


def test_challenges_add_up_and_the_loser_draws_them_all() -> None:
    h = rigged_game([["2S", "3S", "BJ", "KH", "AD"], ["2H", "3H", "RJ", "5C", "6C"]], "7S", FRESH10)
    assert h.game.challenge == 0
    h.play("p0", ["2S"])
    assert h.game.challenge == 2
    assert h.refused("p1", h.play_command("p1", ["5C"])) == ErrorCode.ILLEGAL_MOVE
    h.play("p1", ["3H"])  # a 3 of another suit counters a 2
    assert h.game.challenge == 5
    assert h.refused("p0", h.play_command("p0", ["AD"], "S")) == ErrorCode.ILLEGAL_MOVE
    h.play("p0", ["BJ"])
    assert h.game.challenge == 10
    h.draw("p1")  # the whole challenge; the draw ends the turn
    assert h.game.challenge == 0
    assert h.game.waiting == ("p0",)
    assert h.table.actions(h.local.state, "p1") == []  # a drawn card is not played now
    assert h.hand("p1") == sorted(["2H", "RJ", "5C", "6C", *FRESH10])
    assert h.gview("p0")["hand_counts"] == {"p0": 3, "p1": 14}


def test_several_cards_of_one_rank() -> None:
    h = rigged_game([["5H", "5S", "5D", "9C", "KD"], ["2C", "3C", "6C", "7C", "8C"]], "9H")
    assert h.refused("p0", h.play_command("p0", ["5S", "5H"])) == ErrorCode.ILLEGAL_MOVE
    assert h.refused("p0", h.play_command("p0", ["5H", "9C"])) == ErrorCode.ILLEGAL_MOVE
    h.play("p0", ["5H", "5S", "5D"])  # the first matches; the last sets the suit
    assert h.game.discard[-3:] == ("5H", "5S", "5D")
    assert h.hand("p0") == ["9C", "KD"]
    assert h.refused("p1", h.play_command("p1", ["6C"])) == ErrorCode.ILLEGAL_MOVE
    h.draw("p1")
    h.play("p0", ["KD"])  # diamonds now


def test_aces_declare_a_suit() -> None:
    h = rigged_game([["AD", "AH", "9C", "KD", "QS"], ["5C", "6H", "AS", "7H", "8H"]], "7S")
    assert h.refused("p0", h.play_command("p0", ["AD"])) == ErrorCode.ILLEGAL_MOVE  # no suit
    assert h.refused("p0", h.play_command("p0", ["9C"], "H")) == ErrorCode.ILLEGAL_MOVE
    h.play("p0", ["AD"], "C")  # an Ace on anything
    assert h.game.declared == "C"
    assert h.gview(None)["declared"] == "C"
    assert h.refused("p1", h.play_command("p1", ["6H"])) == ErrorCode.ILLEGAL_MOVE
    h.play("p1", ["AS"], "H")  # an Ace on an Ace
    h.play("p0", ["AH"], "C")
    h.play("p1", ["5C"])  # the declared suit
    assert h.game.declared is None


def test_jokers_go_on_anything_and_anything_on_them() -> None:
    h = rigged_game([["BJ", "KH", "9C", "QD", "QS"], ["2C", "3C", "6C", "7C", "8C"]], "7S", FRESH10)
    h.play("p0", ["BJ"])
    assert h.game.challenge == 5
    h.draw("p1")
    assert len(h.hand("p1")) == 10
    h.play("p0", ["KH"])  # anything on the Joker once its challenge is drawn


def test_the_initial_card_has_no_effect() -> None:
    h = rigged_game([["9S", "KH", "9C", "QD", "QS"], ["2C", "3C", "6C", "7C", "8C"]], "2S")
    assert h.game.challenge == 0
    h.play("p0", ["9S"])


def test_win_on_an_empty_hand_then_the_audit() -> None:
    h = rigged_game([["KH"], ["2C"]], "7H", config={"hand_size": 1})
    h.play("p0", ["KH"])
    assert h.game.winner == "p0"
    assert h.game.phase == "audit"
    assert h.local.outcome is None  # the keys are not all published yet
    h.finish()
    outcome = h.local.outcome
    assert outcome is not None
    assert outcome.ranking == [["p0"], ["p1"]]
    assert outcome.details["result"] == "won"
    assert outcome.details["audit"]["ok"] is True


def test_reshuffle_of_the_discard_pile_mid_draw() -> None:
    hands = [list(hand) for hand in SHORT_PILE_HANDS]
    fresh = ["4H", "4S", "5C", "5D", "5H"]
    h = rigged_game(hands, "5S", fresh, config={"hand_size": 8, "max_turns": 40})
    assert len(h.game.fresh) == 5
    h.play("p0", ["BJ", "RJ"])
    assert h.game.challenge == 10
    h.draw("p1")  # 5 from the fresh pile, then 5S + BJ re-shuffled as deck 1, then nothing
    assert len(h.game.decks) == 2
    assert sorted(h.game.decks[1].cards) == ["5S", "BJ"]
    assert h.game.discard == ("RJ",)
    assert h.hand("p1") == sorted([*hands[1], *fresh, "5S", "BJ"])
    assert h.game.waiting == ("p2",)
    h.finish()
    outcome = h.local.outcome
    assert outcome is not None
    assert outcome.details["audit"]["ok"] is True
    assert len(outcome.details["audit"]["decks"]) >= 2


@pytest.mark.parametrize("players", [2, 4, 6])
def test_bots_finish_games(players: int) -> None:
    h = Harness(players, seed=players)
    h.finish()
    outcome = h.local.outcome
    assert outcome is not None
    assert outcome.details["audit"]["ok"] is True
    assert sorted(p for group in outcome.ranking for p in group) == h.seats


def test_moves_are_bound_to_the_tables_game_id() -> None:
    import random as _random

    from cardroom_engine import Table
    from cardroom_games.macaua import GAME as MACAUA

    table = Table(MACAUA)
    rng = _random.Random(5)
    events = table.create("g-bound", "a", {"shuffle_rounds": 0}, seats=2, key="a" * 64)
    state = table.replay(events)
    events += table.join(state, "b", rng, key="b" * 64)
    state = table.replay(events)
    assert state.status == "playing"
    assert state.game.table == "g-bound"
    assert state.game.binding.startswith("g-bound/")
    assert len(state.game.binding) == len("g-bound/") + 32
