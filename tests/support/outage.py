"""Servers a test may stop and start again: an embedded nats-server that comes back on the same
port with its JetStream data, and an embedded PostgreSQL that comes back on the same socket.

They are the runtime's embedded servers (``cardroom_runtime.embedded``), started by the test
itself, so the servers other tests share are never touched.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from cardroom_runtime.embedded import EmbeddedNats, EmbeddedPostgres


class RestartableNats(EmbeddedNats):
    """An :class:`EmbeddedNats` whose :meth:`restart` keeps its port and its data."""

    async def restart(self, wait: float = 20.0) -> None:
        assert self.port is not None, "start it first"
        proc = self._spawn(self.port)
        self._proc = proc
        await self._wait_ready(proc, wait)


class RestartablePostgres:
    """An :class:`EmbeddedPostgres` in ``pgdata`` that can be stopped and started again (the
    socket lives in ``pgdata``, so the URL stays the same)."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata
        self.server: EmbeddedPostgres | None = None
        self.admin_url = ""

    async def start(self) -> str:
        self.server = EmbeddedPostgres(self.pgdata)
        self.admin_url = await asyncio.to_thread(self.server.start)
        return self.admin_url

    async def stop(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            await asyncio.to_thread(server.stop)
