"""``cardroom rebuild``: drop a read model, rebuild it from the first event, verify it
equals the live one (:mod:`cardroom.projector_rebuild`, :func:`cardroom_analytics.rebuild`).

The projector's models are folded with the games' rules: a game whose type this process has
no rules for (named in the services' ``CARDROOM_GAMES`` only) is refused in one line, exit
status 2, before anything is folded or written, the analytics' tables included (they need
no rules, but a command that half ran would leave the operator to work out which half)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from cardroom.cli_shell import CliError, err, find_target, run_command, sub_app
from cardroom.projector_rebuild import PROJECTOR_TABLES, UnknownGameTypes, rebuild_shards
from cardroom.replay_cli import no_rules

app = sub_app("Read-model rebuilds.")


class Projection(StrEnum):
    all = "all"
    projector = "projector"
    notifications = "notifications"
    views = "views"
    tables = "tables"
    analytics = "analytics"


@app.command()
def rebuild(
    projection: Annotated[
        Projection,
        typer.Argument(
            help="What to rebuild: the projector's read models (notifications, views, tables: "
            "all three with 'projector'), analytics' tables, or all."
        ),
    ] = Projection.all,
    game: Annotated[str | None, typer.Option(help="Only this game (projector).")] = None,
    repair: Annotated[
        bool, typer.Option(help="Keep the rebuilt rows even when they differ from the live ones.")
    ] = False,
) -> None:
    """Drop a read model, rebuild it from the first event, verify it equals the live one."""
    from rich.console import Console
    from rich.table import Table as RichTable

    if projection in (Projection.all, Projection.projector):
        tables: tuple[str, ...] = PROJECTOR_TABLES
    elif projection == Projection.analytics:
        tables = ()
    else:
        tables = (projection.value,)
    with_analytics = projection in (Projection.all, Projection.analytics)

    async def run() -> list[tuple[str, bool, str]]:
        from cardroom_analytics import read_events
        from cardroom_analytics import rebuild as rebuild_analytics
        from cardroom_wire import Subjects
        from sqlalchemy.ext.asyncio import create_async_engine

        target = await find_target()
        lines: list[tuple[str, bool, str]] = []
        try:
            # each shard's read models from that shard's events (a game: its shard's only)
            urls = target.database_urls
            try:
                rebuilt = (
                    await rebuild_shards(urls, tables=tables, game=game, repair=repair)
                    if tables
                    else []
                )
            except UnknownGameTypes as exc:
                # refused before any fold: every read model (analytics' too) is as it was
                games = sum(exc.types.values())
                raise CliError(
                    f"{no_rules(list(exc.types))} ({games} game{'s' if games != 1 else ''}"
                    " to rebuild); nothing was rebuilt"
                ) from None
            if game is not None and not any(p.games for _, p in rebuilt):
                raise CliError(f"no game {game!r}")
            for shard, p in rebuilt:
                where = f" (shard {shard})" if len(urls) > 1 else ""
                lines.append(
                    (
                        "projector" + where + ": " + ", ".join(tables),
                        p.equal,
                        f"{p.games} games, {p.rows} rows, {p.seconds:.2f}s"
                        + "".join(f"\n  {d}" for d in p.differences[:20]),
                    )
                )
            if with_analytics:
                # analytics' tables are in the first database; its input, JetStream, carries
                # every shard's events
                engine = create_async_engine(urls[0])
                subjects = Subjects(target.root)
                try:
                    a = await rebuild_analytics(
                        engine,
                        lambda: read_events(target.nats_url, subjects),
                        repair=repair,
                    )
                finally:
                    await engine.dispose()
                lines.append(
                    (
                        "analytics",
                        a.equal,
                        f"{a.events} events, {a.games} games, {a.rows} rows, {a.seconds:.2f}s"
                        + "".join(f"\n  {d}" for d in a.differences),
                    )
                )
        finally:
            await target.close()
        return lines

    lines: list[tuple[str, bool, str]] = run_command(run())
    out = RichTable(title="rebuild from the first event vs live")
    out.add_column("read model")
    out.add_column("equal")
    out.add_column("details")
    for name, equal, details in lines:
        out.add_row(name, "[green]yes[/]" if equal else "[red]NO[/]", details)
    Console().print(out)
    if not all(equal for _, equal, _ in lines):
        if repair:
            err.print("[yellow]the rebuilt rows replaced the live ones[/]")
        raise typer.Exit(1)
