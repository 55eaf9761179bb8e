"""PostgreSQL URL conversion and database administration helpers.

Every form of a PostgreSQL URL is accepted: ``postgresql://``, ``postgres://`` and
``postgresql+<driver>://`` (cardroom always connects with asyncpg), with a Unix socket as
``?host=/socket/dir`` and libpq's ``?sslmode=``. :func:`sqlalchemy_url` turns any of them into
the one form SQLAlchemy's asyncpg dialect takes (``postgresql+asyncpg://user:password@host:port/db``,
``sslmode`` as ``ssl``); :func:`asyncpg_dsn` into the plain form asyncpg and libpq take.
:class:`~cardroom_runtime.settings.Settings` normalises ``CARDROOM_DATABASE_URL`` once, so
everything downstream sees the first form.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator

import asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

# Names this module creates: lower-case identifiers, so no quoting surprises.
_DB_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

DEFAULT_TIMEOUT = 10.0

EXAMPLE = "postgresql://user:password@host:5432/database"

_BACKENDS = frozenset({"postgresql", "postgres"})


def _url(url: str | URL) -> URL:
    """``url`` parsed; ValueError (without the password) unless it is a PostgreSQL URL."""
    if isinstance(url, URL):
        parsed = url
    else:
        try:
            parsed = make_url(url.strip())
        except ArgumentError:
            raise ValueError(f"not a URL; expected {EXAMPLE}") from None
    if parsed.get_backend_name() not in _BACKENDS:
        shown = parsed.render_as_string(hide_password=True)
        raise ValueError(f"not a PostgreSQL URL: {shown}; expected {EXAMPLE}")
    return parsed


def _rename_query(url: URL, old: str, new: str) -> URL:
    """``url`` with its query parameter ``old`` (if any) named ``new``."""
    if old not in url.query:
        return url
    value = url.query[old]
    return url.difference_update_query([old]).update_query_dict({new: value})


def _alchemy(url: URL) -> URL:
    # SQLAlchemy's asyncpg dialect passes the query on as keyword arguments of
    # asyncpg.connect(), which calls libpq's sslmode ``ssl``
    return _rename_query(url.set(drivername="postgresql+asyncpg"), "sslmode", "ssl")


def _render(url: URL) -> str:
    return url.render_as_string(hide_password=False)


def sqlalchemy_url(url: str | URL) -> str:
    """The SQLAlchemy asyncpg form of a PostgreSQL URL (``postgresql+asyncpg://...``) from any
    of its forms. Idempotent; ValueError for anything but a PostgreSQL URL."""
    return _render(_alchemy(_url(url)))


def asyncpg_dsn(url: str | URL) -> str:
    """The asyncpg/libpq form of a PostgreSQL URL: ``postgresql://...``, no ``+driver``.

    Query parameters such as ``host=/socket/dir`` are kept (``ssl`` as libpq's ``sslmode``).
    """
    return _render(_rename_query(_url(url).set(drivername="postgresql"), "ssl", "sslmode"))


def database_url(url: str | URL, name: str) -> str:
    """The same server and credentials as ``url``, database ``name`` (SQLAlchemy form)."""
    return _render(_alchemy(_url(url)).set(database=name))


def redact(url: str | URL) -> str:
    """``url`` with its password (if it has one) hidden, for logs and reports."""
    if not url:
        return ""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return "(not a URL)"
    return parsed.render_as_string(hide_password=bool(parsed.password))


def check_database_name(name: str) -> str:
    """Return ``name`` if it is a plain lower-case identifier (what these helpers create)."""
    if not _DB_NAME.match(name):
        raise ValueError(
            f"database name {name!r}: use lower-case letters, digits and '_' (at most 63)"
        )
    return name


@contextlib.asynccontextmanager
async def _admin(admin_url: str, connect_timeout: float) -> AsyncIterator[asyncpg.Connection]:
    """A connection to the server of ``admin_url`` for one statement, closed after it."""
    conn = await asyncpg.connect(asyncpg_dsn(admin_url), timeout=connect_timeout)
    try:
        yield conn
    finally:
        await conn.close()


async def create_database(
    admin_url: str, name: str, *, connect_timeout: float = DEFAULT_TIMEOUT
) -> str:
    """Create database ``name`` on the server of ``admin_url``; return its URL.

    Raises ``asyncpg.DuplicateDatabaseError`` if it exists already.
    """
    check_database_name(name)
    async with _admin(admin_url, connect_timeout) as conn:
        await conn.execute(f'CREATE DATABASE "{name}"')
    return database_url(admin_url, name)


async def drop_database(
    admin_url: str, name: str, *, connect_timeout: float = DEFAULT_TIMEOUT
) -> None:
    """Drop database ``name`` if it exists, disconnecting its sessions (``WITH (FORCE)``)."""
    check_database_name(name)
    async with _admin(admin_url, connect_timeout) as conn:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def database_exists(
    admin_url: str, name: str, *, connect_timeout: float = DEFAULT_TIMEOUT
) -> bool:
    """Whether database ``name`` exists on the server of ``admin_url``."""
    async with _admin(admin_url, connect_timeout) as conn:
        found = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
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
