"""Helpers of the pipeline tests: a running cardroom, clients, recorders."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from cardroom_client import Client
from cardroom_eventstore import EventStore
from cardroom_wire import Notification

if TYPE_CHECKING:
    from cardroom_runtime.host import Host


def end_process(proc: subprocess.Popen[Any]) -> None:
    """Ask a process to end (SIGTERM); kill it when it has not within 10 s."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@dataclass
class Stack:
    nats_url: str
    database_url: str
    root: str
    store: EventStore
    clients: list[Client] = field(default_factory=list)
    # the services' host when they run in this process (its edge counts what it refused)
    host: Host | None = None

    async def client(self, player: str) -> Client:
        c = await Client.connect(self.nats_url, player, subject_root=self.root, timeout=15)
        self.clients.append(c)
        return c

    async def close_clients(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)


class ServiceProcess:
    """One cardroom service as its own OS process, to kill (SIGKILL) and start again at will.

    It runs ``python -m cardroom serve <name>`` (or ``command``). A thread of its own reads
    the output for the process's whole life (it must never block on a full pipe, and any
    number of restarts never runs out of the event loop's executor threads): it reports the
    line the service prints once it is serving, keeps the last lines in ``tail`` for failure
    reports and, given ``log_path``, appends everything to that file across restarts.
    """

    def __init__(
        self,
        name: str,
        env: dict[str, str],
        *,
        log_path: Path | None = None,
        command: list[str] | None = None,
    ) -> None:
        self.name = name
        self.env = env
        self.log_path = log_path
        self.command = command or [sys.executable, "-m", "cardroom", "serve", name]
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.kills = 0
        self.tail: collections.deque[str] = collections.deque(maxlen=2000)

    async def start(self, timeout: float = 90) -> None:
        self.proc = subprocess.Popen(  # noqa: ASYNC220 - returns at once; output read in a thread
            self.command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        self.starts += 1
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        exited = asyncio.Event()
        threading.Thread(
            target=self._read,
            args=(self.proc, loop, ready, exited),
            daemon=True,
            name=f"out-{self.name}",
        ).start()
        waiters = [asyncio.create_task(ready.wait()), asyncio.create_task(exited.wait())]
        try:
            async with asyncio.timeout(timeout):
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        if not ready.is_set():
            where = self.log_path or "\n".join(list(self.tail)[-40:])
            raise RuntimeError(f"{self.name} exited before it was ready: {where}")

    def _read(
        self,
        proc: subprocess.Popen[bytes],
        loop: asyncio.AbstractEventLoop,
        ready: asyncio.Event,
        exited: asyncio.Event,
    ) -> None:
        assert proc.stdout is not None
        log = self.log_path.open("ab") if self.log_path is not None else None
        with contextlib.suppress(Exception):
            for line in proc.stdout:
                self.tail.append(line.decode(errors="replace").rstrip())
                if log is not None:
                    log.write(line)
                if b"cardroom: ready" in line:
                    if log is not None:
                        log.flush()
                    loop.call_soon_threadsafe(ready.set)
        if log is not None:
            log.close()
        with contextlib.suppress(RuntimeError):  # the loop may be gone by then
            loop.call_soon_threadsafe(exited.set)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.kills += 1

    def stop(self) -> None:
        if self.proc is not None:
            end_process(self.proc)


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


async def store_counts(stack: Stack) -> tuple[Any, ...]:
    """What a refused request could change: the rows of events, pending acks, gates,
    commands and streams."""
    async with stack.store.engine.connect() as conn:
        counts = []
        for table in ("events", "pending_acks", "gates", "commands", "streams"):
            counts.append(await conn.scalar(sa.text(f"SELECT count(*) FROM {table}")))
        return tuple(counts)


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


async def projected(store: Any, game: str, timeout: float = 60) -> None:
    """Wait until the projector has caught up with ``game`` (its checkpoint is the stream's
    version): players get notifications from the gamemaster, the projector follows."""
    version = await store.stream_version(game)

    async def caught_up() -> bool:
        return bool(await store.checkpoint(f"projector:{game}") >= version)

    await wait_until(caught_up, timeout=timeout)


def as_event(record: Any) -> dict[str, Any]:
    return {**record.data, "type": record.type}
