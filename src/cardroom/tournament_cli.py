"""``cardroom tournament``: bots play games through the running services, then analytics'
leaderboard (the runner counts nothing itself)."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from cardroom.analytics_cli import ask, leaderboard_tables
from cardroom.cli_shell import CliError, err, find_target, log, made, run_command, sub_app

app = sub_app("Tournaments of bots.")


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
    from rich.console import Console

    kinds = [k.strip() for k in bots.split(",") if k.strip()]
    options = _parse_config(config or [])

    async def run() -> TournamentResult:
        from cardroom_runtime.nats import connect
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        target = await find_target()
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
            console=made(err),
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

    result: TournamentResult = run_command(run())
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
