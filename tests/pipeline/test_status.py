"""``cardroom status`` on a played stack: what it shows is what the store holds."""

from __future__ import annotations

import asyncio
import collections
import contextlib

from cardroom_bots import BotPlayer
from cardroom_client import CardroomError, Client
from cardroom_eventstore.status import snapshot
from rich.console import Console
from support.stack import Stack, wait_until

from cardroom.status_cli import (
    NOT_ERRORS,
    WINDOW,
    ErrorWindow,
    error_counts,
    read_errors,
    render,
    render_errors,
)


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


async def test_the_view_counts_errors_by_code_from_the_metrics_endpoint(stack: Stack) -> None:
    assert stack.host is not None  # the services run in this process: their metrics here
    port = stack.host.metrics.serve(port=0, addr="127.0.0.1")
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        window = ErrorWindow()
        start = read_errors([url])
        assert start is not None
        window.add(0.0, start)
        ann = await Client.connect(stack.nats_url, "sterr", subject_root=stack.root)
        try:
            for _ in range(3):
                with contextlib.suppress(CardroomError):
                    await ann.send("no-such-game", {"type": "bet", "amount": 1})
        finally:
            await ann.close()
        after = read_errors([url])
        assert after is not None
        window.add(1.0, after)
        recent = window.recent()
        assert sum(recent.values()) >= 3
        [(code, n)] = [(c, n) for c, n in recent.items() if after[c] - start.get(c, 0) >= 3]
        assert n >= 3
        assert code not in NOT_ERRORS
        snap = await snapshot(stack.store.engine)
        console = Console(record=True, width=100)
        console.print(render(snap, render_errors(recent, "last minute")))
        text = console.export_text()
        assert "errors (last minute)" in text
        assert code in text
        # a "not now" refusal is shown apart from the faults, after them
        mixed = render_errors(collections.Counter({"awaiting_acks": 50, code: 3}), "last minute")
        console = Console(record=True, width=100)
        console.print(mixed)
        shown = console.export_text()
        assert shown.index(code) < shown.index("awaiting_acks (not now: sent again)")
        # a minute later, with nothing new, the window shows none
        window.add(1.0 + WINDOW + 1, after)
        assert window.recent() == {}
    finally:
        stack.host.metrics.close()
    assert read_errors([url], timeout=0.5) is None  # nobody answers: said so, not zero


def test_error_counts_read_the_requests_counter_and_a_restart_counts_from_zero() -> None:
    text = (
        "# TYPE cardroom_requests_total counter\n"
        'cardroom_requests_total{service="gamemaster",route="commands",outcome="ok"} 7.0\n'
        'cardroom_requests_total{service="gamemaster",route="commands",outcome="not_seated"} 2.0\n'
        'cardroom_requests_total{service="lobby",route="lobby",outcome="bad_request"} 1.0\n'
        'cardroom_requests_total{service="relay",route="x",outcome="none"} 4.0\n'
    )
    counts = error_counts(text)
    assert counts == {"not_seated": 2, "bad_request": 1}
    window = ErrorWindow()
    window.add(0, counts)
    window.add(10, error_counts(text.replace("2.0", "5.0")))
    assert window.recent() == {"not_seated": 3}
    window.add(20, error_counts(text.replace("2.0", "1.0")))  # that service restarted
    assert window.recent() == {"not_seated": 1}
