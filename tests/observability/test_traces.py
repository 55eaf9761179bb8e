"""One command's trace, across the real service processes, in causal order.

The services run as separate OS processes (``cardroom serve <name>``) with tracing
configured the standard way (``OTEL_EXPORTER_OTLP_ENDPOINT``): each exports its spans over
OTLP/HTTP to a collector this test runs (a small HTTP server that decodes the protobuf
requests). The players' clients, in this process, record theirs with an in-memory exporter.
Two players play the test game (high card); the trace of the first player's bet must hold
the client's command, the gamemaster's handling, decision and append, a notification to
each player, each player's handling and ack of it, the acktracker's handling of each ack,
the release, and the gamemaster's follow-ups (which notify and are acknowledged in turn)
until the game waits for the next player; every span's parent is in the trace and started
before it. No span may carry a dealt card or a command's body, and the acktracker's log
lines of the trace carry its id.
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
import json
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cardroom_client import Client
from cardroom_eventstore import EventStore
from cardroom_runtime import tracing
from cardroom_runtime.games import load_games
from cardroom_wire import Notification
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.stack import ServiceProcess, wait_until
from support.timedstack import GAMES, process_env

load_games(GAMES)
_counter = itertools.count()

Value = str | int | float | bool


@dataclass(frozen=True)
class Span:
    """One span, from whichever process, in one shape (ids in hex)."""

    name: str
    service: str
    kind: str  # server, client, producer, consumer, internal
    trace_id: str
    span_id: str
    parent_id: str | None
    start: int  # ns since the epoch
    end: int
    attributes: dict[str, Value] = field(hash=False)

    def attr(self, key: str) -> Value | None:
        return self.attributes.get(key)


def _value(any_value: Any) -> Value:
    which = any_value.WhichOneof("value")
    return getattr(any_value, which) if which else ""


def _from_proto(request: ExportTraceServiceRequest) -> list[Span]:
    spans = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for s in scope_spans.spans:
                spans.append(
                    Span(
                        name=s.name,
                        service=str(resource.get("service.name", "")),
                        kind=ProtoSpan.SpanKind.Name(s.kind).removeprefix("SPAN_KIND_").lower(),
                        trace_id=s.trace_id.hex(),
                        span_id=s.span_id.hex(),
                        parent_id=s.parent_span_id.hex() or None,
                        start=s.start_time_unix_nano,
                        end=s.end_time_unix_nano,
                        attributes={a.key: _value(a.value) for a in s.attributes},
                    )
                )
    return spans


def _from_sdk(span: ReadableSpan) -> Span:
    assert span.context is not None
    assert span.start_time is not None
    assert span.end_time is not None
    return Span(
        name=span.name,
        service=str(span.resource.attributes.get("service.name", "")),
        kind=span.kind.name.lower(),
        trace_id=format(span.context.trace_id, "032x"),
        span_id=format(span.context.span_id, "016x"),
        parent_id=format(span.parent.span_id, "016x") if span.parent is not None else None,
        start=span.start_time,
        end=span.end_time,
        attributes=dict(span.attributes or {}),  # type: ignore[arg-type]
    )


class Collector:
    """An OTLP/HTTP trace receiver (``POST /v1/traces``, protobuf), in a thread."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.requests = 0
        self._lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                collector.add(_from_proto(ExportTraceServiceRequest.FromString(body)))
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def add(self, spans: list[Span]) -> None:
        with self._lock:
            self.spans.extend(spans)
            self.requests += 1

    def all(self) -> list[Span]:
        with self._lock:
            return list(self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    try:
        yield c
    finally:
        c.close()


@dataclass
class TracedStack:
    nats_url: str
    root: str
    store: EventStore
    processes: dict[str, ServiceProcess]
    logs: Path


@pytest.fixture
async def traced_stack(
    nats_url: str,
    subject_root: str,
    fresh_database: Callable[..., Awaitable[str]],
    collector: Collector,
    tmp_path: Path,
) -> AsyncIterator[TracedStack]:
    database_url = await fresh_database(migrated=True)
    root = f"{subject_root}t{next(_counter)}"
    env = {
        **process_env(database_url, nats_url, root),
        "CARDROOM_LOG_FORMAT": "json",
        # tracing configured as an operator would, exported every 100 ms
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    for name in ("CARDROOM_TRACES", "OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME"):
        env.pop(name, None)
    store = await EventStore.connect(database_url)
    processes = {}
    for name in ("gamemaster", "relay", "projector", "acktracker"):
        # -v: every request logs a (DEBUG) line, which must carry its trace's id
        command = [sys.executable, "-m", "cardroom", "serve", name, "-v"]
        processes[name] = ServiceProcess(
            name, env, log_path=tmp_path / f"{name}.log", command=command
        )
    stack = TracedStack(nats_url, root, store, processes, tmp_path)
    try:
        await asyncio.gather(*(p.start() for p in processes.values()))
        yield stack
    finally:
        for p in processes.values():
            p.stop()
        await store.close()


def _children(spans: list[Span], parent: Span, name: str) -> list[Span]:
    return [s for s in spans if s.parent_id == parent.span_id and s.name == name]


def _one(spans: list[Span], parent: Span, name: str) -> Span:
    found = _children(spans, parent, name)
    assert len(found) == 1, f"{name} under {parent.name}: {found}"
    return found[0]


def _after(child: Span, parent: Span) -> None:
    """``child`` started after ``parent`` started (their clocks are this machine's)."""
    assert child.start >= parent.start, (child, parent)


async def test_one_commands_trace_spans_every_process_in_causal_order(
    traced_stack: TracedStack, collector: Collector
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "test-players"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("cardroom.client")

    acked: dict[str, list[Notification]] = {"a": [], "b": []}
    clients: list[Client] = []
    for player in ("a", "b"):
        client = await Client.connect(
            traced_stack.nats_url,
            player,
            subject_root=traced_stack.root,
            timeout=15,
            tracer=tracer,
        )

        async def handle(note: Notification) -> None:
            return None

        async def after_ack(note: Notification, player: str = player) -> None:
            acked[player].append(note)

        client.on_notification(handle, after_ack=after_ack)
        clients.append(client)
    a, b = clients
    try:
        game = await a.create("highcard", {"rounds": 1, "max_value": 1_000_000}, seats=2)
        await b.join(game)  # the table is full: it starts
        # a is prompted, and has acknowledged it: the gate is open for its bet
        await wait_until(lambda: any(n.message["type"] == "YourTurn" for n in acked["a"]))
        version = await a.send(game, {"type": "bet", "amount": 2}, retry_for=10)
        # the game goes on by itself (b's turn is told to a, then b is prompted) and then
        # waits for b: that is where the bet's trace ends
        await wait_until(lambda: any(n.message["type"] == "YourTurn" for n in acked["b"]))
    finally:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)

    def client_spans() -> list[Span]:
        return [_from_sdk(s) for s in exporter.get_finished_spans()]

    commands = [
        s for s in client_spans() if s.name == "command" and s.attr("cardroom.version") == version
    ]
    assert len(commands) == 1, commands
    command = commands[0]
    assert command.parent_id is None  # a trace of its own
    assert command.attributes["cardroom.command"] == "bet"
    trace_id = command.trace_id

    def trace() -> list[Span]:
        spans = client_spans() + collector.all()
        return [s for s in spans if s.trace_id == trace_id]

    def complete() -> bool:
        spans = trace()
        releases = [s for s in spans if s.name == "gamemaster release"]
        follow_ups = [s for s in spans if s.name == "follow_up"]
        # two gates opened (the bet's, b's turn told to a; b's prompt, told to b alone,
        # holds none); the last follow-up found nothing to do: the game waits for b
        return (
            len(releases) >= 2
            and any(s.attr("cardroom.events") == 0 for s in follow_ups)
            and sum(s.name == "acktracker acks" for s in spans) >= 4
        )

    await wait_until(complete, timeout=30)
    spans = trace()
    by_id = {s.span_id: s for s in spans}

    # one tree: every span's parent is in the trace, and started before it
    for s in spans:
        if s.span_id == command.span_id:
            continue
        assert s.parent_id in by_id, f"{s.name} ({s.service}) has no parent in the trace"
        _after(s, by_id[s.parent_id])
    services = {s.service for s in spans}
    assert {"test-players", "cardroom-gamemaster", "cardroom-acktracker"} <= services

    # the command: the gamemaster's handling, its decision, its append, then a notification
    # to each player, each published once the append was done
    handled = _one(spans, command, "gamemaster commands")
    assert handled.service == "cardroom-gamemaster"
    assert handled.kind == "server"
    assert handled.attr("cardroom.outcome") == "ok"
    assert handled.attr("cardroom.command") == "bet"
    decide = _one(spans, handled, "decide")
    append = _one(spans, handled, "append")
    assert decide.end <= append.start
    assert append.attr("cardroom.events") == 1
    notified = _children(spans, handled, "notify")
    assert sorted(str(n.attr("cardroom.player")) for n in notified) == ["a", "b"]
    releases: list[Span] = []
    for notify in notified:
        assert notify.kind == "producer"
        assert notify.start >= append.end
        # the player handles it and acknowledges it; the acktracker records the ack
        received = _one(spans, notify, "notification")
        assert received.service == "test-players"
        assert received.attr("cardroom.player") == notify.attr("cardroom.player")
        ack = _one(spans, received, "ack")
        recorded = _one(spans, ack, "acktracker acks")
        assert recorded.service == "cardroom-acktracker"
        assert recorded.attr("cardroom.outcome") == "ok"
        releases += _children(spans, recorded, "release")
    # the last ack of the two released the gate
    assert len(releases) == 1, releases

    # release -> the gamemaster's follow-up -> its notification -> ack -> release -> ... until
    # the game waits for b: b's turn told to a (a gate), then b prompted; the prompt, told to
    # b alone, holds no gate, so the same follow-up goes on at once and finds nothing to do
    chain = [[("a", 1)], [("b", 1), (None, 0)]]
    release = releases[0]
    for steps in chain:
        follow = _one(spans, release, "gamemaster release")
        assert follow.service == "cardroom-gamemaster"
        _after(follow, release)
        done = sorted(_children(spans, follow, "follow_up"), key=lambda s: s.start)
        assert [s.attr("cardroom.events") for s in done] == [n for _, n in steps]
        for step, (player, _) in zip(done, steps, strict=True):
            if player is None:
                break
            step_append = _one(spans, step, "append")
            (notify,) = _children(spans, step, "notify")
            assert notify.attr("cardroom.player") == player
            assert notify.start >= step_append.end
            ack = _one(spans, _one(spans, notify, "notification"), "ack")
            released = _children(spans, _one(spans, ack, "acktracker acks"), "release")
            if player == "b":
                assert released == []  # b's prompt held no gate: its ack releases nothing
            else:
                (release,) = released

    # nothing a player may not see, and no body: every card dealt is absent from every span
    # of every process (attribute values and names), and no attribute holds JSON
    dealt = [
        int(card)
        for record in await traced_stack.store.read_stream(game)
        if record.type == "highcard.dealt"
        for card in record.data["cards"].values()
    ]
    assert len(dealt) == 2
    hidden = [str(card) for card in dealt if card >= 10_000]  # five digits and more: distinct
    assert hidden, dealt  # (both below 10,000: one chance in 2,500)
    everything = client_spans() + collector.all()
    for s in everything:
        texts = [s.name, *(str(v) for v in s.attributes.values())]
        for card in hidden:
            assert not any(card in text for text in texts), (card, s)
        assert not any(
            isinstance(v, str) and ("{" in v or '"' in v) for v in s.attributes.values()
        ), s

    # the acktracker's log lines of this trace carry its id (one a request, at DEBUG)
    def logged() -> list[dict[str, Any]]:
        tail = list(traced_stack.processes["acktracker"].tail)
        return [json.loads(line) for line in tail if line.startswith("{")]

    def traced_line() -> bool:
        return any(
            r.get("trace_id") == trace_id and r.get("route") == "acks" and r.get("game") == game
            for r in logged()
        )

    await wait_until(traced_line, timeout=10)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "off"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "otlp"),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, "otlp"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "CARDROOM_TRACES": "off"}, "off"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, "off"),
        ({"CARDROOM_TRACES": "console"}, "console"),
        ({"CARDROOM_TRACES": "OTLP"}, "otlp"),
    ],
)
def test_tracing_is_off_unless_configured(env: dict[str, str], expected: str) -> None:
    assert tracing.mode(env) == expected


def test_a_wrong_tracing_setting_is_an_error() -> None:
    with pytest.raises(ValueError, match="CARDROOM_TRACES"):
        tracing.mode({"CARDROOM_TRACES": "jaeger"})


async def test_off_adds_nothing_to_a_message(nats_url: str, subject_root: str) -> None:
    """This process never configured tracing: no span, no header, a client without a
    tracer (its requests and acks go out bare)."""
    assert not tracing.enabled()
    assert tracing.headers() is None
    with tracing.span("append", {"cardroom.game": "g"}) as current:
        assert current is None
    client = await Client.connect(nats_url, "p", subject_root=f"{subject_root}off")
    try:
        assert client.tracer is None
    finally:
        await client.close()
