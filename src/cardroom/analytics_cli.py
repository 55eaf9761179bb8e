"""``cardroom stats``: statistics and leaderboards per game type, as analytics computed them.

:func:`ask` is one analytics query (``<root>.analytics.<verb>``), also used by the tournament.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cardroom.cli_shell import CliError, find_target, run_command, sub_app

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient
    from rich.table import Table as RichTable

app = sub_app("Analytics' statistics and leaderboards.")


async def ask(
    nc: NatsClient, root: str, verb: str, payload: dict[str, Any] | None = None, timeout: float = 10
) -> dict[str, Any]:
    """One analytics query; raises :class:`CliError` when analytics does not answer or refuses."""
    from nats.errors import NoRespondersError
    from nats.errors import TimeoutError as NatsTimeout

    subject = f"{root}.analytics.{verb}"
    try:
        msg = await nc.request(subject, json.dumps(payload or {}).encode(), timeout=timeout)
    except (NoRespondersError, NatsTimeout):
        raise CliError(
            f"analytics does not answer on {subject}: is it running? "
            "(`cardroom serve all`, or `cardroom serve analytics`)"
        ) from None
    reply: dict[str, Any] = json.loads(msg.data)
    if not reply.get("ok"):
        error = reply.get("error") or {}
        raise CliError(f"analytics refused {verb}: {error.get('code')}: {error.get('message')}")
    return reply


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def stats_table(reply: dict[str, Any]) -> RichTable:
    from rich.table import Table as RichTable

    out = RichTable(title="games per type (analytics)")
    for name in (
        "game type",
        "created",
        "playing",
        "finished",
        "events",
        "moves",
        "players",
        "rated",
        "avg s",
        "min s",
        "max s",
    ):
        out.add_column(name, justify="left" if name == "game type" else "right")
    for t in reply["game_types"]:
        out.add_row(
            t["game_type"],
            str(t["created"]),
            str(t["playing"]),
            str(t["finished"]),
            str(t["events"]),
            str(t["moves"]),
            _fmt(t["players_avg"]),
            str(t["rated_players"]),
            _fmt(t["duration_avg_s"], 2),
            _fmt(t["duration_min_s"], 2),
            _fmt(t["duration_max_s"], 2),
        )
    return out


def leaderboard_tables(reply: dict[str, Any], title: str | None = None) -> list[RichTable]:
    """The leaderboard analytics answered, as rich tables (players, then kinds)."""
    from rich.table import Table as RichTable

    game_type = reply["game_type"]
    players = RichTable(
        title=title or f"{game_type} leaderboard (analytics)",
        caption="rating = mu - 3 sigma (openskill Plackett-Luce)",
    )
    for name in ("#", "player", "kind", "rating", "mu", "sigma", "games", "wins", "win %"):
        players.add_column(name, justify="left" if name in ("player", "kind") else "right")
    players.add_column("avg rank", justify="right")
    players.add_column("avg score", justify="right")
    for r in reply["ratings"]:
        players.add_row(
            str(r["rank"]),
            r["player"],
            r["kind"] or "-",
            _fmt(r["rating"], 2),
            _fmt(r["mu"], 2),
            _fmt(r["sigma"], 2),
            str(r["games"]),
            str(r["wins"]),
            _pct(r["win_rate"]),
            _fmt(r["avg_rank"], 2),
            _fmt(r["avg_score"], 1),
        )
    tables = [players]
    if reply["kinds"]:
        kinds = RichTable(title=f"{game_type} per bot kind (analytics)")
        for name in ("kind", "players", "games", "wins", "win %", "mean rating", "mean mu"):
            kinds.add_column(name, justify="left" if name == "kind" else "right")
        kinds.add_column("avg rank", justify="right")
        for k in reply["kinds"]:
            kinds.add_row(
                k["kind"],
                str(k["players"]),
                str(k["games"]),
                str(k["wins"]),
                _pct(k["win_rate"]),
                _fmt(k["rating"], 2),
                _fmt(k["mu"], 2),
                _fmt(k["avg_rank"], 2),
            )
        tables.append(kinds)
    return tables


@app.command()
def stats(
    game: Annotated[str | None, typer.Option(help="Only this game type.")] = None,
    top: Annotated[int, typer.Option(min=1, help="Players per leaderboard.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print analytics' replies.")] = False,
) -> None:
    """Statistics and leaderboards per game type, as analytics computed them."""

    async def run() -> None:
        from cardroom_runtime.nats import connect
        from rich.console import Console

        target = await find_target()
        nc = await connect(target.nats_url, "cardroom-stats")
        try:
            reply = await ask(nc, target.root, "stats", {"game_type": game} if game else {})
            boards = [
                await ask(
                    nc, target.root, "leaderboard", {"game_type": t["game_type"], "limit": top}
                )
                for t in reply["game_types"]
            ]
        finally:
            await nc.close()
            await target.close()
        if as_json:
            print(json.dumps({"stats": reply, "leaderboards": boards}, indent=2))
            return
        console = Console()
        console.print(stats_table(reply))
        for board in boards:
            if board["ratings"]:
                for table in leaderboard_tables(board):
                    console.print(table)

    run_command(run())
