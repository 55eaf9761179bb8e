"""PostgreSQL URL conversion and database administration helpers.

URLs are handled in SQLAlchemy form (``postgresql+asyncpg://user:password@host:port/db``,
or ``postgresql+asyncpg://user:@/db?host=/socket/dir`` for a Unix socket);
:func:`asyncpg_dsn` turns one into the plain form asyncpg and libpq accept.
"""

from __future__ import annotations

import contextlib
import re

import asyncpg
from sqlalchemy.engine import URL, make_url

# Names this module creates: lower-case identifiers, so no quoting surprises.
_DB_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

DEFAULT_TIMEOUT = 10.0


def _url(url: str | URL) -> URL:
    parsed = make_url(url) if isinstance(url, str) else url
    backend = parsed.get_backend_name()
    if backend != "postgresql":
        raise ValueError(f"not a PostgreSQL URL: {parsed.render_as_string(hide_password=True)}")
    return parsed


def _render(url: URL) -> str:
    return url.render_as_string(hide_password=False)


def sqlalchemy_url(url: str | URL) -> str:
    """The SQLAlchemy asyncpg form of a PostgreSQL URL (``postgresql+asyncpg://...``)."""
    return _render(_url(url).set(drivername="postgresql+asyncpg"))


def asyncpg_dsn(url: str | URL) -> str:
    """The asyncpg/libpq form of a PostgreSQL URL: ``postgresql://...``, no ``+driver``.

    Query parameters such as ``host=/socket/dir`` are kept.
    """
    return _render(_url(url).set(drivername="postgresql"))


def database_url(url: str | URL, name: str) -> str:
    """The same server and credentials as ``url``, database ``name`` (SQLAlchemy form)."""
    return _render(_url(url).set(drivername="postgresql+asyncpg", database=name))


def redact(url: str | URL) -> str:
    """``url`` with its password (if it has one) hidden, for logs and reports."""
    if not url:
        return ""
    parsed = make_url(url)
    return parsed.render_as_string(hide_password=bool(parsed.password))


def check_database_name(name: str) -> str:
    """Return ``name`` if it is a plain lower-case identifier (what these helpers create)."""
    if not _DB_NAME.match(name):
        raise ValueError(
            f"database name {name!r}: use lower-case letters, digits and '_' (at most 63)"
        )
    return name


async def _admin(admin_url: str, connect_timeout: float) -> asyncpg.Connection:
    return await asyncpg.connect(asyncpg_dsn(admin_url), timeout=connect_timeout)


async def create_database(
    admin_url: str, name: str, *, connect_timeout: float = DEFAULT_TIMEOUT
) -> str:
    """Create database ``name`` on the server of ``admin_url``; return its URL.

    Raises ``asyncpg.DuplicateDatabaseError`` if it exists already.
    """
    check_database_name(name)
    conn = await _admin(admin_url, connect_timeout)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return database_url(admin_url, name)


async def drop_database(
    admin_url: str, name: str, *, connect_timeout: float = DEFAULT_TIMEOUT
) -> None:
    """Drop database ``name`` if it exists, disconnecting its sessions (``WITH (FORCE)``)."""
    check_database_name(name)
    conn = await _admin(admin_url, connect_timeout)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


async def database_exists(
    admin_url: str, name: str, *, connect_timeout: float = DEFAULT_TIMEOUT
) -> bool:
    """Whether database ``name`` exists on the server of ``admin_url``."""
    conn = await _admin(admin_url, connect_timeout)
    try:
        found = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
    finally:
        await conn.close()
    return found is not None


async def ensure_database(
    admin_url: str, name: str, *, connect_timeout: float = DEFAULT_TIMEOUT
) -> str:
    """Create database ``name`` unless it exists; return its URL (SQLAlchemy form)."""
    check_database_name(name)
    if not await database_exists(admin_url, name, connect_timeout=connect_timeout):
        with contextlib.suppress(asyncpg.DuplicateDatabaseError):  # created concurrently
            await create_database(admin_url, name, connect_timeout=connect_timeout)
    return database_url(admin_url, name)
