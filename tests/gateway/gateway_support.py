"""What the gateway tests share: the gateway process's settings and a handle on it."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass, field

from seed_client import SeedClient, SeedPlayer
from support.stack import ServiceProcess

PLAYERS = 3
TURN_TIMEOUT = 5.0
ACK_TIMEOUT = 1.5
GAME: dict[str, int] = {"win_score": 33}
"""The take5 options of the gateway's tables: the defaults, but games to 33 bull heads rather
than 66 (fewer rounds), to keep the suite quick on a shared machine."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Gateway:
    host: str
    port: int
    players: int
    process: ServiceProcess
    nats_url: str
    root: str
    """The NATS server and subject root of the cardroom behind the gateway."""
    clients: list[SeedClient] = field(default_factory=list)

    async def connect(self) -> SeedClient:
        client = await SeedClient.connect(self.host, self.port)
        self.clients.append(client)
        return client

    async def table(self, **options: int) -> list[SeedPlayer]:
        """``players`` registered protocol-only players (one table), in registration order."""
        seated = []
        for _ in range(self.players):
            player = SeedPlayer(await self.connect(), self.players, **options)
            await player.register()
            seated.append(player)
        return seated

    async def close_clients(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)
        self.clients.clear()
