"""``cardroom status``: a live view of a running cardroom, from its database.

Tables by game type and status with their seats and the players away, the gates waiting for
acknowledgements and the oldest one's wait, how far the relay and the projector are behind,
and the events of the last minute (:mod:`cardroom_eventstore.status`). It finds the servers
as ``cardroom serve`` does; ``--once`` prints one snapshot and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Annotated

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table as RichTable

app = typer.Typer(add_completion=False)


def render(snap: object) -> Group:
    """The snapshot as rich renderables (tables, then the pipeline)."""
    from cardroom_eventstore.status import Snapshot

    assert isinstance(snap, Snapshot)
    tables = RichTable(title="tables")
    for name in ("game type", "status", "tables", "seats", "away"):
        tables.add_column(name, justify="left" if name in ("game type", "status") else "right")
    for row in snap.tables:
        away = f"[yellow]{row.away}[/]" if row.away else "0"
        tables.add_row(row.game_type, row.status, str(row.tables), str(row.seats), away)
    if not snap.tables:
        tables.add_row("-", "no tables yet", "0", "0", "0")
    wait = f"{snap.oldest_gate_seconds:.1f} s" if snap.gates_waiting else "-"
    pipeline = RichTable.grid(padding=(0, 2))
    pipeline.add_column(justify="left")
    pipeline.add_column(justify="right")
    pipeline.add_row("gates waiting for acks", str(snap.gates_waiting))
    pipeline.add_row("oldest gate's wait", wait)
    pipeline.add_row("relay behind (events)", str(snap.relay_behind))
    pipeline.add_row("projector behind (events)", str(snap.projector_behind))
    pipeline.add_row("events in the last minute", str(snap.events_last_minute))
    return Group(tables, Panel(pipeline, title="pipeline", expand=False))


async def _status(once: bool, interval: float) -> None:
    from cardroom_eventstore import EventStore
    from cardroom_eventstore.status import snapshot

    from cardroom.analytics_cli import _target

    target = await _target()
    store = await EventStore.connect(target.database_url)
    console = Console()
    try:
        if once:
            console.print(render(await snapshot(store.engine)))
            return
        with Live(
            render(await snapshot(store.engine)), console=console, refresh_per_second=4
        ) as live:
            while True:
                await asyncio.sleep(interval)
                live.update(render(await snapshot(store.engine)))
    finally:
        await store.close()
        await target.close()


@app.command()
def status(
    once: Annotated[bool, typer.Option("--once", help="Print one snapshot and exit.")] = False,
    interval: Annotated[float, typer.Option(min=0.2, help="Seconds between refreshes.")] = 2.0,
) -> None:
    """A live view of a running cardroom: tables, players away, gates, lags."""
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends the live view
        asyncio.run(_status(once, interval))
