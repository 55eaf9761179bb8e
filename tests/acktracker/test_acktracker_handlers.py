"""The acktracker's typed handlers through FastStream's test broker, on the in-memory event
store: no NATS server, no database. What only a real server proves (the bare subscriptions,
redelivery, order under load) stays with tests/pipeline."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any, cast

import orjson
import pytest
from cardroom_acktracker.service import AckTracker
from cardroom_eventstore import Append, EventStore, NewEvent
from cardroom_eventstore.memory import InMemoryEventStore
from cardroom_runtime.host import Runtime
from cardroom_wire import MAX_MESSAGE_BYTES, Subjects
from faststream.nats import NatsBroker, TestNatsBroker

ROOT = "unit"
GAME = "g1"


class Room:
    """An acktracker on a test broker, and the store it acknowledges in."""

    def __init__(self, broker: NatsBroker, store: InMemoryEventStore, tracker: AckTracker) -> None:
        self.broker = broker
        self.store = store
        self.tracker = tracker
        self.subjects = Subjects(ROOT)

    async def ack(self, player: str, body: bytes | dict[str, Any]) -> dict[str, Any]:
        return await self.ask(self.subjects.ack(GAME, player), body)

    async def ask(self, subject: str, body: bytes | dict[str, Any]) -> dict[str, Any]:
        raw = body if isinstance(body, bytes) else orjson.dumps(body)
        reply = await self.broker.request(raw, subject)
        answer: dict[str, Any] = orjson.loads(reply.body)
        return answer


@pytest.fixture
async def room() -> AsyncIterator[Room]:
    store = InMemoryEventStore()
    # version 1 owes alice and bob an acknowledgement: the gate at 1 opens with the last
    await store.append(
        Append(
            GAME,
            "highcard",
            0,
            [NewEvent("highcard.dealt", {}, addressees=frozenset({"alice", "bob"}))],
        )
    )
    broker = NatsBroker()
    rt = Runtime(Subjects(ROOT), broker, cast(EventStore, store), "nats://unused", "")
    tracker = AckTracker(rt)
    tracker.register()
    async with TestNatsBroker(broker) as test_broker:
        yield Room(test_broker, store, tracker)
    await tracker.stop()


async def test_an_ack_is_recorded_and_the_last_releases_the_gate(room: Room) -> None:
    assert await room.ack("alice", {"type": "ack", "version": 1}) == {"ok": True, "version": 1}
    assert await room.store.pending(GAME) == {1: frozenset({"bob"})}
    assert await room.store.unhandled_releases(limit=10, older_than=0) == []
    assert await room.ack("bob", {"type": "ack", "version": 1}) == {"ok": True, "version": 1}
    assert await room.store.pending(GAME) == {}
    assert await room.store.unhandled_releases(limit=10, older_than=0) == [(GAME, 1)]


async def test_a_repeated_ack_is_a_duplicate_and_a_stranger_is_refused(room: Room) -> None:
    await room.ack("alice", {"type": "ack", "version": 1})
    again = await room.ack("alice", {"type": "ack", "version": 1})
    assert again == {"ok": True, "version": 1, "duplicate": True}
    refused = await room.ack("carol", {"type": "ack", "version": 1})
    assert refused["error"]["code"] == "not_addressee"
    unknown = await room.ask(room.subjects.ack("nowhere", "alice"), {"type": "ack", "version": 1})
    assert unknown["error"]["code"] == "unknown_game"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"type": "ack", "version": ', "bad_json"),
        (b"[1]", "bad_request"),
        (b'{"type": "ack", "version": 0}', "bad_request"),
        (b'{"type": "ack", "version": 1, "player": "bob"}', "bad_request"),
        (b'{"type": "ack", "version": 1, "pad": "' + b"x" * MAX_MESSAGE_BYTES + b'"}', "too_large"),
    ],
    ids=["bad_json", "not_an_object", "version_0", "unknown_field", "too_large"],
)
async def test_hostile_input_gets_its_code_and_changes_nothing(
    room: Room, body: bytes, code: str
) -> None:
    answer = await room.ack("alice", body)
    assert answer["ok"] is False
    assert answer["error"]["code"] == code
    assert await room.store.pending(GAME) == {1: frozenset({"alice", "bob"})}


async def test_an_unsafe_id_in_the_subject_is_bad_id_whatever_the_body(room: Room) -> None:
    # the subject is read first, as on the bare path: the body here is no JSON either
    answer = await room.ask(f"{ROOT}.ack.{GAME}.b@d", b"{")
    assert answer["error"]["code"] == "bad_id"
    assert await room.store.pending(GAME) == {1: frozenset({"alice", "bob"})}


async def test_a_malformed_resend_request_never_reaches_the_handler(
    room: Room, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    asked: list[float | None] = []

    async def resend_overdue(*, owed_for: float | None = None) -> int:
        asked.append(owed_for)
        return 0

    monkeypatch.setattr(room.tracker, "resend_overdue", resend_overdue)
    caplog.set_level(logging.DEBUG, logger="cardroom")
    for body in (b"not json", b"[1]", b'{"pad": "' + b"x" * MAX_MESSAGE_BYTES + b'"}'):
        await room.broker.publish(body, room.subjects.resend)
    assert asked == []
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    await room.broker.publish(b"{}", room.subjects.resend)  # a gamemaster started
    assert asked == [0.0]
