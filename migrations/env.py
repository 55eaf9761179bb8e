"""Alembic environment for cardroom: an async (asyncpg) URL, migrations run via run_sync.

The database URL is, in this order: ``-x url=...`` on the alembic command line, the
``sqlalchemy.url`` main option (how ``cardroom_runtime.migrate`` and the tests pass it), then
the environment variable ``CARDROOM_DATABASE_URL``. A plain ``postgresql://`` URL is run with
asyncpg. A caller that already holds a (sync) connection may pass it as
``config.attributes["connection"]``.

Concurrent upgrades (several services starting at once) are serialised by an advisory lock
taken in the migration transaction before Alembic reads the current revision.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from logging.config import fileConfig

from alembic import context
from cardroom_eventstore import readmodels, schema
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import create_async_engine

# The tables described in Python that autogenerate and `alembic check` compare against: the
# event store's and the projector's read models. Migrations of other owners (services) may
# create tables no module here describes; see include_object.
target_metadata = [schema.metadata, readmodels.readmodels]

ENV_DATABASE_URL = "CARDROOM_DATABASE_URL"

# pg_advisory_xact_lock key serialising migrations ("cr-migra" in ASCII).
MIGRATION_LOCK_KEY = int.from_bytes(b"cr-migra", "big")

config = context.config

# Configure logging from the ini file only for the alembic command line: a program that calls
# alembic.command keeps its own logging.
if config.cmd_opts is not None and config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    url = (
        context.get_x_argument(as_dictionary=True).get("url")
        or config.get_main_option("sqlalchemy.url")
        or os.environ.get(ENV_DATABASE_URL)
    )
    if not url:
        raise RuntimeError(
            "no database URL: set sqlalchemy.url, pass -x url=..., "
            f"or set {ENV_DATABASE_URL} (postgresql+asyncpg://...)"
        )
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    return parsed.render_as_string(hide_password=False)


def include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object | None
) -> bool:
    """Autogenerate leaves alone a table in the database that no module above describes.

    Without this, a table created by another owner's migration would be proposed for dropping.
    """
    return not (type_ == "table" and reflected and compare_to is None)


def run_migrations_offline() -> None:
    """Emit the SQL instead of running it (``alembic upgrade head --sql``)."""
    context.configure(
        url=database_url(),
        target_metadata=target_metadata,
        include_object=include_object,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection, target_metadata=target_metadata, include_object=include_object
    )
    with context.begin_transaction():
        connection.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})"))
        context.run_migrations()


async def run_async_migrations() -> None:
    engine = create_async_engine(database_url(), poolclass=pool.NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(run_async_migrations())
        return
    # Called synchronously from inside a running event loop: asyncio.run() is not allowed
    # here, so run the migration on its own loop in a worker thread (blocking this caller,
    # as a synchronous alembic.command call does anyway).
    with ThreadPoolExecutor(max_workers=1) as executor:
        executor.submit(asyncio.run, run_async_migrations()).result()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
