"""The ``cardroom`` command: run the services, seat bots, list the games."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import sys
from collections.abc import Sequence
from typing import Annotated, Any, NoReturn

import typer

from . import analytics_cli, rebuild_cli, replay_cli, status_cli, tournament_cli
from .cli_shell import lazy_console
from .services import SERVICES, ServiceName

app = typer.Typer(
    help=(
        "cardroom hosts multiplayer card games with hidden information over NATS and "
        "PostgreSQL. Without CARDROOM_NATS_URL / CARDROOM_DATABASE_URL it finds local "
        "servers on the default ports, or starts embedded ones in .cardroom/."
    ),
    no_args_is_help=True,
    add_completion=False,
)
console = lazy_console(stderr=True)
app.add_typer(analytics_cli.app)  # stats
app.add_typer(tournament_cli.app)  # tournament
app.add_typer(replay_cli.app)  # replay
app.add_typer(rebuild_cli.app)  # rebuild
app.add_typer(status_cli.app)  # status


def _setup_logging(verbose: bool) -> None:
    from cardroom_runtime import logs

    logs.configure(verbose=verbose)  # console, or JSON with CARDROOM_LOG_FORMAT=json
    if not verbose:
        noisy = ("faststream", "nats", "aiosqlite", "sqlalchemy", "alembic", "websockets")
        # the set-up connections' "disconnected" lines too: closing them is the plan
        for name in (*noisy, "cardroom_runtime.nats"):
            logging.getLogger(name).setLevel(logging.WARNING)


async def _prepare() -> tuple[Any, str, str]:
    """Find the servers, make sure the database exists and is migrated."""
    from cardroom_runtime import migrate
    from cardroom_runtime.discovery import discover, ensure_database
    from cardroom_runtime.games import load_games
    from cardroom_runtime.settings import Settings

    load_games()
    settings = Settings.from_env()  # the database URL in its one form (postgresql+asyncpg)
    services = await discover(settings)
    try:
        database_url = settings.database_url or await ensure_database(
            services.database_admin_url, "cardroom"
        )
        await migrate.ensure_migrated(database_url)
    except BaseException:
        await services.aclose()
        raise
    return services, database_url, settings.subject_root


EX_CONFIG = 78
"""The exit status of a configuration that cannot be used (sysexits.h)."""


class _CannotStart(Exception):
    """``serve`` failed before it was ready; the cause says why."""


def _cannot_start(exc: BaseException, verbose: bool) -> NoReturn:
    """One line on stderr saying what is wrong, then exit non-zero (never "ready")."""
    from cardroom_gateway.settings import GatewaySettingsError
    from cardroom_runtime.discovery import DiscoveryError
    from cardroom_runtime.migrate import SchemaBehindError
    from cardroom_runtime.settings import SettingsError

    # these say what is wrong in words of their own; anything else is named by its type
    configuration = isinstance(
        exc, SettingsError | DiscoveryError | GatewaySettingsError | SchemaBehindError
    )
    text = str(exc).strip()
    if not configuration:
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if verbose:
        logging.getLogger("cardroom").error("start-up failed", exc_info=exc)
    sys.stderr.write(f"cardroom: cannot start: {' '.join(text.split())}\n")
    sys.stderr.flush()
    raise typer.Exit(EX_CONFIG if configuration else 1)


@app.command()
def serve(
    service: Annotated[
        ServiceName, typer.Argument(help="Which service to run; 'all' runs every one.")
    ] = ServiceName.all,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Run one service, or all of them in one process, until Ctrl-C."""
    _setup_logging(verbose)
    try:
        if service is ServiceName.auth:  # no database, no JetStream: not a Host service
            asyncio.run(_serve_auth())
            return
        asyncio.run(_serve(service))
    except _CannotStart as failed:
        _cannot_start(failed.__cause__ or failed, verbose)


def _required_env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        console.print(f"[red]{name} is not set[/] (docker-compose sets it from deploy/secrets/)")
        raise typer.Exit(78)
    return value


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        console.print(f"[red]{name} must be a positive number[/]")
        raise typer.Exit(78)
    return value


async def _serve_auth() -> None:
    """The auth callout responder and, with a system account URL, its flood guard: no
    database, no JetStream, one NATS connection each."""
    from cardroom_natsauth import (
        DEFAULT_ACCOUNT,
        DEFAULT_FLOOD_BAN,
        DEFAULT_FLOOD_INTERVAL,
        DEFAULT_FLOOD_LIMIT,
        DEFAULT_GUEST_BURST,
        DEFAULT_GUEST_RATE,
        AuthCalloutResponder,
        Bans,
        FloodGuard,
        GuestAdmission,
    )
    from cardroom_natsauth.admission import trusted_setting
    from cardroom_natsauth.callout import REFUSALS
    from cardroom_runtime import logs
    from cardroom_runtime.metrics import CountsCollector, Metrics
    from cardroom_runtime.nats import connect
    from cardroom_runtime.settings import Settings
    from cardroom_runtime.tasks import cancel_and_wait

    try:
        settings = Settings.from_env()
    except Exception as exc:
        raise _CannotStart() from exc
    if not settings.nats_url:
        console.print("[red]CARDROOM_NATS_URL is not set[/] (the auth user's URL)")
        raise typer.Exit(78)
    account = os.environ.get("CARDROOM_AUTH_ACCOUNT", DEFAULT_ACCOUNT)
    system_url = os.environ.get("CARDROOM_SYSTEM_NATS_URL", "").strip()
    limit = _env_number("CARDROOM_FLOOD_LIMIT", DEFAULT_FLOOD_LIMIT)
    interval = _env_number("CARDROOM_FLOOD_INTERVAL", DEFAULT_FLOOD_INTERVAL)
    ban = _env_number("CARDROOM_FLOOD_BAN", DEFAULT_FLOOD_BAN)
    bans = Bans()
    try:
        admission = GuestAdmission(
            rate=_env_number("CARDROOM_GUEST_RATE", DEFAULT_GUEST_RATE),
            burst=int(_env_number("CARDROOM_GUEST_BURST", DEFAULT_GUEST_BURST)),
            trusted=trusted_setting(os.environ.get("CARDROOM_GUEST_TRUSTED")),
        )
    except ValueError as exc:
        console.print(f"[red]CARDROOM_GUEST_TRUSTED or CARDROOM_GUEST_BURST: {exc}[/]")
        raise typer.Exit(78) from None
    responder = AuthCalloutResponder(
        issuer_seed=_required_env("CARDROOM_AUTH_ISSUER_SEED"),
        token_secret=_required_env("CARDROOM_PLAYER_TOKEN_SECRET"),
        root=settings.subject_root,
        account=account,
        bans=bans,
        admission=admission,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # its own metrics (CARDROOM_METRICS_PORT): what it decided, whom its guard kicked
    metrics = Metrics()
    metrics.registry.register(
        CountsCollector(
            "cardroom_auth_requests",
            "Authorization requests, by decision: admitted_player, admitted_guest, "
            "refused_<why>, unanswered",
            "decision",
            lambda: responder.counts,
            ["admitted_player", "admitted_guest", *(f"refused_{r}" for r in REFUSALS)],
        )
    )
    guard: FloodGuard | None = None
    metrics.registry.register(
        CountsCollector(
            "cardroom_flood_kicks",
            "Connections the flood guard kicked",
            "account",
            lambda: {account: guard.kicks if guard is not None else 0},
        )
    )
    try:
        nc = await connect(settings.nats_url, "cardroom-auth", metrics=metrics)
        metrics.serve()
    except Exception as exc:
        raise _CannotStart() from exc
    system = None
    watching: asyncio.Task[None] | None = None
    try:
        if system_url:
            try:
                system = await connect(system_url, "cardroom-auth-guard")
            except Exception as exc:
                raise _CannotStart() from exc
            guard = FloodGuard(
                system, bans, account=account, limit=limit, interval=interval, ban=ban
            )
            watching = asyncio.create_task(guard.run())
        await nc.subscribe(responder.subject, queue=responder.queue, cb=responder.handle)
        await nc.flush()
        _banner(
            [
                f"[bold green]cardroom[/] auth is answering {responder.subject} "
                f"(issuer {responder.issuer}, subject root {settings.subject_root})",
                f"new guests: {admission.burst:g} at once from one address, then "
                f"{admission.rate * 60:g} a minute (trusted: "
                f"{', '.join(map(str, admission.trusted)) or 'none'})",
                "flood guard: off (CARDROOM_SYSTEM_NATS_URL is not set)"
                if watching is None
                else f"flood guard: kicks a connection over {limit:.0f} messages a second "
                f"(read every {interval:g} s) and refuses its player for {ban:g} s",
            ]
        )
        logs.announce_ready()
        await stop.wait()
    finally:
        # the guard's readings wait in wait_for, which can lose a cancellation
        await cancel_and_wait([watching])
        if system is not None:
            await system.drain()
        await nc.drain()
        metrics.close()


def _edges(services: Sequence[Any]) -> tuple[str | None, int | None]:
    """The web client's URL and the take5 TCP port, of the edge services among ``services``
    (the gateway's module is imported only by a process that serves one: a service's
    restart is mostly its imports)."""
    if not any(type(s).__module__.startswith("cardroom_gateway") for s in services):
        return None, None
    from cardroom_gateway import Gateway, Web

    web_url = next((s.url for s in services if isinstance(s, Web) and s.url), None)
    gateway_port = next((s.port for s in services if isinstance(s, Gateway)), None)
    return web_url, gateway_port


_MARKUP = re.compile(r"\[/?(?:bold(?: green)?)?\]")


def _banner(lines: Sequence[str]) -> None:
    """What ``serve`` says once it serves: in colour to a person at a terminal; elsewhere (a
    supervisor's log) the same text, without importing rich on a restarted service's way to
    serving (rich prints no styles off a terminal either)."""
    from cardroom_runtime import logs

    if logs.json_lines():  # one JSON object a line, the banner too
        logging.getLogger("cardroom").info(" | ".join(_MARKUP.sub("", line) for line in lines))
    elif sys.stderr.isatty():
        console.print("\n".join(lines), soft_wrap=True)
    else:
        sys.stderr.write("".join(_MARKUP.sub("", line) + "\n" for line in lines))
        sys.stderr.flush()


async def _serve(service: ServiceName) -> None:
    from cardroom_engine import registry
    from cardroom_runtime import heap, logs
    from cardroom_runtime.discovery import remove_running, write_running
    from cardroom_runtime.host import Host, lower_priority
    from cardroom_runtime.settings import Settings

    try:
        # a configured server that does not answer, refuses us or lacks JetStream fails here
        services, database_url, root = await _prepare()
    except Exception as exc:
        raise _CannotStart() from exc
    chosen = SERVICES[service]
    if all(s.background for s in chosen):
        lower_priority()
    # (pages speak NATS through the web edge's bridge, which takes its own page only; the
    # embedded nats-server's WebSocket listener takes no browser: it asks no credentials)
    host = Host(
        chosen,
        nats_url=services.nats_url,
        database_url=database_url,
        subject_root=root,
        client_name=f"cardroom-{service.value}",
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await host.start()
    except Exception as exc:
        with contextlib.suppress(Exception):
            await host.stop()
        await services.aclose()
        raise _CannotStart() from exc
    heap.settle()
    web_url, gateway_port = _edges(host.services)
    settings = Settings.from_env()
    # other commands in other terminals (cardroom bots, stats, ...) find these servers, even
    # embedded ones on ports nobody could guess
    write_running(
        settings.data_dir,
        nats_url=services.nats_url,
        nats_ws_url=services.nats_ws_url,
        database_admin_url=services.database_admin_url,
        subject_root=root,
        web_url=web_url,
        metrics_url=(
            f"http://127.0.0.1:{host.metrics.port}/metrics" if host.metrics.port else None
        ),
    )
    names = ", ".join(s.name for s in host.services)
    lines = [f"[bold green]cardroom[/] {service.value} is running ({names})"]
    if web_url:
        lines.append(f"[bold]play in your browser: {web_url}[/]")
    lines += [
        *services.describe().splitlines(),
        f"NATS: {services.nats_url}  subject root: {root}",
        f"games: {', '.join(registry.names()) or '(none)'}",
    ]
    if gateway_port:
        lines.append(f"take5 over TCP: 127.0.0.1:{gateway_port}")
    lines += [
        "bots:  uv run cardroom bots --game take5 --tables 1 --players 4   (another terminal)",
        "Ctrl-C stops.",
    ]
    _banner(lines)
    # tell a supervising process (tests, scripts) that we are up
    logs.announce_ready()
    try:
        await stop.wait()
    finally:
        remove_running(settings.data_dir)
        await host.stop()
        await services.aclose()


@app.command()
def bots(
    game: Annotated[str, typer.Option(help="The game type to play.")],
    tables: Annotated[int, typer.Option(min=1, help="How many tables to play at once.")] = 1,
    players: Annotated[int, typer.Option(min=1, help="Players per table.")] = 2,
    kind: Annotated[
        list[str] | None,
        typer.Option(help="Bot kinds, cycled over the seats (the game's: random, heuristic, ...)."),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Seat bots at new tables of a running cardroom and play them out."""
    _setup_logging(verbose)
    asyncio.run(_bots(game, tables, players, kind or ["random"]))


async def _bots(game: str, tables: int, players: int, kinds: Sequence[str]) -> None:
    from cardroom_bots import play_table
    from cardroom_engine import Rejection, registry
    from cardroom_runtime.discovery import discover
    from cardroom_runtime.games import load_games
    from cardroom_runtime.settings import Settings
    from rich.console import Console
    from rich.table import Table as RichTable

    load_games()
    try:  # the kinds are the game's own (its ``bots``), not a list of the command's
        offered = registry.get(game).bots
    except Rejection as exc:
        raise typer.BadParameter(f"{exc}; known: {', '.join(registry.names())}") from None
    unknown = sorted(set(kinds) - set(offered))
    if unknown:
        raise typer.BadParameter(
            f"{game} has no bot {', '.join(unknown)}; its bots: {', '.join(sorted(offered))}"
        )
    from cardroom_runtime import tracing

    # with tracing configured, the bots' commands begin their traces (the SDK uses the
    # process's tracer): the whole path of a move, from the player on
    tracing.configure("cardroom-bots")
    settings = Settings.from_env()
    # bots are players: they need NATS only, and register each seat with the lobby (their own
    # tokens, no service credentials)
    services = None if settings.nats_url else await discover(settings, mode=None)
    nats_url = settings.nats_url or (services.nats_url if services else "")
    try:
        results = await asyncio.gather(
            *(
                play_table(nats_url, game, players, subject_root=settings.subject_root, kinds=kinds)
                for _ in range(tables)
            )
        )
    finally:
        tracing.shutdown()  # what is still buffered is exported
        if services is not None:
            await services.aclose()
    out = RichTable(title=f"{len(results)} {game} game(s)")
    out.add_column("game")
    out.add_column("ranking")
    out.add_column("scores")
    for game_id, outcome in results:
        ranking = " > ".join("=".join(group) for group in outcome.get("ranking", []))
        out.add_row(game_id, ranking, str(outcome.get("scores", {})))
    Console().print(out)


@app.command()
def games() -> None:
    """List the game types this installation hosts."""
    from cardroom_engine import registry
    from cardroom_runtime.games import load_games
    from rich.console import Console
    from rich.table import Table as RichTable

    load_games()
    out = RichTable(title="games")
    out.add_column("type")
    out.add_column("players")
    out.add_column("bots")
    out.add_column("config (defaults)")
    for name in registry.names():
        game = registry.get(name)
        defaults = game.config_model().model_dump(mode="json")
        out.add_row(
            name,
            f"{game.min_players}-{game.max_players}",
            ", ".join(sorted(game.bots)),
            ", ".join(f"{k}={v}" for k, v in defaults.items()),
        )
    Console().print(out)


@app.command()
def migrate() -> None:
    """Create or upgrade the database schema (what `serve` does at start); with
    CARDROOM_SERVICE_DATABASE_URL, then give that URL's role the services' rights and no
    more (cardroom_runtime.grants)."""
    _setup_logging(False)
    from cardroom_runtime import grants

    async def run() -> list[str]:
        services, database_url, _ = await _prepare()
        try:
            service_urls = os.environ.get(grants.ENV_SERVICE_DATABASE_URL, "").strip()
            if not service_urls:
                return []
            return await grants.grant_service_roles(database_url, service_urls)
        finally:
            await services.aclose()

    try:
        roles = asyncio.run(run())
    except grants.GrantError as exc:
        console.print(f"[red]{grants.ENV_SERVICE_DATABASE_URL}: {exc}[/]")
        raise typer.Exit(EX_CONFIG) from None
    console.print("database is at the newest schema")
    for role in sorted(set(roles)):
        console.print(f"the services' role {role!r} holds their rights and no more")


@app.command()
def docs(
    out: Annotated[str, typer.Option(help="Where to write the AsyncAPI document.")] = (
        "docs/asyncapi.json"
    ),
) -> None:
    """Write the AsyncAPI document of every subject (FastStream generates it)."""
    from pathlib import Path

    from .docs import write

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write(out)
    console.print(f"wrote {out}")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
