"""A mend of nats-py's PONG handling, made once when the SDK is imported.

nats-py keeps one future per PING sent and sets the oldest one's result at each PONG. A
flush that is given up (its task cancelled, or its timeout passed) leaves its future behind,
cancelled; when its PONG came, setting the result raised, nats-py's read loop stopped on the
error, and the connection went deaf without reconnecting: every later flush waited out its
timeout (a close drains with flushes: a bot's close took 30 s) and no message arrived. Each
PONG still answers the oldest PING (the server answers them in order); a future nobody
awaits any more is only dropped.
"""

from __future__ import annotations

from nats.aio.client import Client


async def _process_pong(self: Client) -> None:
    if self._pongs:
        future = self._pongs.pop(0)
        if not future.done():
            future.set_result(True)
        self._pongs_received += 1
        self._pings_outstanding = 0


def mend() -> None:
    """Put the mended PONG handling in place (idempotent)."""
    Client._process_pong = _process_pong  # type: ignore[method-assign]
