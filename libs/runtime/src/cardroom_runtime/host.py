"""Hosting services: one FastStream broker, the event store, and the services on them.

A service is a class with a ``name``; it adds its subscribers to the shared broker in
``register`` and runs any background work between ``start`` and ``stop``. The host runs one
service (``cardroom serve relay``) or all of them in one process (``cardroom serve all``):
the services are the same objects either way, they only share a connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from cardroom_eventstore import EventStore
from cardroom_eventstore.readmodels import StoredNotification
from cardroom_wire import (
    ErrorCode,
    InvalidId,
    Subjects,
    WireError,
    error,
    error_from,
)
from faststream.nats import NatsBroker, NatsMessage

log = logging.getLogger("cardroom")


async def ensure_events_stream(nats_url: str, subjects: Subjects) -> None:
    """Create the JetStream stream of ``<root>.events.>`` unless it exists."""
    from .nats import connect, ensure_stream

    nc = await connect(nats_url, "cardroom-setup")
    try:
        await ensure_stream(nc.jetstream(), subjects.events_stream, [subjects.events_all])
    finally:
        await nc.close()


@dataclass
class Runtime:
    """What every service of one process shares."""

    subjects: Subjects
    broker: NatsBroker
    store: EventStore
    nats_url: str
    database_url: str


class Service:
    name: ClassVar[str]

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    @property
    def subjects(self) -> Subjects:
        return self.rt.subjects

    @property
    def store(self) -> EventStore:
        return self.rt.store

    async def publish_notifications(self, notes: Iterable[StoredNotification]) -> int:
        """Publish stored notifications on their players' subjects; returns how many."""
        sent = 0
        for note in notes:
            await self.rt.broker.publish(
                json.dumps(note.payload, separators=(",", ":")).encode(),
                self.subjects.player(note.player_id, note.game_id),
            )
            sent += 1
        return sent

    def register(self) -> None:
        """Add this service's subscribers to the broker (before it starts)."""

    async def prepare(self) -> None:
        """Prepare what subscribers need before the broker connects (e.g. streams)."""

    async def start(self) -> None:
        """Start background work (after the broker is connected)."""

    async def stop(self) -> None:
        """Stop background work; called before the broker closes."""


Handler = Callable[[str, bytes], Awaitable[dict[str, Any]]]

# Errors that mean "cannot reach the database now", by the library that raises them (matched
# by name along the class hierarchy, so this module imports neither library).
_UNAVAILABLE = {
    "sqlalchemy": frozenset(
        {"OperationalError", "InterfaceError", "DisconnectionError", "TimeoutError"}
    ),
    "asyncpg": frozenset(
        {
            "PostgresConnectionError",
            "ConnectionDoesNotExistError",
            "ConnectionFailureError",
            "CannotConnectNowError",
            "AdminShutdownError",
            "CrashShutdownError",
            "InterfaceError",
        }
    ),
}


def storage_unavailable(error: BaseException | None) -> bool:
    """True when ``error`` (or what caused it) says the database cannot be reached now."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) or getattr(error, "connection_invalidated", False):
            return True
        for cls in type(error).__mro__:
            names = _UNAVAILABLE.get(cls.__module__.partition(".")[0])
            if names is not None and cls.__name__ in names:
                return True
        error = error.__cause__ or error.__context__
    return False


def replying(handler: Handler) -> Callable[[NatsMessage], Awaitable[bytes]]:
    """Wrap a request handler so that every input gets exactly one JSON reply.

    Hostile input (bad ids, JSON, schema, size) is answered with a WireError's code; the
    database being away (PostgreSQL restarting) is answered ``unavailable``, which clients
    retry; any other unexpected exception is logged and answered ``internal`` without
    details, so nothing about other players' hidden state can leak through an error.
    """

    async def handle(msg: NatsMessage) -> bytes:
        subject = msg.raw_message.subject
        try:
            reply = await handler(subject, msg.body)
        except WireError as exc:
            reply = error_from(exc)
        except InvalidId as exc:  # an id in the subject that is not a safe token
            reply = error(ErrorCode.BAD_ID, str(exc))
        except Exception as exc:
            if storage_unavailable(exc):
                log.warning("handler on %s: storage unavailable", subject)
                reply = error(ErrorCode.UNAVAILABLE, "storage is unavailable; try again")
            else:
                log.exception("handler failed on %s", subject)
                reply = error(ErrorCode.INTERNAL, "internal error; the request changed nothing")
        return json.dumps(reply, separators=(",", ":")).encode()

    handle.__name__ = getattr(handler, "__name__", "handle")
    return handle


class Host:
    """Runs services on one broker and one event store connection pool."""

    def __init__(
        self,
        services: Sequence[type[Service]],
        *,
        nats_url: str,
        database_url: str,
        subject_root: str,
        client_name: str = "cardroom",
    ) -> None:
        self.nats_url = nats_url
        self.database_url = database_url
        self.subjects = Subjects(subject_root)
        self.broker = NatsBroker(
            nats_url,
            name=client_name,
            max_reconnect_attempts=-1,
            reconnect_time_wait=1,
            logger=None,
        )
        self._service_types = list(services)
        self.services: list[Service] = []
        self._store: EventStore | None = None

    @property
    def store(self) -> EventStore:
        assert self._store is not None, "host not started"
        return self._store

    async def start(self) -> None:
        # a fixed pool: overflow connections would be closed on return and reopened (with
        # asyncpg's type introspection) under load, which costs more than waiting for one
        pool = int(os.environ.get("CARDROOM_DB_POOL", "16"))
        self._store = await EventStore.connect(
            self.database_url, pool_size=pool, max_overflow=0, pool_timeout=60
        )
        rt = Runtime(self.subjects, self.broker, self._store, self.nats_url, self.database_url)
        self.services = [cls(rt) for cls in self._service_types]
        for service in self.services:
            service.register()
        for service in self.services:
            await service.prepare()
        await self.broker.start()
        # a round trip, so the server holds every subscription before anyone is told "ready"
        # (otherwise an early request can meet "no responders")
        await self.broker.connection.flush()
        for service in self.services:
            await service.start()
        log.info("started %s", ", ".join(s.name for s in self.services))

    async def stop(self) -> None:
        for service in reversed(self.services):
            try:
                await service.stop()
            except Exception:
                log.exception("stopping %s", service.name)
        await self.broker.stop()
        if self._store is not None:
            await self._store.close()
            self._store = None

    async def run_forever(self, stop: asyncio.Event) -> None:
        await self.start()
        try:
            await stop.wait()
        finally:
            await self.stop()
