"""The rules of the 66 game (and the project's choices where they are open) other than scoring
and the powers: config, players, the deal, the turn, claims, stops, the end of a round, hostile
input, and whole random games through the engine (JSON round trips, replay)."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import pytest
from cardroom_engine import Rejection, Table
from cardroom_engine.simulate import play
from cardroom_games.sixtysix import GAME, STOP_ALREADY_REQUESTED, SixtySixConfig
from cardroom_games.sixtysix.cards import DECK_COUNTS, remaining_deck
from sixtysix_harness import Script, gates

HANDS = [[1, 2, 3, 4], [5, 5, 9, 10], [0, 6, 7, 8]]
PROTOCOLS = ["v2", "v1"]


def script(protocol: str, hands: list[list[int]] = HANDS, **kwargs: Any) -> Script:
    if protocol == "v1":
        kwargs.setdefault("discard", 2)
    return Script(hands, protocol=protocol, **kwargs)


# -- config and players ---------------------------------------------------------------------


def test_config_defaults_to_protocol_v2() -> None:
    assert GAME.name == "sixtysix"
    assert GAME.config_model.model_validate({}) == SixtySixConfig(protocol="v2")
    assert GAME.config_model.model_validate({"protocol": "v1"}) == SixtySixConfig(protocol="v1")


@pytest.mark.parametrize("config", [{"protocol": "v3"}, {"protocol": 2}, {"target": 100}])
def test_bad_config_is_refused(config: dict[str, Any]) -> None:
    with pytest.raises(Rejection) as exc:
        Table(GAME).create("g1", "a", config)
    assert exc.value.code == "bad_config"


@pytest.mark.parametrize("seats", [1, 6])
def test_two_to_five_players(seats: int) -> None:
    with pytest.raises(Rejection) as exc:
        Table(GAME).create("g1", "a", {}, seats=seats)
    assert exc.value.code == "bad_config"


# -- the deck and the deal ------------------------------------------------------------------


def test_the_deck_has_52_cards_worth_338() -> None:
    assert sum(DECK_COUNTS) == 52
    assert sum(v * c for v, c in enumerate(DECK_COUNTS)) == 338
    assert DECK_COUNTS[0] == DECK_COUNTS[13] == 2
    assert set(DECK_COUNTS[1:13]) == {4}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_round_deals_four_cards_from_a_fresh_deck(protocol: str) -> None:
    seen: Counter[int] = Counter()
    for seed in range(300):
        n = 2 + seed % 4
        state = GAME.setup(
            GAME.config_model.model_validate({"protocol": protocol}), [f"p{i}" for i in range(n)]
        )
        (event,) = GAME.start(state, random.Random(seed))
        assert event["type"] == "sixtysix.round_dealt"
        assert [len(h) for h in event["hands"]] == [4] * n
        assert (event["discard"] is not None) == (protocol == "v1")
        assert event["deck"] == remaining_deck(event["hands"], event["discard"])
        assert min(event["deck"]) >= 0
        assert sum(event["deck"]) == 52 - 4 * n - (protocol == "v1")
        assert 0 <= event["starter"] < n
        for hand in event["hands"]:
            seen.update(hand)
    total = sum(seen.values())
    for value, count in enumerate(DECK_COUNTS):  # roughly the deck's frequencies
        assert abs(seen[value] / total - count / 52) < 0.02


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_player_privately_sees_positions_0_and_1(protocol: str) -> None:
    game = script(protocol)
    assert game.view("c1")["hands"] == [[1, 2, None, None], [None] * 4, [None] * 4]
    assert game.view("c2")["hands"] == [[None] * 4, [5, 5, None, None], [None] * 4]
    assert game.view(None)["hands"] == [[None] * 4] * 3


def test_the_first_starter_is_random() -> None:
    starters = Counter(
        GAME.start(GAME.setup(SixtySixConfig(), ["a", "b", "c"]), random.Random(s))[0]["starter"]
        for s in range(60)
    )
    assert set(starters) == {0, 1, 2}


# -- turns ----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_turns_go_clockwise_and_only_the_active_player_may_move(protocol: str) -> None:
    game = script(protocol, starter=2)
    for turn, expected in enumerate((2, 0, 1, 2)):
        assert game.state.active == expected
        player = game.players[expected]
        for other in game.players:
            if other != player:
                assert game.actions(other) == []
                assert game.refuse(other, {"type": "TakeCardFromDeck"}).code == "not_your_turn"
        game.do(player, {"type": "TakeCardFromDeck"}, draw=(13, 13, 6, 6)[turn])
        game.do(player, {"type": "Discard"})


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stop_gives_every_other_player_exactly_one_more_turn(protocol: str) -> None:
    game = script(protocol, starter=1)
    assert {"type": "StopRound"} in game.actions("c2")  # allowed on the very first turn
    game.do("c2", {"type": "StopRound"})
    assert game.state.stopper == 1
    assert game.state.deck_size == (40 if protocol == "v2" else 39)  # the stopper drew nothing
    assert {"type": "StopRound"} not in game.actions("c3")
    assert game.refuse("c3", {"type": "StopRound"}).code == STOP_ALREADY_REQUESTED
    game.do("c3", {"type": "TakeCardFromDeck"}, draw=13)
    game.do("c3", {"type": "Discard"})
    assert game.state.active == 0
    game.do("c1", {"type": "TakeCardFromDeck"}, draw=13)
    game.do("c1", {"type": "Discard"})
    assert game.state.phase == "round_over"  # c2 does not play again
    assert game.state.scores is not None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_round_ends_when_the_deck_runs_out(protocol: str) -> None:
    deck = [0] * 14
    deck[13] = 1  # a single card left
    game = script(protocol, deck=deck)
    assert game.view("c1")["deckSize"] == 1
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=13)
    steps = game.do("c2", {"type": "Discard"})
    kinds = {m["type"] for gate in gates(steps) for m in gate.values()}
    assert kinds & {"RoundFinished", "GameFinished"}
    assert game.state.deck_size == 0
    assert game.state.turn == 1


def test_v2_others_cannot_tell_a_deck_draw_from_taking_the_discard() -> None:
    game = Script(HANDS, starter=0)
    game.do("c1", {"type": "TakeCardFromDeck"}, draw=3)
    game.do("c1", {"type": "Discard"})
    before = {p: game.view(p) for p in ("c1", "c3", None)}
    game.do("c2", {"type": "TakeDiscardedCard"})
    assert {p: game.view(p) for p in ("c1", "c3", None)} == before
    game2 = Script(HANDS, starter=0)
    game2.do("c1", {"type": "TakeCardFromDeck"}, draw=3)
    game2.do("c1", {"type": "Discard"})
    game2.do("c2", {"type": "TakeCardFromDeck"}, draw=12)
    assert {p: game2.view(p) for p in ("c1", "c3", None)} == before
    drawer = game2.view("c2")
    assert drawer["deckCard"] == 12
    assert drawer["deckSize"] == before["c1"]["deckSize"] - 1
    assert drawer["actions"] == ["PickOwnCard", "Discard", "ShowCards"]


# -- claims ---------------------------------------------------------------------------------


def test_v2_a_successful_claim_keeps_the_lowest_position_and_shifts_the_rest() -> None:
    game = Script([[1, 2, 3, 4], [5, 3, 5, 5], [0, 6, 7, 8]])
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=1)
    game.do("c2", {"type": "ShowCards", "cardIndexes": [3, 0, 2]})
    assert game.state.hands[1] == (1, 3)
    assert game.state.discard == 5
    assert game.state.deck_size == 39
    assert game.view("c2")["hands"][1] == [1, 3]  # the card it drew; its old card 1
    assert game.view("c1")["hands"][1] == [None, None]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_claim_of_four_leaves_one_card_and_no_more_claims(protocol: str) -> None:
    game = script(protocol, [[1, 2, 3, 4], [6, 6, 6, 6], [0, 6, 7, 8]])
    if protocol == "v2":
        game.do("c2", {"type": "TakeCardFromDeck"}, draw=0)
        game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 1, 2, 3]})
    else:
        game.do("c2", {"type": "ShowCards", "cardIndexes": [0, 1, 2, 3]})
        game.do("c2", {"type": "ReplaceCardsFromDeck"}, draw=0)
    assert game.state.hands[1] == (0,)
    # next time round, c2 has one card: nothing to claim
    for player in ("c3", "c1"):
        game.do(player, {"type": "TakeCardFromDeck"}, draw=13)
        game.do(player, {"type": "Discard"})
    if protocol == "v2":
        game.do("c2", {"type": "TakeCardFromDeck"}, draw=1)
    assert all(a["type"] != "ShowCards" for a in game.actions("c2"))
    exc = game.refuse("c2", {"type": "ShowCards", "cardIndexes": [0, 0]})
    assert exc.code == "illegal_move"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_failed_claim_shows_the_cards_to_the_others_not_to_the_claimer(
    protocol: str,
) -> None:
    game = script(protocol)
    if protocol == "v2":
        game.do("c2", {"type": "TakeCardFromDeck"}, draw=4)
    game.do("c2", {"type": "ShowCards", "cardIndexes": [2, 3]})
    assert game.state.hands[1] == (5, 5, 9, 10)
    assert game.view("c1")["hands"][1] == [None, None, 9, 10]
    assert game.view("c3")["hands"][1] == [None, None, 9, 10]
    assert game.view("c2")["hands"][1] == [5, 5, None, None]
    assert game.state.active == 2  # the turn is over, at no other cost
    if protocol == "v2":
        assert game.state.discard == 4  # the drawn card is discarded
    else:
        assert game.state.discard == 2
        assert game.state.deck_size == 39


# -- hostile input --------------------------------------------------------------------------

V2_READY_REFUSALS: list[tuple[Any, str]] = [
    ({"type": "Nope"}, "unknown_command"),
    ({"type": 3}, "unknown_command"),
    ({}, "unknown_command"),
    ({"type": "ReplaceCardByDiscarded", "cardIndex": 0}, "unknown_command"),  # v1 only
    ({"type": "ExchangeCards"}, "unknown_command"),
    ({"type": "PickOwnCard", "cardIndex": 0}, "illegal_move"),
    ({"type": "Discard"}, "illegal_move"),
    ({"type": "ShowCards", "cardIndexes": [0, 1]}, "illegal_move"),
    ({"type": "TakeDiscardedCard"}, "illegal_move"),  # nothing discarded yet
    ({"type": "StartNextRound"}, "illegal_move"),
    ({"type": "PickAnothersCard", "playerIndex": 0, "cardIndex": 0}, "illegal_move"),
]


@pytest.mark.parametrize(("command", "code"), V2_READY_REFUSALS)
def test_v2_refusals_at_the_start_of_a_turn(command: dict[str, Any], code: str) -> None:
    assert Script(HANDS).refuse("c2", command).code == code


def v2_holding_a_deck_card() -> Script:
    game = Script(HANDS)
    game.do("c2", {"type": "TakeCardFromDeck"}, draw=4)
    return game


BAD_FIELDS: list[tuple[Any, str]] = [
    ({"type": "PickOwnCard"}, "bad_request"),
    ({"type": "PickOwnCard", "cardIndex": None}, "bad_request"),
    ({"type": "PickOwnCard", "cardIndex": True}, "bad_request"),
    ({"type": "PickOwnCard", "cardIndex": "1"}, "bad_request"),
    ({"type": "PickOwnCard", "cardIndex": 1.0}, "bad_request"),
    ({"type": "PickOwnCard", "cardIndex": [1]}, "bad_request"),
    ({"type": "PickOwnCard", "cardIndex": 4}, "illegal_move"),
    ({"type": "PickOwnCard", "cardIndex": -1}, "illegal_move"),
    ({"type": "PickOwnCard", "cardIndex": 2**63 - 1}, "illegal_move"),
    ({"type": "PickOwnCard", "cardIndex": 2**63}, "bad_request"),  # beyond 64 bits
    ({"type": "ShowCards", "cardIndexes": [0, 1] * 40}, "bad_request"),  # no hand so long
    ({"type": "ShowCards"}, "bad_request"),
    ({"type": "ShowCards", "cardIndexes": "01"}, "bad_request"),
    ({"type": "ShowCards", "cardIndexes": [0, False]}, "bad_request"),
    ({"type": "ShowCards", "cardIndexes": {"0": 1}}, "bad_request"),
    ({"type": "ShowCards", "cardIndexes": []}, "illegal_move"),
    ({"type": "ShowCards", "cardIndexes": [1]}, "illegal_move"),
    ({"type": "ShowCards", "cardIndexes": [1, 1]}, "illegal_move"),
    ({"type": "ShowCards", "cardIndexes": [0, 1, 2, 3, 0]}, "illegal_move"),
    ({"type": "ShowCards", "cardIndexes": [0, 4]}, "illegal_move"),
    ({"type": "ShowCards", "cardIndexes": [-1, 0]}, "illegal_move"),
    ({"type": "TakeCardFromDeck"}, "illegal_move"),
    ({"type": "StopRound"}, "illegal_move"),
    ({"type": "PeekOwnCard", "cardIndex": 0}, "illegal_move"),
]


@pytest.mark.parametrize(("command", "code"), BAD_FIELDS)
def test_v2_refusals_while_holding_a_deck_card(command: dict[str, Any], code: str) -> None:
    game = v2_holding_a_deck_card()
    exc = game.refuse("c2", command)
    assert exc.code == code
    assert not re.search(r"\d", exc.message), "a refusal must not echo card values"


V1_REFUSALS: list[tuple[Any, str]] = [
    ({"type": "TakeDiscardedCard"}, "unknown_command"),  # v2 only
    ({"type": "PickOwnCard", "cardIndex": 0}, "unknown_command"),
    ({"type": "ReplaceCardByDiscarded"}, "bad_request"),
    ({"type": "ReplaceCardByDiscarded", "cardIndex": 4}, "illegal_move"),
    ({"type": "ReplaceCardFromDeck", "cardIndex": 0}, "illegal_move"),
    ({"type": "ReplaceCardsFromDeck"}, "illegal_move"),
    ({"type": "ReplaceCardsByDiscarded"}, "illegal_move"),
    ({"type": "Discard"}, "illegal_move"),
    ({"type": "ShowCards", "cardIndexes": [3, 3]}, "illegal_move"),
    ({"type": "PeekOwnCard", "cardIndex": 0}, "illegal_move"),
    ({"type": "ExchangeCards", "cardIndex": 0}, "illegal_move"),
]


@pytest.mark.parametrize(("command", "code"), V1_REFUSALS)
def test_v1_refusals_at_the_start_of_a_turn(command: dict[str, Any], code: str) -> None:
    exc = Script(HANDS, protocol="v1", discard=2).refuse("c2", command)
    assert exc.code == code
    assert not re.search(r"\d", exc.message)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_refusals_out_of_turn_and_after_the_round(protocol: str) -> None:
    game = script(protocol)
    assert game.refuse("c1", {"type": "StopRound"}).code == "not_your_turn"
    assert game.refuse("c1", {"type": "StartNextRound"}).code == "not_your_turn"
    game.do("c2", {"type": "StopRound"})
    for player in ("c3", "c1"):
        game.do(player, {"type": "TakeCardFromDeck"}, draw=13)
        game.do(player, {"type": "Discard"})
    starter = game.players[game.state.next_starter or 0]
    for player in game.players:
        if player != starter:
            assert game.refuse(player, {"type": "StartNextRound"}).code == "not_your_turn"
    assert game.refuse(starter, {"type": "TakeCardFromDeck"}).code == "illegal_move"


# -- whole games ----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_random_games_finish_through_the_engine(protocol: str, players: int) -> None:
    seats = [f"p{i}" for i in range(players)]
    for seed in range(8):
        local = play(GAME, seats, random.Random(seed), {"protocol": protocol})
        outcome = local.outcome
        assert outcome is not None
        totals = outcome.details["totalScores"]
        assert max(totals) > 66
        assert outcome.details["winners"] == [
            p for p, t in zip(seats, totals, strict=True) if t == min(totals)
        ]
        assert outcome.ranking[0] == outcome.details["winners"]
        # the event log replays to the same state (events went through JSON in play())
        events = [step.event for step in local.steps]
        assert local.table.replay(events) == local.state


def test_the_same_seed_plays_the_same_game() -> None:
    def events(seed: int) -> list[dict[str, Any]]:
        local = play(GAME, ["a", "b", "c"], random.Random(seed), {"protocol": "v1"})
        return [step.event for step in local.steps]

    assert events(5) == events(5)
    assert events(5) != events(6)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_listed_action_is_accepted(protocol: str) -> None:
    """At every decision of random games, each action the game lists passes decide."""
    rng = random.Random(11)
    for seed in range(12):
        seats = ["a", "b", "c"]
        state = GAME.setup(GAME.config_model.model_validate({"protocol": protocol}), seats)
        for event in GAME.start(state, rng):
            state = GAME.evolve(state, event)
        decisions = 0
        while not state.finished and decisions < 300:
            while events := GAME.follow_up(state, rng):
                for event in events:
                    state = GAME.evolve(state, event)
            if state.finished:
                break
            mover = state.mover()
            assert mover is not None
            actions = GAME.actions(state, seats[mover])
            assert actions
            assert GAME.view(state, seats[mover])["actions"] == list(
                dict.fromkeys(a["type"] for a in actions)
            )
            for action in actions:
                assert GAME.decide(state, seats[mover], action, random.Random(seed))
            for event in GAME.decide(state, seats[mover], rng.choice(actions), rng):
                state = GAME.evolve(state, event)
            decisions += 1


def test_no_deadlines_and_no_outcome_while_playing() -> None:
    game = Script(HANDS)
    assert GAME.deadline(game.state) is None
    assert GAME.outcome(game.state) is None
    assert game.local.outcome is None
