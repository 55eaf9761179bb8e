"""Alembic migrations: upgrade, downgrade, upgrade again; and they build what schema.py says.

Other owners add their own migrations to the same history; these tests run all of them (every
migration must upgrade and downgrade) but compare table definitions only for the tables that
the modules of cardroom_eventstore describe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from cardroom_eventstore import readmodels, schema
from sqlalchemy import make_url, pool, text
from sqlalchemy.ext.asyncio import create_async_engine

# The tables described in Python by cardroom_eventstore (the event store, the read models).
METADATAS = (schema.metadata, readmodels.readmodels)
DESCRIBED_TABLES = frozenset(t for m in METADATAS for t in m.tables)
EVENT_STORE_TABLES = {
    "events",
    "streams",
    "pending_acks",
    "gates",
    "commands",
    "checkpoints",
}

# A description of the public schema, one list of rows per kind, each row starting with the
# name of its table (sequences: the table the identity column belongs to).
CATALOG_QUERIES = {
    "tables": "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    "columns": """
        SELECT table_name, column_name, data_type, is_nullable, column_default,
               is_identity, identity_generation
        FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2
    """,
    "constraints": """
        SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2
    """,
    "indexes": """
        SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'public' ORDER BY 1, 2
    """,
    "sequences": """
        SELECT d.refobjid::regclass::text, s.relname
        FROM pg_class s JOIN pg_depend d
            ON d.objid = s.oid AND d.classid = 'pg_class'::regclass
            AND d.refclassid = 'pg_class'::regclass
        WHERE s.relkind = 'S' AND s.relnamespace = 'public'::regnamespace ORDER BY 1, 2
    """,
}


async def describe(
    url: str, tables: frozenset[str] | None = None
) -> dict[str, list[tuple[Any, ...]]]:
    """The catalog rows of ``tables`` (every table when None)."""
    engine = create_async_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            described = {}
            for key, query in CATALOG_QUERIES.items():
                rows = (await conn.execute(text(query))).all()
                described[key] = [tuple(r) for r in rows if tables is None or str(r[0]) in tables]
            return described
    finally:
        await engine.dispose()


async def test_upgrade_downgrade_upgrade(
    es_empty_database_url: str, es_alembic_config: Callable[[str], Config]
) -> None:
    url = es_empty_database_url
    config = es_alembic_config(url)
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None

    await asyncio.to_thread(command.upgrade, config, "head")
    after_first = await describe(url)
    tables = {t for (t,) in after_first["tables"]}
    assert tables >= DESCRIBED_TABLES | {"alembic_version"}
    assert tables >= EVENT_STORE_TABLES
    engine = create_async_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            assert await conn.scalar(text("SELECT version_num FROM alembic_version")) == head
    finally:
        await engine.dispose()
    # Autogenerate finds nothing to do: the migrations match the modules (raises otherwise).
    await asyncio.to_thread(command.check, config)

    await asyncio.to_thread(command.downgrade, config, "base")
    after_down = await describe(url)
    assert after_down["tables"] == [("alembic_version",)]
    assert after_down["sequences"] == []
    assert [c for c in after_down["constraints"] if c[0] != "alembic_version"] == []
    assert [i for i in after_down["indexes"] if i[0] != "alembic_version"] == []

    # Called synchronously from inside the running event loop: env.py copes.
    command.upgrade(config, "head")
    assert await describe(url) == after_first


async def test_migrations_build_exactly_the_schema_module(
    es_database_url: str,
    database_admin_url: str,
    es_run_sql: Callable[..., Awaitable[None]],
) -> None:
    """The migrated tables equal those built by create_all, name for name."""
    name = make_url(es_database_url).database
    twin = f"{name}_twin"
    await es_run_sql(database_admin_url, f'CREATE DATABASE "{twin}"')
    try:
        twin_url = make_url(es_database_url).set(database=twin).render_as_string(False)
        engine = create_async_engine(twin_url, poolclass=pool.NullPool)
        try:
            async with engine.begin() as conn:
                for metadata in METADATAS:
                    await conn.run_sync(metadata.create_all)
        finally:
            await engine.dispose()
        migrated = await describe(es_database_url, DESCRIBED_TABLES)
        created = await describe(twin_url)
        assert {t for (t,) in migrated["tables"]} == DESCRIBED_TABLES
        assert migrated == created
    finally:
        await es_run_sql(database_admin_url, f'DROP DATABASE IF EXISTS "{twin}" WITH (FORCE)')
