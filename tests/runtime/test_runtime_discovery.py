"""Discovery against real servers: configured URLs, local servers, embedded servers."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest
from cardroom_runtime.discovery import (
    LOCAL_NATS_URL,
    LOCAL_POSTGRES_URL,
    DiscoveryError,
    Services,
    discover,
    probe_nats,
    probe_postgres,
)
from cardroom_runtime.embedded import free_port, free_ports
from cardroom_runtime.nats import connect, ensure_stream
from cardroom_runtime.postgres import (
    asyncpg_dsn,
    create_database,
    database_exists,
    database_url,
    drop_database,
    ensure_database,
)
from cardroom_runtime.settings import Settings


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie not yet reaped by its parent counts as gone
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _wait_gone(pid: int, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.05)
    return _gone(pid)


def _wait_removed(path: Path, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not path.exists()


async def _answers(probe: object, url: str) -> bool:
    try:
        await probe(url)  # type: ignore[operator]
    except Exception:
        return False
    return True


async def test_configured_database_url_that_does_not_answer_is_an_error(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings(
        database_url=f"postgresql://postgres@127.0.0.1:{port}/postgres",
        nats_url=None,
        data_dir=tmp_path,
    )
    with pytest.raises(DiscoveryError, match=rf"CARDROOM_DATABASE_URL=.*:{port}.*cannot be used"):
        await discover(settings, probe_timeout=1)


async def test_configured_nats_url_that_does_not_answer_is_an_error(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings(
        database_url=None, nats_url=f"nats://127.0.0.1:{port}", data_dir=tmp_path / "d"
    )
    with pytest.raises(DiscoveryError, match=rf"CARDROOM_NATS_URL=nats://127.0.0.1:{port}"):
        await discover(settings, probe_timeout=1)
    # whatever the other search started has been stopped and nothing is left in the folder
    assert not any((tmp_path / "d").glob("**/postmaster.pid"))


async def test_auto_finds_local_servers(tmp_path: Path) -> None:
    if not (
        await _answers(probe_postgres, LOCAL_POSTGRES_URL)
        and await _answers(probe_nats, LOCAL_NATS_URL)
    ):
        pytest.skip("no PostgreSQL on 127.0.0.1:5432 or no NATS+JetStream on :4222 here")
    settings = Settings(database_url=None, nats_url=None, data_dir=tmp_path / "data")
    async with await discover(settings) as services:
        assert services.database_admin_url == LOCAL_POSTGRES_URL
        assert services.nats_url == LOCAL_NATS_URL
        assert "local" in services.database_source
        assert "local" in services.nats_source
        assert services.postgres_pid is None
        assert services.nats_pid is None
    assert not (tmp_path / "data").exists()  # nothing was started


async def test_configured_urls_are_used(services: Services, tmp_path: Path) -> None:
    settings = Settings(
        database_url=asyncpg_dsn(services.database_admin_url),
        nats_url=services.nats_url,
        data_dir=tmp_path,
    )
    async with await discover(settings) as found:
        assert found.database_admin_url == services.database_admin_url
        assert found.nats_url == services.nats_url
        assert found.database_source.startswith("CARDROOM_DATABASE_URL")
        assert found.nats_source.startswith("CARDROOM_NATS_URL")


async def test_containers_without_docker_is_a_clear_error(tmp_path: Path) -> None:
    from cardroom_runtime.discovery import _docker_check, _Starter

    ok, _ = await asyncio.to_thread(_docker_check, _Starter(tmp_path, True))
    if ok:
        pytest.skip("a Docker engine answers here; not starting containers in this test")
    started = time.monotonic()
    with pytest.raises(DiscoveryError, match="container"):
        await discover(Settings(data_dir=tmp_path), mode="containers")
    assert time.monotonic() - started < 30


async def test_embedded_servers_work_stop_and_keep_their_data(
    tmp_path: Path, subject_root: str
) -> None:
    settings = Settings(data_dir=tmp_path / "embedded")
    services = await discover(settings, mode="embedded")
    try:
        assert "embedded PostgreSQL" in services.database_source
        assert "embedded nats-server" in services.nats_source
        assert services.postgres_pid is not None
        assert services.nats_pid is not None
        assert services.database_admin_url.startswith("postgresql+asyncpg://")
        assert "host=" in services.database_admin_url  # Unix socket

        # PostgreSQL: create a database, use it
        url = await ensure_database(services.database_admin_url, "cardroom")
        conn = await asyncpg.connect(asyncpg_dsn(url))
        try:
            await conn.execute("CREATE TABLE t (n int)")
            await conn.execute("INSERT INTO t VALUES (41), (1)")
            assert await conn.fetchval("SELECT sum(n) FROM t") == 42
            assert await conn.fetchval("SELECT current_database()") == "cardroom"
        finally:
            await conn.close()

        # NATS: JetStream publish with de-duplication
        nc = await connect(services.nats_url, "embedded-test")
        try:
            js = nc.jetstream()
            await ensure_stream(js, f"{subject_root}_EMB", [f"{subject_root}.emb.>"])
            ack = await js.publish(f"{subject_root}.emb.x", b"1", headers={"Nats-Msg-Id": "a"})
            again = await js.publish(f"{subject_root}.emb.x", b"1", headers={"Nats-Msg-Id": "a"})
            assert ack.seq == 1
            assert again.duplicate
        finally:
            await nc.close()
        pids = (services.postgres_pid, services.nats_pid)
    finally:
        await services.aclose()
    for pid in pids:
        assert _gone(pid), f"process {pid} still running after close()"
    assert services.closed
    await services.aclose()  # idempotent

    # not ephemeral: a second start finds the database and the stream again (as `make run`)
    async with await discover(settings, mode="embedded") as second:
        assert await database_exists(second.database_admin_url, "cardroom")
        conn = await asyncpg.connect(
            asyncpg_dsn(database_url(second.database_admin_url, "cardroom"))
        )
        try:
            assert await conn.fetchval("SELECT sum(n) FROM t") == 42
        finally:
            await conn.close()
        nc = await connect(second.nats_url, "embedded-test")
        try:
            info = await nc.jetstream().stream_info(f"{subject_root}_EMB")
            assert info.state.messages == 1
        finally:
            await nc.close()
    shutil.rmtree(settings.data_dir)  # some 40 MB: spare pytest's tmp_path rotation


async def test_embedded_servers_die_with_a_killed_owner(tmp_path: Path) -> None:
    """Even a SIGKILLed owner leaves no server behind: the watchdog stops them."""
    script = (
        "import asyncio, json, os\n"
        "from cardroom_runtime.discovery import discover\n"
        "from cardroom_runtime.settings import Settings\n"
        "async def main():\n"
        f"    s = await discover(Settings(data_dir={str(tmp_path / 'owned')!r}),"
        " mode='embedded', ephemeral=True)\n"
        "    print(json.dumps([s.postgres_pid, s.nats_pid]), flush=True)\n"
        "    os.kill(os.getpid(), 9)\n"
        "asyncio.run(main())\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == -9, err.decode()
    pids = json.loads(out.decode().strip().splitlines()[-1])
    assert all(isinstance(pid, int) for pid in pids)
    for pid in pids:
        assert await asyncio.to_thread(_wait_gone, pid), f"process {pid} outlived its owner"
    assert await asyncio.to_thread(_wait_removed, tmp_path / "owned"), "ephemeral data left"


async def test_database_helpers(database_admin_url: str, subject_root: str) -> None:
    name = f"{subject_root}_helpers"
    url = await ensure_database(database_admin_url, name)
    try:
        assert await database_exists(database_admin_url, name)
        assert await ensure_database(database_admin_url, name) == url  # already there: fine
        with pytest.raises(asyncpg.DuplicateDatabaseError):
            await create_database(database_admin_url, name)
        holder = await asyncpg.connect(asyncpg_dsn(url))  # FORCE drops despite a session
        try:
            await drop_database(database_admin_url, name)
        finally:
            await holder.close()
        assert not await database_exists(database_admin_url, name)
        await drop_database(database_admin_url, name)  # absent: fine
    finally:
        await drop_database(database_admin_url, name)


async def test_fresh_database_fixture(fresh_database: Callable[..., Awaitable[str]]) -> None:
    url = await fresh_database()
    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        tables = await conn.fetchval(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        )
        assert tables == 0
    finally:
        await conn.close()


def test_free_ports_are_distinct() -> None:
    # (picked one at a time, a port just released can come back: two listeners on one port)
    ports = free_ports(64)
    assert len(set(ports)) == 64
