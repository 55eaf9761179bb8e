"""``cardroom status`` on a played stack: what it shows is what the store holds."""

from __future__ import annotations

import asyncio

from cardroom_bots import BotPlayer
from cardroom_client import Client
from cardroom_eventstore.status import snapshot
from rich.console import Console
from support.stack import Stack, wait_until

from cardroom.status_cli import render


async def test_the_snapshot_counts_tables_seats_gates_and_lags(stack: Stack) -> None:
    empty = await snapshot(stack.store.engine)
    assert empty.tables == []
    players = [
        BotPlayer(await Client.connect(stack.nats_url, f"st{i}", subject_root=stack.root))
        for i in range(4)
    ]
    try:
        game = await players[0].create("highcard", {"rounds": 2}, seats=2)
        await players[1].join(game, "highcard")
        lobby = await players[2].create("highcard", {}, seats=2)  # one seat, waiting
        async with asyncio.timeout(60):
            await asyncio.gather(players[0].finished[game].wait(), players[1].finished[game].wait())
    finally:
        await asyncio.gather(*(p.close() for p in players), return_exceptions=True)

    async def settled() -> bool:
        snap = await snapshot(stack.store.engine)
        rows = {(t.game_type, t.status): t for t in snap.tables}
        return (
            snap.relay_behind == 0
            and snap.projector_behind == 0
            and ("highcard", "finished") in rows
            and ("highcard", "lobby") in rows
        )

    await wait_until(settled)  # the relay and the projector follow the games
    snap = await snapshot(stack.store.engine)
    rows = {(t.game_type, t.status): t for t in snap.tables}
    assert (rows["highcard", "finished"].tables, rows["highcard", "finished"].seats) == (1, 2)
    assert (rows["highcard", "lobby"].tables, rows["highcard", "lobby"].seats) == (1, 1)
    assert snap.gates_waiting == 0  # a finished game holds no gate
    events = len(await stack.store.read_stream(game)) + len(await stack.store.read_stream(lobby))
    assert snap.events_last_minute == events
    # and the command shows them
    console = Console(record=True, width=100)
    console.print(render(snap))
    text = console.export_text()
    assert "highcard" in text
    assert "finished" in text
    assert "gates waiting for acks" in text
