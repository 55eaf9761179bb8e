"""Hostile commands: refused with a stable code, nothing changes, nothing hidden is told."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from cardroom_engine import Rejection
from cardroom_engine.simulate import new_game
from cardroom_games.papas import COMMAND_TYPES, GAME
from cardroom_games.papas.state import PapasState
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from papas_testkit import Harness, make_state

CODES = {
    "bad_request",
    "unknown_command",
    "not_your_turn",
    "illegal_move",
    "card_not_in_hand",
    "not_playable",
    "invalid_threesome",
    "bad_target",
    "reaction_closed",
    "already_interrupted",
    "already_skipped",
    "not_an_interrupt",
    "cannot_cancel_threesome",
    "unknown_token",
    "unknown_card_name",
    "discard_and_draw_unavailable",
    "wrong_state",
}


def position() -> Harness:
    return Harness(
        make_state(
            {
                "a": ["potato", "potato", "potato", "harry_potato", "no_dude"],
                "b": ["no_dude", "wildcard", "look_ahead"],
                "c": ["french_fries"],
            }
        )
    )


@pytest.mark.parametrize(
    ("player", "command", "code"),
    [
        ("a", {}, "bad_request"),
        ("a", {"type": 3}, "bad_request"),
        ("a", {"type": None}, "bad_request"),
        ("a", {"type": "Teleport"}, "unknown_command"),
        ("a", {"type": "playcard", "card": 0}, "unknown_command"),
        ("a", {"type": "PlayCard"}, "bad_request"),
        ("a", {"type": "PlayCard", "card": "67"}, "bad_request"),
        ("a", {"type": "PlayCard", "card": 67.0}, "bad_request"),
        ("a", {"type": "PlayCard", "card": True}, "bad_request"),
        ("a", {"type": "PlayCard", "card": None}, "bad_request"),
        ("a", {"type": "PlayCard", "card": [67]}, "bad_request"),
        ("a", {"type": "PlayCard", "card": 67, "extra": 1}, "bad_request"),
        ("a", {"type": "PlayCard", "card": -1}, "card_not_in_hand"),
        ("a", {"type": "PlayCard", "card": 103}, "card_not_in_hand"),
        ("a", {"type": "PlayCard", "card": 2**63 - 1}, "card_not_in_hand"),
        ("a", {"type": "PlayCard", "card": 10**30}, "bad_request"),  # beyond 64 bits
        ("a", {"type": "PlayCard", "card": 80}, "card_not_in_hand"),  # b's look ahead
        ("a", {"type": "PlayCard", "card": 0}, "not_playable"),  # a potato
        ("b", {"type": "PlayCard", "card": 80}, "not_your_turn"),
        ("b", {"type": "EndTurn"}, "not_your_turn"),
        ("a", {"type": "EndTurn", "now": True}, "bad_request"),
        ("a", {"type": "PlayThreesome", "cards": [0, 1]}, "bad_request"),
        ("a", {"type": "PlayThreesome", "cards": [0, 1, 1]}, "bad_request"),
        ("a", {"type": "PlayThreesome", "cards": [0, 1, "2"]}, "bad_request"),
        ("a", {"type": "PlayThreesome", "cards": "0,1,2"}, "bad_request"),
        ("a", {"type": "PlayThreesome", "cards": [0, 1, 33]}, "card_not_in_hand"),
        ("a", {"type": "PlayThreesome", "cards": [0, 1, 67]}, "invalid_threesome"),
        ("a", {"type": "SelectTargets", "targets": ["b"]}, "wrong_state"),
        ("a", {"type": "SelectTargets", "targets": "b"}, "bad_request"),
        ("a", {"type": "SelectTargets", "targets": []}, "bad_request"),
        ("a", {"type": "SelectTargets", "targets": ["b", "c", "a"]}, "bad_request"),
        ("b", {"type": "SkipReaction", "window": 0}, "reaction_closed"),
        ("b", {"type": "SkipReaction", "window": "1"}, "bad_request"),
        ("b", {"type": "PlayInterrupt", "window": 1}, "bad_request"),
        ("a", {"type": "SelectCard", "token": "00"}, "wrong_state"),
        ("a", {"type": "SelectCard", "token": ""}, "bad_request"),
        ("a", {"type": "SelectCard", "token": "x" * 65}, "bad_request"),
        ("a", {"type": "SelectCardName", "name": "potato"}, "wrong_state"),
        ("a", {"type": "DiscardCard", "card": 0}, "wrong_state"),
        ("a", {"type": "DiscardAndDraw"}, "discard_and_draw_unavailable"),
        ("zed", {"type": "EndTurn"}, "not_your_turn"),
    ],
)
def test_bad_commands_are_refused_with_stable_codes(
    player: str, command: dict[str, Any], code: str
) -> None:
    h = position()
    snapshot = json.dumps(h.state)
    h.refuse(player, command, code)
    assert json.dumps(h.state) == snapshot


def test_refusals_do_not_depend_on_where_a_foreign_card_is() -> None:
    h = position()
    elsewhere = {
        "in b's hand": h.hand("b")[2],
        "in c's hand": h.hand("c")[0],
        "in the deck": h.state.deck[0],
        "out of range": 500,
    }
    answers = set()
    for card in elsewhere.values():
        for command in (
            {"type": "PlayCard", "card": card},
            {"type": "PlayThreesome", "cards": [h.hand("a")[0], h.hand("a")[1], card]},
        ):
            with pytest.raises(Rejection) as info:
                GAME.decide(h.state, "a", command, h.rng)
            answers.add((command["type"], info.value.code, info.value.message))
    assert len(answers) == 2  # one answer per command type, wherever the card is


def test_a_refused_command_through_the_table_appends_nothing() -> None:
    rng = random.Random(4)
    local = new_game(GAME, ["a", "b"], rng)
    before = local.state
    steps = len(local.steps)
    for command in ({"type": "PlayCard", "card": 999}, {"type": "Nope"}, {"type": "EndTurn"}):
        player = "a" if command["type"] != "EndTurn" else "b"
        with pytest.raises(Rejection):
            local.table.decide(local.state, player, command, rng, gate_open=True)
    assert local.state == before
    assert len(local.steps) == steps


def _positions() -> list[PapasState]:
    """Positions in every state of the machine, from random play."""
    from cardroom_engine.simulate import play

    found: dict[tuple[str, bool], PapasState] = {}
    for seed in range(8):
        local = play(GAME, ["a", "b", "c"], random.Random(seed), {"win_threshold": 4})
        table_state = None
        for step in local.steps:
            table_state = local.table.evolve(table_state, step.event)
            game = table_state.game
            if game is not None:
                found.setdefault((game.phase, bool(game.selection)), game)
    return list(found.values())


POSITIONS = _positions()

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=70),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
field_names = st.sampled_from(["card", "cards", "targets", "window", "token", "name", "type", "x"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(min_value=0, max_value=len(POSITIONS) - 1),
    player=st.sampled_from(["a", "b", "c"]),
    kind=st.sampled_from([*COMMAND_TYPES, "Other", ""]) | st.text(max_size=12),
    fields=st.dictionaries(field_names, json_values | st.integers(0, 110), max_size=3),
)
def test_any_command_is_either_legal_or_refused_with_a_known_code(
    index: int, player: str, kind: str, fields: dict[str, Any]
) -> None:
    state = POSITIONS[index]
    command = {**fields, "type": kind}
    rng = random.Random(0)
    refusal: Rejection | None = None
    events: list[dict[str, Any]] = []
    try:
        events = GAME.decide(state, player, command, rng)
    except Rejection as exc:
        refusal = exc
    if refusal is not None:
        assert refusal.code in CODES
        assert len(refusal.message) < 200
        return
    assert kind in COMMAND_TYPES
    for event in events:  # an accepted command evolves cleanly
        state = GAME.evolve(state, json.loads(json.dumps(event)))


def test_every_listed_action_is_accepted_in_every_state() -> None:
    for state in POSITIONS:
        for player in state.seats:
            for action in GAME.actions(state, player):
                events = GAME.decide(state, player, action, random.Random(1))
                assert events, action
