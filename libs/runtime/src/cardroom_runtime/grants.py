"""The services' own PostgreSQL role: made and granted by ``cardroom migrate``.

Under docker-compose the migration job connects as the schema's owner and the services as a
login role of their own that may only read and write rows (DESIGN.md, Security). The job
names that role with ``CARDROOM_SERVICE_DATABASE_URL``, the very URL the services connect
with (its user and password; one per shard, comma-separated, in the order of
``CARDROOM_DATABASE_URL``), and after upgrading the schema :func:`grant_service_roles`
brings each shard's role to exactly these rights, every time it runs:

- the role exists, may log in with the URL's password, and is nothing more: no superuser,
  no CREATEDB, CREATEROLE, REPLICATION or BYPASSRLS, a member of no role (so none of
  ``pg_read_server_files``, ``pg_execute_server_program``, ...);
- CONNECT on the database, USAGE on the schema; no CREATE there and no TEMPORARY tables;
  PUBLIC loses those two as well where it still holds them (PostgreSQL before 15 gives it
  CREATE on ``public``), since PUBLIC's rights are the role's too;
- SELECT, INSERT, UPDATE, DELETE on every table of the schema, except that ``events`` is
  append-only (SELECT, INSERT: no code changes an event) and ``alembic_version`` is read
  only (a starting service checks the revision); never TRUNCATE, REFERENCES or TRIGGER;
- USAGE on the sequences that feed a column's default (a ``serial``), none on an identity
  column's, which an INSERT draws from without any.

Reconciling on every run (rather than ``ALTER DEFAULT PRIVILEGES`` or grants inside each
migration) covers the tables later migrations add whoever created them, takes back what was
granted by hand beyond this, and sets a rotated password, all with nothing for a migration's
author to remember.
"""

from __future__ import annotations

import asyncpg
from sqlalchemy.engine import make_url

from .postgres import asyncpg_dsn, sqlalchemy_url

ENV_SERVICE_DATABASE_URL = "CARDROOM_SERVICE_DATABASE_URL"

#: What the services may do to a table of the schema, unless :data:`NARROWER` says less.
RUNTIME_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")

#: Tables the services use more narrowly than :data:`RUNTIME_PRIVILEGES`.
NARROWER: dict[str, tuple[str, ...]] = {
    "events": ("SELECT", "INSERT"),  # the source of truth: appended to, never changed
    "alembic_version": ("SELECT",),  # the schema's revision is the migration job's
}

#: The role's attributes, whether it is new or was made before.
ATTRIBUTES = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT"


class GrantError(ValueError):
    """The service URL cannot name a role of its own for the owner's database."""


def _user(url: str) -> tuple[str, str | None, str | None]:
    try:
        parsed = make_url(sqlalchemy_url(url))
    except ValueError as exc:  # its message never repeats a password
        raise GrantError(str(exc)) from None
    if not parsed.username:
        raise GrantError("the service URL names no user")
    return parsed.username, parsed.password, parsed.database


def pairs(owner_urls: str, service_urls: str) -> list[tuple[str, str]]:
    """Each shard's owner URL with its service URL (both comma-separated, in one order)."""
    owners = [u.strip() for u in owner_urls.split(",")]
    services = [u.strip() for u in service_urls.split(",")]
    if len(owners) != len(services):
        raise GrantError(
            f"{ENV_SERVICE_DATABASE_URL} lists {len(services)} databases, the database URL "
            f"{len(owners)}: one service URL per shard, in the same order"
        )
    for n, (owner, service) in enumerate(zip(owners, services, strict=True), 1):
        owner_db = make_url(sqlalchemy_url(owner)).database
        if _user(service)[2] != owner_db:
            raise GrantError(
                f"shard {n}: the service URL names another database than the database URL"
            )
    return list(zip(owners, services, strict=True))


async def grant_service_role(owner_url: str, service_url: str) -> str:
    """Make the role ``service_url`` logs in as hold exactly the services' rights on the
    database of ``owner_url`` (see the module); returns the role's name. One transaction,
    on a connection of ``owner_url``, which must be allowed to create and alter roles and
    to grant on the schema's tables (their owner)."""
    role, password, _ = _user(service_url)
    conn = await asyncpg.connect(asyncpg_dsn(owner_url))
    try:
        async with conn.transaction():
            await _reconcile(conn, role, password)
    finally:
        await conn.close()
    return role


async def grant_service_roles(owner_urls: str, service_urls: str) -> list[str]:
    """:func:`grant_service_role` on every shard, in order; the roles' names."""
    return [await grant_service_role(o, s) for o, s in pairs(owner_urls, service_urls)]


async def _reconcile(conn: asyncpg.Connection, role: str, password: str | None) -> None:
    async def ident(name: str) -> str:
        quoted: str = await conn.fetchval("SELECT quote_ident($1::text)", name)
        return quoted

    me: str = await conn.fetchval("SELECT current_user")
    if role == me:
        raise GrantError(
            f"the service URL names {role!r}, the role the migrations run as: the services "
            "need a role of their own"
        )
    owned = await conn.fetchval(
        "SELECT (SELECT count(*) FROM pg_class c JOIN pg_roles o ON o.oid = c.relowner"
        " WHERE o.rolname = $1) + (SELECT count(*) FROM pg_namespace n JOIN pg_roles o"
        " ON o.oid = n.nspowner WHERE o.rolname = $1) + (SELECT count(*) FROM pg_database d"
        " JOIN pg_roles o ON o.oid = d.datdba WHERE o.rolname = $1"
        " AND d.datname = current_database())",
        role,
    )
    if owned:
        # an owner may drop and alter what it owns whatever it is granted
        raise GrantError(
            f"the service URL names {role!r}, which owns this database, its schema or some "
            "of its tables: the services need a role that owns nothing"
        )
    r = await ident(role)
    secret = "NULL"
    if password is not None:
        secret = await conn.fetchval("SELECT quote_literal($1::text)", password)
    exists = await conn.fetchval("SELECT true FROM pg_roles WHERE rolname = $1", role)
    verb = "ALTER" if exists else "CREATE"
    await conn.execute(f"{verb} ROLE {r} WITH {ATTRIBUTES} PASSWORD {secret}")
    member_of = await conn.fetch(
        "SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid"
        " JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = $1",
        role,
    )
    for row in member_of:
        await conn.execute(f"REVOKE {await ident(row['rolname'])} FROM {r}")

    db = await ident(await conn.fetchval("SELECT current_database()"))
    await conn.execute(f"REVOKE ALL ON DATABASE {db} FROM {r}")
    await conn.execute(f"GRANT CONNECT ON DATABASE {db} TO {r}")
    if await conn.fetchval("SELECT has_database_privilege('public', current_database(), 'TEMP')"):
        await conn.execute(f"REVOKE TEMPORARY ON DATABASE {db} FROM PUBLIC")

    schema_name: str = await conn.fetchval("SELECT current_schema()")
    schema = await ident(schema_name)
    await conn.execute(f"REVOKE ALL ON SCHEMA {schema} FROM {r}")
    await conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {r}")
    public_creates = "SELECT has_schema_privilege('public', $1::text, 'CREATE')"
    if await conn.fetchval(public_creates, schema_name):
        await conn.execute(f"REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC")

    await conn.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {r}")
    await conn.execute(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {schema} FROM {r}")
    tables = await conn.fetch(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.relname",
        schema_name,
    )
    for row in tables:
        name = row["relname"]
        allowed = ", ".join(NARROWER.get(name, RUNTIME_PRIVILEGES))
        await conn.execute(f"GRANT {allowed} ON {schema}.{await ident(name)} TO {r}")
    # an identity column's sequence needs no right (an INSERT draws from it); any other
    # sequence (a serial's) needs USAGE for nextval() in the column's default
    sequences = await conn.fetch(
        "SELECT s.relname FROM pg_class s JOIN pg_namespace n ON n.oid = s.relnamespace"
        " WHERE n.nspname = $1 AND s.relkind = 'S' AND NOT EXISTS (SELECT 1 FROM pg_depend d"
        " WHERE d.classid = 'pg_class'::regclass AND d.objid = s.oid AND d.deptype = 'i')"
        " ORDER BY s.relname",
        schema_name,
    )
    for row in sequences:
        await conn.execute(f"GRANT USAGE ON SEQUENCE {schema}.{await ident(row['relname'])} TO {r}")


__all__ = [
    "ENV_SERVICE_DATABASE_URL",
    "GrantError",
    "grant_service_role",
    "grant_service_roles",
    "pairs",
]
