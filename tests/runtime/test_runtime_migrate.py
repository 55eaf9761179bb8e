"""cardroom_runtime.migrate: Alembic wiring, on fresh databases of the test servers."""

from __future__ import annotations

import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest
from cardroom_runtime import migrate
from cardroom_runtime.postgres import asyncpg_dsn

FreshDatabase = Callable[..., Awaitable[str]]

ENV_PY = """
import asyncio
from alembic import context
from sqlalchemy.ext.asyncio import create_async_engine

config = context.config

def run(connection):
    context.configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()

async def main():
    engine = create_async_engine(config.get_main_option("sqlalchemy.url"))
    async with engine.connect() as connection:
        await connection.run_sync(run)
    await engine.dispose()

asyncio.run(main())
"""

REVISION = """
from alembic import op
import sqlalchemy as sa

revision = "r1"
down_revision = None

def upgrade():
    op.create_table("probe", sa.Column("id", sa.Integer, primary_key=True))

def downgrade():
    op.drop_table("probe")
"""


async def _tables(url: str) -> set[str]:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        rows = await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
    finally:
        await conn.close()
    return {row["table_name"] for row in rows}


def test_migrations_dir_is_the_repository_folder() -> None:
    folder = migrate.migrations_dir()
    assert folder.name == "migrations"
    assert (folder.parent / "alembic.ini").is_file()


def test_migrations_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDROOM_MIGRATIONS_DIR", str(tmp_path))
    assert migrate.migrations_dir() == tmp_path
    monkeypatch.setenv("CARDROOM_MIGRATIONS_DIR", str(tmp_path / "missing"))
    with pytest.raises(migrate.MigrationsNotFoundError, match="CARDROOM_MIGRATIONS_DIR"):
        migrate.migrations_dir()


async def test_upgrade_and_downgrade_wiring(
    fresh_database: FreshDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A self-made migrations folder: proves the helper passes folder and URL to Alembic."""
    folder = tmp_path / "migrations"
    (folder / "versions").mkdir(parents=True)
    (folder / "env.py").write_text(textwrap.dedent(ENV_PY))
    (folder / "versions" / "r1_probe.py").write_text(textwrap.dedent(REVISION))
    (folder / "script.py.mako").write_text("")
    monkeypatch.setenv("CARDROOM_MIGRATIONS_DIR", str(folder))

    url = await fresh_database()
    await migrate.upgrade_async(asyncpg_dsn(url))  # a plain URL is accepted too
    assert "probe" in await _tables(url)
    assert await migrate.current_revision(url) == "r1"
    await migrate.downgrade_async(url)
    assert "probe" not in await _tables(url)
    assert await migrate.current_revision(url) is None


async def test_repository_migrations_upgrade_and_downgrade(fresh_database: FreshDatabase) -> None:
    url = await fresh_database()
    await migrate.upgrade_async(url)
    head = await migrate.current_revision(url)
    assert head is not None
    assert len(await _tables(url) - {"alembic_version"}) > 0
    await migrate.downgrade_async(url)
    assert await migrate.current_revision(url) is None
    assert await _tables(url) <= {"alembic_version"}
    await migrate.upgrade_async(url, "head")  # and back up again
    assert await migrate.current_revision(url) == head


async def test_database_url_fixture_is_migrated(database_url: str) -> None:
    assert await migrate.current_revision(database_url) is not None


async def test_ensure_migrated_upgrades_once_and_knows_alembics_head(
    fresh_database: FreshDatabase,
) -> None:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(migrate.alembic_config("postgresql+asyncpg://x/y"))
    assert migrate.head_revision() == script.get_current_head()
    url = await fresh_database()
    assert await migrate.ensure_migrated(url) is True  # an empty database: upgraded
    assert await migrate.current_revision(url) == migrate.head_revision()
    assert await migrate.ensure_migrated(url) is False  # current: nothing run
    await migrate.downgrade_async(url, "0001")
    assert await migrate.ensure_migrated(url) is True  # behind: upgraded again
    assert await migrate.current_revision(url) == migrate.head_revision()
