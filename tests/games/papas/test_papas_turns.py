"""Turns: ending a turn, the hand limit, the special draws, reshuffles, reaction windows and
their deadline, the end of the game."""

from __future__ import annotations

import random

from cardroom_engine import Deadline, Table
from cardroom_engine.simulate import new_game
from cardroom_games.papas import GAME
from cardroom_games.papas.cards import CARD_NAME
from papas_testkit import Harness, card_ids, make_state


def test_end_turn_draws_one_card_and_passes_to_the_next_player() -> None:
    h = Harness(make_state({"a": ["potato"], "b": ["potato"], "c": []}, deck=["wildcard"]))
    events = h.do("a", {"type": "EndTurn"})
    assert h.types(events) == [
        "papas.turn_ended",
        "papas.turn_passed",
    ]  # no second draw in NextPlayer
    assert h.names("a") == ["potato", "wildcard"]
    assert h.state.active == 1
    assert h.state.phase == "PlayerTurn"
    notes = h.messages("papas.turn_ended")
    assert [c["name"] for c in notes["a"]["drawn"]] == ["wildcard"]
    assert "drawn" not in notes["b"]
    assert notes["b"]["drawn_count"] == 1


def test_ending_the_turn_at_once_is_allowed() -> None:
    h = Harness(make_state({"a": ["potato"] * 5, "b": ["potato"]}))
    assert GAME.actions(h.state, "a")[-1] == {"type": "EndTurn"}
    h.do("a", {"type": "EndTurn"})
    assert h.state.active == 1


def test_the_hand_limit_is_seven_at_the_end_of_the_turn() -> None:
    hand = [
        "potato",
        "potato",
        "duchesses_potatoes",
        "no_dude",
        "wildcard",
        "harry_potato",
        "potato",
    ]
    h = Harness(make_state({"a": hand, "b": ["potato"]}, deck=["french_fries"]))
    events = h.do("a", {"type": "EndTurn"})
    assert h.types(events) == ["papas.turn_ended"]
    assert h.state.phase == "DiscardPhase"
    assert len(h.hand("a")) == 8
    assert GAME.actions(h.state, "b") == []
    offered = GAME.actions(h.state, "a")
    assert {a["type"] for a in offered} == {"DiscardCard"}
    assert len(offered) == 6  # one per distinct face: the three potatoes are listed once
    h.refuse("a", {"type": "EndTurn"}, "wrong_state")
    h.refuse("b", {"type": "DiscardCard", "card": h.hand("a")[0]}, "not_your_turn")
    h.refuse("a", {"type": "DiscardCard", "card": h.state.deck[0]}, "card_not_in_hand")
    gone = h.held("a", "harry_potato")
    events = h.do("a", {"type": "DiscardCard", "card": gone})
    assert h.types(events) == ["papas.card_discarded", "papas.turn_passed"]
    assert len(h.hand("a")) == 7
    assert h.state.discard[-1] == gone
    assert h.messages("papas.card_discarded")["b"]["card"]["id"] == gone  # discards are face up


def test_discarding_goes_on_until_seven_after_an_alarm_draw() -> None:
    hand = ["harry_potato"] + ["potato"] * 7
    h = Harness(make_state({"a": hand, "b": ["potato"]}, deck=["wildcard"] * 3))
    h.play("a", "harry_potato")
    events = h.skip_all()
    assert h.types(events)[-2:] == ["papas.action_resolved", "papas.card_drawn"]
    assert h.state.phase == "DiscardPhase"
    assert len(h.hand("a")) == 10
    for _ in range(3):
        assert h.state.phase == "DiscardPhase"
        h.do("a", {"type": "DiscardCard", "card": h.held("a", "potato")})
    assert len(h.hand("a")) == 7
    assert h.state.active == 1
    assert h.state.phase == "PlayerTurn"


def test_an_empty_hand_draws_three_and_ends_the_turn() -> None:
    h = Harness(make_state({"a": ["potato"], "b": [], "c": ["potato"]}))
    events = h.do("a", {"type": "EndTurn"})
    assert h.types(events) == [
        "papas.turn_ended",
        "papas.turn_passed",
        "papas.auto_drawn",
        "papas.turn_passed",
    ]
    assert len(h.hand("b")) == 3  # three, and no end-of-turn draw
    assert h.state.active == 2
    assert GAME.actions(h.state, "c")  # c plays normally


def test_a_hand_emptied_during_the_turn_draws_three_and_ends_it() -> None:
    """The turn's state is entered again after every reaction window, and an empty hand
    draws three then too (not the one card of EndTurn): after a threesome of the last three
    cards, and after a last card that an interrupt cancelled."""
    h = Harness(make_state({"a": ["potato"] * 3, "b": ["harry_potato"] * 5, "c": ["potato"]}))
    h.do("a", {"type": "PlayThreesome", "cards": list(h.hand("a"))})
    events = h.skip_all()
    assert "papas.auto_drawn" in h.types(events)
    assert len(h.hand("a")) == 3  # three, and no end-of-turn draw
    assert h.state.active == 1
    h = Harness(
        make_state({"a": ["potato_of_the_year"], "b": ["no_dude", "potato"], "c": ["potato"]})
    )
    h.play("a", "potato_of_the_year")
    interrupt = h.held("b", "no_dude")
    events = h.do("b", {"type": "PlayInterrupt", "window": h.state.window, "card": interrupt})
    events += h.skip_all()
    assert "papas.auto_drawn" in h.types(events)
    assert len(h.hand("a")) == 3
    assert h.state.active == 1


def test_one_card_may_be_discarded_for_three_at_the_start_of_the_turn() -> None:
    h = Harness(make_state({"a": ["no_dude"], "b": ["potato"]}, deck=["potato"] * 4))
    assert {"type": "DiscardAndDraw"} in GAME.actions(h.state, "a")
    single = h.hand("a")[0]
    events = h.do("a", {"type": "DiscardAndDraw"})
    assert h.types(events) == ["papas.discarded_and_drawn", "papas.turn_passed"]
    assert h.names("a") == ["potato"] * 3  # no extra end-of-turn draw
    assert h.state.discard[-1] == single
    notes = h.messages("papas.discarded_and_drawn")
    assert notes["b"]["discarded"]["id"] == single
    assert "drawn" not in notes["b"]


def test_discard_and_draw_is_only_for_one_card_before_playing() -> None:
    h = Harness(make_state({"a": ["potato", "potato"], "b": []}))
    assert {"type": "DiscardAndDraw"} not in GAME.actions(h.state, "a")
    h.refuse("a", {"type": "DiscardAndDraw"}, "discard_and_draw_unavailable")
    h = Harness(make_state({"a": ["potato_of_the_year", "potato"], "b": []}))
    h.play("a", "potato_of_the_year")
    h.skip_all()
    assert len(h.hand("a")) == 1  # one card left, but the turn is no longer fresh
    assert {"type": "DiscardAndDraw"} not in GAME.actions(h.state, "a")
    h.refuse("a", {"type": "DiscardAndDraw"}, "discard_and_draw_unavailable")


def test_an_empty_deck_is_refilled_from_the_shuffled_discard_pile() -> None:
    h = Harness(make_state({"a": ["potato"], "b": ["potato"]}, deck=[], rest_to="discard"), seed=3)
    old_discard = list(h.state.discard)
    events = h.do("a", {"type": "EndTurn"})
    end = events[0]
    assert sorted(end["reshuffled"]) == sorted(old_discard)  # the permutation is in the event
    assert end["drawn"] == end["reshuffled"][:1]
    assert list(h.state.deck) == end["reshuffled"][1:]
    assert h.state.discard == ()
    for note in h.messages("papas.turn_ended").values():
        assert note["reshuffled"] is True
        assert note["deck_count"] == len(old_discard) - 1
        assert "deck" not in note  # the new order stays on the server
    assert not card_ids(h.messages("papas.turn_ended")["b"]) & set(end["reshuffled"])


def test_a_draw_takes_the_rest_of_the_deck_then_reshuffles() -> None:
    h = Harness(
        make_state(
            {"a": ["harry_potato"], "b": []}, deck=["wildcard"], discard=[], rest_to="discard"
        )
    )
    wildcard = h.state.deck[0]
    h.play("a", "harry_potato")
    h.skip_all()
    resolved = h.last("papas.action_resolved")
    assert resolved["drawn"][0] == wildcard
    assert resolved["reshuffled"] is not None
    assert resolved["drawn"][1] == resolved["reshuffled"][0]
    assert h.last("papas.card_drawn")["reshuffled"] is None  # the new deck had cards


def test_every_draw_reshuffles_when_the_deck_is_empty() -> None:
    # empty-hand draw
    h = Harness(make_state({"a": ["potato"], "b": []}, deck=["potato"], rest_to="discard"))
    h.do("a", {"type": "EndTurn"})  # takes the last deck card
    auto = h.last("papas.auto_drawn")
    assert auto["reshuffled"] is not None
    assert len(h.hand("b")) == 3
    # discard & draw: the discarded card joins the reshuffle
    h = Harness(make_state({"a": ["no_dude"], "b": []}, deck=[], rest_to="discard"))
    single = h.hand("a")[0]
    h.do("a", {"type": "DiscardAndDraw"})
    assert single in h.last("papas.discarded_and_drawn")["reshuffled"]
    # potato of destiny: the target's discarded hand joins the reshuffle
    h = Harness(
        make_state({"a": ["potato_of_destiny"], "b": ["potato"]}, deck=[], rest_to="discard")
    )
    h.play("a", "potato_of_destiny", "b")
    h.skip_all()
    assert h.last("papas.action_resolved")["reshuffled"] is not None
    assert len(h.hand("b")) == 2


def test_with_no_card_left_anywhere_a_draw_gives_what_there_is() -> None:
    state = make_state({"a": ["potato"], "b": []}, deck=[], rest_to="discard")
    state = state._replace(hands=(state.hands[0], state.discard), discard=())
    h = Harness(state)
    events = h.do("a", {"type": "EndTurn"})
    assert events[0]["drawn"] == []
    assert events[0]["reshuffled"] is None
    assert h.state.active == 1


# -- reaction windows ------------------------------------------------------------------------------


def test_every_other_player_is_prompted_alike_whether_or_not_they_hold_an_interrupt() -> None:
    h = Harness(
        make_state(
            {"a": ["harry_potato"], "b": ["no_dude"], "c": ["potato"], "d": ["i_told_you_no_dude"]}
        )
    )
    h.play("a", "harry_potato")
    notes = h.messages("papas.card_played")
    assert set(notes) == {"a", "b", "c", "d"}
    prompts = [{k: v for k, v in notes[p].items() if k != "hand"} for p in "bcd"]
    assert prompts[0] == prompts[1] == prompts[2]
    assert prompts[0]["reaction"] == {"window": 1, "seconds": 7.0, "players": ["b", "c", "d"]}
    views = [GAME.view(h.state, p) for p in "bcd"]
    for view in views:
        view.pop("hand")
    assert views[0] == views[1] == views[2]
    assert GAME.deadline(h.state) == Deadline(7.0, "reaction:1")
    assert GAME.actions(h.state, "c") == [{"type": "SkipReaction", "window": 1}]
    assert GAME.actions(h.state, "a") == []


def test_a_pass_is_told_to_the_passer_only_and_the_window_closes_when_all_passed() -> None:
    h = Harness(make_state({"a": ["harry_potato"], "b": [], "c": []}))
    h.play("a", "harry_potato")
    events = h.do("b", {"type": "SkipReaction", "window": 1})
    assert h.types(events) == ["papas.reaction_skipped"]
    assert set(h.messages("papas.reaction_skipped")) == {"b"}
    assert h.state.phase == "ReactionPhase"
    assert GAME.view(h.state, "b")["reaction"]["may_react"] is False
    assert GAME.view(h.state, "c")["reaction"]["may_react"] is True
    events = h.do("c", {"type": "SkipReaction", "window": 1})
    assert h.types(events)[:2] == ["papas.reaction_skipped", "papas.not_interrupted"]
    assert h.last("papas.not_interrupted")["reason"] == "all_skipped"
    assert GAME.deadline(h.state) is None


def test_the_reaction_window_closes_at_its_deadline() -> None:
    state = make_state({"a": ["potato_of_the_year"], "b": ["no_dude"], "c": []},
                       config={"reaction_seconds": 2.5})  # fmt: skip
    h = Harness(state)
    h.play("a", "potato_of_the_year")
    deadline = GAME.deadline(h.state)
    assert deadline == Deadline(2.5, "reaction:1")
    h.do("c", {"type": "SkipReaction", "window": 1})
    assert GAME.deadline(h.state) == deadline  # the same window, the same deadline
    assert GAME.on_timeout(h.state, "reaction:0", h.rng) == []  # stale key: nothing
    assert GAME.on_timeout(h.state, "other", h.rng) == []
    events = GAME.on_timeout(h.state, deadline.key, h.rng)
    assert events == [{"type": "papas.not_interrupted", "window": 1, "reason": "deadline"}]
    h.apply(events)
    h.settle()
    assert h.state.potatoes == (1, 0, 0)
    assert h.state.phase == "PlayerTurn"
    assert GAME.on_timeout(h.state, deadline.key, h.rng) == []  # already closed
    h.refuse("b", {"type": "PlayInterrupt", "window": 1, "card": h.held("b", "no_dude")},
             "reaction_closed")  # fmt: skip


def test_the_deadline_through_the_table_like_the_timers_service() -> None:
    rng = random.Random(11)
    local = new_game(GAME, ["a", "b"], rng, {"reaction_seconds": 0.5})
    table = local.table
    while True:  # a plays until a reaction window opens
        actions = table.actions(local.state, "a")
        plays = [x for x in actions if x["type"] in ("PlayCard", "PlayThreesome")]
        if not plays:
            local.apply(table.decide(local.state, "a", {"type": "EndTurn"}, rng, gate_open=True))
            local.settle(rng)
            local.apply(table.decide(local.state, "b", {"type": "EndTurn"}, rng, gate_open=True))
            local.settle(rng)
            continue
        local.apply(table.decide(local.state, "a", plays[0], rng, gate_open=True))
        local.settle(rng)
        if local.state.game.phase == "TargetSelection":
            target = table.actions(local.state, "a")[0]
            local.apply(table.decide(local.state, "a", target, rng, gate_open=True))
            local.settle(rng)
        break
    assert local.state.game.phase == "ReactionPhase"
    deadline = GAME.deadline(local.state.game)
    assert deadline is not None
    assert deadline.seconds == 0.5
    local.apply(table.timeout(local.state, deadline.key, rng))
    local.settle(rng)
    assert local.state.game.phase != "ReactionPhase"
    assert any(s.event.get("reason") == "deadline" for s in local.steps)


def test_house_action_passes_and_ends_turns() -> None:
    h = Harness(make_state({"a": ["harry_potato", "potato"], "b": ["no_dude"]}))
    assert GAME.house_action(h.state, "a", h.rng) == {"type": "EndTurn"}
    h.play("a", "harry_potato")
    assert GAME.house_action(h.state, "b", h.rng) == {"type": "SkipReaction", "window": 1}
    assert GAME.house_action(h.state, "a", h.rng) is None


def test_house_action_plays_a_threesome_so_a_table_of_away_players_ends() -> None:
    h = Harness(make_state({"a": ["potato"] * 3 + ["harry_potato"], "b": ["no_dude"]}))
    action = GAME.house_action(h.state, "a", h.rng)
    assert action is not None
    assert action["type"] == "PlayThreesome"
    assert {CARD_NAME[c] for c in action["cards"]} == {"potato"}


# -- the end ---------------------------------------------------------------------------------------


def test_reaching_the_threshold_ends_the_game() -> None:
    h = Harness(make_state({"a": ["french_fries"] * 3, "b": [], "c": []}, potatoes={"a": 6}))
    h.do("a", {"type": "PlayThreesome", "cards": list(h.hand("a"))})
    events = h.skip_all()
    assert h.types(events)[-2:] == ["papas.not_interrupted", "papas.game_won"]
    assert h.state.phase == "GameEnd"
    assert GAME.actions(h.state, "a") == []
    assert GAME.deadline(h.state) is None
    outcome = GAME.outcome(h.state)
    assert outcome is not None
    assert outcome.scores == {"a": 9.0, "b": 0.0, "c": 0.0}
    assert outcome.ranking == [["a"], ["b", "c"]]
    assert outcome.details == {"winner": "a", "threshold": 8}
    assert h.messages("papas.game_won")["b"]["winner"] == "a"
    h.refuse("b", {"type": "EndTurn"}, "illegal_move")


def test_stealing_the_last_potato_needed_wins_at_once() -> None:
    state = make_state({"a": ["get_off_the_pony"], "b": []}, potatoes={"a": 2, "b": 1},
                       config={"win_threshold": 3})  # fmt: skip
    h = Harness(state)
    h.play("a", "get_off_the_pony", "b")
    events = h.skip_all()
    assert h.types(events)[-2:] == [
        "papas.action_resolved",
        "papas.game_won",
    ]  # no end-of-turn draw
    assert GAME.outcome(h.state) is not None


def test_a_whole_game_through_the_table_ends_with_table_finished() -> None:
    from cardroom_engine.simulate import play

    local = play(GAME, ["a", "b", "c"], random.Random(2), {"win_threshold": 3})
    assert local.state.status == "finished"
    kinds = [s.event["type"] for s in local.steps]
    assert kinds[-2:] == ["papas.game_won", "table.finished"]
    outcome = local.outcome
    assert outcome is not None
    assert max(outcome.scores.values()) >= 3
    replayed = Table(GAME).replay([s.event for s in local.steps])
    assert replayed == local.state  # replay never re-rolls
