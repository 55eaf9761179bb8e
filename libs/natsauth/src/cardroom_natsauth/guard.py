"""The flood guard: a connection that publishes faster than any honest client is thrown out.

The services limit each player's requests (the runtime's edge answers ``rate_limited`` past
its rate), but a refusal still costs the service a few tens of microseconds, and NATS hands a
subscription its messages in order: one connection publishing faster than a service refuses
queues every other player's requests behind its own. Past that point only the broker can
help, so the guard watches the broker:

- every ``interval`` seconds it reads the server's per-connection counters (``CONNZ`` of the
  application account, from every server, through the system account);
- a player's or guest's connection whose published messages grew faster than ``limit`` a
  second since the previous reading (or since it connected), and by more than one interval's
  worth, is kicked (``KICK``, by server and connection id), and
  its owner is refused by the auth callout for ``ban`` seconds: a player by its id, a guest by
  its address (guests have no identity to hold to account);
- the static users (the services, the auth service) are never watched.

The limit is far above what a client of the game sends (a request per move, an ack per
notification) and above the services' own per-player rate, so that only a client that
ignores ``rate_limited`` reaches it. How long a flood can delay others is then about one
interval plus what the flooder queued in it.

The decisions (:class:`FloodWatch`, :class:`Bans`) are pure and clock-driven;
:class:`FloodGuard` is the loop around them, on a nats-py connection of a system account user.
Each auth service runs its own guard: guards see the same counters and ban alike, so the
auth services stay interchangeable.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Protocol

log = logging.getLogger("cardroom.natsauth.guard")

DEFAULT_FLOOD_LIMIT: Final = 1000.0
"""Messages per second a connection may publish, measured over one interval: five times the
services' per-player rate (200 a second)."""
DEFAULT_FLOOD_INTERVAL: Final = 0.5
DEFAULT_FLOOD_BAN: Final = 60.0
CONNZ_PAGE: Final = 1024
STATIC_USERS: Final = frozenset({"service", "auth", "system"})
"""The users of the deploy configuration that are checked by the server itself, not the
callout: the guard never kicks them."""
GUEST_NAME: Final = "guest"


@dataclass(frozen=True)
class Connection:
    """One client connection as a server counts it, times in seconds on that server's clock."""

    server: str  # the server's id
    cid: int  # the connection's id on that server
    user: str  # the authorized user: a player id, "guest", or a static user
    host: str  # the client's address
    in_msgs: int  # messages it has published since it connected
    start: float  # when it connected
    seen: float  # when the server counted

    @property
    def key(self) -> tuple[str, int]:
        return (self.server, self.cid)


def ban_key(user: str, host: str) -> str:
    """Whom a ban holds: a player by its id, a guest by its address."""
    return f"host:{host}" if user == GUEST_NAME else f"player:{user}"


class Bans:
    """Who may not connect, until when (seconds on the clock the guard and the callout share)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._until: dict[str, float] = {}
        self._clock = clock

    def ban(self, key: str, seconds: float) -> None:
        until = self._clock() + seconds
        self._until[key] = max(until, self._until.get(key, until))

    def lift(self, key: str) -> None:
        """End ``key``'s ban now."""
        self._until.pop(key, None)

    def remaining(self, key: str) -> float:
        """Seconds left on ``key``'s ban, 0 when there is none (expired bans are forgotten)."""
        until = self._until.get(key)
        if until is None:
            return 0.0
        left = until - self._clock()
        if left <= 0:
            del self._until[key]
            return 0.0
        return left

    def __len__(self) -> int:
        return len(self._until)


class FloodWatch:
    """Which connections published more than ``limit`` messages a second since last seen.

    The rate runs from the previous reading, or, at a connection's first, from its start; it
    is measured over at least ``window`` seconds, so a connection is judged only once it has
    sent more than ``limit * window`` messages (a short burst at connect is not a flood).
    Connections that are gone are forgotten.
    """

    def __init__(
        self,
        limit: float = DEFAULT_FLOOD_LIMIT,
        window: float = DEFAULT_FLOOD_INTERVAL,
        exempt: Iterable[str] = STATIC_USERS,
    ) -> None:
        if not limit > 0 or not window > 0:
            raise ValueError("the flood limit and window must be positive")
        self.limit = limit
        self.window = window
        self.exempt = frozenset(exempt)
        self._seen: dict[tuple[str, int], tuple[float, int]] = {}

    def observe(self, connections: Iterable[Connection]) -> list[Connection]:
        flooding: list[Connection] = []
        seen: dict[tuple[str, int], tuple[float, int]] = {}
        for conn in connections:
            if conn.user in self.exempt:
                continue
            seen[conn.key] = (conn.seen, conn.in_msgs)
            then, count = self._seen.get(conn.key, (conn.start, 0))
            if conn.in_msgs - count > self.limit * max(conn.seen - then, self.window):
                flooding.append(conn)
        self._seen = seen
        return flooding


class SystemConnection(Protocol):
    """What the guard needs of a nats-py client connected as a system account user."""

    def new_inbox(self) -> str: ...

    async def subscribe(self, subject: str, *, cb: Any = ...) -> Any: ...

    async def publish(self, subject: str, payload: bytes = ..., reply: str = ...) -> None: ...

    async def request(self, subject: str, payload: bytes = ..., timeout: float = ...) -> Any: ...


def _server_time(value: object) -> float:
    """A server's RFC 3339 timestamp in seconds (its nanoseconds cut to microseconds)."""
    return datetime.fromisoformat(str(value)).timestamp()


def connections_of(reply: Mapping[str, Any]) -> tuple[str, int, list[Connection]]:
    """A CONNZ answer's server id, its total of connections, and its page of connections."""
    data = reply.get("data")
    server = reply.get("server")
    if not isinstance(data, dict) or not isinstance(server, dict):
        raise ValueError(f"not a CONNZ answer: {str(reply.get('error', reply))[:200]}")
    server_id = str(server.get("id", ""))
    now = _server_time(data.get("now"))
    found: list[Connection] = []
    for item in data.get("connections") or ():
        if not isinstance(item, dict):
            continue
        found.append(
            Connection(
                server=server_id,
                cid=int(item.get("cid", 0)),
                user=str(item.get("authorized_user", "")),
                host=str(item.get("ip", "")),
                in_msgs=int(item.get("in_msgs", 0)),
                start=_server_time(item.get("start", data.get("now"))),
                seen=now,
            )
        )
    return server_id, int(data.get("total", len(found))), found


class FloodGuard:
    """Reads every server's connections, kicks flooding ones and bans their owners."""

    def __init__(
        self,
        nc: SystemConnection,
        bans: Bans,
        *,
        account: str,
        limit: float = DEFAULT_FLOOD_LIMIT,
        interval: float = DEFAULT_FLOOD_INTERVAL,
        ban: float = DEFAULT_FLOOD_BAN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.nc = nc
        self.bans = bans
        self.account = account
        self.watch = FloodWatch(limit, interval)
        self.interval = interval
        self.ban = ban
        self._clock = clock
        self._servers = 0  # how many servers answered the last reading
        self.kicked: collections.deque[Connection] = collections.deque(maxlen=1000)  # latest
        self.kicks = 0  # since it started (the metrics)

    async def run(self) -> None:
        """Watch until cancelled; a failed reading is logged (one line) and the next one tried."""
        while True:
            started = self._clock()
            try:
                await self.check()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning(
                    "flood guard: cannot read the connections: %s: %s", type(exc).__name__, exc
                )
            await asyncio.sleep(max(0.0, self.interval - (self._clock() - started)))

    async def check(self) -> list[Connection]:
        """One reading: kick and ban what floods; returns the connections kicked."""
        connections = await self.read()
        flooding = self.watch.observe(connections)
        for conn in flooding:
            key = ban_key(conn.user, conn.host)
            self.bans.ban(key, self.ban)
            try:
                await self.nc.request(
                    f"$SYS.REQ.SERVER.{conn.server}.KICK",
                    json.dumps({"cid": conn.cid}).encode(),
                    timeout=2,
                )
            except Exception as exc:
                log.warning("flood guard: cannot kick %s: %s", key, type(exc).__name__)
                continue
            self.kicked.append(conn)
            self.kicks += 1
            log.warning(
                "flood guard: kicked %s (connection %d on %s, over %.0f messages a second); "
                "refused for %.0f s",
                key,
                conn.cid,
                conn.server[:8],
                self.watch.limit,
                self.ban,
            )
        return flooding

    async def read(self) -> list[Connection]:
        """The account's connections on every server (each server's pages in turn)."""
        options = {"acc": self.account, "auth": True, "limit": CONNZ_PAGE}
        answers = await self._gather("$SYS.REQ.SERVER.PING.CONNZ", options)
        self._servers = max(self._servers, len(answers))
        connections: list[Connection] = []
        for answer in answers:
            server, total, page = connections_of(answer)
            connections += page
            offset = CONNZ_PAGE
            while offset < total:
                reply = await self.nc.request(
                    f"$SYS.REQ.SERVER.{server}.CONNZ",
                    json.dumps({**options, "offset": offset}).encode(),
                    timeout=2,
                )
                _, _, more = connections_of(json.loads(reply.data))
                if not more:
                    break
                connections += more
                offset += CONNZ_PAGE
        return connections

    async def _gather(self, subject: str, options: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every server's answer to a PING request: until as many servers as last time have
        answered, or one interval has passed (the first time, and when a server is gone)."""
        inbox = self.nc.new_inbox()
        answers: list[dict[str, Any]] = []
        enough = asyncio.Event()

        async def on_answer(msg: Any) -> None:
            with contextlib.suppress(ValueError):
                answers.append(json.loads(msg.data))
            if self._servers and len(answers) >= self._servers:
                enough.set()

        sub = await self.nc.subscribe(inbox, cb=on_answer)
        try:
            await self.nc.publish(subject, json.dumps(options).encode(), reply=inbox)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(enough.wait(), self.interval)
        finally:
            await sub.unsubscribe()
        return answers


__all__ = [
    "DEFAULT_FLOOD_BAN",
    "DEFAULT_FLOOD_INTERVAL",
    "DEFAULT_FLOOD_LIMIT",
    "Bans",
    "Connection",
    "FloodGuard",
    "FloodWatch",
    "ban_key",
    "connections_of",
]
