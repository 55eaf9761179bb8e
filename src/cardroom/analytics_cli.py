"""``cardroom stats | tournament | replay | rebuild``: analytics, tournaments, replays, rebuilds.

A typer sub-app mounted on the ``cardroom`` command (``app.add_typer(analytics_cli.app)``).
Each command is a thin shell around an async function that the tests call directly:

- :func:`ask`: one analytics query (``<root>.analytics.<verb>``); ``stats`` prints them;
- :func:`run_tournament`: bots play N games through the running services, then analytics'
  leaderboard (the runner counts nothing itself);
- :func:`replay`, :func:`seen_by`, :func:`public_updates`: a game's timeline from its events,
  and what one player (or a spectator) saw, produced by the projector's own code
  (:func:`cardroom_projector.project_events`);
- :func:`rebuild_projector` (:mod:`cardroom.projector_rebuild`),
  :func:`cardroom_analytics.rebuild`: drop a read model, rebuild it from the first event,
  verify it equals the live one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table as RichTable

from cardroom.projector_rebuild import PROJECTOR_TABLES, rebuild_projector

if TYPE_CHECKING:
    from cardroom_engine import Table, TableState
    from cardroom_eventstore import EventStore
    from cardroom_eventstore.readmodels import StoredNotification, StoredView
    from cardroom_runtime.discovery import Services
    from nats.aio.client import Client as NatsClient

app = typer.Typer(
    help="Analytics, tournaments, replays and read-model rebuilds.",
    no_args_is_help=True,
    add_completion=False,
)
err = Console(stderr=True)
log = logging.getLogger("cardroom.cli")


class CliError(Exception):
    """A failure to report in one line (no traceback)."""


# -- connecting ----------------------------------------------------------------------------------


@dataclass
class Target:
    """Where the running cardroom is (from the CARDROOM_* settings, as `serve` finds it)."""

    services: Services
    nats_url: str
    database_url: str
    root: str

    async def close(self) -> None:
        await self.services.aclose()


async def _target() -> Target:
    from cardroom_runtime.discovery import discover
    from cardroom_runtime.games import load_games
    from cardroom_runtime.postgres import database_url
    from cardroom_runtime.settings import Settings

    load_games()
    settings = Settings.from_env()
    services = await discover(settings, mode=None)
    url = settings.database_url or database_url(services.database_admin_url, "cardroom")
    return Target(services, services.nats_url, url, settings.subject_root)


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


def _run(coro: Any) -> Any:
    try:
        return asyncio.run(coro)
    except CliError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


# -- stats ---------------------------------------------------------------------------------------


def stats_table(reply: dict[str, Any]) -> RichTable:
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

        target = await _target()
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

    _run(run())


# -- tournament ----------------------------------------------------------------------------------


@dataclass
class TournamentResult:
    game_type: str
    players: list[str]
    games: list[str]
    failed: int
    leaderboard: dict[str, Any]
    seconds: float


def bot_players(kinds: Sequence[str]) -> list[tuple[str, str]]:
    """``(player id, kind)`` per seat: players are named after their kind (``random-2``)."""
    counts: dict[str, int] = {}
    out: list[tuple[str, str]] = []
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
        out.append((f"{kind}-{counts[kind]}", kind))
    return out


def tournament_seats(game_type: str, kinds: Sequence[str]) -> list[tuple[str, str]]:
    """The seats of a tournament table, checked against the game: ``(player, kind)``."""
    from cardroom_engine import Rejection, registry

    try:
        rules = registry.get(game_type)
    except Rejection as exc:
        raise CliError(f"{exc}; known: {', '.join(registry.names())}") from None
    unknown = sorted(set(kinds) - set(rules.bots))
    if unknown:
        raise CliError(
            f"{game_type} has no bot {', '.join(unknown)}; "
            f"its bots: {', '.join(sorted(rules.bots))}"
        )
    if not rules.min_players <= len(kinds) <= rules.max_players:
        raise CliError(
            f"{game_type} is for {rules.min_players} to {rules.max_players} players, "
            f"not {len(kinds)}"
        )
    return bot_players(kinds)


async def run_tournament(
    nats_url: str,
    root: str,
    game_type: str,
    kinds: Sequence[str],
    games: int,
    *,
    concurrency: int = 8,
    config: dict[str, Any] | None = None,
    timeout: float = 300.0,
    on_played: Callable[[bool], None] | None = None,
    on_counted: Callable[[int], None] | None = None,
) -> TournamentResult:
    """Play ``games`` games with one bot per kind (seats rotate), wait until analytics has
    counted every one, and return the leaderboard analytics computed for them."""
    from cardroom_bots import BotPlayer
    from cardroom_client import Client
    from cardroom_runtime.nats import connect

    seats = tournament_seats(game_type, kinds)
    began = time.perf_counter()
    nc = await connect(nats_url, "cardroom-tournament")
    bots: list[BotPlayer] = []
    try:
        await ask(nc, root, "stats", timeout=5)  # fail early when analytics is not running
        for player, kind in seats:
            client = await Client.connect(nats_url, player, subject_root=root, timeout=30)
            bots.append(BotPlayer(client, kind=kind, rng=random.Random()))
        limit = asyncio.Semaphore(concurrency)
        played: list[str] = []
        failed = 0

        async def one(index: int) -> None:
            nonlocal failed
            n = len(bots)
            table = [bots[(index + i) % n] for i in range(n)]  # rotate the first seat
            finished = False
            async with limit:
                try:
                    game = await table[0].create(game_type, config, seats=n)
                    waits = [table[0].watch(game, game_type)]
                    for bot in table[1:]:
                        waits.append(await bot.join(game, game_type))
                    async with asyncio.timeout(timeout):
                        await asyncio.gather(*(w.wait() for w in waits))
                    played.append(game)
                    finished = True
                except Exception as exc:
                    failed += 1
                    log.warning("tournament game %d failed: %r", index, exc)
            if on_played is not None:
                on_played(finished)

        await asyncio.gather(*(one(i) for i in range(games)))
        counted = 0
        async with asyncio.timeout(timeout):
            while True:
                reply = await ask(nc, root, "games", {"games": played})
                now = sum(1 for g in reply["games"] if g["status"] == "finished")
                if now != counted and on_counted is not None:
                    on_counted(now - counted)
                counted = now
                if counted >= len(played):
                    break
                await asyncio.sleep(0.2)
        board = await ask(
            nc,
            root,
            "leaderboard",
            {"game_type": game_type, "players": [p for p, _ in seats], "games": played},
        )
    finally:
        await asyncio.gather(*(b.close() for b in bots), return_exceptions=True)
        await nc.close()
    return TournamentResult(
        game_type=game_type,
        players=[p for p, _ in seats],
        games=played,
        failed=failed,
        leaderboard=board,
        seconds=time.perf_counter() - began,
    )


def _parse_config(items: Sequence[str]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{item!r}: expected key=value")
        try:
            config[key] = json.loads(raw)
        except ValueError:
            config[key] = raw
    return config


@app.command()
def tournament(
    game: Annotated[str, typer.Option(help="The game type.")],
    bots: Annotated[
        str, typer.Option(help="Bot kinds, one seat each, comma separated (e.g. heuristic,random).")
    ] = "heuristic,random",
    games: Annotated[int, typer.Option(min=1, help="How many games.")] = 200,
    concurrency: Annotated[int, typer.Option(min=1, help="Games played at once.")] = 8,
    config: Annotated[
        list[str] | None, typer.Option(help="Game option key=value (JSON value), repeatable.")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds allowed per game.")] = 300.0,
) -> None:
    """Let bots play games through the running services; print analytics' leaderboard."""
    kinds = [k.strip() for k in bots.split(",") if k.strip()]
    options = _parse_config(config or [])

    async def run() -> TournamentResult:
        from cardroom_runtime.nats import connect

        target = await _target()
        try:  # check everything before the progress bars appear
            tournament_seats(game, kinds)
            nc = await connect(target.nats_url, "cardroom-tournament")
            try:
                await ask(nc, target.root, "stats", timeout=5)
            finally:
                await nc.close()
        except BaseException:
            await target.close()
            raise
        progress = Progress(
            TextColumn("{task.description:<9}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
        )
        fails = 0
        with progress:
            playing = progress.add_task("played", total=games, note="")
            counting = progress.add_task("analytics", total=games, note="")

            def played(ok: bool) -> None:
                nonlocal fails
                fails += 0 if ok else 1
                progress.update(playing, advance=1, note=f"{fails} failed" if fails else "")
                progress.update(counting, total=games - fails)

            try:
                return await run_tournament(
                    target.nats_url,
                    target.root,
                    game,
                    kinds,
                    games,
                    concurrency=concurrency,
                    config=options,
                    timeout=timeout,
                    on_played=played,
                    on_counted=lambda n: progress.update(counting, advance=n),
                )
            finally:
                await target.close()

    result: TournamentResult = _run(run())
    console = Console()
    title = (
        f"{result.game_type}: {len(result.games)} games of {', '.join(result.players)} "
        f"in {result.seconds:.1f}s (analytics' leaderboard)"
    )
    for table in leaderboard_tables(result.leaderboard, title=title):
        console.print(table)
    if result.failed:
        err.print(f"[yellow]{result.failed} game(s) did not finish[/]")
        raise typer.Exit(1)


# -- replay --------------------------------------------------------------------------------------


@dataclass
class Replayed:
    """A game folded from its events."""

    table: Table
    state: TableState
    recorded: dict[str, Any] | None  # the outcome in table.finished
    derived: dict[str, Any] | None  # the outcome the game's rules compute from the state

    @property
    def consistent(self) -> bool:
        return self.recorded == self.derived


def _as_event(record: dict[str, Any]) -> dict[str, Any]:
    return {**record["data"], "type": record["type"]}


def replay(records: Sequence[dict[str, Any]]) -> Replayed:
    """Fold a game's event records (public schema) with its rules; re-derive the outcome."""
    from cardroom_engine import FINISHED, Table, registry

    if not records:
        raise CliError("no events")
    table = Table(registry.get(records[0]["game_type"]))
    state = table.replay([_as_event(r) for r in records])
    recorded = next((r["data"].get("outcome") for r in records if r["type"] == FINISHED), None)
    derived = None
    if state.game is not None:
        outcome = table.game.outcome(state.game)
        if outcome is not None:
            derived = json.loads(json.dumps(outcome.to_json()))  # as it was stored
    return Replayed(table, state, recorded, derived)


def _notes(
    records: Sequence[dict[str, Any]],
) -> tuple[list[StoredNotification], list[StoredView]]:
    from cardroom_projector import project_events

    if not records:
        raise CliError("no events")
    _, projected, views = project_events(None, list(records), spectator=False)
    return [n for item in projected for n in item.notes], views


def seen_by(
    records: Sequence[dict[str, Any]], player: str
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """What ``player`` was sent, in order (the notifications, as published), and the view and
    actions they have at the end: the projector's own code over the events."""
    notes, views = _notes(records)
    final = {v.player_id: (v.view, v.actions) for v in views}
    if player not in final:
        raise CliError(f"{player!r} is not seated at this table")
    view, actions = final[player]
    return [n.payload for n in notes if n.player_id == player], view, actions


def public_updates(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a spectator was sent after every event (the projector's public updates)."""
    from cardroom_projector import project_events

    _, projected, _ = project_events(None, list(records))
    return [item.public.model_dump(mode="json") for item in projected if item.public is not None]


async def read_game(store: EventStore, game: str) -> list[dict[str, Any]]:
    """A game's events in the public schema (what the relay publishes)."""
    from cardroom_relay import event_payload

    return [event_payload(e) for e in await store.read_stream(game)]


def _short(value: Any, width: int) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text if width <= 0 or len(text) <= width else text[: width - 1] + "…"


def _timeline(records: Sequence[dict[str, Any]], width: int) -> RichTable:
    from datetime import datetime

    out = RichTable(title=f"{records[0]['game']} ({records[0]['game_type']}): every event")
    out.add_column("v", justify="right")
    out.add_column("+s", justify="right")
    out.add_column("type")
    out.add_column("actor")
    out.add_column("data", overflow="fold")
    start = datetime.fromisoformat(records[0]["recorded_at"])
    for r in records:
        offset = (datetime.fromisoformat(r["recorded_at"]) - start).total_seconds()
        out.add_row(
            str(r["version"]),
            f"{offset:.3f}",
            r["type"],
            str(r["metadata"].get("actor") or ""),
            _short(r["data"], width),
        )
    return out


@app.command(name="replay")
def replay_command(
    game: Annotated[str, typer.Argument(help="The game id.")],
    as_player: Annotated[
        str | None,
        typer.Option("--as", help="Show only what this player saw (the projector's code)."),
    ] = None,
    spectator: Annotated[bool, typer.Option(help="Show what spectators saw.")] = False,
    width: Annotated[int, typer.Option(help="Truncate JSON to this width (0: never).")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Print a game's timeline from its events (the full truth: for operators), or exactly
    what one player or the spectators saw."""

    async def load() -> list[dict[str, Any]]:
        from cardroom_eventstore import EventStore

        target = await _target()
        store = await EventStore.connect(target.database_url)
        try:
            records = await read_game(store, game)
        finally:
            await store.close()
            await target.close()
        if not records:
            raise CliError(f"no game {game!r}")
        return records

    records: list[dict[str, Any]] = _run(load())
    console = Console()
    try:
        if as_player is not None:
            notes, view, actions = seen_by(records, as_player)
            if as_json:
                print(json.dumps({"notifications": notes, "view": view, "actions": actions}))
                return
            out = RichTable(title=f"{game}: what {as_player} saw")
            for name in ("seq", "v", "message", "actions"):
                out.add_column(name, justify="right" if name != "message" else "left")
            for n in notes:
                out.add_row(
                    str(n["seq"]),
                    str(n["version"]),
                    _short(n["message"], width),
                    str(len(n["actions"])),
                )
            console.print(out)
            console.print(f"[bold]{as_player}'s view now:[/] {_short(view, 0)}")
            console.print(f"[bold]actions:[/] {_short(actions, width)}")
            return
        if spectator:
            updates = public_updates(records)
            if as_json:
                print(json.dumps(updates))
                return
            out = RichTable(title=f"{game}: what spectators saw")
            out.add_column("v", justify="right")
            out.add_column("public view")
            for u in updates:
                out.add_row(str(u["version"]), _short(u["view"], width))
            console.print(out)
            return
        replayed = replay(records)
    except CliError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None
    if as_json:
        print(json.dumps({"events": records, "final": replayed.state.summary()}))
    else:
        console.print(_timeline(records, width))
        s = replayed.state
        console.print(
            f"[bold]status[/] {s.status}  [bold]version[/] {s.version}  "
            f"[bold]seats[/] {', '.join(s.seats)}"
        )
        if replayed.recorded is not None:
            console.print(f"[bold]outcome[/] {_short(replayed.recorded, 0)}")
    if replayed.recorded is not None and not replayed.consistent:
        err.print(
            f"[bold red]the rules derive another outcome from the events:[/] "
            f"{_short(replayed.derived, 0)}"
        )
        raise typer.Exit(1)


# -- rebuild -------------------------------------------------------------------------------------


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
        from cardroom_eventstore import EventStore
        from cardroom_wire import Subjects
        from sqlalchemy.ext.asyncio import create_async_engine

        target = await _target()
        lines: list[tuple[str, bool, str]] = []
        try:
            if tables:
                store = await EventStore.connect(target.database_url)
                try:
                    p = await rebuild_projector(store, tables=tables, game=game, repair=repair)
                finally:
                    await store.close()
                lines.append(
                    (
                        "projector: " + ", ".join(tables),
                        p.equal,
                        f"{p.games} games, {p.rows} rows, {p.seconds:.2f}s"
                        + "".join(f"\n  {d}" for d in p.differences[:20]),
                    )
                )
            if with_analytics:
                engine = create_async_engine(target.database_url)
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

    lines: list[tuple[str, bool, str]] = _run(run())
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
