"""A bot player closing while its games still send it notifications."""

from __future__ import annotations

import asyncio
from typing import Any

from cardroom_bots.players import BotPlayer
from cardroom_wire import Notification
from support.cancellation import LosesFirstCancellation, ends


class _Client:
    """What BotPlayer needs of a client: a notification hook, a player id, close."""

    player = "p1"
    closed = False

    def on_notification(self, observe: Any, *, after_ack: Any) -> None:
        self.act = after_ack

    async def close(self) -> None:
        self.closed = True


def _note(game: str) -> Notification:
    return Notification.model_validate(
        {
            "game": game,
            "player": "p1",
            "seq": 1,
            "version": 1,
            "message": {"type": "Turn"},
            "actions": [{}],
        }
    )


async def test_a_notification_arriving_while_closing_starts_no_choice() -> None:
    client = _Client()
    player = BotPlayer(client)  # type: ignore[arg-type]
    player.bots = {"g1": object(), "g2": object()}  # type: ignore[dict-item]
    arrived, started = asyncio.Event(), asyncio.Event()

    async def choosing(game: str) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            # the other game's news comes in while this choice is being cancelled
            await client.act(_note("g2"))
            arrived.set()
            raise

    player._acting["g1"] = asyncio.create_task(choosing("g1"))
    await started.wait()
    await player.close()
    assert arrived.is_set()
    assert client.closed
    assert player._acting == {}


async def test_close_ends_a_choice_whose_cancellation_was_lost() -> None:
    """A send that carries on after its first cancellation: close cancels again until the
    choice has ended."""
    client = _Client()
    player = BotPlayer(client)  # type: ignore[arg-type]
    send = LosesFirstCancellation()
    player._acting["g1"] = asyncio.create_task(send.wait())
    await send.entered.wait()
    assert await ends(player.close()), "close waited for ever on the choice"
    assert send.cancellations == 2
    assert client.closed
