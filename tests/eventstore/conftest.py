"""Fixtures of the event store tests: a fresh, migrated database per test."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from cardroom_eventstore import EventStore
from sqlalchemy import make_url, pool, text
from sqlalchemy.ext.asyncio import create_async_engine

StoreContext = AbstractAsyncContextManager[EventStore]

REPO_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str) -> Config:
    """A programmatic Alembic config like the runtime builds one (absolute script location)."""
    config = Config(str(REPO_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


async def run_sql(url: str, *statements: str) -> None:
    """Run statements outside a transaction (CREATE/DROP DATABASE)."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT", poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await engine.dispose()


@asynccontextmanager
async def empty_database(admin_url: str) -> AsyncIterator[str]:
    """A freshly created, empty database, dropped (WITH FORCE) afterwards."""
    name = f"cardroom_es_{uuid.uuid4().hex}"
    await run_sql(admin_url, f'CREATE DATABASE "{name}"')
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        await run_sql(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def migrate(url: str) -> None:
    """Migrate the database to head with Alembic."""
    await asyncio.to_thread(command.upgrade, alembic_config(url), "head")


@pytest.fixture
async def es_empty_database_url(database_admin_url: str) -> AsyncIterator[str]:
    """A freshly created, empty database, dropped (WITH FORCE) after the test."""
    async with empty_database(database_admin_url) as url:
        yield url


@pytest.fixture
async def es_database_url(es_empty_database_url: str) -> str:
    """A fresh database migrated to head with Alembic."""
    await migrate(es_empty_database_url)
    return es_empty_database_url


@pytest.fixture
def es_fresh_store(
    database_admin_url: str,
) -> Callable[[], AbstractAsyncContextManager[EventStore]]:
    """An EventStore on a fresh migrated database of its own, for a fixture to open when it
    needs one (the contract tests' PostgreSQL side)."""

    @asynccontextmanager
    async def fresh() -> AsyncIterator[EventStore]:
        async with empty_database(database_admin_url) as url:
            await migrate(url)
            store = await EventStore.connect(url)
            try:
                yield store
            finally:
                await store.close()

    return fresh


@pytest.fixture
async def open_store(
    es_database_url: str,
) -> AsyncIterator[Callable[..., Awaitable[EventStore]]]:
    """Open extra EventStore instances on the test database; all are closed afterwards."""
    opened: list[EventStore] = []

    async def _open(**engine_kwargs: object) -> EventStore:
        store = await EventStore.connect(es_database_url, **engine_kwargs)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        await store.close()


@pytest.fixture
async def store(es_database_url: str) -> AsyncIterator[EventStore]:
    """An EventStore on a fresh migrated database."""
    es = await EventStore.connect(es_database_url, pool_size=10, max_overflow=20)
    try:
        yield es
    finally:
        await es.close()


@pytest.fixture
def es_alembic_config() -> Callable[[str], Config]:
    """:func:`alembic_config`, for tests (test modules here are not a package)."""
    return alembic_config


@pytest.fixture
def es_run_sql() -> Callable[..., Awaitable[None]]:
    """:func:`run_sql`, for tests."""
    return run_sql
