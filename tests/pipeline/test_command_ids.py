"""A command id names one player's command: another seat naming the same id sends its own
command, applied and answered as its own, never the first one's answer (a version counted as
the other player sees the game) with its own move dropped. Through the real services and
PostgreSQL (tests/gamemaster has the same on the in-memory store)."""

from __future__ import annotations

import asyncio

from cardroom_client import Client
from cardroom_wire import Notification
from support.highcard import BET_PLACED
from support.stack import Stack


async def _prompted(client: Client) -> asyncio.Queue[Notification]:
    """The notifications that give ``client`` something to do (after it acknowledged them)."""
    queue: asyncio.Queue[Notification] = asyncio.Queue()

    async def handler(note: Notification) -> None:
        pass

    async def acted(note: Notification) -> None:
        if note.actions:
            queue.put_nowait(note)

    client.on_notification(handler, after_ack=acted)
    return queue


async def test_a_command_id_used_by_another_seat_is_this_seats_own_command(stack: Stack) -> None:
    alice, bob = await stack.client("alice"), await stack.client("bob")
    clients = {"alice": alice, "bob": bob}
    prompts = {name: await _prompted(c) for name, c in clients.items()}
    game = await alice.create("highcard", {"rounds": 1}, seats=2)
    await bob.join(game)  # the full table starts

    async def next_prompt() -> str:
        """Whoever is asked to act next (seat order is the game's)."""
        waits = {name: asyncio.ensure_future(q.get()) for name, q in prompts.items()}
        try:
            async with asyncio.timeout(30):
                done, _ = await asyncio.wait(waits.values(), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits.values():
                w.cancel()
        first = next(iter(done))
        return next(name for name, w in waits.items() if w is first)

    first = await next_prompt()
    own = await clients[first].command(game, "bet", command_id="c1", amount=1)
    second = await next_prompt()
    assert second != first

    # the other seat names the same id: its own command, taken and answered as its own
    version = await clients[second].command(game, "bet", command_id="c1", amount=2)

    async def bets() -> list[tuple[object, object, object]]:
        return [
            (r.metadata.get("actor"), r.metadata.get("command_id"), r.data.get("amount"))
            for r in await stack.store.read_stream(game)
            if r.type == BET_PLACED
        ]

    assert await bets() == [(first, "c1", 1), (second, "c1", 2)]
    assert version > own
    # each seat's retry of its c1 is answered as its first time, and bets nothing more (the
    # game itself may move on meanwhile, as the clients acknowledge)
    assert await clients[first].command(game, "bet", command_id="c1", amount=1) == own
    assert await clients[second].command(game, "bet", command_id="c1", amount=2) == version
    assert await bets() == [(first, "c1", 1), (second, "c1", 2)]
