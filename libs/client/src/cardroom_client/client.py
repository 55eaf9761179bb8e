"""The Python client SDK: one player's connection to cardroom.

It keeps the promises of the protocol for its caller:

- notifications of a game reach the handler one at a time, in order, each once;
- a notification is acknowledged only after the handler has returned (so a crash in the
  handler means no ack, and the server sends it again on the next sync);
- a gap in a game's ``seq`` numbers, or a reconnect to NATS, triggers a sync, which replays
  every notification not yet acknowledged, in order;
- commands return the new version or raise :class:`CardroomError` with the server's code;
- in a game that signs its transitions (Macaua: a notification carries a ``transition``),
  each transition is checked before the handler sees it, by the game's verifier that the
  caller registers with :meth:`Client.verify` (the player's program holds the signing key),
  off the event loop; the ack carries the verifier's signature, or its rejection. Without a
  verifier such a notification is neither handled nor acknowledged: a client cannot skip
  the check by accident.

Traces (OpenTelemetry's API only: the application chooses the SDK and the exporter): when
the process has a tracer provider (a cardroom service process sets one up when tracing is
configured, see ``cardroom_runtime.tracing``) or a tracer is passed to :meth:`Client.connect`,
each command starts a trace (linked to the notification it answers, if any) whose context
its request carries in NATS headers (W3C ``traceparent``); each notification that arrives
with one is handled in a span of that trace, and its ack continues it. Spans carry ids,
types, versions and error codes, never a body. Without a tracer nothing of this runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import nats
import orjson
from cardroom_wire import (
    ErrorCode,
    Notification,
    Subjects,
    SyncReply,
    check_id,
    dumps,
    new_id,
)
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.errors import ConnectionClosedError, ConnectionDrainingError, NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

log = logging.getLogger("cardroom.client")

_PROPAGATOR = TraceContextTextMapPropagator()


def _process_tracer() -> Tracer | None:
    """The tracer of the process's configured provider; None when none was configured."""
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    return provider.get_tracer("cardroom.client")


def _inbox(root: str, player: str) -> str:
    """A player's inbox prefix: the services answer a player's requests only below it, and
    with per-player permissions (deploy/) a player may read only its own replies."""
    return Subjects(root).inbox(player)


def _guest_inbox(root: str, nonce: str) -> str:
    """A guest's inbox prefix: the lobby answers a guest's ``register`` only below it."""
    return Subjects(root).guest_inbox(nonce)


Handler = Callable[[Notification], Awaitable[None]]


TRANSIENT = frozenset({ErrorCode.UNAVAILABLE, ErrorCode.RATE_LIMITED})
"""Refusals of any request that say only "not now": nobody answers, or this player sends
faster than the service takes. The request changed nothing; the SDK sends it again, slower."""

FIRST_ATTEMPT = 1.0
"""Seconds an idempotent request waits for its reply before it is sent again (then twice as
long each time, within the client's timeout). Every service answers in milliseconds; the
slowest command (a Macaua shuffle's proof checked on a busy machine) takes well under it,
and one that does is answered from its recorded reply the second time."""

NOBODY_SERVES_POLL = 0.1
"""Seconds between two attempts of a command or an ack while nobody serves its subject (the
service is restarting): NATS answers "no responders" at once, at no cost to any service,
and a game waits for this request until the restarted service has it, so look often."""

RETRY_LATER = TRANSIENT | {ErrorCode.AWAITING_ACKS, ErrorCode.CONFLICT}
"""Refusals that change nothing and may pass if the same command is sent again shortly."""


class CardroomError(Exception):
    """The server refused a request. ``code`` is stable; ``message`` is for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class NobodyServes(CardroomError):
    """``unavailable``: no process serves the subject at all now (NATS "no responders")."""


class Verdict(Protocol):
    """A verifier's verdict on one transition: the fields its ack carries (``signature``, or
    ``reject``)."""

    def ack_fields(self) -> dict[str, Any]: ...


class Verifier(Protocol):
    """A player's check of a game's transitions (e.g.
    :class:`cardroom_games.macaua.TransitionVerifier`); called in a worker thread."""

    def check(self, version: int, message: dict[str, Any]) -> Verdict: ...


_DRAINING: set[asyncio.Future[None]] = set()
"""Connections' drains still running after a cancelled close (the loop keeps only weak
references to tasks)."""


def _drained(drain: asyncio.Future[None]) -> None:
    _DRAINING.discard(drain)
    if not drain.cancelled():
        drain.exception()  # retrieved: a drain's error ends nothing but itself


SIGNED_KEPT = 64  # the last acks' signatures a feed keeps, to acknowledge a resend again


@dataclass(frozen=True)
class _SyncEnd:
    """The end of one sync reply's notifications in a feed's queue: every notification up to
    ``last_seq`` was listed in that reply (and is handled by now) or acknowledged before.

    Each reply carries its own mark: two syncs can overlap (a gap asks for one while another
    is answered), and skipping to the later reply's ``last_seq`` at the end of the earlier
    one would skip what only the later one lists.
    """

    last_seq: int


@dataclass(frozen=True)
class _Acked:
    """Before each notification a sync reply lists: every notification below ``seq`` that
    the reply did not list was acknowledged before (by this client, or by an earlier run of
    it), so it is no gap to wait for. A fresh client, its ``last_seq`` 0, would otherwise
    hold the listed ones as after a gap and drop them at the reply's end."""

    seq: int


@dataclass
class _Feed:
    """One game's ordered stream of notifications for this player."""

    game: str
    last_seq: int = 0
    # notifications, the ends of sync replies, and None (a wake-up when closing)
    queue: asyncio.Queue[Notification | _Acked | _SyncEnd | None] = field(
        default_factory=asyncio.Queue
    )
    task: asyncio.Task[None] | None = None
    syncing: bool = False
    held: dict[int, Notification] = field(default_factory=dict)  # ahead of a gap
    verifier: Verifier | None = None
    unverified: bool = False  # a transition came without a verifier (told once)
    signed: dict[int, dict[str, Any]] = field(default_factory=dict)  # version -> ack fields
    # seq -> the trace context a notification arrived with (only while tracing)
    contexts: dict[int, otel_context.Context] = field(default_factory=dict)


def _servers(url: str | Sequence[str]) -> list[str]:
    """One server or a cluster's, as nats-py takes them (it reads a string as one URL)."""
    parts = url.split(",") if isinstance(url, str) else url
    return [part.strip() for part in parts if part.strip()]


class Client:
    """A player's connection. Use :meth:`connect`, then :meth:`follow` the games it plays."""

    def __init__(
        self,
        nc: NatsClient,
        player: str,
        subjects: Subjects,
        timeout: float,
        tracer: Tracer | None = None,
    ) -> None:
        self.nc = nc
        #: None: no traces (nothing is added to a request, no span is started)
        self.tracer = tracer
        self.player = check_id(player, "player id")
        self.subjects = subjects
        self.timeout = timeout
        self._feeds: dict[str, _Feed] = {}
        self._handler: Handler | None = None
        self._after_ack: Handler | None = None
        self._sub: Any = None
        self._closed = False
        self._syncs: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak ones
        self.token: str | None = None

    @classmethod
    async def connect(
        cls,
        url: str | Sequence[str],
        player: str,
        *,
        subject_root: str = "cardroom",
        timeout: float = 10.0,
        token: str | None = None,
        tracer: Tracer | None = None,
        **options: Any,
    ) -> Client:
        """Connect as ``player``. ``url``: a NATS server, or a cluster's (a list, or one string
        with commas); the client moves to another of them when its server is lost.
        ``tracer``: where this client's spans go; by default the process's configured tracer
        provider's, none without one."""
        holder: dict[str, Client] = {}

        async def reconnected() -> None:
            client = holder.get("client")
            if client is not None:
                client._resync_all()

        async def quiet(exc: Exception) -> None:
            log.debug("nats: %s", exc)

        opts: dict[str, Any] = {
            "name": f"cardroom-client-{player}",
            "max_reconnect_attempts": -1,
            "reconnect_time_wait": 0.25,
            "reconnected_cb": reconnected,
            "error_cb": quiet,
            "inbox_prefix": _inbox(subject_root, player),
        }
        if token is not None:
            opts["token"] = token
        opts.update(options)
        nc = await nats.connect(_servers(url), **opts)
        client = cls(nc, player, Subjects(subject_root), timeout, tracer or _process_tracer())
        client.token = token
        holder["client"] = client
        client._sub = await nc.subscribe(
            client.subjects.player_all(client.player), cb=client._on_message
        )
        return client

    @classmethod
    async def register(
        cls,
        url: str | Sequence[str],
        *,
        subject_root: str = "cardroom",
        timeout: float = 10.0,
        **options: Any,
    ) -> Client:
        """Become a new player: ask the lobby (as a guest) for a player id and its token, then
        connect as that player. ``client.player`` and ``client.token`` say who it is."""
        subjects = Subjects(subject_root)
        nonce = secrets.token_urlsafe(24)
        guest = await nats.connect(
            _servers(url),
            user="guest",
            password=nonce,
            inbox_prefix=_guest_inbox(subject_root, nonce),
            max_reconnect_attempts=3,
        )
        try:
            msg = await guest.request(subjects.lobby("register", nonce), b"{}", timeout=timeout)
        except NoRespondersError:
            raise CardroomError(ErrorCode.UNAVAILABLE, "nobody serves the lobby") from None
        except NatsTimeout:
            raise CardroomError(ErrorCode.UNAVAILABLE, "the lobby did not answer") from None
        finally:
            await guest.close()
        reply: dict[str, Any] = orjson.loads(msg.data)
        if not reply.get("ok"):
            err = reply.get("error") or {}
            raise CardroomError(str(err.get("code", "unknown")), str(err.get("message", "")))
        client = await cls.connect(
            url,
            str(reply["player"]),
            subject_root=subject_root,
            timeout=timeout,
            token=str(reply["token"]),
            **options,
        )
        client.token = str(reply["token"])
        return client

    async def renew(self) -> str:
        """Trade this client's token for a fresh one of the same player and return it.

        NATS ends a connection when the token it was opened with expires, so renew ahead of
        ``expires`` and connect anew with the returned token (the lobby keeps no state: any
        replica answers)."""
        if self.token is None:
            raise CardroomError(ErrorCode.BAD_TOKEN, "this client holds no token to renew")
        reply = await self.request(self.subjects.lobby("renew", self.player), {"token": self.token})
        self.token = str(reply["token"])
        return self.token

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    async def close(self) -> None:
        self._closed = True
        for feed in self._feeds.values():
            if feed.task is not None:
                feed.task.cancel()
                # a cancellation can be lost (Python 3.11's asyncio.wait_for swallows one that
                # comes as its future completes): wake the loop, which then sees _closed
                feed.queue.put_nowait(None)
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await feed.task
        # nats-py's drain swallows a cancellation and, cancelled, leaves its subscriptions'
        # gathered drains holding an error nobody retrieves (logged as one): it runs on its
        # own, shielded, so that a cancelled close is cancelled and the drain still ends
        drain = asyncio.ensure_future(self.nc.drain())
        _DRAINING.add(drain)
        drain.add_done_callback(_drained)
        with contextlib.suppress(Exception):
            await asyncio.shield(drain)

    # -- requests -----------------------------------------------------------------------------
    async def request(
        self,
        subject: str,
        payload: dict[str, Any] | bytes,
        headers: dict[str, str] | None = None,
        *,
        idempotent: bool = False,
    ) -> dict[str, Any]:
        """One request and its reply, within the client's ``timeout``. An ``idempotent``
        request (one whose second coming changes nothing: a command with its id, an ack, a
        sync) left unanswered for :data:`FIRST_ATTEMPT` seconds is sent again, waiting twice
        as long each time: a request lost with a service that died is asked again of the
        one that replaced it, instead of waiting out the whole timeout."""
        data = payload if isinstance(payload, bytes) else dumps(payload)
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.timeout
        wait = FIRST_ATTEMPT if idempotent else self.timeout
        task = asyncio.current_task()
        cancels = task.cancelling() if task is not None else 0
        while True:
            left = give_up - loop.time()
            try:
                msg = await self.nc.request(
                    subject, data, timeout=min(wait, max(left, 0.001)), headers=headers
                )
                break
            except NoRespondersError:
                raise NobodyServes(ErrorCode.UNAVAILABLE, f"nobody serves {subject}") from None
            except NatsTimeout:
                if not idempotent or loop.time() >= give_up:
                    raise CardroomError(ErrorCode.UNAVAILABLE, f"no answer on {subject}") from None
            wait *= 2
        if task is not None and task.cancelling() > cancels:
            # the task was cancelled as the reply came: Python 3.11's asyncio.wait_for (in
            # nats-py's request) then returns the reply and the cancellation is lost, and a
            # cancelled bot would play on
            raise asyncio.CancelledError
        reply: dict[str, Any] = orjson.loads(msg.data)
        if not reply.get("ok"):
            err = reply.get("error") or {}
            raise CardroomError(str(err.get("code", "unknown")), str(err.get("message", "")))
        return reply

    async def create(
        self,
        game_type: str,
        config: dict[str, Any] | None = None,
        *,
        seats: int | None = None,
        game: str | None = None,
        key: str | None = None,
    ) -> str:
        """Create a table and take its first seat; ``key`` as in :meth:`join`."""
        body: dict[str, Any] = {"game_type": game_type}
        if config:
            body["config"] = config
        if seats is not None:
            body["seats"] = seats
        if game is not None:
            body["game"] = game
        if key is not None:
            body["key"] = key
        reply = await self.request(self.subjects.lobby("create", self.player), body)
        game_id = str(reply["game"])
        await self.follow(game_id, sync=False)  # a new table: its first seq is 1
        return game_id

    async def join(self, game: str, *, key: str | None = None) -> dict[str, Any]:
        """Take a seat; ``key`` is the Ed25519 verify key (64 lowercase hex characters) this
        player binds to it, required by games whose moves are signed (Macaua), fixed for
        the game. Returns the table's summary."""
        await self.follow(game, sync=False)
        body: dict[str, Any] = {"game": game}
        if key is not None:
            body["key"] = key
        reply = await self.request(self.subjects.lobby("join", self.player), body)
        return dict(reply["table"])

    async def start(self, game: str) -> dict[str, Any]:
        reply = await self.request(self.subjects.lobby("start", self.player), {"game": game})
        return dict(reply["table"])

    async def seat_bots(self, game: str, count: int = 1, kind: str = "heuristic") -> list[str]:
        """Seat ``count`` bots of ``kind`` (one of the game's) at a table this player sits
        at, while it waits for players; their player ids. Each bot registers and joins, so
        this waits for all of them (within the client's ``timeout``)."""
        body = {"game": game, "count": count, "kind": kind}
        reply = await self.request(self.subjects.lobby("bots", self.player), body)
        return [str(p) for p in reply["players"]]

    async def tables(self, **filters: str) -> list[dict[str, Any]]:
        reply = await self.request(self.subjects.lobby("list", self.player), dict(filters))
        return list(reply["tables"])

    async def table(self, game: str) -> dict[str, Any]:
        reply = await self.request(self.subjects.lobby("get", self.player), {"game": game})
        return dict(reply["table"])

    async def command(
        self, game: str, type: str, *, command_id: str | None = None, **fields: Any
    ) -> int:
        """Send one command; returns the game's new version."""
        body = {"type": type, "id": command_id or new_id("c"), **fields}
        subject = self.subjects.cmd(game, self.player)
        if self.tracer is None:
            reply = await self.request(subject, body, idempotent=True)
            return int(reply["version"])
        # a trace of its own (else a game would be one trace), linked to the notification
        # being handled, if any: the one this command answers
        prompted = trace.get_current_span().get_span_context()
        with self._span(
            "command",
            {"cardroom.game": game, "cardroom.player": self.player, "cardroom.command": type},
            kind=SpanKind.CLIENT,
            context=otel_context.Context(),
            links=[Link(prompted)] if prompted.is_valid else None,
        ) as span:
            reply = await self.request(subject, body, self._headers(), idempotent=True)
            span.set_attribute("cardroom.version", int(reply["version"]))
            return int(reply["version"])

    @contextlib.contextmanager
    def _span(
        self,
        name: str,
        attributes: dict[str, Any],
        *,
        kind: SpanKind,
        context: otel_context.Context | None = None,
        links: list[Link] | None = None,
    ) -> Iterator[trace.Span]:
        """A span of this client's tracer; a refusal marks it with its code (no message)."""
        assert self.tracer is not None
        with self.tracer.start_as_current_span(
            name,
            context=context,
            kind=kind,
            attributes=attributes,
            links=links,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except BaseException as exc:
                code = exc.code if isinstance(exc, CardroomError) else type(exc).__name__
                span.set_attribute("cardroom.outcome", code)
                span.set_status(Status(StatusCode.ERROR, code))
                raise

    @staticmethod
    def _headers() -> dict[str, str] | None:
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier)
        return carrier or None

    async def send(
        self,
        game: str,
        command: dict[str, Any],
        *,
        command_id: str | None = None,
        retry_for: float = 0.0,
    ) -> int:
        """Send one command (``{"type": ..., **fields}``); returns the game's new version.

        With ``retry_for`` > 0, a refusal that only says "not now" (:data:`RETRY_LATER`: the
        gate waits for someone's ack, a busy table, storage away) is sent again, with the
        same command id so it applies at most once, backing off to 0.5 s, for at most that
        many seconds; any other refusal is raised at once.
        """
        fields = {k: v for k, v in command.items() if k not in ("type", "id")}
        kind = str(command["type"])
        command_id = command_id or new_id("c")
        loop = asyncio.get_running_loop()
        give_up = loop.time() + retry_for
        delay = 0.01
        while True:
            try:
                return await self.command(game, kind, command_id=command_id, **fields)
            except CardroomError as exc:
                if exc.code not in RETRY_LATER or loop.time() >= give_up:
                    raise
                nobody = isinstance(exc, NobodyServes)
            await asyncio.sleep(min(delay, NOBODY_SERVES_POLL) if nobody else delay)
            delay = min(delay * 2, 0.5)

    async def ack(self, game: str, version: int, **fields: Any) -> None:
        """Acknowledge (with ``fields``: a signature or a rejection); retried while the ack
        tracker is unreachable."""
        if self.tracer is None:
            await self._ack(game, version, fields)
            return
        with self._span(
            "ack",
            {"cardroom.game": game, "cardroom.player": self.player, "cardroom.version": version},
            kind=SpanKind.CLIENT,
        ):
            await self._ack(game, version, fields)

    async def _ack(self, game: str, version: int, fields: dict[str, Any]) -> None:
        delay = 0.05
        while True:
            try:
                await self.request(
                    self.subjects.ack(game, self.player),
                    {"type": "ack", "version": version, **fields},
                    self._headers() if self.tracer is not None else None,
                    idempotent=True,  # a repeated ack is answered as one
                )
                return
            except CardroomError as exc:
                if exc.code not in TRANSIENT or self._closed:
                    raise
                nobody = isinstance(exc, NobodyServes)
            # back off while the service is away, but look again often: a gate waits for
            # this ack, and a restarted tracker is back within a second or two
            await asyncio.sleep(min(delay, NOBODY_SERVES_POLL) if nobody else delay)
            delay = min(delay * 2, 0.25)

    async def sync(self, game: str) -> SyncReply:
        """Ask for the view and every unacknowledged notification, and process them. The
        reply's ``turn_due_in_ms`` is how long the turn has left, counted when the server
        answered (None when no turn clock runs; docs/protocol.md, "Sync")."""
        raw = await self.request(
            self.subjects.sync(game, self.player), {"type": "sync"}, idempotent=True
        )
        reply = SyncReply.model_validate(raw)
        feed = self._feed(game)
        # everything up to last_seq that was not listed has been acknowledged already
        for note in reply.notifications:
            feed.queue.put_nowait(_Acked(note.seq))
            feed.queue.put_nowait(note)
        feed.queue.put_nowait(_SyncEnd(reply.last_seq))
        return reply

    # -- notifications ----------------------------------------------------------------------
    def on_notification(self, handler: Handler, *, after_ack: Handler | None = None) -> None:
        """Set the handler for every game's notifications (and an optional hook that runs
        once the notification is acknowledged, e.g. to act on its ``actions``)."""
        self._handler = handler
        self._after_ack = after_ack

    async def follow(self, game: str, *, sync: bool = True) -> SyncReply | None:
        """Receive the game's notifications, after a sync (unless ``sync`` is False), and
        return the sync's reply. Its ``actions`` are what this player may do now. A client
        that starts again in a game it plays acts on them when the reply lists no
        notification (those reach the handlers with their own ``actions``): a prompt it
        acknowledged before it stopped is not sent again. A sync refused "not now"
        (``unavailable``: the server is catching up with the game, or restarting) is asked
        again, backing off, for at most the client's timeout."""
        self._feed(game)
        if not sync:
            return None
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.timeout
        delay = 0.02
        while True:
            try:
                return await self.sync(game)
            except CardroomError as exc:
                if exc.code not in TRANSIENT or loop.time() >= give_up:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)

    def verify(self, game: str, verifier: Verifier) -> None:
        """Check (and sign) every transition of ``game`` with ``verifier`` from now on."""
        self._feed(game).verifier = verifier

    def _feed(self, game: str) -> _Feed:
        feed = self._feeds.get(game)
        if feed is None:
            feed = self._feeds[game] = _Feed(check_id(game, "game id"))
            feed.task = asyncio.create_task(self._run(feed), name=f"feed-{game}")
        return feed

    async def _on_message(self, msg: Msg) -> None:
        try:
            note = Notification.model_validate_json(msg.data)
        except Exception:
            log.warning("dropping a malformed notification on %s", msg.subject)
            return
        if note.player != self.player:
            return
        feed = self._feed(note.game)
        if self.tracer is not None and msg.headers:
            feed.contexts[note.seq] = _PROPAGATOR.extract(msg.headers)
        feed.queue.put_nowait(note)

    def _resync_all(self) -> None:
        for game in list(self._feeds):
            self._sync_soon(game)

    def _sync_soon(self, game: str) -> None:
        task = asyncio.get_running_loop().create_task(self._safe_sync(game))
        self._syncs.add(task)
        task.add_done_callback(self._syncs.discard)

    async def _safe_sync(self, game: str) -> None:
        delay = 0.05
        while not self._closed:
            try:
                await self.sync(game)
                return
            except (ConnectionClosedError, ConnectionDrainingError):
                return  # the connection is closing: there is nothing left to sync on
            except CardroomError as exc:
                # unavailable: nobody answers now; internal: the server failed (its database
                # restarting, say): both pass, so try again, slower and slower
                if exc.code not in TRANSIENT | {ErrorCode.INTERNAL}:
                    log.warning("sync of %s failed: %s", game, exc)
                    feed = self._feeds.get(game)
                    if feed is not None:
                        feed.syncing = False  # the next gap asks again
                    return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _run(self, feed: _Feed) -> None:
        while not self._closed:
            note = await feed.queue.get()
            if note is None:  # a wake-up: the loop looks at _closed
                continue
            if isinstance(note, _Acked):  # what a sync did not list before its next one
                feed.last_seq = max(feed.last_seq, note.seq - 1)
                continue
            if isinstance(note, _SyncEnd):  # the end of a sync batch
                feed.syncing = False
                feed.last_seq = max(feed.last_seq, note.last_seq)
                await self._drain_held(feed)
                continue
            if note.seq <= feed.last_seq:
                if note.ack:  # a resend: our ack may have been lost
                    await self._traced(feed, note, self._ack_quietly(note))
                else:
                    feed.contexts.pop(note.seq, None)
                continue
            if note.seq > feed.last_seq + 1:
                feed.held[note.seq] = note
                if not feed.syncing:  # a gap: fetch what is missing, in order
                    feed.syncing = True
                    self._sync_soon(feed.game)
                continue
            await self._process(feed, note)
            await self._drain_held(feed)

    async def _drain_held(self, feed: _Feed) -> None:
        for seq in sorted(feed.held):
            if seq <= feed.last_seq:
                del feed.held[seq]
            elif seq == feed.last_seq + 1:
                await self._process(feed, feed.held.pop(seq))
        if feed.held and not feed.syncing:  # still a gap: ask again
            feed.syncing = True
            self._sync_soon(feed.game)

    async def _process(self, feed: _Feed, note: Notification) -> None:
        await self._traced(feed, note, self._handle(feed, note))

    async def _traced(self, feed: _Feed, note: Notification, work: Awaitable[None]) -> None:
        """``work`` on ``note``, in a span of the trace it arrived with (while tracing)."""
        if self.tracer is None:
            await work
            return
        parent = feed.contexts.pop(note.seq, None)
        with self._span(
            "notification",
            {"cardroom.game": note.game, "cardroom.player": self.player, "cardroom.seq": note.seq},
            kind=SpanKind.CONSUMER,
            # one that came without a trace (a sync's) starts its own
            context=parent if parent is not None else otel_context.Context(),
        ):
            await work

    async def _handle(self, feed: _Feed, note: Notification) -> None:
        if "transition" in note.message:
            if feed.verifier is None:
                if not feed.unverified:  # once a game: resends would repeat it
                    feed.unverified = True
                    log.error(
                        "%s seq %s: a transition to check and sign, and no verifier for the "
                        "game (Client.verify): not handled, not acknowledged",
                        note.game,
                        note.seq,
                    )
                return
            if note.version not in feed.signed:  # (checked once: a redelivery is not new)
                try:
                    verdict = await asyncio.to_thread(
                        feed.verifier.check, note.version, note.message
                    )
                except Exception as exc:  # it cannot check (it missed the start): sign nothing
                    log.error(
                        "%s seq %s: not checked (%s): not acknowledged", note.game, note.seq, exc
                    )
                    return
                feed.signed[note.version] = verdict.ack_fields()
            while len(feed.signed) > SIGNED_KEPT:
                del feed.signed[min(feed.signed)]
        try:
            if self._handler is not None:
                await self._handler(note)
        except Exception:
            log.exception("handler failed on %s seq %s; not acknowledged", note.game, note.seq)
            return
        feed.last_seq = note.seq
        if note.ack:
            await self._ack_quietly(note)
        if self._after_ack is not None:
            try:
                await self._after_ack(note)
            except Exception:
                log.exception("after-ack hook failed on %s seq %s", note.game, note.seq)

    async def _ack_quietly(self, note: Notification) -> None:
        feed = self._feeds.get(note.game)
        fields = feed.signed.get(note.version, {}) if feed is not None else {}
        if "transition" in note.message and not fields:
            return  # never checked (no verifier): an ack would sign nothing
        try:
            await self.ack(note.game, note.version, **fields)
        except CardroomError as exc:
            log.warning("ack of %s@%s refused: %s", note.game, note.version, exc)
        except Exception:  # a bug (a subclass's, say): said aloud, and the feed goes on
            log.exception("ack of %s@%s failed", note.game, note.version)
