"""Bad commands: refused with stable codes, messages that reveal nothing, state unchanged."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from cardroom_engine import Rejection, Table
from cardroom_games.take5 import ALREADY_PLAYED, GAME
from take5_support import apply_all, make_state, play_cmd, settle

RNG = random.Random(11)


def _play_state() -> Any:
    # a: 5, 33, 50   b: 21, 60, 61   c: 2, 44, 45; b has already played 60
    state = make_state([(10,), (20,), (30,), (40,)], [(5, 33, 50), (21, 60, 61), (2, 44, 45)])
    return apply_all(state, GAME.decide(state, "b", play_cmd(60), RNG))


def _choose_state() -> Any:
    state = make_state([(10,), (20,), (30,), (40,)], [(5, 33), (21, 60)])
    for player, face in (("a", 5), ("b", 21)):
        state = apply_all(state, GAME.decide(state, player, play_cmd(face), RNG))
    state, _ = settle(state, RNG)
    assert state.phase == "choose"
    assert state.chooser == 0
    return state


PLAY_CASES: list[tuple[str, Any, str]] = [
    ("a", {}, "bad_request"),
    ("a", {"type": 3}, "bad_request"),
    ("a", {"type": None, "data": "A"}, "bad_request"),
    ("a", {"type": "take_row"}, "unknown_command"),
    ("a", {"type": "register_request", "data": None}, "unknown_command"),
    ("a", {"type": "play_response"}, "bad_request"),
    ("a", {"type": "play_response", "data": None}, "bad_request"),
    ("a", {"type": "play_response", "data": 5}, "bad_request"),
    ("a", {"type": "play_response", "data": [5, 2]}, "bad_request"),
    ("a", {"type": "play_response", "data": {"face": 5}}, "bad_request"),
    ("a", {"type": "play_response", "data": {"face": "5", "bull": 2}}, "bad_request"),
    ("a", {"type": "play_response", "data": {"face": 5.0, "bull": 2}}, "bad_request"),
    ("a", {"type": "play_response", "data": {"face": True, "bull": 1}}, "bad_request"),
    ("a", {"type": "play_response", "data": {"face": 5, "bull": None}}, "bad_request"),
    ("a", {"type": "play_response", "data": {"face": 21, "bull": 1}}, "illegal_move"),  # b's
    ("a", {"type": "play_response", "data": {"face": 60, "bull": 3}}, "illegal_move"),  # played
    ("a", {"type": "play_response", "data": {"face": 99, "bull": 5}}, "illegal_move"),  # deck
    ("a", {"type": "play_response", "data": {"face": 5, "bull": 1}}, "illegal_move"),  # bull
    ("a", {"type": "play_response", "data": {"face": -5, "bull": 2}}, "illegal_move"),
    ("a", {"type": "play_response", "data": {"face": 2**63 - 1, "bull": 2}}, "illegal_move"),
    ("a", {"type": "play_response", "data": {"face": 10**30, "bull": 2}}, "bad_request"),
    ("a", {"type": "play_response", "data": {"face": 10, "bull": 3}}, "illegal_move"),  # row
    ("b", play_cmd(61), ALREADY_PLAYED),
    ("zed", play_cmd(5), "not_your_turn"),
    ("a", {"type": "choose_response", "data": "A"}, "not_your_turn"),
    ("a", {"type": "choose_response", "data": "E"}, "bad_request"),
]


@pytest.mark.parametrize(("actor", "command", "code"), PLAY_CASES)
def test_bad_commands_while_playing(actor: str, command: Any, code: str) -> None:
    state = _play_state()
    before = copy.deepcopy(state)
    with pytest.raises(Rejection) as refused:
        GAME.decide(state, actor, command, RNG)
    assert refused.value.code == code
    assert state == before


CHOOSE_CASES: list[tuple[str, Any, str]] = [
    ("a", {"type": "choose_response"}, "bad_request"),
    ("a", {"type": "choose_response", "data": "E"}, "bad_request"),
    ("a", {"type": "choose_response", "data": "a"}, "bad_request"),
    ("a", {"type": "choose_response", "data": 0}, "bad_request"),
    ("a", {"type": "choose_response", "data": ["A"]}, "bad_request"),
    ("a", {"type": "choose_response", "data": None}, "bad_request"),
    ("b", {"type": "choose_response", "data": "A"}, "not_your_turn"),
    ("zed", {"type": "choose_response", "data": "A"}, "not_your_turn"),
    ("a", play_cmd(33), "not_your_turn"),
    ("b", play_cmd(60), "not_your_turn"),
]


@pytest.mark.parametrize(("actor", "command", "code"), CHOOSE_CASES)
def test_bad_commands_while_choosing(actor: str, command: Any, code: str) -> None:
    state = _choose_state()
    before = copy.deepcopy(state)
    with pytest.raises(Rejection) as refused:
        GAME.decide(state, actor, command, RNG)
    assert refused.value.code == code
    assert state == before


def test_refusals_do_not_tell_whose_card_it_is() -> None:
    state = _play_state()
    messages = set()
    for face in (21, 44, 60, 99, 1):  # b's, c's, b's play, in the deck, undealt
        with pytest.raises(Rejection) as refused:
            GAME.decide(state, "a", play_cmd(face), RNG)
        messages.add((refused.value.code, refused.value.message))
    assert messages == {("illegal_move", "that card is not in your hand")}


def test_nothing_is_accepted_between_turns_or_after_the_end() -> None:
    state = make_state([(10,), (20,), (30,), (40,)], [(5,), (21,)], config={"turn_count": 1})
    for player, face in (("a", 5), ("b", 21)):
        state = apply_all(state, GAME.decide(state, player, play_cmd(face), RNG))
    assert state.phase == "resolve"
    for player, command in (("a", play_cmd(5)), ("b", {"type": "choose_response", "data": "A"})):
        with pytest.raises(Rejection) as refused:
            GAME.decide(state, player, command, RNG)
        assert refused.value.code == "not_your_turn"


def test_the_table_refuses_commands_while_the_gate_is_closed() -> None:
    table = Table(GAME)
    rng = random.Random(2)
    events = table.create("g1", "a", {}, seats=2)
    events += table.join(table.replay(events), "b", rng)
    state = table.replay(events)
    state = table.replay([*events, *table.follow_up(state, rng)])  # play_request sent
    hand = state.game.hands[0]
    with pytest.raises(Rejection) as refused:
        table.decide(state, "a", play_cmd(hand[0]), rng, gate_open=False)
    assert refused.value.code == "awaiting_acks"
    assert table.decide(state, "a", play_cmd(hand[0]), rng, gate_open=True)
