"""NATS connection and JetStream stream helpers shared by the services and the tests."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import nats
from cardroom_client import natsfix
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy, StorageType, StreamConfig, StreamInfo
from nats.js.errors import BadRequestError, NotFoundError

from .settings import nats_servers

if TYPE_CHECKING:
    from .metrics import Metrics

log = logging.getLogger(__name__)

# Every connection made here reads with nats-py's mended reading (see the mend's module).
natsfix.mend()

DUPLICATE_WINDOW = 120.0  # seconds: JetStream de-duplicates Nats-Msg-Id within this window
STREAM_EXISTS_ERR = 10058  # "stream name already in use with a different configuration"


def redact(url: str) -> str:
    """``url`` (or several, comma-separated) with passwords and tokens hidden, for messages."""

    def one(part: str) -> str:
        try:
            parsed = urlsplit(part.strip())
        except ValueError:
            return "(not a URL)"
        if parsed.username is None and parsed.password is None:
            return part.strip()
        host = parsed.netloc.rpartition("@")[2]
        # a lone name before the @ is a token, itself a secret
        user = "***" if parsed.password is None else f"{parsed.username}:***"
        return urlunsplit(parsed._replace(netloc=f"{user}@{host}"))

    return ",".join(one(part) for part in url.split(","))


async def connect(
    url: str,
    name: str,
    *,
    connect_timeout: float = 10.0,
    metrics: Metrics | None = None,
    **options: Any,
) -> Client:
    """Connect to ``url`` (one server, or a cluster's, comma-separated) as ``name``; once
    connected, reconnect forever, quickly, to whichever server of the list answers.

    The first connection must succeed within ``connect_timeout`` seconds (a service should not
    hang at start on a wrong URL); after that, a lost connection is retried every half second
    without limit, and messages published meanwhile are buffered. ``options`` are passed on to
    :func:`nats.connect` and override these defaults. With ``metrics`` (a service's own
    connection beside its host's), its losses and reconnections are counted with the host's.
    """

    async def on_error(exc: Exception) -> None:
        log.warning("nats %s: %s", name, exc)

    async def on_disconnected() -> None:
        log.info("nats %s: disconnected", name)
        if metrics is not None:
            metrics.disconnects.inc()

    async def on_reconnected() -> None:
        log.info("nats %s: reconnected", name)
        if metrics is not None:
            metrics.reconnects.inc()

    settings: dict[str, Any] = {
        "name": name,
        "allow_reconnect": True,
        "max_reconnect_attempts": -1,
        "reconnect_time_wait": 0.5,
        "connect_timeout": min(connect_timeout, 2.0),
        "ping_interval": 10,
        "max_outstanding_pings": 3,
        "error_cb": on_error,
        "disconnected_cb": on_disconnected,
        "reconnected_cb": on_reconnected,
    }
    settings.update(options)
    client = Client()
    try:
        await asyncio.wait_for(client.connect(nats_servers(url), **settings), connect_timeout)
    except BaseException:
        with contextlib.suppress(Exception):
            await client.close()
        raise
    return client


async def ensure_stream(
    js: JetStreamContext,
    name: str,
    subjects: Sequence[str],
    *,
    replicas: int = 1,
    **config: Any,
) -> StreamInfo:
    """Create JetStream stream ``name`` over ``subjects`` unless it exists; return its info.

    File storage, a two-minute duplicate window, ``replicas`` copies (on as many servers of a
    cluster; a write is acknowledged once a majority has it); ``config`` adds or overrides
    :class:`nats.js.api.StreamConfig` fields. Idempotent: an existing stream with another
    configuration (say, other subjects, or another replica count) is updated to this one.
    """
    wanted = StreamConfig(
        name=name,
        subjects=list(subjects),
        storage=StorageType.FILE,
        duplicate_window=DUPLICATE_WINDOW,
        num_replicas=replicas,
        **config,
    )
    try:
        return await js.add_stream(wanted)
    except BadRequestError as exc:
        if exc.err_code != STREAM_EXISTS_ERR:
            raise
    try:
        return await js.update_stream(wanted)
    except NotFoundError:  # deleted in between
        return await js.add_stream(wanted)


async def subscribe_group(
    js: JetStreamContext,
    subject: str,
    *,
    stream: str,
    group: str,
    deliver_subject: str,
    cb: Callable[[Msg], Awaitable[None]],
    ack_wait: float,
) -> JetStreamContext.PushSubscription:
    """Join the replicas of durable push consumer ``group`` (its deliver group) on
    ``stream``: every message of ``subject`` from the stream's start, to one replica, acked by
    hand (one unacknowledged for ``ack_wait`` seconds comes again).

    The first replica creates the consumer. Replicas that start at once each find none and
    each create it; JetStream accepts an identical configuration again but lets a different
    one replace the first, so the deliver subject is fixed (``deliver_subject``), not an inbox
    per replica, which would leave every replica but the last waiting on an inbox nothing
    reaches.
    """
    return await js.subscribe(
        subject,
        queue=group,
        stream=stream,
        cb=cb,
        manual_ack=True,
        deliver_policy=DeliverPolicy.ALL,
        config=ConsumerConfig(
            filter_subjects=[], ack_wait=ack_wait, deliver_subject=deliver_subject
        ),
    )


__all__ = [
    "DUPLICATE_WINDOW",
    "connect",
    "ensure_stream",
    "nats",
    "nats_servers",
    "redact",
    "subscribe_group",
]
