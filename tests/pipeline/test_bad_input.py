"""Every input from outside is hostile: each bad one gets a clean error with a stable code,
changes nothing, and the services keep running."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cardroom_bots import play_table
from cardroom_client import CardroomError, Client
from cardroom_wire import Notification
from support.stack import Stack, store_counts, wait_until

BIG = json.dumps({"type": "bet", "id": "c1", "pad": "x" * 70_000}).encode()


async def _expect(client: Client, subject: str, payload: Any, code: str) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    with pytest.raises(CardroomError) as exc:
        await client.request(subject, data)
    got = exc.value
    assert got.code == code, f"{subject} {payload!r:.80}: got {got.code} ({got.message})"
    assert got.message, "an error always says what is wrong"


async def test_bad_inputs_get_clean_errors_and_change_nothing(stack: Stack) -> None:
    alice, bob, carol = [await stack.client(p) for p in ("alice", "bob", "carol")]
    s = alice.subjects
    prompts: list[Notification] = []

    async def on_alice(note: Notification) -> None:
        if note.actions:
            prompts.append(note)

    alice.on_notification(on_alice)
    lobby = await alice.create("highcard", {}, seats=3)  # stays in the lobby (1 of 3)
    game = await alice.create("highcard", {}, seats=2)
    await bob.join(game)
    await wait_until(lambda: bool(prompts))  # alice's turn, the gate is open
    finished, _ = await play_table(
        stack.nats_url, "highcard", ["dave", "erin"], subject_root=stack.root, config={"rounds": 1}
    )
    await wait_until(lambda: _has_no_pending(stack, finished))
    dave = await stack.client("dave")
    before = await store_counts(stack)

    cases: list[tuple[Client, str, Any, str]] = [
        # lobby
        (alice, s.lobby("create", "alice"), b"{not json", "bad_json"),
        (alice, s.lobby("create", "alice"), b"\xff\xfe\x00", "bad_json"),
        (alice, s.lobby("create", "alice"), [1, 2, 3], "bad_request"),
        (alice, s.lobby("create", "alice"), {"config": {}}, "bad_request"),
        (alice, s.lobby("create", "alice"), {"game_type": "a.b"}, "bad_id"),
        (
            alice,
            s.lobby("create", "alice"),
            {"game_type": "highcard", "player": "bob"},
            "bad_request",
        ),
        (alice, s.lobby("create", "alice"), {"game_type": "chess"}, "unknown_game_type"),
        (alice, s.lobby("create", "alice"), {"game_type": "x*y"}, "bad_id"),
        (
            alice,
            s.lobby("create", "alice"),
            {"game_type": "highcard", "config": {"rounds": "many"}},
            "bad_config",
        ),
        (
            alice,
            s.lobby("create", "alice"),
            {"game_type": "highcard", "config": {"cheat": True}},
            "bad_config",
        ),
        (
            alice,
            s.lobby("create", "alice"),
            {"game_type": "highcard", "seats": 9},
            "bad_config",
        ),
        (
            alice,
            s.lobby("create", "alice"),
            {"game_type": "highcard", "x": 1},
            "bad_request",
        ),
        (
            alice,
            s.lobby("create", "alice"),
            {"game_type": "highcard", "game": game},
            "conflict",
        ),
        (alice, s.lobby("create", "alice"), b" " * 70_000, "too_large"),
        (carol, s.lobby("join", "carol"), {"game": "nosuchgame"}, "unknown_game"),
        (carol, s.lobby("join", "carol"), {"game": game}, "already_started"),
        (alice, s.lobby("join", "alice"), {"game": lobby}, "already_seated"),
        (carol, s.lobby("join", "carol"), {}, "bad_request"),
        (carol, s.lobby("start", "carol"), {"game": lobby}, "not_creator"),
        (alice, s.lobby("start", "alice"), {"game": lobby}, "not_enough_players"),
        (alice, s.lobby("get", "alice"), {"game": "g.1"}, "bad_id"),
        # commands
        (alice, s.cmd(game, "alice"), b"[", "bad_json"),
        (alice, s.cmd(game, "alice"), {"type": "bet", "amount": 1}, "bad_request"),
        (alice, s.cmd(game, "alice"), {"id": "c1", "amount": 1}, "bad_request"),
        (alice, s.cmd(game, "alice"), {"type": "bet", "id": "a b", "amount": 1}, "bad_id"),
        (alice, s.cmd(game, "alice"), {"type": "dance", "id": "c2"}, "unknown_command"),
        (alice, s.cmd(game, "alice"), {"type": "x" * 65, "id": "c2"}, "bad_request"),
        (alice, s.cmd(game, "alice"), {"type": "bet", "id": "c3", "amount": "two"}, "bad_request"),
        (alice, s.cmd(game, "alice"), {"type": "bet", "id": "c4", "amount": 7}, "bad_request"),
        (
            alice,
            s.cmd(game, "alice"),
            {"type": "bet", "id": "c5", "amount": 1, "x": 2},
            "bad_request",
        ),
        (alice, s.cmd(game, "alice"), {"type": "bet", "id": "c6"}, "bad_request"),
        (alice, s.cmd(game, "alice"), BIG, "too_large"),
        (bob, s.cmd(game, "bob"), {"type": "bet", "id": "c7", "amount": 1}, "not_your_turn"),
        (carol, s.cmd(game, "carol"), {"type": "bet", "id": "c8", "amount": 1}, "not_seated"),
        (
            alice,
            s.cmd("nosuchgame", "alice"),
            {"type": "bet", "id": "c9", "amount": 1},
            "unknown_game",
        ),
        (alice, s.cmd(lobby, "alice"), {"type": "bet", "id": "c10", "amount": 1}, "not_started"),
        (dave, s.cmd(finished, "dave"), {"type": "fold", "id": "c12"}, "game_finished"),
        # acks
        (alice, s.ack(game, "alice"), {"type": "ack", "version": 99_999}, "not_addressee"),
        (alice, s.ack(game, "alice"), {"type": "ack", "version": 0}, "bad_request"),
        (alice, s.ack(game, "alice"), {"type": "ack", "version": "3"}, "bad_request"),
        (alice, s.ack(game, "alice"), {"type": "ack"}, "bad_request"),
        (alice, s.ack(game, "alice"), b"nope", "bad_json"),
        (alice, s.ack(game, "alice"), {"type": "ack", "version": 1}, "not_addressee"),
        (carol, s.ack(game, "carol"), {"type": "ack", "version": 3}, "not_addressee"),
        (alice, s.ack("nosuchgame", "alice"), {"type": "ack", "version": 1}, "unknown_game"),
        # sync
        (alice, s.sync("nosuchgame", "alice"), {"type": "sync"}, "unknown_game"),
        (carol, s.sync(game, "carol"), {"type": "sync"}, "not_seated"),
        (alice, s.sync(game, "alice"), {"type": "dance"}, "bad_request"),
        (alice, s.sync(game, "alice"), b"{{", "bad_json"),
    ]
    kinds = {code for *_, code in cases}
    assert len(cases) >= 30
    assert len(kinds) >= 15
    for client, subject, payload, code in cases:
        await _expect(client, subject, payload, code)
        assert await store_counts(stack) == before, f"{subject} {payload!r:.60} changed the store"

    # and the services still work: alice makes her move
    assert await alice.send(game, prompts[-1].actions[0]) > 0


async def _has_no_pending(stack: Stack, game: str) -> bool:
    return await stack.store.pending(game) == {}
