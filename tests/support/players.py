"""Players for the timers and chaos tests: bots whose every notification is recorded, and
helpers that read a game back from the store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cardroom_bots import BotPlayer
from cardroom_client import Client
from cardroom_engine import Table, TableState, registry
from cardroom_eventstore import EventStore, RecordedEvent
from cardroom_wire import Notification
from support.stack import Recorder, as_event


@dataclass
class Seat:
    """A bot (or a client that only listens) and what its handler received."""

    client: Client
    recorder: Recorder
    bot: BotPlayer | None = None

    @property
    def player(self) -> str:
        return self.client.player


def recorded_bot(client: Client, recorder: Recorder | None = None) -> Seat:
    """A bot that plays, with every notification it handles recorded (in handling order)."""
    rec = recorder or Recorder()
    bot = BotPlayer(client)
    observe = bot._observe

    async def handler(note: Notification) -> None:
        await rec(note)
        await observe(note)

    client.on_notification(handler, after_ack=bot._act)
    return Seat(client, rec, bot)


def listener(client: Client, recorder: Recorder | None = None) -> Seat:
    """A player who receives and acknowledges everything and never acts."""
    rec = recorder or Recorder()
    client.on_notification(rec)
    return Seat(client, rec)


Connect = Callable[[str], Awaitable[Client]]


async def gone(seat: Seat, timeout: float = 10) -> None:
    """The seat's player leaves: its bot and connection close (in bounded time: Client.close
    can wait for ever on a feed task whose cancellation Python 3.11's asyncio.wait_for
    swallowed, a libs/client bug)."""
    closing = asyncio.ensure_future(seat.bot.close() if seat.bot else seat.client.close())
    await asyncio.wait([closing], timeout=timeout)


async def game_records(store: EventStore, game: str) -> list[RecordedEvent]:
    return await store.read_stream(game)


async def replayed(store: EventStore, game: str) -> TableState:
    records = await store.read_stream(game)
    table = Table(registry.get(records[0].stream_type))
    return table.replay([as_event(r) for r in records])


def check_stream(records: list[RecordedEvent]) -> None:
    """Contiguous versions from 1, and no command id applied twice."""
    versions = [r.version for r in records]
    assert versions == list(range(1, len(records) + 1)), versions
    ids: list[Any] = []
    last_batch: tuple[Any, Any] | None = None
    for r in records:
        command = r.metadata.get("command_id")
        if not command:
            continue
        # one command's events are one batch (one transaction): same command id, consecutive
        batch = (command, r.recorded_at)
        if batch != last_batch:
            ids.append(command)
        last_batch = batch
    assert len(ids) == len(set(ids)), "a command was applied twice"
