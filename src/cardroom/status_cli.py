"""``cardroom status``: a live view of a running cardroom, from its database.

Tables by game type and status with their seats and the players away, the gates waiting for
acknowledgements and the oldest one's wait, how far the relay and the projector are behind,
and the events of the last minute (:mod:`cardroom_eventstore.status`); and, from the
services' metrics endpoints, the errors answered in the last minute by code. It finds the
servers as ``cardroom serve`` does (the metrics endpoint too, when that one serves metrics:
``CARDROOM_METRICS_PORT``); ``--metrics URL`` names endpoints (one per service under
docker-compose). ``--once`` prints one snapshot and exits, with the errors counted since
each service started, as one look cannot tell a minute.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Group
    from rich.panel import Panel

app = typer.Typer(add_completion=False)

WINDOW = 60.0  # seconds of errors shown
# outcomes that are not errors: answered ok, or no answer due (notifications, hints)
NOT_ERRORS = frozenset({"ok", "none"})
# refusals that say "not now" (the gate waits for acks, another writer moved the game, a
# player over its rate): clients send them again; shown apart, not as faults
NOT_NOW = frozenset({"awaiting_acks", "conflict", "rate_limited"})


def error_counts(text: str) -> collections.Counter[str]:
    """The errors a service answered since it started, by code, from its ``/metrics``."""
    from prometheus_client.parser import text_string_to_metric_families

    counts: collections.Counter[str] = collections.Counter()
    for family in text_string_to_metric_families(text):
        if family.name != "cardroom_requests":
            continue
        for sample in family.samples:
            outcome = sample.labels.get("outcome", "")
            if sample.name.endswith("_total") and outcome not in NOT_ERRORS:
                counts[outcome] += int(sample.value)
    return counts


class ErrorWindow:
    """Errors by code over the last :data:`WINDOW` seconds, from counters read now and then
    (a counter that went down means its service restarted: counted from zero again). The
    first reading is the baseline: what came before the view started is not shown."""

    def __init__(self, window: float = WINDOW) -> None:
        self.window = window
        self.samples: collections.deque[tuple[float, collections.Counter[str]]] = (
            collections.deque()
        )

    def add(self, at: float, counts: collections.Counter[str]) -> None:
        self.samples.append((at, counts))
        while len(self.samples) > 1 and self.samples[1][0] <= at - self.window:
            self.samples.popleft()

    def recent(self) -> collections.Counter[str]:
        if not self.samples:
            return collections.Counter()
        (_, first), (_, last) = self.samples[0], self.samples[-1]
        recent: collections.Counter[str] = collections.Counter()
        for code, n in last.items():
            before = first.get(code, 0)
            recent[code] = n - before if n >= before else n  # restarted: from zero
        return +recent  # without the zeros


def read_errors(urls: Sequence[str], timeout: float = 2.0) -> collections.Counter[str] | None:
    """The errors of every endpoint, summed; None if none of them answered."""
    total: collections.Counter[str] = collections.Counter()
    answered = False
    for url in urls:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                total += error_counts(response.read().decode())
                answered = True
        except (OSError, ValueError):
            continue
    return total if answered else None


def render_errors(counts: collections.Counter[str] | None, since: str) -> Panel:
    from rich.panel import Panel
    from rich.table import Table as RichTable

    if counts is None:
        body = "[dim]no metrics endpoint answered (CARDROOM_METRICS_PORT, --metrics URL)[/]"
        return Panel(body, title="errors", expand=False)
    grid = RichTable.grid(padding=(0, 2))
    grid.add_column(justify="left")
    grid.add_column(justify="right")
    # the faults first, in red; then the "not now" answers that clients send again
    for code, n in sorted(counts.items(), key=lambda item: (item[0] in NOT_NOW, -item[1], item[0])):
        if code in NOT_NOW:
            grid.add_row(f"[dim]{code} (not now: sent again)[/]", f"[dim]{n}[/]")
        else:
            grid.add_row(code, f"[red]{n}[/]")
    if not counts:
        grid.add_row("none", "0")
    return Panel(grid, title=f"errors ({since})", expand=False)


def render(snap: object, errors: Panel | None = None) -> Group:
    """The snapshot as rich renderables (tables, then the pipeline, then the errors)."""
    from cardroom_eventstore.status import Snapshot
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table as RichTable

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
    panels = [Panel(pipeline, title="pipeline", expand=False)]
    if errors is not None:
        panels.append(errors)
    return Group(tables, *panels)


async def _status(once: bool, interval: float, metrics: Sequence[str]) -> None:
    from cardroom_eventstore import EventStore
    from cardroom_eventstore.status import combined, snapshot
    from cardroom_runtime.discovery import running_records
    from cardroom_runtime.settings import Settings
    from rich.console import Console
    from rich.live import Live

    from cardroom.cli_shell import find_target

    target = await find_target()
    urls = list(metrics)
    if not urls:  # every service process of this data folder (one, or one per service)
        for record in running_records(Settings.from_env().data_dir):
            url = record.get("metrics_url")
            if isinstance(url, str) and url not in urls:
                urls.append(url)
    stores = [await EventStore.connect(url) for url in target.database_urls]
    console = Console()
    window = ErrorWindow()

    async def look() -> Group:
        snap = combined([await snapshot(store.engine) for store in stores])  # every shard
        counts = await asyncio.to_thread(read_errors, urls) if urls else None
        if once:
            return render(snap, render_errors(counts, "since start"))
        if counts is not None:
            window.add(time.monotonic(), counts)
        return render(
            snap, render_errors(None if counts is None else window.recent(), "last minute")
        )

    try:
        if once:
            console.print(await look())
            return
        with Live(await look(), console=console, refresh_per_second=4) as live:
            while True:
                await asyncio.sleep(interval)
                live.update(await look())
    finally:
        for store in stores:
            await store.close()
        await target.close()


@app.command()
def status(
    once: Annotated[bool, typer.Option("--once", help="Print one snapshot and exit.")] = False,
    interval: Annotated[float, typer.Option(min=0.2, help="Seconds between refreshes.")] = 2.0,
    metrics: Annotated[
        list[str] | None,
        typer.Option(
            "--metrics",
            help="A service's metrics URL (http://host:port/metrics); repeat for several. "
            "Default: the running cardroom's, if it serves metrics.",
        ),
    ] = None,
) -> None:
    """A live view of a running cardroom: tables, players away, gates, lags, errors."""
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends the live view
        asyncio.run(_status(once, interval, metrics or []))
