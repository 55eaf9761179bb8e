"""Hostile commands, acks and syncs, on a running cardroom while bot tables play: each is
refused cleanly with a stable code (or, sent with a reply address that is not its asker's,
answered nowhere and counted by the edge), changes nothing in the store, and logs no error.

Run with ``-s`` to see what was tried per entry point.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest
from cardroom_client import CardroomError
from cardroom_eventstore import TO
from cardroom_gamemaster import Gamemaster
from cardroom_wire import Notification
from support.hostile import (
    DROP,
    OK,
    BotTables,
    Case,
    Raw,
    World,
    bodies,
    body_kinds,
    field_cases,
    finish,
    id_kinds,
    prepare,
    reply_kinds,
    run_cases,
    run_generated,
    subject_kinds,
)
from support.stack import Stack, projected, wait_until

MIN_KINDS = 40

AMOUNTS: list[tuple[str, Any, str]] = [
    ("amount: zero", 0, "bad_request"),
    ("amount: above the game's limit", 4, "bad_request"),
    ("amount: -1", -1, "bad_request"),
    ("amount: 2^31", 2**31, "bad_request"),
    ("amount: 2^63", 2**63, "bad_request"),
    ("amount: -2^63", -(2**63), "bad_request"),
    ("amount: 2^64 - 1", 2**64 - 1, "bad_request"),
    ("amount: 2^64", 2**64, "bad_request"),
    ("amount: 1e300", 1e300, "bad_request"),
    ("amount: 1.5", 1.5, "bad_request"),
    ("amount: true", True, "bad_request"),
    ("amount: false", False, "bad_request"),
    ("amount: a numeric string", "1", "bad_request"),
    ("amount: a whole float", 1.0, "bad_request"),
    ("amount: a word", "two", "bad_request"),
    ("amount: null", None, "bad_request"),
    ("amount: a list", [1], "bad_request"),
    ("amount: an object", {"n": 1}, "bad_request"),
    ("amount: nested 900 deep", Raw(b"[" * 900 + b"1" + b"]" * 900), "bad_request"),
]

VERSIONS: list[tuple[str, Any, str]] = [
    ("version: zero", 0, "bad_request"),
    ("version: -1", -1, "bad_request"),
    ("version: 2^31 (past the 32-bit column)", 2**31, "bad_request"),
    ("version: 2^32", 2**32, "bad_request"),
    ("version: 2^63", 2**63, "bad_request"),
    ("version: -2^63", -(2**63), "bad_request"),
    ("version: 2^64 - 1", 2**64 - 1, "bad_request"),
    ("version: 2^64", 2**64, "bad_request"),
    ("version: 10^30", 10**30, "bad_request"),
    ("version: a numeric string", "3", "bad_request"),
    ("version: a whole float", 3.0, "bad_request"),
    ("version: 1.5", 1.5, "bad_request"),
    ("version: true", True, "bad_request"),
    ("version: false", False, "bad_request"),
    ("version: null", None, "bad_request"),
    ("version: a list", [3], "bad_request"),
    ("version: an object", {"v": 3}, "bad_request"),
    # a version not reached is answered as one not owed: the answer tells nothing of how
    # far the table is (a player is not told of every event)
    ("version: the largest the store holds, not reached", 2**31 - 1, "not_addressee"),
    ("version: not reached yet", 99_999, "not_addressee"),
    ("version: the table's creation, for nobody", 1, "not_addressee"),
]

EXTRA: list[tuple[str, Any, str]] = [
    ("x: an extra field", 1, "bad_request"),
    ("player: a body that names another player", "bob", "bad_request"),
    ("actor: a body that names another actor", "bob", "bad_request"),
    ("game: a body that names another game", "nosuchgame", "bad_request"),
]


async def _addressed(world: World, game: str, player: str) -> list[int]:
    """The versions of ``game`` that were sent to ``player``."""
    return [
        r.version
        for r in await world.stack.store.read_stream(game)
        if player in r.metadata.get(TO, [])
    ]


def _cmd(w: World, game: str, player: str) -> str:
    return f"{w.stack.root}.cmd.{game}.{player}"


async def cmd_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.cmd(w.game, "alice")
    base = {"type": "bet", "id": "hc1", "amount": 1}  # alice's move, were it handled
    valid = orjson.dumps(base)
    other = orjson.dumps({**base, "id": "hc2"})
    cases = [
        *body_kinds(subject, base),
        Case("field type: missing", subject, b'{"id":"hc1","amount":1}', "bad_request"),
        *field_cases(
            subject,
            base,
            [
                ("type: empty", "", "bad_request"),
                ("type: 65 characters", "b" * 65, "bad_request"),
                ("type: an integer", 1, "bad_request"),
                ("type: null", None, "bad_request"),
                ("type: a list", ["bet"], "bad_request"),
                ("type: a command the game has not", "dance", "unknown_command"),
                ("type: in capitals", "BET", "unknown_command"),
                ("type: an ack", "ack", "unknown_command"),
                ("type: a lobby verb", "join", "unknown_command"),
                ("type: non-ASCII", "bét", "unknown_command"),
            ],
        ),
        Case("field id: missing", subject, b'{"type":"bet","amount":1}', "bad_request"),
        *field_cases(subject, base, id_kinds("id", "hc1")),
        Case("field amount: missing", subject, b'{"type":"bet","id":"hc1"}', "bad_request"),
        *field_cases(subject, base, AMOUNTS),
        *field_cases(subject, base, EXTRA),
        Case(
            "field amount: on a fold",
            subject,
            b'{"type":"fold","id":"f1","amount":1}',
            "bad_request",
        ),
        Case("turn: a seated player out of turn", w.s.cmd(w.game, "bob"), other, "not_your_turn"),
        Case("seat: a player not seated", w.s.cmd(w.game, "carol"), other, "not_seated"),
        Case("game: nobody's", w.s.cmd("nosuchgame", "alice"), other, "unknown_game"),
        Case("game: not started", w.s.cmd(w.lobby, "alice"), other, "not_started"),
        Case("game: finished, as its player", w.s.cmd(w.finished, "dave"), other, "game_finished"),
        Case("game: finished, as a stranger", w.s.cmd(w.finished, "alice"), other, "game_finished"),
        *subject_kinds(w, lambda g, a: _cmd(w, g, a), other, game=w.game),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


async def ack_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.ack(w.game, "alice")
    mine = await _addressed(w, w.game, "alice")
    bobs = set(await _addressed(w, w.game, "bob")) - set(mine)
    assert mine
    assert bobs
    base = {"type": "ack", "version": mine[-1]}  # acknowledged before: a harmless repeat
    valid = orjson.dumps(base)
    cases = [
        *body_kinds(subject, base),
        Case("field version: missing", subject, b'{"type":"ack"}', "bad_request"),
        *field_cases(subject, base, VERSIONS),
        Case("field type: missing", subject, orjson.dumps({"version": mine[-1]}), "bad_request"),
        *field_cases(
            subject,
            base,
            [
                ("type: another request's", "sync", "bad_request"),
                ("type: in capitals", "ACK", "bad_request"),
                ("type: an integer", 1, "bad_request"),
                ("type: null", None, "bad_request"),
                ("type: a list", ["ack"], "bad_request"),
            ],
        ),
        *field_cases(subject, base, EXTRA),
        Case(
            "addressee: a version sent to another player only",
            subject,
            orjson.dumps({"type": "ack", "version": min(bobs)}),
            "not_addressee",
        ),
        Case("seat: a player not seated", w.s.ack(w.game, "carol"), valid, "not_addressee"),
        Case("game: nobody's", w.s.ack("nosuchgame", "alice"), valid, "unknown_game"),
        Case(
            "game: a table in the lobby",
            w.s.ack(w.lobby, "alice"),
            b'{"type":"ack","version":1}',
            "not_addressee",
        ),
        Case(
            "game: finished, not reached",
            w.s.ack(w.finished, "dave"),
            orjson.dumps({"type": "ack", "version": 99_999}),
            "not_addressee",
        ),
        *subject_kinds(w, lambda g, a: f"{w.stack.root}.ack.{g}.{a}", valid, game=w.game),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


async def sync_cases(w: World) -> tuple[str, list[Case]]:
    subject = w.s.sync(w.game, "alice")
    base = {"type": "sync"}
    valid = orjson.dumps(base)
    # a sync with no body is a sync: those kinds are left out (an oversized blank one, which
    # should be too_large, is among the lenient cases below)
    blank = ("body: empty", "body: whitespace only", "body: over 64 KiB of whitespace")
    generic = [c for c in body_kinds(subject, base) if c.kind not in blank]
    cases = [
        *generic,
        *field_cases(
            subject,
            base,
            [
                ("type: another request's", "ack", "bad_request"),
                ("type: in capitals", "SYNC", "bad_request"),
                ("type: an integer", 1, "bad_request"),
                ("type: null", None, "bad_request"),
                ("type: a list", ["sync"], "bad_request"),
                ("type: an object", {"type": "sync"}, "bad_request"),
                ("type: 60,000 characters", "s" * 60_000, "bad_request"),
            ],
        ),
        Case("seat: a player not seated", w.s.sync(w.game, "carol"), valid, "not_seated"),
        Case("seat: a finished game's stranger", w.s.sync(w.finished, "bob"), valid, "not_seated"),
        Case("game: nobody's", w.s.sync("nosuchgame", "alice"), valid, "unknown_game"),
        *subject_kinds(w, lambda g, a: f"{w.stack.root}.sync.{g}.{a}", valid, game=w.game),
        *reply_kinds(w, subject, valid),
    ]
    return subject, cases


ENTRIES = {"cmd": cmd_cases, "ack": ack_cases, "sync": sync_cases}
FIELDS = {"cmd": ["id", "amount"], "ack": ["version"], "sync": []}
TYPES = {"cmd": ["bet", "fold"], "ack": ["ack"], "sync": ["sync"]}


@pytest.mark.parametrize("entry", list(ENTRIES))
async def test_hostile_player_requests(
    stack: Stack, entry: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    world = await prepare(stack)
    async with BotTables(stack) as bots:
        subject, cases = await ENTRIES[entry](world)
        tally = await run_cases(world, entry, cases)
        await run_generated(world, tally, subject, bodies(FIELDS[entry], TYPES[entry]))
        if entry == "sync":
            await _sync_acts_for_its_subject(world)
        await finish(world, await bots.stop(), caplog.records)
    print(tally.summary())
    assert tally.codes[DROP] >= 10
    assert len(tally.kinds) >= MIN_KINDS, tally.kinds
    assert OK not in tally.codes


async def _sync_acts_for_its_subject(world: World) -> None:
    """A sync answers the view of the player its subject names (a body naming anyone is
    refused: see test_lenient_sync_bodies_are_refused)."""
    for data in (b'{"type":"sync"}',):
        answer = await world.prober.ask(world.s.sync(world.game, "alice"), data)
        assert answer["ok"] is True
        assert answer["player"] == "alice"
        assert "card" in answer["view"]["state"]
        bob = await world.prober.ask(world.s.sync(world.game, "bob"), b'{"type":"sync"}')
        assert answer["view"]["state"]["card"] != bob["view"]["state"]["card"]


# -- a sync body is read as strictly as any request ----------------------------------------

LAX = [
    pytest.param(b" " * 65_537, id="sync of 64 KiB of whitespace"),
    pytest.param(b"{}", id="sync without type"),
    pytest.param(b'{"type":"sync","x":1}', id="sync with an extra field"),
    pytest.param(b'{"type":"sync","player":"bob"}', id="sync naming another player"),
]


@pytest.mark.parametrize("data", LAX)
async def test_lenient_sync_bodies_are_refused(stack: Stack, data: bytes) -> None:
    alice, bob = await stack.client("alice"), await stack.client("bob")
    game = await alice.create("highcard", {}, seats=2)
    await bob.join(game)
    await projected(stack.store, game)  # so that a sync is answered from the projection
    with pytest.raises(CardroomError) as refused:
        await alice.request(alice.subjects.sync(game, "alice"), data)
    assert refused.value.code in ("bad_request", "too_large")


async def test_a_table_read_does_not_put_the_game_back(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``get`` reads the table without the game's lock, so an append may commit while it
    reads: what it read must not become the state the next command is judged on (a player's
    legal move would be refused ``not_your_turn``, and the table would wait for a move that
    never comes)."""
    assert stack.host is not None
    gm = next(s for s in stack.host.services if isinstance(s, Gamemaster))
    alice, bob = await stack.client("alice"), await stack.client("bob")
    turns: dict[str, list[Notification]] = {"alice": [], "bob": []}
    hold = asyncio.Event()  # alice acknowledges her own bet only once this is set

    def handler(player: str) -> Callable[[Notification], Awaitable[None]]:
        async def on(note: Notification) -> None:
            if note.actions:
                turns[player].append(note)
            if player == "alice" and note.message.get("type") == "Bet":
                await hold.wait()

        return on

    alice.on_notification(handler("alice"))
    bob.on_notification(handler("bob"))
    game = await alice.create("highcard", {}, seats=2)
    await bob.join(game)
    await wait_until(lambda: bool(turns["alice"]))

    # a get that reads the stream, then waits while alice moves, then finishes; only the
    # get's read waits (a release being handled may read the game too, under its lock, and
    # must not be held up: alice's move would wait for that lock)
    read, moved = asyncio.Event(), asyncio.Event()
    store = gm.store_of(game)
    original = store.read_stream
    summarise = gm.lobby.summary
    in_get: contextvars.ContextVar[bool] = contextvars.ContextVar("in_get", default=False)

    async def summary(game_id: str) -> Any:
        token = in_get.set(True)  # read_stream below runs in this same task
        try:
            return await summarise(game_id)
        finally:
            in_get.reset(token)

    async def slow_read(stream_id: str, *args: Any, **kwargs: Any) -> Any:
        records = await original(stream_id, *args, **kwargs)
        if stream_id == game and in_get.get() and not read.is_set():
            read.set()
            await moved.wait()
        return records

    gm.sessions.cache.pop(game)  # not cached: the get reads the store
    monkeypatch.setattr(gm.lobby, "summary", summary)
    monkeypatch.setattr(store, "read_stream", slow_read)
    getting = asyncio.create_task(alice.table(game))
    await read.wait()
    version = await alice.send(game, {"type": "bet", "amount": 1})
    moved.set()
    summary = await getting
    monkeypatch.undo()
    assert summary["version"] < version  # it did read before the move
    # nothing moves the game meanwhile (alice holds her ack): the gamemaster's copy is the
    # store's, not the one the get read
    cached = gm.sessions.cached(game)
    assert cached is None or cached.state.version == await stack.store.stream_version(game)

    # and the game goes on from alice's move: bob's turn comes, and his move is taken
    hold.set()
    await wait_until(lambda: bool(turns["bob"]))
    assert await bob.send(game, {"type": "bet", "amount": 2}) > version
