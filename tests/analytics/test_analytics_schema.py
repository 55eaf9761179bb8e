"""Migration 0003 builds exactly what cardroom_analytics.schema describes, and goes down
and up again."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from analytics_support import NewDatabase
from cardroom_analytics import schema
from cardroom_runtime import migrate
from sqlalchemy import pool
from sqlalchemy.ext.asyncio import create_async_engine

CATALOG = {
    "columns": """
        SELECT table_name, column_name, data_type, is_nullable, column_default
        FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name LIKE 'analytics\\_%' ORDER BY 1, 2
    """,
    "constraints": """
        SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace
          AND conrelid::regclass::text LIKE 'analytics\\_%' ORDER BY 1, 2
    """,
    "indexes": """
        SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'public' AND tablename LIKE 'analytics\\_%' ORDER BY 1, 2
    """,
}


async def _describe(url: str) -> dict[str, list[tuple[Any, ...]]]:
    engine = create_async_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            return {
                key: [tuple(r) for r in (await conn.execute(sa.text(q))).all()]
                for key, q in CATALOG.items()
            }
    finally:
        await engine.dispose()


def _analytics_only(name: str | None, type_: str, parents: Any) -> bool:
    return type_ != "table" or (name or "").startswith("analytics_")


async def test_the_migration_builds_exactly_the_schema_module(new_database: NewDatabase) -> None:
    migrated = await new_database()  # a clone of a database migrated to head
    twin = await new_database()
    engine = create_async_engine(twin, poolclass=pool.NullPool)
    try:
        async with engine.begin() as conn:
            for table in reversed(schema.TABLES):
                await conn.execute(sa.text(f"DROP TABLE {table.name}"))
            await conn.run_sync(schema.metadata.create_all)
    finally:
        await engine.dispose()
    described = await _describe(migrated)
    assert {r[0] for r in described["columns"]} == {t.name for t in schema.TABLES}
    assert described == await _describe(twin)

    engine = create_async_engine(migrated, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(sync, opts={"include_name": _analytics_only}),
                    schema.metadata,
                )
            )
    finally:
        await engine.dispose()
    assert diff == []  # autogenerate finds nothing to do


async def test_down_to_0002_and_up_again(new_database: NewDatabase) -> None:
    url = await new_database()
    before = await _describe(url)
    await migrate.downgrade_async(url, "0002")
    assert await _describe(url) == {"columns": [], "constraints": [], "indexes": []}
    assert await migrate.current_revision(url) == "0002"
    await migrate.upgrade_async(url, "head")
    assert await _describe(url) == before
