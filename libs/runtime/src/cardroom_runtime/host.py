"""Hosting services: one FastStream broker, the event store, and the services on them.

A service is a class with a ``name``; it adds its subscribers to the shared broker in
``register`` and runs any background work between ``start`` and ``stop``. The host runs one
service (``cardroom serve relay``) or all of them in one process (``cardroom serve all``):
the services are the same objects either way, they only share a connection.

A subscription is declared typed (:meth:`Service.serve` / :meth:`Service.listen` with
``model=``): its handler takes the wire model parsed from the body and the :class:`Asker`
read from the subject, ``async def on_ack(self, ack: Ack, asker: Asker) -> dict``. The
runtime parses, refuses hostile input with the wire's stable codes, and calls the same
handler whether it serves on the bare connection (a running host) or through a FastStream
subscriber (the AsyncAPI document, whose payload schemas are then the models', and
FastStream's test broker).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar

from cardroom_client import natsfix
from cardroom_eventstore import EventStore
from cardroom_wire import (
    ErrorCode,
    InvalidId,
    Subjects,
    WireError,
    decode_json,
    dumps,
    error,
    error_from,
    parse,
)
from faststream import BaseMiddleware
from faststream.exceptions import SubscriberNotFound
from faststream.nats import NatsBroker, NatsMessage
from nats.errors import NoRespondersError
from pydantic import BaseModel

from . import tracing
from .edge import FAILURES, Edge
from .logs import bind, unbind
from .metrics import Metrics, outcome_of
from .settings import database_urls, nats_servers
from .shards import Shards

log = logging.getLogger("cardroom")

# The services' connections are nats-py's too: a flush given up (a stop cancels its task), or
# a player's message with a header block nats-py cannot read, would otherwise leave the
# connection deaf for every game (see the mend's module).
natsfix.mend()

RATE_LIMITED = dumps(
    error(ErrorCode.RATE_LIMITED, "too many requests from this player; slow down and try again")
)
OVERLOADED = dumps(error(ErrorCode.UNAVAILABLE, "the service is overloaded; try again"))
WAITING_PER_WORKER = 64  # requests that may wait per worker of a route before it is overloaded
PER_ASKER = 1  # requests of one asker handled at once per route (the rest wait their turn)
WAITING_PER_ASKER = 16  # and waiting: a player past that sends faster than it is served
# the subjects whose tokens after the kind name a game and a player (the lobby's a verb, then
# the player)
_GAME_INPUTS = frozenset({"cmd", "ack", "sync"})
_PLAYER_INPUTS = frozenset({"cmd", "ack", "sync", "lobby"})


async def ensure_events_stream(
    nats_url: str, subjects: Subjects, replicas: int | None = None
) -> None:
    """Create the JetStream stream of ``<root>.events.>`` unless it exists, with ``replicas``
    copies (default: ``CARDROOM_JETSTREAM_REPLICAS``, 1 unless set)."""
    from .nats import connect, ensure_stream
    from .settings import jetstream_replicas

    copies = jetstream_replicas() if replicas is None else replicas
    nc = await connect(nats_url, "cardroom-setup")
    try:
        await ensure_stream(
            nc.jetstream(), subjects.events_stream, [subjects.events_all], replicas=copies
        )
    finally:
        await nc.close()


M = TypeVar("M", bound=BaseModel)


class Asker(NamedTuple):
    """Who sent a message, read from its subject (which the broker checks), never from its
    body; ids are checked (an unsafe one is refused ``bad_id``). ``game`` and ``player`` are
    the tokens of a player's input (``<root>.{cmd,ack,sync}.<game>.<player>``); on the lobby
    ``player`` is the asker and ``verb`` the request's; on an analytics query ``verb`` is the
    query's. A message between services (``<root>.internal.*``) names nobody. (A tuple:
    made for every message on the bare path, it costs no more than the tuple
    ``Subjects.parse_input`` makes.)"""

    subject: str
    game: str | None = None
    player: str | None = None
    verb: str | None = None

    @property
    def seat(self) -> tuple[str, str]:
        """The game and the player of a player's input (only those subjects name both)."""
        if self.game is None or self.player is None:
            raise InvalidId(f"not a player's input: {self.subject!r}")
        return self.game, self.player


#: The typed form: the parsed wire model and who sent it.
Typed = Callable[[M, Asker], Awaitable[dict[str, Any]]]
TypedListener = Callable[[M, Asker], Awaitable[None]]


def asker_reader(subjects: Subjects, pattern: str) -> Callable[[str], Asker]:
    """How the subjects that ``pattern`` (a subscription's subject) matches name their
    sender: decided once per subscription, so a message costs the split its handler did."""
    parts = pattern.split(".")
    kind = parts[1] if len(parts) > 1 and parts[0] == subjects.root else ""
    if kind in _GAME_INPUTS:

        def player_input(subject: str) -> Asker:
            _, game, player = subjects.parse_input(subject)
            return Asker(subject, game, player)

        return player_input
    if kind == "lobby":

        def lobby(subject: str) -> Asker:
            verb, player = subjects.parse_lobby(subject)
            return Asker(subject, None, player, verb)

        return lobby
    if kind == "analytics":
        return lambda subject: Asker(subject, verb=subject.rsplit(".", 1)[-1])
    return Asker  # between services: nobody named


@dataclass(frozen=True)
class _Typed(Generic[M]):
    """A typed subscription: how its bodies and subjects are read, and its handler."""

    model: type[M]
    asker: Callable[[str], Asker]
    handler: Callable[[M, Asker], Awaitable[Any]]
    title: str
    empty_is_object: bool = False

    def parse(self, body: bytes, asker: Asker) -> M:
        """The body as the model; on a subject that names a verb (the lobby's, an analytics
        query's) a body without ``type`` has the verb's, so a union of requests told apart
        by ``type`` (a RootModel) reads it. ``empty_is_object``: a blank body is ``{}``."""
        payload = {} if self.empty_is_object and not body.strip() else decode_json(body)
        if asker.verb is not None and isinstance(payload, dict) and "type" not in payload:
            payload = {**payload, "type": asker.verb}
        return parse(self.model, payload)

    async def answer(self, subject: str, body: bytes) -> bytes:
        """The bare path's reply: the subject first (a bad id is ``bad_id`` whatever the
        body), then the body: one subject split and one JSON parse, and no more."""
        try:
            asker = self.asker(subject)
            item = self.parse(body, asker)
        except Exception as exc:
            return dumps(_refused(exc, subject))
        return await self._reply(item, asker)

    async def answer_parsed(self, item: M, subject: str) -> bytes:
        """The FastStream subscriber's reply (it parsed the body: :meth:`decoder`)."""
        try:
            asker = self.asker(subject)
        except Exception as exc:
            return dumps(_refused(exc, subject))
        return await self._reply(item, asker)

    async def _reply(self, item: M, asker: Asker) -> bytes:
        """The handler's answer, or the refusal of what it raised: exactly one reply."""
        try:
            reply = await self.handler(item, asker)
        except Exception as exc:
            reply = _refused(exc, asker.subject)
        return dumps(reply)

    async def hear(self, subject: str, body: bytes) -> None:
        """The bare path of a listener: hostile input is dropped in one line."""
        try:
            asker = self.asker(subject)
            item = self.parse(body, asker)
        except (WireError, InvalidId) as exc:
            # one line, no traceback; a warning only where no player can publish (a flood
            # of a player's hostile input must not flood the logs)
            internal = self.asker is Asker
            (log.warning if internal else log.debug)(
                "%s request refused: %s", self.title, _code(exc)
            )
            return
        await self.handler(item, asker)

    async def decoder(self, msg: NatsMessage) -> M:
        """FastStream's decoder of the subscription: the subject, then the body, as the bare
        path reads them; a refusal is answered by :class:`Refusals`."""
        return self.parse(msg.body, self.asker(msg.raw_message.subject))

    def documented(self, reply: bool) -> Callable[..., Awaitable[Any]]:
        """The FastStream subscriber: its first parameter is annotated with the model, so
        the AsyncAPI document's payload is the model's schema."""

        async def answer(body: Any, msg: NatsMessage) -> bytes:
            return await self.answer_parsed(body, msg.raw_message.subject)

        async def hear(body: Any, msg: NatsMessage) -> None:
            await self.handler(body, self.asker(msg.raw_message.subject))

        handle = answer if reply else hear
        handle.__annotations__ = {
            "body": self.model,
            "msg": NatsMessage,
            "return": bytes if reply else None,
        }
        handle.__name__ = getattr(self.handler, "__name__", handle.__name__)
        doc = getattr(self.handler, "__doc__", None)  # the channel's description
        handle.__doc__ = inspect.cleandoc(doc) if doc else None
        return handle


class Refusals(BaseMiddleware):
    """Answers a typed FastStream subscriber's hostile input (refused while it is decoded,
    before the handler runs) as the bare path does: ``{ok: false, error: {code, ...}}``."""

    async def consume_scope(self, call_next: Any, msg: Any) -> Any:
        try:
            return await call_next(msg)
        except (WireError, InvalidId) as exc:
            subject = str(getattr(getattr(msg, "raw_message", None), "subject", ""))
            log.debug("refused on %s: %s", subject, _code(exc))
            return dumps(_refused(exc, subject))


def _code(exc: WireError | InvalidId) -> str:
    return str(exc.code if isinstance(exc, WireError) else ErrorCode.BAD_ID)


def _uses_refusals(broker: NatsBroker) -> None:
    """Add :class:`Refusals` to ``broker`` once (it serves every typed subscriber)."""
    if not getattr(broker, "_cardroom_refusals", False):
        broker.add_middleware(Refusals)
        broker._cardroom_refusals = True  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Route:
    """A subscription served on the bare NATS connection (see :meth:`Service.serve`)."""

    subject: str
    queue: str
    title: str
    handle: Callable[[str, bytes], Awaitable[bytes | None]]  # the reply, None for no reply
    max_workers: int
    # False for a listener (:meth:`Service.listen`): it never answers, not even
    # ``rate_limited`` (the service that serves the same subject answers the asker)
    replies: bool = True
    service: str = ""  # the serving service's name (the metrics' label)


@dataclass
class Runtime:
    """What every service of one process shares."""

    subjects: Subjects
    broker: NatsBroker
    #: shard 0's event store (with one database, the store)
    store: EventStore
    nats_url: str
    #: shard 0's URL, where analytics keeps its tables
    database_url: str
    #: True when :meth:`Service.serve` subscribes on the bare connection (a running host);
    #: False registers FastStream subscribers instead (the AsyncAPI document is built so).
    direct: bool = False
    routes: list[Route] = field(default_factory=list)
    #: this process's metrics (:mod:`.metrics`); services add their own to its registry
    metrics: Metrics = field(default_factory=Metrics)
    #: every shard's event store (:mod:`.shards`); default: ``store`` alone
    shards: Shards = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.shards is None:
            self.shards = Shards([self.store])

    # -- messages between the services (``cardroom_wire.internal``) -------------------------
    # One idiom for both directions: a service receives them with Service.serve/listen and
    # sends them with these, always as the wire's typed models.

    async def tell(
        self, subject: str, message: Internal, headers: dict[str, str] | None = None
    ) -> None:
        """Publish ``message`` (no reply). In a running host on the bare connection: a
        release and a player's return follow acks, on the players' path; otherwise through
        FastStream (its test broker)."""
        body = dumps(message.body())
        if self.direct:
            await self.broker.connection.publish(subject, body, headers=headers)
        else:
            await self.broker.publish(body, subject, headers=headers)

    async def ask(self, subject: str, message: Internal, timeout: float) -> dict[str, Any]:
        """Send ``message`` and return the JSON object answered (FastStream's request: these
        are off the players' hot path). :class:`Unanswered` when nobody answers, in time or
        at all, or the answer is not an object."""
        try:
            reply = await self.broker.request(dumps(message.body()), subject, timeout=timeout)
        except (NoRespondersError, SubscriberNotFound):
            raise Unanswered(subject, "no service answers it", nobody=True) from None
        except TimeoutError:
            raise Unanswered(subject, f"no answer within {timeout:g} s") from None
        answer = decode_json(reply.body)
        if not isinstance(answer, dict):
            raise Unanswered(subject, "the answer is not a JSON object")
        return answer


class Internal(Protocol):
    """A message between the services (``cardroom_wire.internal``): what :meth:`Runtime.tell`
    and :meth:`Runtime.ask` send."""

    def body(self) -> dict[str, Any]: ...


class Unanswered(Exception):
    """A request of :meth:`Runtime.ask` got no usable answer (``reason`` says why;
    ``nobody``: no service serves the subject at all)."""

    def __init__(self, subject: str, reason: str, *, nobody: bool = False) -> None:
        super().__init__(f"{subject}: {reason}")
        self.reason = reason
        self.nobody = nobody


class Service:
    name: ClassVar[str]
    #: A follower off the players' path (it tails what was committed): a process that runs
    #: only such services lowers its CPU priority, so that on a shared machine the
    #: interactive path (commands, acks) is served first (see :func:`lower_priority`).
    background: ClassVar[bool] = False

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    @property
    def subjects(self) -> Subjects:
        return self.rt.subjects

    @property
    def shards(self) -> Shards:
        """Every shard's event store; :meth:`store_of` the one that holds a game."""
        return self.rt.shards

    def store_of(self, game: str) -> EventStore:
        """The event store of the shard that holds ``game`` (from its id alone)."""
        return self.rt.shards.of(game)

    def serve(
        self,
        subject: str,
        *,
        queue: str,
        title: str,
        model: type[M],
        handler: Typed[M],
        max_workers: int,
        empty_is_object: bool = False,
    ) -> None:
        """Answer requests on ``subject`` (a queue group): every input gets one JSON reply.

        The handler is typed (see the module): ``handler(item, asker)`` (``empty_is_object``:
        a blank body reads as ``{}``).

        In a running host this is a bare nats-py subscription: FastStream's per-message work
        (its middlewares, dependency injection, reply publisher) costs about 0.5 ms per
        request/reply here (bench/README.md), more than a whole NATS round trip, on the paths
        every command and every ack take. The FastStream subscriber documents the subject
        (AsyncAPI) and serves FastStream's test broker; both call the same handler.
        """
        typed = self._typed(subject, title, model, handler, empty_is_object)
        if self.rt.direct:
            self.rt.routes.append(
                Route(subject, queue, title, typed.answer, max_workers, service=self.name)
            )
            return
        self.rt.broker.subscriber(subject, queue=queue, title=title, max_workers=max_workers)(
            typed.documented(reply=True), decoder=typed.decoder
        )

    def listen(
        self,
        subject: str,
        *,
        queue: str,
        title: str,
        model: type[M],
        listener: TypedListener[M],
        max_workers: int,
    ) -> None:
        """Like :meth:`serve` for messages that get no reply (``listener`` must not raise;
        hostile input never reaches it)."""
        typed = self._typed(subject, title, model, listener)
        if self.rt.direct:
            self.rt.routes.append(
                Route(
                    subject, queue, title, typed.hear, max_workers, replies=False, service=self.name
                )
            )
            return
        self.rt.broker.subscriber(
            subject, queue=queue, title=title, no_reply=True, max_workers=max_workers
        )(typed.documented(reply=False), decoder=typed.decoder)

    def _typed(
        self,
        subject: str,
        title: str,
        model: type[M],
        handler: Callable[[M, Asker], Awaitable[Any]],
        empty_is_object: bool = False,
    ) -> _Typed[M]:
        if not self.rt.direct:
            _uses_refusals(self.rt.broker)
        return _Typed(model, asker_reader(self.subjects, subject), handler, title, empty_is_object)

    def register(self) -> None:
        """Add this service's subscribers to the broker (before it starts)."""

    async def prepare(self) -> None:
        """Prepare what subscribers need before the broker connects (e.g. streams)."""

    async def start(self) -> None:
        """Start background work (after the broker is connected)."""

    async def stop(self) -> None:
        """Stop background work; called before the broker closes."""


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
            "InternalClientError",  # a pooled connection left in a broken state
            # the server's resources (SQLSTATE class 53): too many connections, out of
            # memory, disk full; nothing was written, and a later try may find room
            "InsufficientResourcesError",
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


def _refused(exc: Exception, subject: str) -> dict[str, Any]:
    """The reply to a request whose handling raised ``exc``: every input gets exactly one
    JSON reply.

    Hostile input (bad ids, JSON, schema, size) is answered with a WireError's code; the
    database being away (PostgreSQL restarting) is answered ``unavailable``, which clients
    retry; any other unexpected exception is logged and answered ``internal`` without
    details, so nothing about other players' hidden state can leak through an error.
    """
    if isinstance(exc, WireError):
        return error_from(exc)
    if isinstance(exc, InvalidId):  # an id in the subject that is not a safe token
        return error(ErrorCode.BAD_ID, str(exc))
    if storage_unavailable(exc):
        log.warning("handler on %s: storage unavailable", subject)
        return error(ErrorCode.UNAVAILABLE, "storage is unavailable; try again")
    ref = FAILURES.failure(f"on {subject}", exc)
    return error(ErrorCode.INTERNAL, f"internal error (reference {ref})")


class _Workers:
    """Who works on what, for one route: at most ``max_workers`` requests at once, at most
    ``PER_ASKER`` of them of one asker; the rest wait in a queue per asker (at most
    ``WAITING_PER_ASKER``: past that the asker sends faster than it is served, and is
    answered ``rate_limited``), and the askers' queues are taken in turn. The services' own
    requests are not capped: they are few, and each game's are serialised by its lock.

    So a player who sends a hundred requests makes another player's one wait for at most
    ``PER_ASKER`` of them, not for a hundred; and however many of its requests its token
    bucket lets through, it has only a few in hand at any moment (each one holds a pooled
    connection and this process's CPU, which everyone else's requests are waiting for), and a
    burst of them is served at the pace one worker serves it, not by every worker at once.
    """

    def __init__(self, max_workers: int, services: str) -> None:
        self.max_workers = max_workers
        self.services = services  # the services' own inbox: their requests are not capped
        self.busy = 0
        self.size = 0  # requests waiting
        self._queues: dict[str, collections.deque[Any]] = {}
        self._turns: collections.deque[str] = collections.deque()  # askers with some waiting
        self._held: dict[str, int] = {}  # requests being handled, per asker

    def _capped(self, asker: str) -> bool:
        return self._held.get(asker, 0) >= PER_ASKER and asker != self.services

    def take(self, asker: str) -> bool:
        """Whether a request of ``asker`` may be handled now (it is counted as begun)."""
        held = self._held.get(asker, 0)
        if self.busy >= self.max_workers or self._capped(asker):
            return False
        self.busy += 1
        self._held[asker] = held + 1
        return True

    def wait(self, asker: str, msg: Any) -> bool:
        """Queue a request of ``asker``; False if it has ``WAITING_PER_ASKER`` waiting."""
        queue = self._queues.get(asker)
        if queue is None:
            queue = self._queues[asker] = collections.deque()
            self._turns.append(asker)
        elif len(queue) >= WAITING_PER_ASKER and asker != self.services:
            return False
        queue.append(msg)
        self.size += 1
        return True

    def done(self, asker: str) -> tuple[str, Any] | None:
        """A request of ``asker`` was handled: the next one to handle in its place (the next
        asker's in turn that may have one more in hand), counted as begun; else None."""
        held = self._held[asker] - 1
        if held:
            self._held[asker] = held
        else:
            del self._held[asker]
        for _ in range(len(self._turns)):
            nxt = self._turns.popleft()
            if self._capped(nxt):
                self._turns.append(nxt)  # has its share in hand: the others first
                continue
            queue = self._queues[nxt]
            msg = queue.popleft()
            self.size -= 1
            if queue:
                self._turns.append(nxt)
            else:
                del self._queues[nxt]
            self._held[nxt] = self._held.get(nxt, 0) + 1
            return nxt, msg
        self.busy -= 1
        return None

    def clear(self) -> None:
        self._queues.clear()
        self._turns.clear()
        self.size = 0


class _Served:
    """The bare subscriptions of one host.

    Each message passes the edge (:mod:`.edge`: whose it is, where its reply may go, how fast
    its asker sends) as it arrives, then is handled by one of the route's workers
    (:class:`_Workers`: a few at most per asker, the others' requests in turn). The
    subscription's callback never waits: a flood is checked, and past its asker's rate
    refused, at the pace it arrives, instead of queueing in front of everyone else's requests
    until a worker is free. Past ``WAITING_PER_WORKER`` waiting requests per worker the service
    is overloaded and answers ``unavailable`` (which clients retry).
    """

    def __init__(self, edge: Edge, metrics: Metrics) -> None:
        self.edge = edge
        self.metrics = metrics
        self.subscriptions: list[Any] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self._workers: list[_Workers] = []

    async def subscribe(self, nc: Any, route: Route) -> None:
        loop = asyncio.get_running_loop()
        number = len(self.subscriptions)
        self.edge.names[number] = (route.service, route.title)
        admit = self.edge.admit
        asker_of = self.edge.subjects.reply_prefix
        answers = route.replies
        workers = _Workers(route.max_workers, self.edge.subjects.service_inbox)
        self._workers.append(workers)
        most_waiting = route.max_workers * WAITING_PER_WORKER
        limited = self.edge.counts

        counted = self.metrics.requests
        timed = self.metrics.request_seconds.labels(route.service, route.title)
        clock = time.perf_counter

        root_tokens = len(self.edge.subjects.root.split("."))
        traced = tracing.enabled()  # off: the path below is the one before tracing existed

        async def work(asker: str, msg: Any) -> None:
            while True:
                t0 = clock()
                # what the service logs while handling it concerns this request
                parts = msg.subject.split(".")[root_tokens:]
                kind = parts[0] if parts else ""
                game = parts[1] if kind in _GAME_INPUTS and len(parts) > 2 else None
                player = parts[2] if kind in _PLAYER_INPUTS and len(parts) > 2 else None
                token = bind(service=route.service, route=route.title, game=game, player=player)
                try:
                    with _received(route, msg, game, player) if traced else _UNTRACED as current:
                        reply = await route.handle(msg.subject, msg.data)
                        if reply is not None and msg.reply:
                            await nc.publish(msg.reply, reply)
                        outcome = outcome_of(reply)
                        if current is not None:
                            tracing.outcome(current, outcome)
                        counted.labels(route.service, route.title, outcome).inc()
                        if log.isEnabledFor(logging.DEBUG):  # the request, never its body
                            took = (clock() - t0) * 1e3
                            log.debug("%s: %s in %.2f ms", route.title, outcome, took)
                except Exception as exc:
                    FAILURES.failure(f"serving {msg.subject}", exc)
                    counted.labels(route.service, route.title, "failed").inc()
                finally:
                    unbind(token)
                timed.observe(clock() - t0)
                after = workers.done(asker)
                if after is None:
                    return
                asker, msg = after

        async def dispatch(msg: Any) -> None:
            refused = admit(number, msg.subject, msg.reply)
            if refused is not None:
                if refused == "limit" and answers and msg.reply:
                    await nc.publish(msg.reply, RATE_LIMITED)
                return
            asker = asker_of(msg.subject) or ""
            if workers.take(asker):
                task = loop.create_task(work(asker, msg))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            elif workers.size >= most_waiting:
                if answers and msg.reply:
                    await nc.publish(msg.reply, OVERLOADED)
            elif not workers.wait(asker, msg):
                limited.rate_limited += 1
                if answers and msg.reply:
                    await nc.publish(msg.reply, RATE_LIMITED)

        self.subscriptions.append(await nc.subscribe(route.subject, queue=route.queue, cb=dispatch))

    async def close(self, timeout: float = 5.0) -> None:
        """Stop taking messages, then let the ones being handled finish (bounded); those
        still waiting are dropped (their askers retry, as after any lost request)."""
        for sub in self.subscriptions:
            try:
                await sub.unsubscribe()
            except Exception:  # the connection is gone already: nothing more arrives
                log.debug("unsubscribing", exc_info=True)
        self.subscriptions.clear()
        for workers in self._workers:
            workers.clear()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=timeout)


_UNTRACED: contextlib.AbstractContextManager[None] = contextlib.nullcontext()


def _received(
    route: Route, msg: Any, game: str | None, player: str | None
) -> contextlib.AbstractContextManager[tracing.Span | None]:
    """The span of one request while tracing: it continues the trace its headers carry (the
    asker's command, a notification's ack, a release); ids and the outcome, never the body."""
    attributes = {"cardroom.service": route.service, "cardroom.route": route.title}
    if game:
        attributes["cardroom.game"] = game
    if player:
        attributes["cardroom.player"] = player
    return tracing.received(
        f"{route.service} {route.title}",
        msg.headers,
        attributes,
        kind=tracing.SpanKind.SERVER if route.replies else tracing.SpanKind.CONSUMER,
    )


def lower_priority() -> None:
    """``nice`` this process by ``CARDROOM_BACKGROUND_NICE`` (default 10; 0 leaves it).

    ``cardroom serve`` calls it when every service it runs is a :attr:`Service.background`
    follower. (Under docker-compose each service has a container, and the containers' CPU
    weights decide instead: the followers have ``cpu_shares: 256`` in
    deploy/docker-compose.yml, a quarter of the default.)
    """
    raw = os.environ.get("CARDROOM_BACKGROUND_NICE", "").strip()
    step = int(raw) if raw else 10
    if step > 0:
        try:
            os.nice(step)
        except OSError:  # not permitted here: run at the usual priority
            log.debug("could not lower the priority", exc_info=True)


class Host:
    """Runs services on one broker and the event store's shards (one connection pool each;
    ``database_url`` lists them, comma-separated)."""

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
        self.edge = Edge(self.subjects)
        self.metrics = Metrics(self.edge)

        async def reconnected() -> None:
            self.metrics.reconnects.inc()

        async def disconnected() -> None:
            self.metrics.disconnects.inc()

        self.broker = NatsBroker(
            nats_servers(nats_url),
            name=client_name,
            max_reconnect_attempts=-1,
            reconnect_time_wait=1,
            logger=None,
            reconnected_cb=reconnected,
            disconnected_cb=disconnected,
        )
        self._service_types = list(services)
        self.services: list[Service] = []
        self._shards: Shards | None = None
        self._served = _Served(self.edge, self.metrics)
        # before any subscription: each route decides once whether it traces
        tracing.configure(client_name)

    @property
    def shards(self) -> Shards:
        assert self._shards is not None, "host not started"
        return self._shards

    @property
    def store(self) -> EventStore:
        """Shard 0's event store (with one database, the store)."""
        return self.shards.stores[0]

    async def start(self) -> None:
        # a fixed pool: overflow connections would be closed on return and reopened (with
        # asyncpg's type introspection) under load, which costs more than waiting for one
        pool = int(os.environ.get("CARDROOM_DB_POOL", "16"))
        hot = os.environ.get("CARDROOM_DB_HOT_POOL")
        urls = database_urls(self.database_url)
        self._shards = shards = await Shards.connect(
            urls,
            hot_pool_size=int(hot) if hot else None,
            pool_size=pool,
            max_overflow=0,
            pool_timeout=60,
        )
        rt = Runtime(
            self.subjects,
            self.broker,
            shards.stores[0],
            self.nats_url,
            urls[0],
            direct=True,
            metrics=self.metrics,
            shards=shards,
        )
        self.services = [cls(rt) for cls in self._service_types]
        for service in self.services:
            service.register()
        for service in self.services:
            await service.prepare()
        await self.broker.start()
        for route in rt.routes:
            await self._served.subscribe(self.broker.connection, route)
        # a round trip, so the server holds every subscription before anyone is told "ready"
        # (otherwise an early request can meet "no responders")
        await self.broker.connection.flush()
        for service in self.services:
            await service.start()
        self.metrics.serve()
        log.info("started %s", ", ".join(s.name for s in self.services))

    async def stop(self) -> None:
        self.metrics.close()
        await self._served.close()
        for service in reversed(self.services):
            try:
                await service.stop()
            except Exception:
                log.exception("stopping %s", service.name)
        await self.broker.stop()
        if self._shards is not None:
            await self._shards.close()
            self._shards = None
        tracing.shutdown()
