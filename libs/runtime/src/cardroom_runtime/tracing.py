"""Traces: one command's path through the processes, in OpenTelemetry's terms; off by default.

A trace follows one command: the client's request, the gamemaster's handling of it (its
decision, its append), each notification it publishes, each player's handling and ack of it,
the acktracker's handling of each ack, the release it sends, and the gamemaster's follow-up
(which appends and notifies in turn, until the game waits for a player). Processes hand the
trace on in NATS headers, as W3C trace context (``traceparent``): a request, a notification
and a release carry the span they were sent from, and the receiving process continues it.

**Configuration** (:func:`configure`, called by every :class:`~cardroom_runtime.host.Host`):
``CARDROOM_TRACES`` is ``otlp`` (export over OTLP/HTTP, protobuf, to the standard
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``, default
``http://localhost:4318``), ``console`` (print each span, for a look at ``make run``) or
``off``. Unset, tracing is on exactly when one of those two endpoint variables is set. The
other standard variables apply as the OpenTelemetry SDK reads them (``OTEL_SERVICE_NAME``,
``OTEL_TRACES_SAMPLER``, ``OTEL_BSP_SCHEDULE_DELAY``, ``OTEL_EXPORTER_OTLP_HEADERS``, ...);
``OTEL_SDK_DISABLED=true`` turns it off whatever else is set.

**Off costs nothing measurable.** While it is off, :func:`span` returns one shared do-nothing
context manager, :func:`headers` returns None (no header is built or sent) and the runtime's
request path takes the branch it took before tracing existed: no tracer is ever asked.

**What a span may carry.** Ids and outcomes only: the game, the player the subject names, the
command's type, a version, a count, an outcome or error code. Never a body, a card, a hand,
a view or a notification: an operator's trace store is not a place for what a player may not
see (the traces test scans a played game's spans for every dealt card).

Libraries that only hand the context on (the client SDK) use the OpenTelemetry API alone
and take the tracer of whatever the application configured; this module is the application
side, for the service processes.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any, Final

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

__all__ = [
    "Span",
    "SpanKind",
    "configure",
    "enabled",
    "failed",
    "headers",
    "outcome",
    "received",
    "shutdown",
    "span",
    "tag",
    "trace_id",
]

log = logging.getLogger("cardroom.tracing")

ENV_TRACES: Final = "CARDROOM_TRACES"
_ENDPOINTS: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROPAGATOR: Final = TraceContextTextMapPropagator()
#: the instrumentation scope of the services' spans
SCOPE: Final = "cardroom"

_tracer: Tracer | None = None  # None: off
_provider: Any = None  # the SDK's TracerProvider this module set up (to flush at the end)
_configured = False
_NOTHING: Final = contextlib.nullcontext(None)


def mode(env: Mapping[str, str] | None = None) -> str:
    """What the environment asks for: ``otlp``, ``console`` or ``off``."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return "off"
    chosen = env.get(ENV_TRACES, "").strip().lower()
    if not chosen:
        return "otlp" if any(env.get(name, "").strip() for name in _ENDPOINTS) else "off"
    if chosen not in ("otlp", "console", "off"):
        raise ValueError(f"{ENV_TRACES} must be otlp, console or off, not {chosen!r}")
    return chosen


def configure(service: str, env: Mapping[str, str] | None = None) -> bool:
    """Set up this process's tracing once, as the environment says; True when it is on.

    ``service`` names the process in its spans (``service.name``) unless
    ``OTEL_SERVICE_NAME`` does. The provider becomes the process's global one, so a client
    SDK in the same process (bots, the gateway's connections) traces into it too.
    """
    global _tracer, _provider, _configured
    if _configured:
        return _tracer is not None
    _configured = True
    chosen = mode(env)
    if chosen == "off":
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SpanExporter,
    )

    exporter: SpanExporter
    if chosen == "console":
        exporter = ConsoleSpanExporter()
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    # OTEL_SERVICE_NAME, when set, wins over this default (Resource.create reads it)
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    _provider = provider
    _tracer = provider.get_tracer(SCOPE)
    log.info("tracing on: %s", chosen)
    return True


def shutdown() -> None:
    """Export what is still buffered (a host calls it when it stops)."""
    if _provider is not None:
        try:
            _provider.force_flush(5_000)
        except Exception:  # the collector is away: traces are best effort
            log.debug("flushing spans", exc_info=True)


def enabled() -> bool:
    """True when this process traces (checked once per use site, not per message)."""
    return _tracer is not None


def span(
    name: str,
    attributes: Mapping[str, str | int | bool] | None = None,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
) -> contextlib.AbstractContextManager[Span | None]:
    """A span around a block, the current one's child; a shared no-op while tracing is off.

    An exception that leaves the block marks the span failed with its ``code`` (a
    :class:`~cardroom_wire.WireError`'s, a rejection's) or its type's name, never its message.
    """
    if _tracer is None:
        return _NOTHING
    return _span(_tracer, name, attributes, kind, None)


def received(
    name: str,
    carrier: Mapping[str, str] | None,
    attributes: Mapping[str, str | int | bool] | None = None,
    *,
    kind: SpanKind = SpanKind.SERVER,
) -> contextlib.AbstractContextManager[Span | None]:
    """A span for a message received with ``carrier`` (its NATS headers): the child of the
    span it was sent from when it carries a ``traceparent``, else the root of a new trace."""
    if _tracer is None:
        return _NOTHING
    parent = PROPAGATOR.extract(carrier) if carrier else otel_context.Context()
    return _span(_tracer, name, attributes, kind, parent)


@contextlib.contextmanager
def _span(
    tracer: Tracer,
    name: str,
    attributes: Mapping[str, str | int | bool] | None,
    kind: SpanKind,
    parent: otel_context.Context | None,
) -> Iterator[Span | None]:
    # the SDK would record the exception's message and traceback as a span event: a message
    # may quote what the player sent, so only the code goes on the span
    with tracer.start_as_current_span(
        name,
        context=parent,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            failed(current, str(getattr(exc, "code", "") or type(exc).__name__))
            raise


def tag(key: str, value: str | int | bool) -> None:
    """Set one attribute on the current span (an id, a type, a version: never a body)."""
    if _tracer is not None:
        trace.get_current_span().set_attribute(key, value)


def outcome(current: Span, code: str) -> None:
    """Put a request's outcome (``ok``, ``none`` for no reply, or an error code) on its span;
    an error code marks it failed."""
    if code in ("ok", "none"):
        current.set_attribute("cardroom.outcome", code)
    else:
        failed(current, code)


def failed(current: Span | None, code: str) -> None:
    """Mark ``current`` as failed with ``code`` (an error code, never a message)."""
    if current is not None:
        current.set_attribute("cardroom.outcome", code)
        current.set_status(Status(StatusCode.ERROR, code))


def headers() -> dict[str, str] | None:
    """The NATS headers that hand the current span on (``traceparent``), or None when
    tracing is off or no span is current: then nothing is added to a message."""
    if _tracer is None:
        return None
    carrier: dict[str, str] = {}
    PROPAGATOR.inject(carrier)
    return carrier or None


def trace_id() -> str | None:
    """The current span's trace id (32 hex digits), for log records; None without one."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None
