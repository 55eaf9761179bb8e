"""The requests between services (timers -> gamemaster, acktracker -> gamemaster) answer bad
input with ``bad_request`` or ``unknown_game``, change nothing, and the gamemaster keeps
serving. Players cannot reach these subjects under the deploy permissions, but a buggy or
mismatched service version can."""

from __future__ import annotations

import json
from typing import Any

import nats
import pytest
from cardroom_wire import Subjects
from support.timedstack import TimedStack


@pytest.mark.parametrize(
    ("name", "body", "code"),
    [
        ("timeout", b"not json", "bad_json"),
        ("timeout", b"[]", "bad_request"),
        ("timeout", b'{"game": "g1", "version": "3", "key": "turn:1"}', "bad_request"),
        ("timeout", b'{"game": "g1", "version": true, "key": "turn:1"}', "bad_request"),
        ("timeout", b'{"game": "no such/id", "version": 1, "key": "k"}', "bad_id"),
        ("reconcile", b"{}", "bad_request"),
        ("release", b'{"game": "g1"}', "bad_request"),
    ],
)
async def test_bad_internal_requests_change_nothing(
    timed_stack: TimedStack, name: str, body: bytes, code: str
) -> None:
    stack = timed_stack
    subjects = Subjects(stack.root)
    alice = await stack.client("alice")
    game = await alice.create("highcard", {"rounds": 1}, seats=2)
    before = await stack.store.stream_version(game)
    nc = await nats.connect(stack.nats_url)
    try:
        subject = {"timeout": subjects.timeout, "reconcile": subjects.reconcile}.get(
            name, subjects.release
        )
        reply: dict[str, Any] = json.loads((await nc.request(subject, body, timeout=10)).data)
        assert reply["ok"] is False
        assert reply["error"]["code"] == code
        # a well-formed timeout for a version the game is not at is stale and changes nothing
        stale = {"game": game, "version": before + 5, "key": "turn:1"}
        again = json.loads((await nc.request(subjects.timeout, json.dumps(stale).encode())).data)
        assert again["ok"] is True
        assert again["result"] == "stale"
    finally:
        await nc.close()
    assert await stack.store.stream_version(game) == before
    assert (await alice.table(game))["status"] == "lobby"  # and it still answers


async def test_bad_back_messages_change_nothing(timed_stack: TimedStack) -> None:
    """``<root>.internal.back`` gets no reply: a malformed one, or one naming nobody, is
    dropped; the game is unchanged and the gamemaster keeps serving."""
    stack = timed_stack
    subjects = Subjects(stack.root)
    alice = await stack.client("alice")
    game = await alice.create("highcard", {"rounds": 1}, seats=2)
    before = await stack.store.read_stream(game)
    nc = await nats.connect(stack.nats_url)
    try:
        for body in (
            b"not json",
            b"[]",
            b'{"game": "g1"}',
            b'{"game": "no such/id", "player": "bob"}',
            json.dumps({"game": game, "player": "bad id!"}).encode(),
            json.dumps({"game": game, "player": "nobody"}).encode(),
            json.dumps({"game": "nogame", "player": "bob"}).encode(),
        ):
            await nc.publish(subjects.back, body)
        await nc.flush()
        # the gamemaster still answers
        stale = {"game": game, "version": len(before) + 5, "key": "turn:1"}
        reply = json.loads((await nc.request(subjects.timeout, json.dumps(stale).encode())).data)
        assert reply["ok"] is True
    finally:
        await nc.close()
    assert await stack.store.read_stream(game) == before
    assert (await alice.table(game))["status"] == "lobby"
