"""Shared session fixtures: real PostgreSQL and NATS servers for the whole test run.

The servers are found (or started) once per run by :func:`cardroom_runtime.discovery.discover`:
the URLs from the environment, then the local default ports, then testcontainers when a Docker
engine answers, then embedded servers in a temporary folder (deleted at the end). Set
``CARDROOM_TEST_SERVICES`` to ``auto`` (default), ``local``, ``containers`` or ``embedded`` to
force one. The header of the run says where each server came from.

Everything a run creates is named after its ``subject_root`` ("crt" + 8 random hex digits), so
runs sharing a server do not collide: its database, its NATS subjects (``<root>.>``) and its
JetStream streams (name them ``f"{subject_root}_..."``; the ``nats_url`` fixture deletes
streams, KV buckets and object stores whose name starts with the root at the end of the run).

Fixtures (session-scoped unless said otherwise):

- ``services``: the :class:`~cardroom_runtime.discovery.Services` (closed at the end);
- ``database_admin_url``: SQLAlchemy URL of a database from which to CREATE DATABASE;
- ``database_url``: a fresh database for this run, migrated to head, dropped at the end;
- ``nats_url``: NATS URL with JetStream;
- ``subject_root``: the unique first subject token of this run;
- ``settings``: a :class:`~cardroom_runtime.settings.Settings` with the values above;
- ``fresh_database`` (function-scoped): ``await fresh_database()`` creates another empty
  database (``migrated=True``: at head) and returns its URL; dropped after the test;
- ``roomless_role`` (function-scoped): the name of a role that may log in but hold no
  connection (``CONNECTION LIMIT 0``): the server refuses it every one, "too many
  connections"; dropped after the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cardroom_runtime import migrate
from cardroom_runtime.discovery import Services, discover
from cardroom_runtime.postgres import create_database, drop_database
from cardroom_runtime.settings import ENV_SERVICES, SERVICES_MODES, ServicesMode, Settings

ENV_TEST_SERVICES = "CARDROOM_TEST_SERVICES"

# Stacks run every service in-process, the take5 TCP gateway too: on a port of its own
# (tests/gateway starts its gateway on a known free port), never on a running cardroom's.
os.environ.setdefault("CARDROOM_GATEWAY_PORT", "0")
os.environ.setdefault("CARDROOM_WEB_PORT", "0")  # the web edge likewise


@dataclass
class _Run:
    mode: ServicesMode
    subject_root: str
    data_dir: Path
    services: Services | None = None
    error: BaseException | None = None
    discovered: bool = False


_RUN = pytest.StashKey[_Run]()


def _test_mode() -> ServicesMode:
    raw = (os.environ.get(ENV_TEST_SERVICES) or os.environ.get(ENV_SERVICES) or "auto").strip()
    mode = raw.lower() or "auto"
    if mode not in SERVICES_MODES:
        raise pytest.UsageError(
            f"{ENV_TEST_SERVICES}={raw!r}: expected one of {', '.join(SERVICES_MODES)}"
        )
    return mode  # type: ignore[return-value]


def pytest_configure(config: pytest.Config) -> None:
    root = "crt" + secrets.token_hex(4)
    config.stash[_RUN] = _Run(
        mode=_test_mode(),
        subject_root=root,
        data_dir=Path(tempfile.gettempdir()) / f"cardroom-{root}",
    )
    # services the tests start as processes keep their records (running.json) in the run's
    # folder, never in the checkout's .cardroom where a developer's own cardroom keeps its own
    os.environ.setdefault("CARDROOM_DATA_DIR", str(config.stash[_RUN].data_dir / "data"))


def _discover(config: pytest.Config) -> _Run:
    """Find or start the servers, once per run; remember a failure to report it per test."""
    run = config.stash[_RUN]
    if not run.discovered:
        run.discovered = True
        try:
            env = {k: v for k, v in os.environ.items() if k != ENV_SERVICES}
            settings = Settings.from_env(env)
            run.services = asyncio.run(
                discover(settings, mode=run.mode, data_dir=run.data_dir, ephemeral=True)
            )
        except Exception as exc:
            run.error = exc
    return run


def pytest_report_header(config: pytest.Config) -> list[str]:
    run = _discover(config)
    lines = [
        f"cardroom services ({ENV_TEST_SERVICES}={run.mode}), subject root {run.subject_root}:"
    ]
    if run.services is not None:
        lines += [f"  {line}" for line in run.services.describe().splitlines()]
    else:
        lines.append(f"  NOT AVAILABLE: {run.error}")
    return lines


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    if run is not None and run.services is not None:
        run.services.close()


@pytest.fixture(scope="session")
def services(pytestconfig: pytest.Config) -> Iterator[Services]:
    run = _discover(pytestconfig)
    if run.services is None:
        raise RuntimeError(f"cardroom test services are not available: {run.error}") from (
            run.error
        )
    yield run.services
    run.services.close()


@pytest.fixture(scope="session")
def subject_root(pytestconfig: pytest.Config) -> str:
    return pytestconfig.stash[_RUN].subject_root


@pytest.fixture(scope="session")
def database_admin_url(services: Services) -> str:
    return services.database_admin_url


async def _delete_run_streams(nats_url: str, root: str) -> None:
    from cardroom_runtime.nats import connect

    nc = await connect(nats_url, f"{root}-cleanup", connect_timeout=5)
    try:
        js = nc.jetstream(timeout=5)
        for info in await js.streams_info():
            stream = info.config.name or ""
            bare = stream.lower().removeprefix("kv_").removeprefix("obj_")
            if bare.startswith(root):
                await js.delete_stream(stream)
    finally:
        await nc.close()


@pytest.fixture(scope="session")
async def nats_url(services: Services, subject_root: str) -> AsyncIterator[str]:
    yield services.nats_url
    with contextlib.suppress(Exception):  # best effort: an embedded server is discarded anyway
        await _delete_run_streams(services.nats_url, subject_root)


@pytest.fixture(scope="session")
async def database_url(database_admin_url: str, subject_root: str) -> AsyncIterator[str]:
    name = f"{subject_root}_main"
    url = await create_database(database_admin_url, name)
    try:
        await migrate.upgrade_async(url)
        yield url
    finally:
        await drop_database(database_admin_url, name)


@pytest.fixture(scope="session")
def settings(
    database_url: str, nats_url: str, subject_root: str, pytestconfig: pytest.Config
) -> Settings:
    run = pytestconfig.stash[_RUN]
    return Settings(
        database_url=database_url,
        nats_url=nats_url,
        subject_root=subject_root,
        data_dir=run.data_dir,
        services=run.mode,
    )


FreshDatabase = Callable[..., Awaitable[str]]


@pytest.fixture
async def fresh_database(
    database_admin_url: str, subject_root: str
) -> AsyncIterator[FreshDatabase]:
    created: list[str] = []

    async def make(*, migrated: bool = False) -> str:
        name = f"{subject_root}_{secrets.token_hex(4)}"
        url = await create_database(database_admin_url, name)
        created.append(name)
        if migrated:
            await migrate.upgrade_async(url)
        return url

    yield make
    for name in created:
        await drop_database(database_admin_url, name)


@pytest.fixture
async def roomless_role(database_admin_url: str) -> AsyncIterator[str]:
    from sqlalchemy import pool, text
    from sqlalchemy.ext.asyncio import create_async_engine

    role = f"cardroom_full_{secrets.token_hex(6)}"
    admin = create_async_engine(
        database_admin_url, isolation_level="AUTOCOMMIT", poolclass=pool.NullPool
    )
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE ROLE "{role}" LOGIN CONNECTION LIMIT 0'))
        yield role
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
    finally:
        await admin.dispose()
