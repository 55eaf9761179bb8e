"""Seat keys in the table: a create or join binds the asker's verify key to its seat, the
event records it, the rules get it once at the start (``bind_keys``), a game that declares
``seat_keys`` refuses a seat without one, and logs written before keys fold as they did."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from cardroom_engine import RandomBot, Rejection, Table, TableState, simulate
from support.highcard import GAME, HighCard, State

A = "a" * 64
B = "b" * 64
C = "c" * 64


class KeyedHighCard(HighCard):
    """High card whose seats are bound to keys, and which remembers what it was bound to."""

    seat_keys: ClassVar[bool] = True

    def __init__(self) -> None:
        self.bound: list[dict[str, str]] = []

    def bind_keys(self, state: State, keys: Mapping[str, str]) -> State:
        self.bound.append(dict(keys))
        return state


class Recording(HighCard):
    """Keys optional (the default), bindings remembered."""

    def __init__(self) -> None:
        self.bound: list[dict[str, str]] = []

    def bind_keys(self, state: State, keys: Mapping[str, str]) -> State:
        self.bound.append(dict(keys))
        return state


def _fold(table: Table, state: TableState, events: list[dict[str, Any]]) -> TableState:
    for event in events:
        state = table.evolve(state, event)
    return state


def test_the_join_event_records_the_key_and_the_rules_get_every_seat_s_key() -> None:
    game = KeyedHighCard()
    table, rng = Table(game), random.Random(1)
    created = table.create("g", "alice", {}, seats=3, key=A)
    assert created[1] == {"type": "table.joined", "player": "alice", "key": A}
    state = table.replay(created)
    assert state.keys == {"alice": A}
    joined = table.join(state, "bob", rng, key=B)
    assert joined == [{"type": "table.joined", "player": "bob", "key": B}]
    state = _fold(table, state, joined)
    assert state.summary()["keys"] == {"alice": A, "bob": B}
    assert game.bound == []  # not started yet
    last = table.join(state, "carol", rng, key=C)  # the last seat starts the game
    assert [e["type"] for e in last[:2]] == ["table.joined", "table.started"]
    state = _fold(table, state, last)
    assert state.status == "playing"
    # (the hook is pure: the join that starts the game folds its own events once more)
    assert game.bound
    assert all(b == {"alice": A, "bob": B, "carol": C} for b in game.bound)
    # replaying the stored log (through JSON) hands the rules the same keys again
    events = json.loads(json.dumps([*created, *joined, *last]))
    assert table.replay(events) == state
    assert game.bound[-1] == {"alice": A, "bob": B, "carol": C}


def test_a_keyed_game_refuses_a_seat_without_a_key() -> None:
    table, rng = Table(KeyedHighCard()), random.Random(1)
    with pytest.raises(Rejection) as exc:
        table.create("g", "alice", {}, seats=3)
    assert exc.value.code == "key_required"
    state = table.replay(table.create("g", "alice", {}, seats=3, key=A))
    with pytest.raises(Rejection) as exc:
        table.join(state, "bob", rng)
    assert exc.value.code == "key_required"
    with pytest.raises(Rejection) as exc:
        table.join(state, "bob", rng, key=None)
    assert exc.value.code == "key_required"


def test_the_requirement_is_read_from_the_game_s_attribute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the Macaua rules will set: ``seat_keys = True`` on the class is all it takes."""
    table = Table(GAME)
    table.create("g", "alice", {})  # off by default
    monkeypatch.setattr(type(GAME), "seat_keys", True)
    with pytest.raises(Rejection) as exc:
        table.create("g", "alice", {})
    assert exc.value.code == "key_required"
    assert table.create("g", "alice", {}, key=A)[1]["key"] == A


def test_a_seat_s_key_is_fixed_and_belongs_to_one_seat() -> None:
    table, rng = Table(Recording()), random.Random(1)
    state = table.replay(table.create("g", "alice", {}, seats=3, key=A))
    # a second join, with another key or the same, changes nothing: the seat is taken
    for key in (B, A, None):
        with pytest.raises(Rejection) as exc:
            table.join(state, "alice", rng, key=key)
        assert exc.value.code == "already_seated"
    # another player cannot take a key a seat holds (nor copy it to pass for that seat)
    with pytest.raises(Rejection) as exc:
        table.join(state, "bob", rng, key=A)
    assert exc.value.code == "bad_request"
    assert state.keys == {"alice": A}


@pytest.mark.parametrize(
    "bad", ["A" * 64, "a" * 63, "a" * 65, "g" * 64, "", " " + "a" * 63, 5, b"a" * 64, ["a"]]
)
def test_the_table_checks_the_key_too(bad: Any) -> None:
    """The engine does not trust its caller's parsing (tests, tools, the simulator)."""
    table, rng = Table(Recording()), random.Random(1)
    with pytest.raises(Rejection) as exc:
        table.create("g", "alice", {}, seats=3, key=bad)
    assert exc.value.code == "bad_request"
    state = table.replay(table.create("g", "alice", {}, seats=3))
    with pytest.raises(Rejection) as exc:
        table.join(state, "bob", rng, key=bad)
    assert exc.value.code == "bad_request"


def test_keys_are_optional_elsewhere_and_a_mixed_table_binds_only_the_named_ones() -> None:
    game = Recording()
    table, rng = Table(game), random.Random(1)
    state = table.replay(table.create("g", "alice", {}, seats=2))
    state = _fold(table, state, table.join(state, "bob", rng, key=B))
    assert state.status == "playing"
    assert state.keys == {"bob": B}
    assert game.bound
    assert all(b == {"bob": B} for b in game.bound)


def test_a_log_written_before_keys_folds_as_it_did() -> None:
    """No key in any join: the events are the old ones, the rules' hook is not called, the
    game's state is what it was, and the table state differs only by its empty ``keys``."""
    game = Recording()
    local = simulate.play(game, ["a", "b", "c"], random.Random(7), {"rounds": 2})
    events = [json.loads(json.dumps(s.event)) for s in local.steps]
    joins = [e for e in events if e["type"] == "table.joined"]
    assert joins == [{"type": "table.joined", "player": p} for p in ("a", "b", "c")]
    assert game.bound == []
    state = local.table.replay(events)
    assert game.bound == []
    assert state == local.state
    assert state.keys == {}
    assert state.summary()["keys"] == {}
    # the same seed and seats with keys play the same game: keys change no game state
    keyed = simulate.new_game(
        Recording(), ["a", "b", "c"], random.Random(7), {"rounds": 2}, keys={"a": A, "b": B}
    )
    plain = simulate.new_game(Recording(), ["a", "b", "c"], random.Random(7), {"rounds": 2})
    assert keyed.state.game == plain.state.game
    assert keyed.state.keys == {"a": A, "b": B}


def test_a_hand_written_old_log() -> None:
    """Events exactly as an older version stored them (no ``options``, no ``key``)."""
    table = Table(Recording())
    events: list[dict[str, Any]] = [
        {
            "type": "table.created",
            "game": "old",
            "game_type": "highcard",
            "creator": "alice",
            "config": {"rounds": 1, "max_value": 100},
            "max_seats": 2,
        },
        {"type": "table.joined", "player": "alice"},
        {"type": "table.joined", "player": "bob"},
        {"type": "table.started", "seats": ["alice", "bob"]},
    ]
    state = table.replay(events)
    assert state.status == "playing"
    assert state.seats == ("alice", "bob")
    assert state.keys == {}
    assert state.game == GAME.setup(GAME.config_model.model_validate(state.config), state.seats)


class KeyedRandomBot(RandomBot):
    def __init__(self, player: str, key: str) -> None:
        super().__init__(player)
        self.verify_key = key


def test_the_simulator_seats_bots_made_beforehand_with_their_keys() -> None:
    game = KeyedHighCard()
    bots = {"a": KeyedRandomBot("a", A), "b": KeyedRandomBot("b", B)}
    choose = simulate.bots_chooser(game, dict.fromkeys(bots, "random"), bots=bots)
    keys = {p: b.verify_key for p, b in bots.items()}
    local = simulate.play(game, list(bots), random.Random(3), {"rounds": 1}, choose, keys=keys)
    assert local.state.status == "finished"
    assert local.state.keys == keys
    with pytest.raises(Rejection):  # no keys: the keyed game seats nobody
        simulate.play(game, list(bots), random.Random(3), {"rounds": 1}, choose)
