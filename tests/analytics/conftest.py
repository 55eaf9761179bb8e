"""Fixtures of the analytics tests: databases cloned from a migrated template, analytics
alone on a fresh subject root, or a whole cardroom with analytics (in-process or as its own
process)."""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from analytics_support import AnalyticsProcess, AnalyticsRun, NewDatabase
from cardroom_analytics import Analytics
from cardroom_runtime import migrate
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host, Service, ensure_events_stream
from cardroom_runtime.postgres import asyncpg_dsn, create_database, database_url, drop_database
from cardroom_wire import Subjects
from sqlalchemy.ext.asyncio import create_async_engine

from cardroom.services import SERVICES, ServiceName

TESTS = Path(__file__).resolve().parents[1]
GAMES = "support.highcard:GAME"
_counter = itertools.count()

load_games(GAMES)


@pytest.fixture(scope="session")
async def analytics_template(database_admin_url: str, subject_root: str) -> AsyncIterator[str]:
    """A database migrated to head, cloned by ``new_database`` (much faster than migrating)."""
    name = f"{subject_root}_antpl"
    url = await create_database(database_admin_url, name)
    try:
        await migrate.upgrade_async(url)
        yield name
    finally:
        await drop_database(database_admin_url, name)


@pytest.fixture
async def new_database(
    database_admin_url: str, subject_root: str, analytics_template: str
) -> AsyncIterator[NewDatabase]:
    created: list[str] = []

    async def make() -> str:
        name = f"{subject_root}_an{secrets.token_hex(4)}"
        conn = await asyncpg.connect(asyncpg_dsn(database_admin_url))
        try:
            await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{analytics_template}"')
        finally:
            await conn.close()
        created.append(name)
        return database_url(database_admin_url, name)

    yield make
    for name in created:
        await drop_database(database_admin_url, name)


def _with_analytics() -> list[type[Service]]:
    services = list(SERVICES[ServiceName.all])
    if Analytics not in services:
        services.append(Analytics)
    return services


@pytest.fixture
async def analytics_only(
    nats_url: str, subject_root: str, new_database: NewDatabase
) -> AsyncIterator[AnalyticsRun]:
    """Analytics alone, in this process, on a fresh database and subject root (events are
    published by the test)."""
    url = await new_database()
    subjects = Subjects(f"{subject_root}a{next(_counter)}")
    await ensure_events_stream(nats_url, subjects)
    engine = create_async_engine(url)
    host = Host([Analytics], nats_url=nats_url, database_url=url, subject_root=subjects.root)
    await host.start()
    run = AnalyticsRun(nats_url, url, subjects, engine, host=host)
    try:
        yield run
    finally:
        if run.host is not None:
            await run.host.stop()
        await engine.dispose()


@pytest.fixture(scope="module")
async def cardroom(
    nats_url: str, subject_root: str, database_admin_url: str, analytics_template: str
) -> AsyncIterator[AnalyticsRun]:
    """A whole cardroom with analytics, in this process, shared by a module's tests."""
    name = f"{subject_root}_ac{secrets.token_hex(4)}"
    conn = await asyncpg.connect(asyncpg_dsn(database_admin_url))
    try:
        await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{analytics_template}"')
    finally:
        await conn.close()
    url = database_url(database_admin_url, name)
    subjects = Subjects(f"{subject_root}c{next(_counter)}")
    host = Host(_with_analytics(), nats_url=nats_url, database_url=url, subject_root=subjects.root)
    await host.start()
    engine = create_async_engine(url)
    try:
        yield AnalyticsRun(nats_url, url, subjects, engine, host=host, store=host.store)
    finally:
        await host.stop()
        await engine.dispose()
        await drop_database(database_admin_url, name)


@pytest.fixture
async def analytics_process(
    nats_url: str, subject_root: str, new_database: NewDatabase
) -> AsyncIterator[tuple[AnalyticsRun, AnalyticsProcess]]:
    """Analytics as its own process (not started yet), on a fresh database and root."""
    url = await new_database()
    subjects = Subjects(f"{subject_root}p{next(_counter)}")
    await ensure_events_stream(nats_url, subjects)
    env = {
        **os.environ,
        "CARDROOM_DATABASE_URL": url,
        "CARDROOM_NATS_URL": nats_url,
        "CARDROOM_SUBJECT_ROOT": subjects.root,
        "CARDROOM_ANALYTICS_BATCH": "40",
        "CARDROOM_ANALYTICS_ACK_WAIT": "2",  # the killed process's events come back soon
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    engine = create_async_engine(url)
    process = AnalyticsProcess(env)
    try:
        yield AnalyticsRun(nats_url, url, subjects, engine), process
    finally:
        process.stop()
        await engine.dispose()
