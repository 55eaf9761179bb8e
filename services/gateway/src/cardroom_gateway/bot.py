"""A bot that plays take5 over the gateway's TCP protocol (the take5 lines).

Its strategy is take5's :class:`~cardroom_games.take5.HeuristicBot` (the issue's bot: the
lowest card that takes no row, otherwise the least costly card; when it must choose, the row
with the fewest bull heads), fed from what the take5 lines tell a client: its hand (``deal``
minus what ``played`` shows it played), the board of each request and ``confg.stack_size``.

    uv run --frozen python -m cardroom_gateway.bot --port 45678 --bots 4

plays one table of ``--bots`` bots (they register together) and prints each ``game_over``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from typing import Any

from cardroom_games.take5 import HeuristicBot

from .settings import DEFAULT_HOST, DEFAULT_PORT


class SeedBot:
    """One TCP player. :meth:`play` registers and plays one game to its ``game_over``."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, seed: int = 0) -> None:
        self.host = host
        self.port = port
        self.rng = random.Random(seed)
        self.strategy = HeuristicBot("seed")
        self.me: int | None = None
        self.stack_size = 5
        self.hand: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []

    def decide(self, request: dict[str, Any]) -> dict[str, Any]:
        """The response to a ``play_request`` or ``choose_request`` line."""
        view = {"board": request["data"], "stack_size": self.stack_size}
        if request["type"] == "choose_request":
            actions = [{"type": "choose_response", "data": row} for row in request["data"]]
        else:
            actions = [{"type": "play_response", "data": card} for card in self.hand]
        return dict(self.strategy.choose(view, actions, self.rng))

    def observe(self, message: dict[str, Any]) -> None:
        kind: Any = message.get("type")
        data: Any = message.get("data")
        if kind == "register_response":
            self.me = data["id"]
            self.stack_size = int(data["confg"]["stack_size"])
        elif kind == "deal":
            self.hand = sorted(data, key=lambda card: card["face"])
        elif kind == "played":
            for entry in data:
                if entry["id"] == self.me and entry["card"] in self.hand:
                    self.hand.remove(entry["card"])
        elif kind == "error":
            self.errors.append(data)

    async def play(self, timeout: float = 600.0) -> list[dict[str, Any]]:
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        try:
            writer.write(b'{"type": "register_request", "data": null}\n')
            await writer.drain()
            async with asyncio.timeout(timeout):
                while True:
                    raw = await reader.readline()
                    if not raw:
                        raise ConnectionError("the gateway closed the connection")
                    message = json.loads(raw)
                    self.observe(message)
                    if message["type"] in ("play_request", "choose_request"):
                        writer.write(json.dumps(self.decide(message)).encode() + b"\n")
                        await writer.drain()
                    elif message["type"] == "game_over":
                        return list(message["data"])
        finally:
            writer.close()


async def _main(host: str, port: int, bots: int) -> None:
    results = await asyncio.gather(*(SeedBot(host, port, seed=i).play() for i in range(bots)))
    for result in results:
        print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description="take5 bots over the gateway's TCP protocol")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--bots", type=int, default=4, help="as many as the table's players")
    args = parser.parse_args()
    asyncio.run(_main(args.host, args.port, args.bots))


if __name__ == "__main__":
    main()
