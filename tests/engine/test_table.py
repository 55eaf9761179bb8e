"""The table aggregate around a game, with the small high-card test game."""

from __future__ import annotations

import json
import random

import pytest
from cardroom_engine import Rejection, Table, TableState, simulate
from cardroom_engine.registry import Registry
from support.highcard import GAME


def test_random_games_finish_with_an_outcome() -> None:
    for seed in range(200):
        rng = random.Random(seed)
        seats = ["a", "b", "c"][: rng.choice([2, 3])]
        local = simulate.play(GAME, seats, rng, {"rounds": 3})
        assert local.state.status == "finished"
        outcome = local.outcome
        assert outcome is not None
        assert sorted(p for group in outcome.ranking for p in group) == sorted(seats)
        # replaying the stored events reproduces the final state exactly
        events = [json.loads(json.dumps(s.event)) for s in local.steps]
        assert local.table.replay(events) == local.state


def test_evolve_many_equals_evolve_one_event_at_a_time() -> None:
    """The fold in runs (one table-state copy per run of game events) ends where folding
    every event alone ends, from any point, with presence events inside the runs."""
    for seed in range(60):
        rng = random.Random(seed)
        local = simulate.play(GAME, ["a", "b"], rng, {"rounds": 3})
        events = [s.event for s in local.steps]
        # presence changes between the game's events (table events break a run)
        for _ in range(rng.randrange(4)):
            at = rng.randrange(4, len(events))
            events[at:at] = [
                {"type": "table.away", "player": "a"},
                {"type": "table.back", "player": "a"},
            ]
        table = local.table
        start = rng.randrange(1, len(events))
        state = table.replay(events[:start])
        one = state
        for event in events[start:]:
            one = table.evolve(one, event)
        assert table.evolve_many(state, events[start:]) == one
        assert table.evolve_many(state, []) == state
    with pytest.raises(ValueError, match="no events"):
        Table(GAME).replay([])


def test_lobby_rules() -> None:
    table = Table(GAME)
    rng = random.Random(1)
    state = table.replay(table.create("g", "alice", {}, seats=3))
    assert state.seats == ("alice",)
    with pytest.raises(Rejection) as exc:
        table.join(state, "alice", rng)
    assert exc.value.code == "already_seated"
    with pytest.raises(Rejection) as exc:
        table.start(state, "alice", rng)
    assert exc.value.code == "not_enough_players"
    state = table.replay(table.create("g", "alice", {}, seats=3) + table.join(state, "bob", rng))
    with pytest.raises(Rejection) as exc:
        table.start(state, "bob", rng)
    assert exc.value.code == "not_creator"
    with pytest.raises(Rejection) as exc:
        table.decide(state, "alice", {"type": "fold"}, rng, gate_open=True)
    assert exc.value.code == "not_started"
    with pytest.raises(Rejection) as exc:
        table.create("g", "alice", {"rounds": "many"})
    assert exc.value.code == "bad_config"
    with pytest.raises(Rejection) as exc:
        table.create("g", "alice", {}, seats=9)
    assert exc.value.code == "bad_config"


def test_join_that_fills_the_table_starts_it() -> None:
    table = Table(GAME)
    rng = random.Random(2)
    created = table.create("g", "a", {}, seats=2)
    state = table.replay(created)
    events = table.join(state, "b", rng)
    assert [e["type"] for e in events][:3] == ["table.joined", "table.started", "highcard.dealt"]
    with pytest.raises(Rejection) as exc:
        table.join(table.replay(created + events), "c", rng)
    assert exc.value.code == "already_started"
    # a seated player's retried join (its answer was lost) hears it is seated, even now
    with pytest.raises(Rejection) as exc:
        table.join(table.replay(created + events), "b", rng)
    assert exc.value.code == "already_seated"


def test_gate_and_turns_are_enforced() -> None:
    rng = random.Random(3)
    local = simulate.new_game(GAME, ["a", "b"], rng)
    table, state = local.table, local.state
    assert state.game.turn == "a"
    with pytest.raises(Rejection) as exc:
        table.decide(state, "a", {"type": "bet", "amount": 1}, rng, gate_open=False)
    assert exc.value.code == "awaiting_acks"
    with pytest.raises(Rejection) as exc:
        table.decide(state, "b", {"type": "bet", "amount": 1}, rng, gate_open=True)
    assert exc.value.code == "not_your_turn"
    with pytest.raises(Rejection) as exc:
        table.decide(state, "zed", {"type": "fold"}, rng, gate_open=True)
    assert exc.value.code == "not_seated"
    with pytest.raises(Rejection) as exc:
        table.decide(state, "a", {"type": "bet", "amount": 7}, rng, gate_open=True)
    assert exc.value.code == "bad_request"
    with pytest.raises(Rejection) as exc:
        table.decide(state, "a", {"type": "dance"}, rng, gate_open=True)
    assert exc.value.code == "unknown_command"


def test_finished_game_refuses_commands() -> None:
    rng = random.Random(4)
    local = simulate.play(GAME, ["a", "b"], rng, {"rounds": 1})
    with pytest.raises(Rejection) as exc:
        local.table.decide(local.state, "a", {"type": "fold"}, rng, gate_open=True)
    assert exc.value.code == "game_finished"


def test_folded_cards_never_reach_another_player() -> None:
    """The leak property for the test game, against an independent model of what each
    player may know: its own cards, and at a showdown the cards of those who did not fold."""
    for seed in range(300):
        rng = random.Random(seed)
        seats = ["a", "b", "c"]
        local = simulate.play(GAME, seats, rng, {"rounds": 2})
        for viewer in seats:
            may_know: set[tuple[str, int]] = set()
            folded: set[str] = set()
            dealt: dict[str, int] = {}
            for step in local.steps:
                event, message = step.event, step.notifications.get(viewer)
                if event["type"] == "highcard.dealt":
                    dealt, folded = event["cards"], set()
                    may_know.add((viewer, dealt[viewer]))
                if event["type"] == "highcard.folded":
                    folded.add(event["player"])
                if event["type"] == "highcard.showdown":
                    may_know |= {(p, v) for p, v in dealt.items() if p not in folded}
                if message is None:
                    continue
                if message["type"] == "YourCard":
                    assert (viewer, message["card"]) in may_know
                for player, value in message.get("shown", {}).items():
                    assert (player, value) in may_know, (seed, viewer, player)
                    assert player not in folded
                # nothing else in any message could carry a card
                assert set(message) <= {
                    *("type", "round", "card", "player", "amount", "shown", "winner", "pot"),
                    *("chips", "seats", "game", "game_type", "config", "outcome"),
                }
            view = local.table.view(local.state, viewer)["state"]
            assert view["card"] == dealt[viewer]
            assert set(view) == {"round", "phase", "turn", "pot", "chips", "folded", "card"}


def test_registry_refuses_conflicts() -> None:
    reg = Registry()
    reg.register(GAME)
    reg.register(GAME)
    assert reg.names() == ["highcard"]
    with pytest.raises(Rejection) as exc:
        reg.get("nope")
    assert exc.value.code == "unknown_game_type"


def test_tables_of_equal_options_and_config_share_them() -> None:
    """Equal options, and equal configs as the create event stored them, are one object
    across loaded tables (a table keeps them as long as it is cached); a different one is its
    own, and each table's summary still shows its own."""

    def loaded(game_id: str, config: dict[str, object]) -> TableState:
        table = Table(GAME)
        created = table.create(game_id, "alice", config, seats=2)
        return table.replay(json.loads(json.dumps(created)))

    one = loaded("g1", {"rounds": 3, "table": {"ack_timeout": 5.0}})
    two = loaded("g2", {"rounds": 3, "table": {"ack_timeout": 5.0}})
    other = loaded("g3", {"rounds": 4, "table": {"ack_timeout": 6.0}})
    assert one.config is two.config
    assert one.options is two.options
    assert other.config is not one.config
    assert other.options is not one.options
    assert one.summary()["config"]["rounds"] == 3
    assert one.summary()["options"]["ack_timeout"] == 5.0
    assert other.summary()["config"]["rounds"] == 4
    assert other.summary()["options"]["ack_timeout"] == 6.0
