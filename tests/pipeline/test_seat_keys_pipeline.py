"""Seat keys through the lobby, on a running cardroom (real NATS and PostgreSQL): a join
binds the asker's verify key to the asker's seat (the subject names the asker), the event
records it, a keyed game refuses a seat without one and changes nothing, nobody can set or
change another seat's key, bots bind theirs, and a log written before keys loads as it did.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest
from cardroom_bots import play_table
from cardroom_client import CardroomError, Client
from cardroom_engine import RandomBot, Table, registry
from cardroom_eventstore import Append, NewEvent
from support.stack import Stack, as_event, store_counts

A, B, C, D, E = ("a" * 64, "b" * 64, "c" * 64, "d" * 64, "e" * 64)


async def _refused(client: Client, subject: str, body: Any, code: str, stack: Stack) -> None:
    before = await store_counts(stack)
    with pytest.raises(CardroomError) as exc:
        await client.request(subject, json.dumps(body).encode())
    assert exc.value.code == code, f"{subject} {body}: {exc.value.code} {exc.value.message}"
    assert await store_counts(stack) == before, f"{subject} {body} changed the store"


async def _joins(stack: Stack, game: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The game's ``table.joined`` events: (data, metadata)."""
    return [
        (r.data, r.metadata)
        for r in await stack.store.read_stream(game)
        if r.type == "table.joined"
    ]


async def test_a_join_records_the_asker_s_key_and_nobody_sets_another_s(stack: Stack) -> None:
    alice, bob, carol = [await stack.client(p) for p in ("alice", "bob", "carol")]
    s = alice.subjects
    game = await alice.create("highcard", {}, seats=3, key=A)
    table = await bob.join(game, key=B)
    assert table["keys"] == {"alice": A, "bob": B}
    joins = await _joins(stack, game)
    assert [d for d, _ in joins] == [{"player": "alice", "key": A}, {"player": "bob", "key": B}]
    assert [m.get("actor") for _, m in joins[1:]] == ["bob"]

    # a seat's key is fixed: bob's second join, with another key or his own, is refused
    await _refused(bob, s.lobby("join", "bob"), {"game": game, "key": C}, "already_seated", stack)
    await _refused(bob, s.lobby("join", "bob"), {"game": game, "key": B}, "already_seated", stack)
    # carol cannot set bob's key: the body names no player, and a key another seat holds
    # is not hers to take
    await _refused(
        carol,
        s.lobby("join", "carol"),
        {"game": game, "key": C, "player": "bob"},
        "bad_request",
        stack,
    )
    await _refused(carol, s.lobby("join", "carol"), {"game": game, "key": B}, "bad_request", stack)
    await _refused(
        carol, s.lobby("join", "carol"), {"game": game, "key": B.upper()}, "bad_request", stack
    )
    # what carol sends binds carol's seat only (the subject names the asker)
    table = await carol.join(game, key=C)
    assert table["keys"] == {"alice": A, "bob": B, "carol": C}
    assert table["status"] == "playing"
    joins = await _joins(stack, game)
    assert [(d["player"], d["key"], m["actor"]) for d, m in joins[1:]] == [
        ("bob", B, "bob"),
        ("carol", C, "carol"),
    ]
    # the summary any player reads carries the keys, from the store as from the cache
    assert (await carol.table(game))["keys"] == {"alice": A, "bob": B, "carol": C}

    # keys are optional for a game that does not declare seat_keys
    plain = await alice.create("highcard", {}, seats=2)
    assert (await bob.join(plain))["keys"] == {}
    assert [d for d, _ in await _joins(stack, plain)] == [{"player": "alice"}, {"player": "bob"}]


async def test_a_keyed_game_refuses_a_seat_without_a_key_and_changes_nothing(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the Macaua rules will declare (``seat_keys = True``), set here on the test game."""
    monkeypatch.setattr(type(registry.get("highcard")), "seat_keys", True)
    dave, erin, fred = [await stack.client(p) for p in ("dave", "erin", "fred")]
    s = dave.subjects
    await _refused(
        dave, s.lobby("create", "dave"), {"game_type": "highcard"}, "key_required", stack
    )
    await _refused(
        dave,
        s.lobby("create", "dave"),
        {"game_type": "highcard", "game": "k1", "key": None},
        "key_required",
        stack,
    )
    game = await dave.create("highcard", {}, seats=3, key=D)
    for body, code in [
        ({"game": game}, "key_required"),
        ({"game": game, "key": None}, "key_required"),
        ({"game": game, "key": "e" * 63}, "bad_request"),
        ({"game": game, "key": "E" * 64}, "bad_request"),
        ({"game": game, "key": "x" * 64}, "bad_request"),
        ({"game": game, "key": 7}, "bad_request"),
        ({"game": game, "key": [E]}, "bad_request"),
        ({"game": game, "key": D}, "bad_request"),  # dave's
    ]:
        await _refused(erin, s.lobby("join", "erin"), body, code, stack)
    assert (await erin.table(game))["seats"] == ["dave"]
    await erin.join(game, key=E)
    await fred.join(game, key=C)
    assert [d for d, _ in await _joins(stack, game)] == [
        {"player": "dave", "key": D},
        {"player": "erin", "key": E},
        {"player": "fred", "key": C},
    ]


class KeyedBot(RandomBot):
    """A random bot that, like a bot that signs its moves, exposes its verify key."""

    def __init__(self, player: str) -> None:
        super().__init__(player)
        self.verify_key = random.SystemRandom().randbytes(32).hex()
        KEYS[player] = self.verify_key


KEYS: dict[str, str] = {}


async def test_bots_bind_their_verify_keys(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    game_rules = registry.get("highcard")
    monkeypatch.setattr(type(game_rules), "seat_keys", True)
    monkeypatch.setattr(type(game_rules), "bots", {**game_rules.bots, "keyed": KeyedBot})
    KEYS.clear()
    game, outcome = await play_table(
        stack.nats_url,
        "highcard",
        ["gina", "hank", "ivan"],
        subject_root=stack.root,
        config={"rounds": 1},
        kinds=["keyed"],
    )
    assert outcome["ranking"]
    joins = [d for d, _ in await _joins(stack, game)]
    assert joins == [{"player": p, "key": KEYS[p]} for p in ("gina", "hank", "ivan")]


def _old_log(game: str, seats: Sequence[str]) -> list[dict[str, Any]]:
    """A lobby as an older version wrote it: no ``options``, no ``key``."""
    return [
        {
            "type": "table.created",
            "game": game,
            "game_type": "highcard",
            "creator": seats[0],
            "config": {"rounds": 1, "max_value": 100},
            "max_seats": 3,
        },
        *({"type": "table.joined", "player": p} for p in seats),
    ]


async def test_a_log_written_before_keys_loads_as_it_did(stack: Stack) -> None:
    old = _old_log("oldtable", ["jill", "kurt"])
    await stack.store.append(
        Append(
            stream_id="oldtable",
            stream_type="highcard",
            expected_version=0,
            events=[NewEvent(e["type"], {k: v for k, v in e.items() if k != "type"}) for e in old],
        )
    )
    stored = [as_event(r) for r in await stack.store.read_stream("oldtable")]
    assert stored == old
    table = Table(registry.get("highcard"))
    state = table.replay(stored)
    assert state.keys == {}
    assert state.seats == ("jill", "kurt")
    # the lobby loads it as it did, and a seat taken now may bind a key beside the old ones
    liam = await stack.client("liam")
    assert (await liam.table("oldtable"))["keys"] == {}
    summary = await liam.join("oldtable", key=A)
    assert summary["status"] == "playing"
    assert summary["seats"] == ["jill", "kurt", "liam"]
    assert summary["keys"] == {"liam": A}
    log = [as_event(r) for r in await stack.store.read_stream("oldtable")]
    replayed = table.replay(log)
    assert replayed.keys == {"liam": A}
    # the key changes nothing but the table's keys: without it the game folds the same
    keyless = table.replay([{k: v for k, v in e.items() if k != "key"} for e in log])
    assert keyless.game == replayed.game
    assert keyless.keys == {}
