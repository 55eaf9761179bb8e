"""Mends of nats-py's reading, made once when the SDK (or the runtime's host) is imported.

nats-py reads a connection in one task, and an unexpected error in it ends the task: the
error is logged, the connection stays "connected" and never reconnects, and nothing more is
read from it (every later flush waits out its timeout, no message arrives). Two ways in are
closed here:

- **PONGs.** nats-py keeps one future per PING sent and sets the oldest one's result at each
  PONG. A flush that is given up (its task cancelled, or its timeout passed) leaves its
  future behind, cancelled, and setting its result raised. Each PONG still answers the oldest
  PING (the server answers them in order); a future nobody awaits any more is only dropped.
- **Messages.** Anybody allowed to publish on a subject may send any header block with a
  message, and any bytes in a wildcard token of the subject. nats-py raised on a header
  block's status line that is not UTF-8 (``NATS/1.0 \\xff``), on a block cut short, and on
  a subject that is not UTF-8: one hostile message on a player's own command subject
  deafened the services' connection for every game. A header block that cannot be read is
  now taken as none (headers carry only trace context here, and the body is checked as
  ever), and a message whose reading still raises is dropped alone (a subject that cannot be
  read cannot tell whom to answer); the connection reads on. Both are logged at debug level
  only: players can send them, and must not flood the logs.
"""

from __future__ import annotations

import logging
from typing import Any

from nats.aio.client import Client

log = logging.getLogger("cardroom.nats")

_read_headers = Client._process_headers
_read_message = Client._process_msg


async def _process_pong(self: Client) -> None:
    if self._pongs:
        future = self._pongs.pop(0)
        if not future.done():
            future.set_result(True)
        self._pongs_received += 1
        self._pings_outstanding = 0


async def _process_headers(self: Client, headers: Any) -> dict[str, str] | None:
    try:
        return await _read_headers(self, headers)
    except Exception as exc:
        log.debug("a message's headers could not be read (%s): taken as none", type(exc).__name__)
        return None


async def _process_msg(
    self: Client, sid: int, subject: bytes, reply: bytes, data: bytes, headers: bytes
) -> None:
    try:
        await _read_message(self, sid, subject, reply, data, headers)
    except Exception as exc:
        log.debug("a message could not be read (%s): dropped", type(exc).__name__)


def mend() -> None:
    """Put the mended reading in place (idempotent)."""
    Client._process_pong = _process_pong  # type: ignore[method-assign]
    Client._process_headers = _process_headers  # type: ignore[method-assign]
    Client._process_msg = _process_msg  # type: ignore[method-assign]
