"""How a second command finds the running cardroom (its record in the data folder), and the
embedded nats-server's WebSocket listener for browsers."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from cardroom_runtime.discovery import (
    Services,
    discover,
    read_running,
    remove_running,
    running_records,
    write_running,
)
from cardroom_runtime.embedded import EmbeddedNats
from cardroom_runtime.settings import Settings
from websockets.asyncio.client import connect as ws_connect


def test_the_record_names_a_live_process_or_nothing(tmp_path: Path) -> None:
    assert read_running(tmp_path) is None
    write_running(tmp_path, nats_url="nats://127.0.0.1:1")
    record = read_running(tmp_path)
    assert record is not None
    assert record["pid"] == os.getpid()
    assert record["nats_url"] == "nats://127.0.0.1:1"
    remove_running(tmp_path)
    assert read_running(tmp_path) is None

    # a record left by a process that is gone (killed, say) is ignored
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    (tmp_path / "running.json").write_text(f'{{"pid": {int(gone.stdout)}, "nats_url": "x"}}')
    assert read_running(tmp_path) is None


def test_each_service_process_keeps_a_record_and_the_last_hands_the_shared_one_on(
    tmp_path: Path,
) -> None:
    """Services run as separate processes from one data folder: ``status`` finds every
    one's metrics, and when the one whose record is shared stops, another's takes its place
    (the others still serve: commands in other terminals must still find the servers)."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        running = tmp_path / "running.d"
        running.mkdir()
        (running / f"{other.pid}.json").write_text(
            f'{{"pid": {other.pid}, "metrics_url": "http://127.0.0.1:2/metrics"}}'
        )
        write_running(tmp_path, metrics_url="http://127.0.0.1:1/metrics")
        assert {r["metrics_url"] for r in running_records(tmp_path)} == {
            "http://127.0.0.1:1/metrics",
            "http://127.0.0.1:2/metrics",
        }
        remove_running(tmp_path)
        assert [r["pid"] for r in running_records(tmp_path)] == [other.pid]
        record = read_running(tmp_path)
        assert record is not None
        assert record["pid"] == other.pid
    finally:
        other.kill()
        other.wait()
    assert running_records(tmp_path) == []  # a process gone is no record
    assert read_running(tmp_path) is None


async def test_discovery_finds_the_running_servers_before_starting_its_own(
    tmp_path: Path, services: Services
) -> None:
    write_running(
        tmp_path,
        nats_url=services.nats_url,
        nats_ws_url="ws://127.0.0.1:9",
        database_admin_url=services.database_admin_url,
    )
    try:
        # "embedded" would start servers in tmp_path: the running ones are found instead
        found = await discover(Settings(data_dir=tmp_path), mode="embedded", data_dir=tmp_path)
        try:
            assert found.nats_url == services.nats_url
            assert found.database_admin_url == services.database_admin_url
            assert "the running cardroom" in found.nats_source
            assert found.nats_ws_url == "ws://127.0.0.1:9"
            assert found.nats_pid is None
            assert found.postgres_pid is None
            assert not (tmp_path / "nats").exists()
        finally:
            await found.aclose()
    finally:
        remove_running(tmp_path)


async def test_embedded_nats_listens_for_browsers_over_websocket(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path / "nats")
    await server.start()
    try:
        assert server.ws_url is not None
        async with ws_connect(server.ws_url) as ws:
            first = await asyncio.wait_for(ws.recv(), 5)
        assert (first if isinstance(first, bytes) else first.encode()).startswith(b"INFO ")
    finally:
        await asyncio.to_thread(server.stop)
