"""Helpers of the pipeline tests: a running cardroom, clients, recorders."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import threading
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
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        exited = asyncio.Event()
        # a thread of its own reads the output for the process's whole life (it must never
        # block on a full pipe); it reports the line the service prints once it is serving
        threading.Thread(
            target=self._read, args=(loop, ready, exited), daemon=True, name=f"out-{self.name}"
        ).start()
        waiters = [asyncio.create_task(ready.wait()), asyncio.create_task(exited.wait())]
        try:
            async with asyncio.timeout(60):
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        if not ready.is_set():
            raise RuntimeError(f"{self.name} exited before it was ready")

    def _read(
        self, loop: asyncio.AbstractEventLoop, ready: asyncio.Event, exited: asyncio.Event
    ) -> None:
        proc = self.proc
        assert proc is not None
        assert proc.stdout is not None
        with contextlib.suppress(Exception):
            for line in proc.stdout:
                if b"cardroom: ready" in line:
                    loop.call_soon_threadsafe(ready.set)
        with contextlib.suppress(RuntimeError):  # the loop may be gone by then
            loop.call_soon_threadsafe(exited.set)

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
