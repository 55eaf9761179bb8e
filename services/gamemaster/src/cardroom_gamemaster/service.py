"""The gamemaster: lobby requests and player commands -> the table aggregate -> events.

One command, one transaction: the events it causes, their pending acks and the command id's
answer are appended together (optimistic concurrency on the game's version). The gate is read
from the store, not from memory, so several gamemasters can serve one game: the loser of a
race reloads and tries again. Follow-ups run when the acktracker reports a released gate.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from cardroom_engine import Event, Rejection, Table, TableState, registry
from cardroom_eventstore import Append, ConcurrencyError, NewEvent, readmodels
from cardroom_runtime.host import Service, replying
from cardroom_wire import (
    Command,
    CreateTable,
    ErrorCode,
    GetTable,
    JoinTable,
    ListTables,
    StartTable,
    WireError,
    decode_json,
    new_id,
    ok,
    parse,
)

log = logging.getLogger("cardroom.gamemaster")

CACHE_SIZE = 10_000
RETRIES = 5
WORKERS = 64  # requests handled at once; one game's are serialised by its lock


@dataclass
class Loaded:
    table: Table
    state: TableState


class Gamemaster(Service):
    name = "gamemaster"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rng = random.SystemRandom()
        self._cache: OrderedDict[str, Loaded] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    def register(self) -> None:
        broker, s = self.rt.broker, self.subjects
        broker.subscriber(s.lobby_all, queue="gamemaster", title="lobby", max_workers=WORKERS)(
            replying(self.on_lobby)
        )
        broker.subscriber(s.cmd_all, queue="gamemaster", title="commands", max_workers=WORKERS)(
            replying(self.on_command)
        )
        broker.subscriber(s.release, queue="gamemaster", title="release", max_workers=WORKERS)(
            replying(self.on_release)
        )

    # -- loading -------------------------------------------------------------------------------
    def _lock(self, game: str) -> asyncio.Lock:
        lock = self._locks.get(game)
        if lock is None:
            lock = self._locks[game] = asyncio.Lock()
        return lock

    async def load(self, game: str, *, fresh: bool = False) -> Loaded:
        cached = None if fresh else self._cache.get(game)
        if cached is not None:
            # cheap staleness check: another gamemaster may have appended
            self._cache.move_to_end(game)
            return cached
        records = await self.store.read_stream(game)
        if not records:
            raise WireError(ErrorCode.UNKNOWN_GAME, f"no game {game!r}")
        table = Table(registry.get(records[0].stream_type))
        state = table.replay([{**r.data, "type": r.type} for r in records])
        loaded = Loaded(table, state)
        self._remember(game, loaded)
        return loaded

    def _remember(self, game: str, loaded: Loaded) -> None:
        self._cache[game] = loaded
        self._cache.move_to_end(game)
        while len(self._cache) > CACHE_SIZE:
            old, _ = self._cache.popitem(last=False)
            self._locks.pop(old, None)

    async def _append(
        self,
        loaded: Loaded,
        events: list[Event],
        *,
        command_id: str | None = None,
        actor: str | None = None,
        handled_gate: int | None = None,
    ) -> TableState:
        """Append events with their addressees; returns the new state (cached)."""
        state = loaded.state
        new: list[NewEvent] = []
        for event in events:
            after = loaded.table.evolve(state, event)
            addressees = frozenset(loaded.table.notify(state, event, after))
            data = {k: v for k, v in event.items() if k != "type"}
            meta: dict[str, Any] = {"actor": actor} if actor else {}
            if command_id:
                meta["command_id"] = command_id
            new.append(NewEvent(event["type"], data, meta, addressees))
            state = after
        reply = ok(version=state.version) if command_id else None
        await self.store.append(
            Append(
                stream_id=state.game_id,
                stream_type=state.game_type,
                expected_version=loaded.state.version,
                events=new,
                command_id=command_id,
                reply=reply,
                handled_gate=handled_gate,
            )
        )
        loaded.state = state
        if new and not any(e.addressees for e in new):
            # nobody has to acknowledge: the gate is open at once
            await self._settle(loaded)
        return loaded.state

    async def _settle(self, loaded: Loaded) -> None:
        """Run the follow-up of a batch that nobody has to acknowledge (``_append`` recurses
        for as long as the follow-ups need no acknowledgement either)."""
        events = loaded.table.follow_up(loaded.state, self.rng)
        if events:
            await self._append(loaded, events)

    # -- lobby ---------------------------------------------------------------------------------
    async def on_lobby(self, subject: str, body: bytes) -> dict[str, Any]:
        verb = subject.rsplit(".", 1)[-1]
        payload = decode_json(body)
        if isinstance(payload, dict) and "type" not in payload:
            payload = {**payload, "type": verb}
        if verb == "create":
            return await self._create(parse(CreateTable, payload))
        if verb == "join":
            req = parse(JoinTable, payload)
            return await self._lobby_change(req.game, req.player, "join")
        if verb == "start":
            start = parse(StartTable, payload)
            return await self._lobby_change(start.game, start.player, "start")
        if verb == "list":
            lst = parse(ListTables, payload)
            found = await readmodels.list_tables(
                self.store.engine, game_type=lst.game_type, status=lst.status
            )
            return ok(tables=found, game_types=registry.names())
        if verb == "get":
            get = parse(GetTable, payload)
            loaded = await self.load(get.game, fresh=True)
            return ok(table=loaded.state.summary())
        raise WireError(ErrorCode.BAD_REQUEST, f"unknown lobby request {verb!r}")

    async def _create(self, req: CreateTable) -> dict[str, Any]:
        game_id = req.game or new_id("g")
        table = Table(registry.get(req.game_type))
        events = table.create(game_id, req.player, req.config, req.seats)
        async with self._lock(game_id):
            state0 = table.replay(events[:1])
            loaded = Loaded(table, state0)
            try:
                await self.store.append(
                    Append(
                        stream_id=game_id,
                        stream_type=req.game_type,
                        expected_version=0,
                        events=[
                            NewEvent(e["type"], {k: v for k, v in e.items() if k != "type"})
                            for e in events
                        ],
                    )
                )
            except ConcurrencyError:
                raise WireError(ErrorCode.CONFLICT, f"game {game_id!r} exists already") from None
            loaded.state = table.replay(events)
            self._remember(game_id, loaded)
        return ok(game=game_id, table=loaded.state.summary())

    async def _lobby_change(self, game: str, player: str, verb: str) -> dict[str, Any]:
        for attempt in range(RETRIES):
            async with self._lock(game):
                loaded = await self.load(game, fresh=attempt > 0)
                if verb == "join":
                    events = loaded.table.join(loaded.state, player, self.rng)
                else:
                    events = loaded.table.start(loaded.state, player, self.rng)
                try:
                    state = await self._append(loaded, events, actor=player)
                except ConcurrencyError:
                    self._cache.pop(game, None)
                    continue
                return ok(game=game, version=state.version, table=state.summary())
        raise WireError(ErrorCode.CONFLICT, "the table is busy; try again")

    # -- commands --------------------------------------------------------------------------------
    async def on_command(self, subject: str, body: bytes) -> dict[str, Any]:
        _, game, player = self.subjects.parse_input(subject)
        command = parse(Command, decode_json(body))
        previous = await self.store.command_reply(game, command.id)
        if previous is not None:
            return previous
        for attempt in range(RETRIES):
            async with self._lock(game):
                loaded = await self.load(game, fresh=attempt > 0)
                gate_open = await self.store.gate_open(game)
                events = loaded.table.decide(
                    loaded.state, player, command.fields(), self.rng, gate_open=gate_open
                )
                if not events:
                    return ok(version=loaded.state.version)
                try:
                    state = await self._append(loaded, events, command_id=command.id, actor=player)
                except ConcurrencyError:
                    self._cache.pop(game, None)
                    previous = await self.store.command_reply(game, command.id)
                    if previous is not None:  # the same command won on another instance
                        return previous
                    continue
                return ok(version=state.version)
        raise WireError(ErrorCode.CONFLICT, "the game is busy; try again")

    # -- follow-ups ------------------------------------------------------------------------------
    async def on_release(self, subject: str, body: bytes) -> dict[str, Any]:
        payload = decode_json(body)
        game, version = str(payload["game"]), int(payload["version"])
        for attempt in range(RETRIES):
            async with self._lock(game):
                loaded = await self.load(game, fresh=attempt > 0)
                if loaded.state.version != version:  # the cache may be behind another instance
                    loaded = await self.load(game, fresh=True)
                if loaded.state.version != version or not await self.store.gate_open(game):
                    # stale: something was appended since, or another gate is pending
                    await self.store.mark_gate_handled(game, version)
                    return ok(handled=False)
                events = loaded.table.follow_up(loaded.state, self.rng)
                try:
                    await self._append(loaded, events, handled_gate=version)
                except ConcurrencyError:
                    self._cache.pop(game, None)
                    continue
                return ok(handled=True, version=loaded.state.version)
        raise WireError(ErrorCode.CONFLICT, "the game is busy")


__all__ = ["Gamemaster", "Rejection"]
