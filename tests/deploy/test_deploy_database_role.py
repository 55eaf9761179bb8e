"""Under docker-compose the services connect to PostgreSQL as a role of their own, which may
read and write rows and nothing else; the migration job owns the schema.

There is no Docker engine here, so the containers' commands run as processes, as compose
runs them: ``cardroom migrate`` with the owner's URL and ``CARDROOM_SERVICE_DATABASE_URL``
(the migrate job's secrets), then each service with ``cardroom serve <name>`` and the service
URL as its only database URL (every other service's secret). The role's password comes from
the secrets generator; its name is this run's own (roles are cluster-wide), and it is
dropped at the end.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
import sqlalchemy as sa
import yaml
from cardroom_bots import BotPlayer
from cardroom_client import Client
from cardroom_eventstore import EventStore
from cardroom_natsauth import read_secret, write_deploy_secrets
from cardroom_runtime import grants, migrate
from cardroom_runtime.games import load_games
from cardroom_runtime.postgres import asyncpg_dsn, create_database, drop_database
from cardroom_wire import Notification
from sqlalchemy.engine import make_url
from support.stack import ServiceProcess, projected, wait_until

TESTS = Path(__file__).resolve().parents[1]
GAMES = "support.highcard:GAME"
# every compose service that holds the services' database URL, as the compose file says
SERVICES = tuple(
    name
    for name, service in yaml.safe_load(
        (TESTS.parent / "deploy" / "docker-compose.yml").read_text()
    )["services"].items()
    if name != "migrate" and "service_database_url" in (service.get("secrets") or ())
)
# what the role must be refused: the schema, the server's files and programs, the roles,
# and changing or emptying the event log
REFUSED = {
    "DROP TABLE": "DROP TABLE events",
    "CREATE TABLE": "CREATE TABLE intruder (x integer)",
    "CREATE TEMP TABLE": "CREATE TEMP TABLE intruder (x integer)",
    "ALTER TABLE": "ALTER TABLE events ADD COLUMN intruder integer",
    "CREATE INDEX": "CREATE INDEX intruder ON streams (updated_at)",
    "TRUNCATE": "TRUNCATE checkpoints",
    "DELETE an event": "DELETE FROM events",
    "UPDATE an event": "UPDATE events SET type = 'forged'",
    "UPDATE the revision": "UPDATE alembic_version SET version_num = 'x'",
    "COPY TO PROGRAM": "COPY events TO PROGRAM 'cat > /dev/null'",
    "COPY FROM PROGRAM": "COPY streams FROM PROGRAM 'true'",
    "COPY FROM a file": "COPY streams FROM '/etc/hostname'",
    "read a server file": "SELECT pg_read_file('postgresql.conf')",
    "CREATE ROLE": "CREATE ROLE intruder SUPERUSER",
    "CREATE SCHEMA": "CREATE SCHEMA intruder",
    "CREATE FUNCTION": "CREATE FUNCTION intruder() RETURNS int LANGUAGE sql AS 'SELECT 1'",
}

PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")

load_games(GAMES)


@dataclass
class Database:
    owner_url: str  # the migrate job's: the schema's owner
    service_url: str  # every service's: the restricted role
    role: str
    name: str


@pytest.fixture
async def database(
    database_admin_url: str, subject_root: str, tmp_path: Path
) -> AsyncIterator[Database]:
    name = f"{subject_root}_{secrets.token_hex(4)}"
    role = f"{subject_root}_service_{secrets.token_hex(3)}"
    owner_url = await create_database(database_admin_url, name)
    # the password make_secrets writes for the services' role; this run's role name and
    # server instead of compose's cardroom_service@postgres:5432
    write_deploy_secrets(tmp_path / "secrets")
    generated = make_url(read_secret(tmp_path / "secrets" / "service_database_url"))
    assert generated.username == "cardroom_service"
    assert generated.password
    service_url = make_url(owner_url).set(username=role, password=generated.password)
    try:
        yield Database(owner_url, service_url.render_as_string(hide_password=False), role, name)
    finally:
        await drop_database(database_admin_url, name)  # the role's grants go with it
        admin = await asyncpg.connect(asyncpg_dsn(database_admin_url))
        try:
            await admin.execute(f'DROP ROLE IF EXISTS "{role}"')
        finally:
            await admin.close()


def _env(database_url: str, nats_url: str, root: str, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARDROOM_")}
    return env | {
        "CARDROOM_DATABASE_URL": database_url,
        "CARDROOM_NATS_URL": nats_url,
        "CARDROOM_SUBJECT_ROOT": root,
        "CARDROOM_GAMES": GAMES,
        "CARDROOM_DATA_DIR": os.environ["CARDROOM_DATA_DIR"],
        "CARDROOM_GATEWAY_PORT": "0",
        "CARDROOM_WEB_PORT": "0",
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        **more,
    }


async def _cardroom(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``cardroom <args>`` as its own process (as a container runs it), to its end."""
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "cardroom", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


async def _migrate_job(db: Database, nats_url: str, root: str) -> None:
    """The compose migrate job: the owner's URL, and the services' URL to grant to."""
    env = _env(db.owner_url, nats_url, root, CARDROOM_SERVICE_DATABASE_URL=db.service_url)
    job = await _cardroom(env, "migrate")
    assert job.returncode == 0, job.stdout + job.stderr
    assert db.role in job.stdout + job.stderr


async def _play(nats_url: str, root: str) -> tuple[str, BotPlayer, Client, asyncio.Event]:
    """A highcard game to its end through the running services: a bot against a player who
    acknowledges but never moves, whose turns the house plays when the timers fire."""
    bot = BotPlayer(await Client.connect(nats_url, "alice", subject_root=root, timeout=15))
    idle = await Client.connect(nats_url, "bob", subject_root=root, timeout=15)
    over = asyncio.Event()

    async def observe(note: Notification) -> None:
        if note.message.get("type") == "GameOver":
            over.set()

    idle.on_notification(observe)
    game = await bot.create("highcard", {"rounds": 2, "table": {"turn_timeout": 0.2}}, seats=2)
    await idle.join(game)
    async with asyncio.timeout(120):
        await asyncio.gather(bot.finished[game].wait(), over.wait())
    return game, bot, idle, over


async def test_the_services_play_a_whole_game_as_a_role_that_may_only_touch_rows(
    database: Database, nats_url: str, subject_root: str
) -> None:
    db = database
    root = f"{subject_root}r{secrets.token_hex(2)}"
    await _migrate_job(db, nats_url, root)

    service_env = _env(db.service_url, nats_url, root)
    processes = [ServiceProcess(name, service_env) for name in SERVICES]
    store = await EventStore.connect(db.owner_url)  # the test's own eyes: the owner's
    players: list[BotPlayer | Client] = []
    try:
        await asyncio.gather(*(p.start() for p in processes))
        game, bot, idle, _ = await _play(nats_url, root)
        players += [bot, idle]
        events = await store.read_stream(game)
        assert events[-1].type == "table.finished"
        # the idle player's moves were the house's, on the timers' deadlines
        assert any(e.metadata.get("house") for e in events if e.metadata.get("actor") == "bob")
        await projected(store, game)

        async def rated() -> bool:  # analytics wrote the finished game's results
            async with store.engine.connect() as conn:
                rows = await conn.scalar(
                    sa.text("SELECT count(*) FROM analytics_results WHERE game_id = :g"),
                    {"g": game},
                )
            return rows == 2

        await wait_until(rated, timeout=60)
        # every connection the services hold is the role's
        async with store.engine.connect() as conn:
            users = set(
                await conn.scalars(
                    sa.text("SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = :d"),
                    {"d": db.name},
                )
            )
        owner = make_url(db.owner_url).username
        assert db.role in users, users
        assert users <= {db.role, owner}, users

        # the operator's rebuild (docker compose exec <service> cardroom rebuild) needs
        # nothing more: it deletes and writes rows
        rebuilt = await _cardroom(service_env, "rebuild", "all")
        assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    finally:
        await asyncio.gather(*(p.close() for p in players), return_exceptions=True)
        for p in processes:
            p.stop()
        await store.close()
    for p in processes:  # nothing the services tried was refused, not even in a retry
        refused = [line for line in p.tail if "permission denied" in line.lower()]
        assert not refused, (p.name, refused)

    conn = await asyncpg.connect(asyncpg_dsn(db.service_url))
    try:
        assert await conn.fetchval("SELECT current_user") == db.role
        attributes = await conn.fetchrow(
            "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls"
            " FROM pg_roles WHERE rolname = current_user"
        )
        assert not any(attributes.values()), dict(attributes)
        for powerful in (
            "pg_read_server_files",
            "pg_write_server_files",
            "pg_execute_server_program",
            "pg_signal_backend",
        ):
            assert not await conn.fetchval("SELECT pg_has_role($1, 'MEMBER')", powerful)
        assert await conn.fetchval("SELECT count(*) FROM events") > 0  # it does read
        allowed = []
        for what, statement in REFUSED.items():
            try:
                await conn.execute(statement)
            except asyncpg.InsufficientPrivilegeError:
                continue
            allowed.append(what)
        assert not allowed, f"the services' role may {allowed}"
    finally:
        await conn.close()


async def test_every_migration_run_grants_the_tables_later_migrations_add_and_no_more(
    database: Database, nats_url: str, subject_root: str
) -> None:
    db = database
    root = f"{subject_root}r{secrets.token_hex(2)}"
    # a cardroom deployed at revision 0003, before deadlines and transition signatures
    await asyncio.to_thread(migrate.upgrade, db.owner_url, "0003")
    await grants.grant_service_role(db.owner_url, db.service_url)
    owner = await asyncpg.connect(asyncpg_dsn(db.owner_url))
    try:
        # and rights given by hand since, which the next run takes back
        await owner.execute(f'GRANT TRUNCATE, TRIGGER ON streams TO "{db.role}"')
        await owner.execute(f'GRANT pg_read_server_files TO "{db.role}"')
        # a service of the new release, started before the migrate job ran, says so and stops
        early = await _cardroom(_env(db.service_url, nats_url, root), "serve", "relay")
        assert early.returncode == 78, early.stdout + early.stderr
        assert "run `cardroom migrate`" in early.stderr, early.stderr
        assert await owner.fetchval("SELECT version_num FROM alembic_version") == "0003"

        await _migrate_job(db, nats_url, root)

        head = await owner.fetchval("SELECT version_num FROM alembic_version")
        assert head == migrate.head_revision()
        tables = [
            r["relname"]
            for r in await owner.fetch(
                "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace"
                " AND relkind = 'r'"
            )
        ]
        assert {"deadlines", "deadline_versions", "transition_signatures"} <= set(tables)
        for table in tables:
            held = {
                p
                for p in PRIVILEGES
                if await owner.fetchval(
                    "SELECT has_table_privilege($1, $2, $3)", db.role, f"public.{table}", p
                )
            }
            wanted = set(grants.NARROWER.get(table, grants.RUNTIME_PRIVILEGES))
            assert held == wanted, (table, held)
        assert not await owner.fetchval(
            "SELECT pg_has_role($1, 'pg_read_server_files', 'MEMBER')", db.role
        )
        # it logs in with the secret's password (this server trusts local logins, so check
        # the SCRAM verifier PostgreSQL stored against it)
        stored = await owner.fetchval(
            "SELECT rolpassword FROM pg_authid WHERE rolname = $1", db.role
        )
        assert _scram_matches(stored, make_url(db.service_url).password or "")
    finally:
        await owner.close()


def _scram_matches(verifier: str, password: str) -> bool:
    """Whether a ``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`` verifier was
    made from ``password`` (RFC 5802: StoredKey = H(HMAC(SaltedPassword, "Client Key")))."""
    method, _, rest = verifier.partition("$")
    assert method == "SCRAM-SHA-256", method
    params, _, keys = rest.partition("$")
    iterations, salt = params.split(":")
    stored_key = keys.split(":")[0]
    salted = hashlib.pbkdf2_hmac(
        "sha256", password.encode(), base64.b64decode(salt), int(iterations)
    )
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    return hashlib.sha256(client_key).digest() == base64.b64decode(stored_key)


async def test_the_services_role_must_not_be_the_owners(
    database: Database, nats_url: str, subject_root: str
) -> None:
    env = _env(
        database.owner_url,
        nats_url,
        f"{subject_root}r{secrets.token_hex(2)}",
        CARDROOM_SERVICE_DATABASE_URL=database.owner_url,
    )
    job = await _cardroom(env, "migrate")
    assert job.returncode == 78, job.stdout + job.stderr
    assert "a role of their own" in job.stdout + job.stderr


def test_one_service_url_per_shard_of_the_same_databases() -> None:
    owners = "postgresql://cardroom:pw@db0/cardroom,postgresql://cardroom:pw@db1/cardroom"
    services = "postgresql://svc:a@db0/cardroom,postgresql://svc:b@db1/cardroom"
    assert [s for _, s in grants.pairs(owners, services)] == services.split(",")
    with pytest.raises(grants.GrantError, match="one service URL per shard"):
        grants.pairs(owners, services.split(",")[0])
    with pytest.raises(grants.GrantError, match="shard 2"):
        grants.pairs(owners, "postgresql://svc:a@db0/cardroom,postgresql://svc:b@db1/other")
    with pytest.raises(grants.GrantError, match="no user"):
        grants.pairs(owners.split(",")[0], "postgresql://db0/cardroom")
