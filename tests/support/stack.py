"""Helpers of the pipeline tests: a running cardroom, clients, recorders."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from cardroom_client import Client
from cardroom_eventstore import EventStore
from cardroom_wire import Notification


@dataclass
class Stack:
    nats_url: str
    database_url: str
    root: str
    store: EventStore
    clients: list[Client] = field(default_factory=list)

    async def client(self, player: str) -> Client:
        c = await Client.connect(self.nats_url, player, subject_root=self.root, timeout=15)
        self.clients.append(c)
        return c

    async def close_clients(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)


class ServiceProcess:
    """One `cardroom serve <name>` process."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        self.name = name
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    async def start(self) -> None:
        self.proc = subprocess.Popen(  # noqa: ASYNC220 - returns at once; output read in a thread
            [sys.executable, "-m", "cardroom", "serve", self.name],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.starts += 1
        out = self.proc.stdout
        assert out is not None
        # wait for the line the service prints once it is connected and subscribed
        async with asyncio.timeout(60):
            while True:
                line = await asyncio.to_thread(out.readline)
                if not line:
                    raise RuntimeError(f"{self.name} exited before it was ready")
                if b"cardroom: ready" in line:
                    break
        # keep draining its output so it never blocks on a full pipe
        asyncio.get_running_loop().run_in_executor(None, self._drain)

    def _drain(self) -> None:
        if self.proc is not None and self.proc.stdout is not None:
            with contextlib.suppress(Exception):
                for _ in self.proc.stdout:
                    pass

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@dataclass
class ProcessStack(Stack):
    processes: dict[str, ServiceProcess] = field(default_factory=dict)


@dataclass
class Recorder:
    """Records what one client's handler received, per game."""

    seen: dict[str, list[Notification]] = field(default_factory=dict)

    async def __call__(self, note: Notification) -> None:
        self.seen.setdefault(note.game, []).append(note)

    def seqs(self, game: str) -> list[int]:
        return [n.seq for n in self.seen.get(game, [])]


def contiguous(seqs: list[int]) -> bool:
    return seqs == list(range(1, len(seqs) + 1))


async def wait_until(check: Callable[[], Awaitable[bool] | bool], timeout: float = 30) -> None:
    """Poll a condition that is observed from outside (the store, a recorder)."""
    async with asyncio.timeout(timeout):
        while True:
            result = check()
            if isinstance(result, Awaitable):
                result = await result
            if result:
                return
            await asyncio.sleep(0.02)


def as_event(record: Any) -> dict[str, Any]:
    return {**record.data, "type": record.type}
