"""Run the repository's Alembic migrations against a database URL.

The migrations folder is ``$CARDROOM_MIGRATIONS_DIR`` if set, else ``migrations/`` beside the
``alembic.ini`` found by walking up from this file (the repository root in a checkout).
``migrations/env.py`` reads the URL with ``config.get_main_option("sqlalchemy.url")``; it is
always given in SQLAlchemy asyncpg form (``postgresql+asyncpg://...``).

The functions are synchronous, because Alembic is (an async ``env.py`` runs its own event
loop); the ``*_async`` variants run them in a worker thread, for use inside an event loop.
"""

from __future__ import annotations

import asyncio
import configparser
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg

from .postgres import asyncpg_dsn, sqlalchemy_url

if TYPE_CHECKING:
    from alembic.config import Config

ENV_MIGRATIONS_DIR = "CARDROOM_MIGRATIONS_DIR"

# Options of alembic.ini's [alembic] section that this module sets itself.
_OWN_OPTIONS = {"script_location", "sqlalchemy.url"}


class MigrationsNotFoundError(FileNotFoundError):
    """No migrations folder could be found."""


def _find_ini(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / "alembic.ini"
        if candidate.is_file():
            return candidate
    return None


def migrations_dir() -> Path:
    """The folder holding ``env.py`` and ``versions/``."""
    configured = os.environ.get(ENV_MIGRATIONS_DIR, "").strip()
    if configured:
        folder = Path(configured).expanduser().resolve()
        if not folder.is_dir():
            raise MigrationsNotFoundError(f"{ENV_MIGRATIONS_DIR}={configured}: not a folder")
        return folder
    ini = _find_ini(Path(__file__).resolve().parent)
    if ini is None:
        raise MigrationsNotFoundError(
            f"no alembic.ini above {Path(__file__).parent}; set {ENV_MIGRATIONS_DIR} "
            "to the migrations folder"
        )
    folder = ini.parent / "migrations"
    if not folder.is_dir():
        raise MigrationsNotFoundError(f"{folder}: not a folder (beside {ini})")
    return folder


def alembic_config(url: str) -> Config:
    """An Alembic config for ``url``: the repository's migrations and its alembic.ini options.

    No ini file is attached (``config_file_name`` is None), so an ``env.py`` that configures
    logging from it leaves the caller's logging alone.
    """
    from alembic.config import Config

    folder = migrations_dir()
    ini = folder.parent / "alembic.ini"
    config = Config(config_args={"here": str(folder.parent)})
    if ini.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(ini)
        if parser.has_section("alembic"):
            for key, value in parser.items("alembic"):
                if key not in _OWN_OPTIONS:
                    config.file_config.set(config.config_ini_section, key, value)
    config.set_main_option("script_location", str(folder).replace("%", "%%"))
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the database at ``url`` to ``revision`` (default: the newest)."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Downgrade the database at ``url`` to ``revision`` (default: empty)."""
    from alembic import command

    command.downgrade(alembic_config(url), revision)


async def current_revision(url: str) -> str | None:
    """The revision the database at ``url`` is at (None when unversioned or at base)."""
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        if not await conn.fetchval("SELECT to_regclass('alembic_version') IS NOT NULL"):
            return None
        value: str | None = await conn.fetchval("SELECT version_num FROM alembic_version")
        return value
    finally:
        await conn.close()


async def upgrade_async(url: str, revision: str = "head") -> None:
    """:func:`upgrade` in a worker thread; ``url`` may list shards, comma-separated (each is
    upgraded, in order)."""
    for one in url.split(","):
        await asyncio.to_thread(upgrade, one, revision)


_REVISION = re.compile(r'^revision: str = "([^"]+)"', re.MULTILINE)
_DOWN = re.compile(r'^down_revision: [^=]+= (?:"([^"]+)"|None)', re.MULTILINE)


def head_revision() -> str:
    """The newest revision of the migrations folder, read from its files' ``revision`` and
    ``down_revision`` lines (the one no other revision follows), without Alembic."""
    revisions: set[str] = set()
    followed: set[str] = set()
    for path in (migrations_dir() / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        found = _REVISION.search(text)
        if found is None:
            continue
        revisions.add(found.group(1))
        down = _DOWN.search(text)
        if down is not None and down.group(1):
            followed.add(down.group(1))
    heads = revisions - followed
    if len(heads) != 1:
        raise RuntimeError(f"the migrations have {len(heads)} heads: {sorted(heads)}")
    return heads.pop()


class SchemaBehindError(RuntimeError):
    """The database is not at the newest revision and this process's role may not change
    the schema (a service's own role under docker-compose): the migration job must run."""


async def _may_change_schema(url: str) -> bool:
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        allowed: bool = await conn.fetchval(
            "SELECT has_schema_privilege(current_schema(), 'CREATE')"
        )
        return allowed
    finally:
        await conn.close()


async def ensure_migrated(url: str) -> bool:
    """Upgrade the database at ``url`` to the newest revision unless it is there already;
    True if it upgraded. Every service process calls it as it starts: one query when the
    database is current, so that a restarted service does not pay for importing and running
    Alembic (half a second of its start). ``url`` may list the event store's shards,
    comma-separated: each is brought to the newest revision (a shard just added starts
    empty and is migrated here). A role that may not create in the schema (the services'
    own, :mod:`cardroom_runtime.grants`) gets :class:`SchemaBehindError` instead of
    Alembic's first refused statement."""
    upgraded = False
    head = head_revision()
    for n, one in enumerate(url.split(","), 1):
        current = await current_revision(one)
        if current == head:
            continue
        if not await _may_change_schema(one):
            where = f"shard {n}" if "," in url else "the database"
            raise SchemaBehindError(
                f"{where} is at revision {current or 'none'}, this code needs {head}, and "
                "its role may not change the schema: run `cardroom migrate` as the "
                "schema's owner first (under docker-compose, the migrate job)"
            )
        await asyncio.to_thread(upgrade, one)
        upgraded = True
    return upgraded


async def downgrade_async(url: str, revision: str = "base") -> None:
    """:func:`downgrade` in a worker thread."""
    await asyncio.to_thread(downgrade, url, revision)
