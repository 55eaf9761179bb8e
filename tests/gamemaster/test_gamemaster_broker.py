"""The gamemaster's typed handlers through FastStream's test broker, on the in-memory event
store: the runtime's parsing and refusals in front of the real service, no NATS server and no
database. Its notifications are collected (``Sessions.notifier``); acks are paid into the
store as the acktracker would, and each released gate is sent on the release subject."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

import orjson
import pytest
from cardroom_engine import registry
from cardroom_eventstore import EventStore
from cardroom_eventstore.memory import InMemoryEventStore
from cardroom_gamemaster import Gamemaster, deadline_writes, session
from cardroom_gamemaster.commands import command_key
from cardroom_runtime.host import Runtime
from cardroom_wire import MAX_MESSAGE_BYTES, Release, Subjects, dumps
from faststream.nats import NatsBroker, TestNatsBroker
from support.highcard import BET_PLACED, GAME

if "highcard" not in registry:
    registry.register(GAME)


class Room:
    """A gamemaster on a test broker, the store it writes and what it published."""

    def __init__(self, broker: NatsBroker, store: InMemoryEventStore, gm: Gamemaster) -> None:
        self.broker = broker
        self.store = store
        self.gm = gm
        self.subjects = Subjects("unit")
        self.sent: list[tuple[str, str, dict[str, Any]]] = []  # (game, player, notification)

    async def publish(self, game: str, notes: Sequence[tuple[str, int, bytes]]) -> None:
        self.sent += [(game, player, json.loads(payload)) for player, _, payload in notes]

    async def ask(self, subject: str, body: bytes | dict[str, Any]) -> dict[str, Any]:
        raw = body if isinstance(body, bytes) else orjson.dumps(body)
        reply = await self.broker.request(raw, subject)
        answer: dict[str, Any] = orjson.loads(reply.body)
        return answer

    async def lobby(self, verb: str, asker: str, body: bytes | dict[str, Any]) -> dict[str, Any]:
        return await self.ask(f"unit.lobby.{verb}.{asker}", body)  # (any verb, even unknown)

    async def acknowledge_all(self, game: str) -> None:
        """Every addressee acknowledges; each released gate goes out on the release subject."""
        while pending := sorted((await self.store.pending(game)).items()):
            for version, players in pending:
                for player in sorted(players):
                    result = await self.store.ack(game, version, player)
                    if result.released_gate is not None:
                        release = Release(game=game, version=result.released_gate)
                        reply = await self.ask(self.subjects.release, dumps(release.body()))
                        assert reply["ok"] is True, reply

    async def dealt(self) -> tuple[str, str]:
        """A two-seat table of alice's that bob joined, dealt and acknowledged: (game, mover)."""
        created = await self.lobby("create", "alice", {"game_type": "highcard", "seats": 2})
        game = created["game"]
        assert (await self.lobby("join", "bob", {"game": game}))["ok"] is True
        await self.acknowledge_all(game)
        loaded = await self.gm.sessions.load(game)
        (mover,) = loaded.table.movers(loaded.state)
        self.sent.clear()
        return game, mover


async def no_hint(_: Any) -> None:
    pass


@pytest.fixture
async def room(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Room]:
    # the debounced deadline writes go at once: the stop at the end waits for none
    monkeypatch.setattr(deadline_writes, "WRITE_DELAY", 0.0)
    store = InMemoryEventStore()
    broker = NatsBroker()
    rt = Runtime(Subjects("unit"), broker, cast(EventStore, store), "nats://unused", "")
    gm = Gamemaster(rt)
    gm.deadlines.hint = no_hint
    gm.register()
    async with TestNatsBroker(broker) as test_broker:
        room = Room(test_broker, store, gm)
        gm.sessions.notifier = room
        yield room
        await gm.stop()


async def test_a_command_is_accepted_appended_and_notified(room: Room) -> None:
    game, mover = await room.dealt()
    version = await room.store.stream_version(game)

    reply = await room.ask(room.subjects.cmd(game, mover), {"type": "bet", "amount": 2, "id": "c1"})

    assert reply["ok"] is True
    records = await room.store.read_stream(game, version + 1)
    assert [r.type for r in records] == [BET_PLACED]
    assert {player for _, player, _ in room.sent} == {"alice", "bob"}
    assert await room.store.command_reply(game, command_key(mover, "c1")) == reply


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not json", "bad_json"),
        (b"[1]", "bad_request"),
        (b'{"type": "bet", "amount": 2}', "bad_request"),  # no command id
        (b'{"type": "bet", "amount": NaN, "id": "c1"}', "bad_json"),
        (b'{"type": "bet", "id": "c 1"}', "bad_id"),
        (b'{"type": "bet", "id": "' + b"x" * MAX_MESSAGE_BYTES + b'"}', "too_large"),
    ],
)
async def test_a_hostile_command_is_refused_with_its_code_and_nothing_appended(
    room: Room, body: bytes, code: str
) -> None:
    game, mover = await room.dealt()
    version = await room.store.stream_version(game)

    reply = await room.ask(room.subjects.cmd(game, mover), body)

    assert reply["ok"] is False
    assert reply["error"]["code"] == code
    assert await room.store.stream_version(game) == version
    assert room.sent == []


async def test_a_command_on_an_unsafe_subject_id_is_refused_bad_id(room: Room) -> None:
    game, _ = await room.dealt()
    version = await room.store.stream_version(game)
    reply = await room.ask(f"unit.cmd.{game}.b*b", {"type": "bet", "amount": 2, "id": "c1"})
    assert reply["error"]["code"] == "bad_id"
    assert await room.store.stream_version(game) == version


async def test_a_table_is_created_joined_and_started_through_the_lobby(room: Room) -> None:
    created = await room.lobby("create", "alice", {"game_type": "highcard", "seats": 3})
    assert created["ok"] is True
    game = created["game"]
    assert (await room.lobby("join", "bob", {"type": "join", "game": game}))["ok"] is True
    assert (await room.lobby("start", "bob", {"game": game}))["error"]["code"] == "not_creator"

    started = await room.lobby("start", "alice", {"game": game})

    assert started["ok"] is True
    assert started["table"]["status"] == "playing"
    got = await room.lobby("get", "carol", {"game": game})
    assert got["table"]["seats"] == started["table"]["seats"]
    assert {player for _, player, _ in room.sent} == {"alice", "bob"}


@pytest.mark.parametrize("verb", ["create", "join", "start", "get", "frobnicate"])
async def test_a_lobby_body_naming_another_verb_is_refused_and_changes_nothing(
    room: Room, verb: str
) -> None:
    created = await room.lobby("create", "alice", {"game_type": "highcard", "seats": 3})
    game = created["game"]
    version = await room.store.stream_version(game)
    other = "start" if verb != "start" else "join"

    reply = await room.lobby(verb, "alice", {"type": other, "game": game})

    assert reply["ok"] is False
    assert reply["error"]["code"] == "bad_request"
    assert await room.store.stream_version(game) == version


async def test_naming_games_that_do_not_exist_leaves_nothing_behind(room: Room) -> None:
    """Every game id a player may name costs the gamemaster nothing once answered: a stranger
    naming ever new ids in commands and syncs must not grow what it keeps per game (memory a
    player could fill). Unmended, each id left a lock behind."""
    game, _ = await room.dealt()
    kept = dict(room.gm.sessions._locks), len(room.gm.sessions.cache)
    for i in range(50):
        ghost = f"ghost{i}"
        answer = await room.ask(f"unit.cmd.{ghost}.mallory", {"type": "bet", "id": f"c{i}"})
        assert answer["error"]["code"] == "unknown_game", answer
        await room.broker.publish(b'{"type": "sync"}', f"unit.sync.{ghost}.mallory")
    assert (dict(room.gm.sessions._locks), len(room.gm.sessions.cache)) == kept
    assert list(kept[0]) == [game]


async def test_a_game_evicted_while_its_lock_is_held_keeps_one_lock(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache may let a game go while a task holds the game's lock (another game's load
    evicts it): whoever asks for that game's lock meanwhile must wait for the same lock, not
    get a new one (two tasks would change one game at once). The lock goes once nobody holds
    it and the game is not kept."""
    sessions = room.gm.sessions
    game, _ = await room.dealt()
    other, _ = await room.dealt()
    monkeypatch.setattr(session, "CACHE_SIZE", 1)
    entered = asyncio.Event()

    async def second() -> None:
        async with sessions.lock(game):
            entered.set()

    async with sessions.lock(game):
        await sessions.load(other, fresh=True)  # remembered: the cache lets ``game`` go
        assert game not in sessions.cache
        waiting = asyncio.create_task(second())
        # one turn of the loop runs the new task up to its first suspension: the lock's
        # acquire, which returns at once when the lock is free (a second lock would be)
        await asyncio.sleep(0)
        assert sessions.lock(game).users == 2
        assert not entered.is_set()
    await waiting
    assert entered.is_set()
    assert game not in sessions._locks
