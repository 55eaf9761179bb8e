"""What the operator commands share: finding the running cardroom, one-line errors.

The commands (``stats``, ``tournament``, ``replay``, ``rebuild``, ``status``) are typer
sub-apps mounted on the ``cardroom`` command; each is a thin shell around async functions that
the tests call directly.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import typer

if TYPE_CHECKING:
    from cardroom_runtime.discovery import Services
    from rich.console import Console


class _Console:
    """A rich ``Console`` made on first use: a service process (``cardroom serve``) imports
    rich only once it prints, after it serves (a restarted service is back sooner: its start
    is mostly imports)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def _made(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._made(), name)

    def __enter__(self) -> Console:  # (dunders are not looked up through __getattr__)
        return self._made().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._made().__exit__(*exc)


def lazy_console(**options: Any) -> Console:
    """A rich ``Console(**options)``, made the first time it is used."""
    return cast("Console", _Console(**options))


def made(console: Console) -> Console:
    """The rich ``Console`` itself, for handing to rich (a :func:`lazy_console` is made)."""
    lazy: object = console
    return lazy._made() if isinstance(lazy, _Console) else console


err = lazy_console(stderr=True)
log = logging.getLogger("cardroom.cli")


def sub_app(help: str) -> typer.Typer:
    """A typer app whose commands the ``cardroom`` command mounts as its own."""
    return typer.Typer(help=help, no_args_is_help=True, add_completion=False)


class CliError(Exception):
    """A failure to report in one line (no traceback)."""


# -- connecting ----------------------------------------------------------------------------------


@dataclass
class Target:
    """Where the running cardroom is (from the CARDROOM_* settings, as `serve` finds it)."""

    services: Services
    nats_url: str
    database_url: str  # one URL, or the shards' comma-separated
    root: str

    @property
    def database_urls(self) -> list[str]:
        """The event store's shards' URLs, in order (the first holds analytics' tables)."""
        return self.database_url.split(",")

    def shard_url(self, game: str) -> str:
        """The URL of the shard that holds ``game`` (:mod:`cardroom_runtime.shards`)."""
        from cardroom_runtime.shards import shard_index

        urls = self.database_urls
        index = shard_index(game)
        if index >= len(urls):
            raise CliError(f"no game {game!r}: it names shard {index}, there are {len(urls)}")
        return urls[index]

    async def close(self) -> None:
        await self.services.aclose()


async def find_target() -> Target:
    from cardroom_runtime.discovery import discover
    from cardroom_runtime.games import load_games
    from cardroom_runtime.postgres import database_url
    from cardroom_runtime.settings import Settings

    load_games()
    settings = Settings.from_env()
    services = await discover(settings, mode=None)
    url = settings.database_url or database_url(services.database_admin_url, "cardroom")
    return Target(services, services.nats_url, url, settings.subject_root)


def run_command(coro: Any) -> Any:
    """Run a command's coroutine; a :class:`CliError` is one red line and exit code 2."""
    try:
        return asyncio.run(coro)
    except CliError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None
