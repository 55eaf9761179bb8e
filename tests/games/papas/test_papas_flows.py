"""The state machine's key game-flow paths, scripted: the states every player is told, in order."""

from __future__ import annotations

from cardroom_games.papas.cards import CARD_NAME
from papas_testkit import Harness, make_state


def told(h: Harness, player: str, start: int = 0) -> list[tuple[str, str]]:
    """(message type, state after it) of every message ``player`` received since ``start``."""
    return [
        (notes[player]["type"], notes[player]["state"])
        for _, notes in h.log[start:]
        if player in notes
    ]


def test_normal_turn_flow() -> None:
    # PlayerTurn -> (Play Card) -> ReactionPhase -> (No Interrupt) -> ActionResolution
    # -> PlayerTurn (not an alarm) ... -> NextPlayer (alarm) -> PlayerTurn (next player)
    h = Harness(make_state({"a": ["potato_of_the_year", "harry_potato"], "b": ["potato"]}))
    h.play("a", "potato_of_the_year")
    h.skip_all()
    h.play("a", "harry_potato")
    h.skip_all()
    assert told(h, "a") == [
        ("PlayCard", "ReactionPhase"),
        ("NoInterrupt", "ActionResolution"),
        ("ActionResolved", "PlayerTurn"),
        ("PlayCard", "ReactionPhase"),
        ("NoInterrupt", "ActionResolution"),
        ("ActionResolved", "NextPlayer"),
        ("DrawCard", "NextPlayer"),
        ("NextTurn", "PlayerTurn"),
    ]
    assert told(h, "b")[-1] == ("NextTurn", "PlayerTurn")
    assert h.log[-1][1]["b"]["active"] == "b"


def test_action_card_with_target_flow() -> None:
    # PlayerTurn -> TargetSelection -> ReactionPhase -> CardSelection / CardNameSelection
    # -> ActionResolution -> PlayerTurn
    h = Harness(make_state({"a": ["lend_me_a_buck", "pope_potato"], "b": ["potato", "potato"]}))
    h.play("a", "lend_me_a_buck", "b")
    h.skip_all()
    token = h.last("papas.selection_offered")["options"][0][0]
    h.do("a", {"type": "SelectCard", "token": token})
    h.play("a", "pope_potato", "b")
    h.skip_all()
    h.do("a", {"type": "SelectCardName", "name": "potato"})
    assert told(h, "b") == [
        ("PlayCard", "TargetSelection"),
        ("SelectTargets", "ReactionPhase"),
        ("SkipReaction", "ReactionPhase"),
        ("NoInterrupt", "CardSelection"),
        ("CardSelection", "CardSelection"),
        ("CardSelected", "ActionResolution"),
        ("ActionResolved", "PlayerTurn"),
        ("PlayCard", "TargetSelection"),
        ("SelectTargets", "ReactionPhase"),
        ("SkipReaction", "ReactionPhase"),
        ("NoInterrupt", "CardNameSelection"),
        ("CardNameSelected", "ActionResolution"),
        ("ActionResolved", "PlayerTurn"),
    ]
    assert h.hand("b") == ()


def test_threesome_flow_and_an_interrupted_play() -> None:
    # PlayerTurn -> (Play Threesome) -> ReactionPhase -> (No Interrupt) -> PlayerTurn;
    # ReactionPhase -> (Interrupt Played) -> PlayerTurn
    h = Harness(
        make_state(
            {"a": ["potato"] * 3 + ["look_ahead", "wildcard"], "b": ["no_dude"]}, potatoes={"b": 1}
        )
    )
    potatoes = [c for c in h.hand("a") if CARD_NAME[c] == "potato"]
    h.do("a", {"type": "PlayThreesome", "cards": potatoes})
    h.skip_all()
    h.play("a", "look_ahead", "b")
    h.do("b", {"type": "PlayInterrupt", "window": 2, "card": h.held("b", "no_dude")})
    assert told(h, "a") == [
        ("PlayThreesome", "ReactionPhase"),
        ("NoInterrupt", "PlayerTurn"),
        ("PlayCard", "TargetSelection"),
        ("SelectTargets", "ReactionPhase"),
        ("InterruptPlayed", "PlayerTurn"),
    ]
    assert h.state.potatoes == (1, 1)


def test_hand_size_management_flow() -> None:
    # PlayerTurn -> (End Turn) -> (Draw Card) -> DiscardPhase (hand > 7) -> NextPlayer
    h = Harness(make_state({"a": ["potato"] * 7, "b": ["potato"]}))
    h.do("a", {"type": "EndTurn"})
    h.do("a", {"type": "DiscardCard", "card": h.hand("a")[0]})
    assert told(h, "b") == [
        ("EndTurn", "DiscardPhase"),
        ("DiscardCards", "NextPlayer"),
        ("NextTurn", "PlayerTurn"),
    ]


def test_special_draw_flows() -> None:
    # PlayerTurn/CheckHand: 0 cards -> AutoDraw -> NextPlayer; 1 card -> OfferDiscard
    h = Harness(make_state({"a": ["potato"], "b": [], "c": ["potato"]}))
    h.do("a", {"type": "DiscardAndDraw"})
    assert told(h, "c") == [
        ("DiscardAndDraw", "NextPlayer"),
        ("NextTurn", "PlayerTurn"),
        ("AutoDraw", "NextPlayer"),
        ("NextTurn", "PlayerTurn"),
    ]
    assert h.state.active == 2


def test_end_game_flow() -> None:
    # ... -> (Win Condition Met) -> EndScore -> GameEnd
    h = Harness(make_state({"a": ["get_off_the_pony"], "b": ["potato"]}, potatoes={"a": 7, "b": 1}))
    h.play("a", "get_off_the_pony", "b")
    h.skip_all()
    assert told(h, "b")[-2:] == [("ActionResolved", "EndScore"), ("EndScore", "GameEnd")]
    final = h.log[-1][1]["b"]
    assert final["winner"] == "a"
    assert final["scores"] == {"a": 8, "b": 0}
