"""The 14 action cards: each one's effect, the two interrupts, targets and blind picks."""

from __future__ import annotations

import pytest
from cardroom_games.papas import GAME
from cardroom_games.papas.cards import CARD_NAME, NAMES
from papas_testkit import Harness, card_ids, make_state, strings


def three(a: list[str], b: list[str], c: list[str], **kwargs: object) -> Harness:
    return Harness(make_state({"a": a, "b": b, "c": c}, **kwargs))  # type: ignore[arg-type]


# -- A1 / A2: the interrupts -----------------------------------------------------------------------


def test_no_dude_cancels_an_action_card_and_the_turn_goes_on() -> None:
    h = three(["harry_potato", "potato"], ["no_dude"], ["potato"])
    played = h.held("a", "harry_potato")
    h.play("a", "harry_potato")
    assert h.state.phase == "ReactionPhase"
    assert h.state.window == 1
    no_dude = h.held("b", "no_dude")
    assert {"type": "PlayInterrupt", "window": 1, "card": no_dude} in GAME.actions(h.state, "b")
    events = h.do("b", {"type": "PlayInterrupt", "window": 1, "card": no_dude})
    assert h.types(events) == ["papas.interrupt_played"]
    assert h.state.discard[-2:] == (played, no_dude)  # both cards stay discarded
    assert h.names("a") == ["potato"]  # Harry Potato drew nothing
    assert h.state.phase == "PlayerTurn"
    assert h.state.active == 0
    note = h.messages("papas.interrupt_played")["c"]
    assert note["player"] == "b"
    assert note["card"]["name"] == "no_dude"
    assert note["cancelled"]["name"] == "harry_potato"
    assert note["cancelled"]["player"] == "a"


def test_no_dude_cannot_cancel_a_threesome() -> None:
    h = three(["potato", "potato", "potato"], ["no_dude", "i_told_you_no_dude"], [])
    h.do("a", {"type": "PlayThreesome", "cards": list(h.hand("a"))})
    no_dude = h.held("b", "no_dude")
    offered = GAME.actions(h.state, "b")
    assert {"type": "PlayInterrupt", "window": 1, "card": no_dude} not in offered
    h.refuse(
        "b",
        {"type": "PlayInterrupt", "window": 1, "card": no_dude},
        "cannot_cancel_threesome",
    )


def test_i_told_you_no_dude_cancels_a_threesome() -> None:
    h = three(["french_fries"] * 3, ["i_told_you_no_dude"], [])
    h.do("a", {"type": "PlayThreesome", "cards": list(h.hand("a"))})
    strong = h.held("b", "i_told_you_no_dude")
    h.do("b", {"type": "PlayInterrupt", "window": 1, "card": strong})
    assert h.potatoes("a") == 0
    assert h.state.phase == "PlayerTurn"
    assert h.state.active == 0
    assert h.messages("papas.interrupt_played")["a"]["cancelled"]["kind"] == "threesome"


def test_i_told_you_no_dude_cancels_an_action_card() -> None:
    h = three(["potato_of_the_year"], ["i_told_you_no_dude"], [])
    h.play("a", "potato_of_the_year")
    h.do("b", {"type": "PlayInterrupt", "window": 1, "card": h.held("b", "i_told_you_no_dude")})
    assert h.potatoes("a") == 0


def test_the_first_interrupt_wins_and_later_ones_are_refused() -> None:
    h = three(["look_ahead"], ["no_dude"], ["no_dude"], potatoes={"b": 2})
    h.play("a", "look_ahead", "b")
    h.do("c", {"type": "PlayInterrupt", "window": 1, "card": h.held("c", "no_dude")})
    late = {"type": "PlayInterrupt", "window": 1, "card": h.held("b", "no_dude")}
    refusal = h.refuse("b", late, "already_interrupted")
    assert "already reacted" in refusal.message
    h.refuse("b", {"type": "SkipReaction", "window": 1}, "already_interrupted")
    assert h.names("b") == ["no_dude"]  # b keeps the card
    assert h.potatoes("b") == 2


def test_interrupts_cannot_be_played_outside_a_window_or_by_the_actor() -> None:
    h = three(["harry_potato", "no_dude"], ["no_dude"], [])
    h.refuse("b", {"type": "PlayInterrupt", "window": 0, "card": h.held("b", "no_dude")},
             "reaction_closed")  # fmt: skip
    h.play("a", "harry_potato")
    own = {"type": "PlayInterrupt", "window": 1, "card": h.held("a", "no_dude")}
    h.refuse("a", own, "not_your_turn")
    h.refuse("a", {"type": "SkipReaction", "window": 1}, "not_your_turn")
    h.refuse("b", {"type": "PlayInterrupt", "window": 2, "card": h.held("b", "no_dude")},
             "reaction_closed")  # fmt: skip
    h.do("b", {"type": "SkipReaction", "window": 1})
    h.refuse("b", {"type": "SkipReaction", "window": 1}, "already_skipped")
    h.refuse("b", {"type": "PlayInterrupt", "window": 1, "card": h.held("b", "no_dude")},
             "already_skipped")  # fmt: skip


def test_a_non_interrupt_card_cannot_interrupt() -> None:
    h = three(["harry_potato"], ["potato", "lend_me_a_buck"], [])
    h.play("a", "harry_potato")
    for name in ("potato", "lend_me_a_buck"):
        command = {"type": "PlayInterrupt", "window": 1, "card": h.held("b", name)}
        h.refuse("b", command, "not_an_interrupt")


# -- A3..A14 ---------------------------------------------------------------------------------------


def test_get_off_the_pony_steals_a_golden_potato_and_ends_the_turn() -> None:
    h = three(["get_off_the_pony"], ["potato"], ["potato"], potatoes={"b": 2})
    events = h.play("a", "get_off_the_pony", "b")
    assert h.types(events) == ["papas.card_played", "papas.targets_selected"]
    assert h.state.phase == "ReactionPhase"
    events = h.skip_all()
    assert h.types(events) == [
        "papas.reaction_skipped",
        "papas.reaction_skipped",
        "papas.not_interrupted",
        "papas.action_resolved",
        "papas.card_drawn",  # the alarm ends the turn with the usual draw
        "papas.turn_passed",
    ]
    assert (h.potatoes("a"), h.potatoes("b")) == (1, 1)
    assert len(h.hand("a")) == 1
    assert h.state.active == 1


def test_get_off_the_pony_and_look_ahead_never_make_negative_potatoes() -> None:
    h = three(["get_off_the_pony", "look_ahead"], [], [])
    h.play("a", "get_off_the_pony", "b")
    h.skip_all()
    assert h.state.potatoes == (0, 0, 0)
    h = three(["look_ahead"], [], [])
    h.play("a", "look_ahead", "c")
    h.skip_all()
    assert h.state.potatoes == (0, 0, 0)


def test_look_ahead_destroys_a_golden_potato() -> None:
    h = three(["look_ahead"], ["potato"], ["potato"], potatoes={"c": 3})
    h.play("a", "look_ahead", "c")
    h.skip_all()
    assert h.state.potatoes == (0, 0, 2)  # nobody gains it
    assert h.state.active == 1  # alarm


def test_lend_me_a_buck_takes_a_blind_card_by_token() -> None:
    h = three(["lend_me_a_buck"], ["potato", "wildcard", "no_dude"], ["french_fries"])
    target_hand = set(h.hand("b"))
    h.play("a", "lend_me_a_buck", "b")
    events = h.skip_all()
    assert h.types(events)[-2:] == ["papas.not_interrupted", "papas.selection_offered"]
    assert h.state.phase == "CardSelection"
    offer = h.last("papas.selection_offered")
    assert sorted(card for _, card in offer["options"]) == sorted(target_hand)
    tokens = [token for token, _ in offer["options"]]
    notes = h.messages("papas.selection_offered")
    assert [o["token"] for o in notes["a"]["options"]] == tokens
    assert card_ids(notes["a"]["options"]) == set()  # blind: tokens only
    for other in ("b", "c"):
        assert "options" not in notes[other]
        assert notes[other]["count"] == 3
        assert not strings(notes[other]) & set(tokens)
    view = GAME.view(h.state, "a")
    assert view["selection"]["options"] == [{"token": t} for t in tokens]
    assert not card_ids(view) & target_hand
    assert "options" not in GAME.view(h.state, "b")["selection"]
    assert GAME.actions(h.state, "a") == [{"type": "SelectCard", "token": t} for t in tokens]
    h.refuse("a", {"type": "SelectCard", "token": "not-a-token"}, "unknown_token")
    h.refuse("b", {"type": "SelectCard", "token": tokens[0]}, "not_your_turn")
    chosen = dict(offer["options"])[tokens[1]]
    events = h.do("a", {"type": "SelectCard", "token": tokens[1]})
    assert h.types(events) == ["papas.card_selected", "papas.action_resolved"]
    assert chosen in h.hand("a")
    assert chosen not in h.hand("b")
    resolved = h.messages("papas.action_resolved")
    assert resolved["a"]["taken"]["id"] == chosen
    assert resolved["b"]["taken"]["id"] == chosen
    assert "taken" not in resolved["c"]
    assert resolved["c"]["took_card"] is True
    assert h.state.phase == "PlayerTurn"
    assert h.state.active == 0
    # tokens are one-time: the old one is gone
    h.refuse("a", {"type": "SelectCard", "token": tokens[0]}, "wrong_state")


def test_lend_me_a_buck_on_an_empty_hand_takes_nothing() -> None:
    h = three(["lend_me_a_buck", "potato"], [], ["potato"])  # (a keeps a card: its turn goes on)
    h.play("a", "lend_me_a_buck", "b")
    events = h.skip_all()
    assert h.types(events)[-2:] == ["papas.not_interrupted", "papas.action_resolved"]
    assert h.last("papas.action_resolved")["taken"] is None
    assert h.state.phase == "PlayerTurn"


def test_runaway_potatoes_sends_one_card_of_each_opponent_into_the_deck() -> None:
    state = make_state(
        {
            "a": ["runaway_potatoes", "potato"],
            "b": ["potato", "wildcard"],
            "c": [],
            "d": ["no_dude"],
        }
    )
    h = Harness(state)
    deck_before = set(h.state.deck)
    h.play("a", "runaway_potatoes")
    h.skip_all()
    resolved = h.last("papas.action_resolved")
    taken = resolved["runaway"]
    assert set(taken) == {"b", "d"}  # c had no card
    assert len(h.hand("b")) == 1
    assert h.hand("d") == ()
    assert set(h.state.deck) == deck_before | set(taken.values())
    assert resolved["deck"] == list(h.state.deck)  # the shuffle is in the event
    notes = h.messages("papas.action_resolved")
    assert notes["b"]["lost"]["id"] == taken["b"]
    assert "lost" not in notes["a"]
    assert "lost" not in notes["c"]
    assert not card_ids(notes["a"]) & set(taken.values())
    assert notes["c"]["taken_from"] == ["b", "d"]
    assert h.state.phase == "PlayerTurn"


def test_harry_potato_draws_two_and_ends_the_turn_with_the_usual_draw() -> None:
    h = three(
        ["harry_potato", "potato"],
        ["potato"],
        ["potato"],
        deck=["no_dude", "wildcard", "french_fries"],
    )
    h.play("a", "harry_potato")
    events = h.skip_all()
    assert h.types(events)[-4:] == [
        "papas.not_interrupted",
        "papas.action_resolved",
        "papas.card_drawn",
        "papas.turn_passed",
    ]
    assert h.names("a") == ["french_fries", "no_dude", "potato", "wildcard"]  # net +3 - 1
    drawn = h.messages("papas.action_resolved")
    assert [c["name"] for c in drawn["a"]["drawn"]] == ["no_dude", "wildcard"]
    assert "drawn" not in drawn["b"]
    assert drawn["b"]["drawn_count"] == 2
    assert h.state.active == 1


def test_pope_potato_steals_one_copy_of_the_named_card() -> None:
    h = three(["pope_potato"], ["duchesses_potatoes", "duchesses_potatoes", "potato"], [])
    h.play("a", "pope_potato", "b")
    h.skip_all()
    assert h.state.phase == "CardNameSelection"
    assert GAME.actions(h.state, "a") == [{"type": "SelectCardName", "name": n} for n in NAMES]
    h.refuse("a", {"type": "SelectCardName", "name": "golden_potato"}, "unknown_card_name")
    events = h.do("a", {"type": "SelectCardName", "name": "duchesses_potatoes"})
    assert h.types(events) == ["papas.card_name_selected", "papas.action_resolved"]
    assert h.names("a") == ["duchesses_potatoes"]
    assert h.names("b") == ["duchesses_potatoes", "potato"]
    notes = h.messages("papas.action_resolved")
    assert notes["c"]["named"] == "duchesses_potatoes"
    assert notes["c"]["took_card"] is True
    assert "taken" not in notes["c"]


@pytest.mark.parametrize("name", ["wildcard", "no_dude", "spider_potato"])
def test_pope_potato_may_name_any_card_and_fails_when_it_is_not_held(name: str) -> None:
    h = three(["pope_potato", "french_fries"], ["potato"], [])
    h.play("a", "pope_potato", "b")
    h.skip_all()
    h.do("a", {"type": "SelectCardName", "name": name})
    assert h.last("papas.action_resolved")["taken"] is None
    assert h.names("b") == ["potato"]
    assert h.names("a") == ["french_fries"]


def test_the_potato_of_the_year_gives_a_golden_potato_and_the_turn_goes_on() -> None:
    h = three(["potato_of_the_year", "potato"], [], [])
    h.play("a", "potato_of_the_year")
    h.skip_all()
    assert h.state.potatoes == (1, 0, 0)
    assert h.state.phase == "PlayerTurn"
    assert h.state.active == 0


def test_potato_of_destiny_discards_the_target_hand_and_draws_two() -> None:
    h = three(["potato_of_destiny"], ["potato", "wildcard", "no_dude"], [],
              deck=["french_fries", "harry_potato"])  # fmt: skip
    lost = set(h.hand("b"))
    h.play("a", "potato_of_destiny", "b")
    h.skip_all()
    assert h.names("b") == ["french_fries", "harry_potato"]
    assert lost <= set(h.state.discard)
    notes = h.messages("papas.action_resolved")
    assert card_ids(notes["c"]["discarded"]) == lost  # the discard pile is face up
    assert [c["name"] for c in notes["b"]["drawn"]] == ["french_fries", "harry_potato"]
    assert "drawn" not in notes["c"]
    assert "drawn" not in notes["a"]
    assert h.state.phase == "PlayerTurn"


def test_potato_dawan_shows_the_target_hand_to_the_actor_alone() -> None:
    h = three(["potato_dawan"], ["potato", "wildcard", "i_told_you_no_dude"], ["potato"])
    target_hand = set(h.hand("b"))
    h.play("a", "potato_dawan", "b")
    h.skip_all()
    notes = h.messages("papas.selection_offered")
    assert notes["a"]["reveal"] is True
    assert card_ids(notes["a"]["options"]) == target_hand
    assert not card_ids(notes["c"]) & target_hand
    tokens = {o["token"] for o in notes["a"]["options"]}
    assert not strings(notes["b"]) & tokens
    assert not strings(notes["c"]) & tokens
    assert card_ids(GAME.view(h.state, "a")["selection"]) == target_hand
    assert not card_ids(GAME.view(h.state, "c")) & target_hand
    assert not card_ids(GAME.view(h.state, None)) & target_hand
    wanted = next(o["token"] for o in notes["a"]["options"] if o["card"]["name"] == "wildcard")
    h.do("a", {"type": "SelectCard", "token": wanted})
    assert h.names("a") == ["wildcard"]
    assert h.names("b") == ["i_told_you_no_dude", "potato"]


def test_jump_to_the_side_draws_one_and_the_next_player_loses_the_turn() -> None:
    h = three(["jump_to_the_side"], ["potato"], ["potato"], deck=["no_dude", "wildcard"])
    h.play("a", "jump_to_the_side")
    events = h.skip_all()
    assert h.types(events)[-3:] == [
        "papas.action_resolved",
        "papas.card_drawn",
        "papas.turn_passed",
    ]
    assert h.names("a") == ["no_dude", "wildcard"]
    assert h.last("papas.turn_passed") == {
        "type": "papas.turn_passed",
        "player": "c",
        "skipped": ["b"],
    }
    assert h.state.active == 2
    assert h.state.skip_next is False
    assert h.names("b") == ["potato"]  # b neither played nor drew


def test_papageddon_takes_a_blind_card_from_the_next_player_and_reverses_the_order() -> None:
    h = three(["papageddon"], ["potato", "wildcard"], ["french_fries"])
    events = h.play("a", "papageddon")
    assert events[0]["targets"] == ["b"]  # implicit target: the next player
    assert h.state.phase == "ReactionPhase"
    h.skip_all()
    assert h.state.phase == "CardSelection"
    assert "options" in h.messages("papas.selection_offered")["a"]
    assert card_ids(h.messages("papas.selection_offered")["a"]) == set()
    token = GAME.actions(h.state, "a")[0]["token"]
    events = h.do("a", {"type": "SelectCard", "token": token})
    assert h.types(events) == [
        "papas.card_selected",
        "papas.action_resolved",
        "papas.card_drawn",
        "papas.turn_passed",
    ]
    assert len(h.hand("b")) == 1
    assert len(h.hand("a")) == 2
    assert h.state.direction == -1
    assert h.last("papas.turn_passed")["player"] == "c"  # reversed: a -> c -> b
    assert h.messages("papas.turn_passed")["a"]["order"] == ["a", "c", "b"]


def test_a_second_papageddon_reverses_the_order_again() -> None:
    h = three(["papageddon"], [], ["papageddon"])
    h.play("a", "papageddon")
    h.skip_all()  # b has no card: nothing to pick
    assert h.state.direction == -1
    assert h.state.active == 2
    events = h.play("c", "papageddon")
    assert events[0]["targets"] == ["b"]  # c's next player in the reversed order
    h.skip_all()
    assert h.state.direction == 1
    assert h.state.active == 0  # c -> a in seat order


def test_spider_potato_swaps_two_hands_including_ones_own() -> None:
    h = three(["spider_potato", "potato"], ["wildcard", "no_dude", "no_dude"], ["french_fries"])
    b_hand = set(h.hand("b"))
    h.play("a", "spider_potato", "a", "b")
    h.skip_all()
    assert set(h.hand("a")) == b_hand
    assert h.names("b") == ["potato"]
    notes = h.messages("papas.action_resolved")
    assert card_ids(notes["a"]["hand"]) == b_hand
    assert not card_ids(notes["c"]) & b_hand
    assert h.state.phase == "PlayerTurn"
    assert h.state.active == 0


def test_spider_potato_between_two_other_players() -> None:
    h = three(["spider_potato"], ["wildcard"], ["french_fries", "potato"])
    h.play("a", "spider_potato", "c", "b")
    h.skip_all()
    assert h.names("b") == ["french_fries", "potato"]
    assert h.names("c") == ["wildcard"]


def test_targets_are_checked() -> None:
    h = three(["spider_potato", "look_ahead"], [], [])
    h.do("a", {"type": "PlayCard", "card": h.held("a", "spider_potato")})
    assert h.state.phase == "TargetSelection"
    assert len(GAME.actions(h.state, "a")) == 3  # {a,b} {a,c} {b,c}
    h.refuse("a", {"type": "SelectTargets", "targets": ["b", "b"]}, "bad_target")
    h.refuse("a", {"type": "SelectTargets", "targets": ["b"]}, "bad_target")
    h.refuse("a", {"type": "SelectTargets", "targets": ["b", "zed"]}, "bad_target")
    h.refuse("b", {"type": "SelectTargets", "targets": ["a", "c"]}, "not_your_turn")
    h = three(["look_ahead"], [], [])
    h.do("a", {"type": "PlayCard", "card": h.held("a", "look_ahead")})
    assert GAME.actions(h.state, "a") == [
        {"type": "SelectTargets", "targets": ["b"]},
        {"type": "SelectTargets", "targets": ["c"]},
    ]
    h.refuse("a", {"type": "SelectTargets", "targets": ["a"]}, "bad_target")
    h.refuse("a", {"type": "SelectTargets", "targets": ["b", "c"]}, "bad_target")
    h.refuse("a", {"type": "EndTurn"}, "wrong_state")


@pytest.mark.parametrize(
    "name",
    ["potato", "duchesses_potatoes", "french_fries", "wildcard", "no_dude", "i_told_you_no_dude"],
)
def test_potatoes_wildcards_and_interrupts_cannot_be_played_alone(name: str) -> None:
    h = three([name, "harry_potato"], [], [])
    h.refuse("a", {"type": "PlayCard", "card": h.held("a", name)}, "not_playable")
    offered = [a["card"] for a in GAME.actions(h.state, "a") if a["type"] == "PlayCard"]
    assert [CARD_NAME[c] for c in offered] == ["harry_potato"]
