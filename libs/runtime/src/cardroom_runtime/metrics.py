"""Metrics: what a process serves and refuses, in Prometheus's exposition format.

Each host (one process: one service, or ``serve all``) keeps its own registry and, when
``CARDROOM_METRICS_PORT`` is set, serves it over HTTP at ``/metrics``
(``CARDROOM_METRICS_ADDR``, default ``0.0.0.0``; port ``0`` picks a free one, which the host
reports). Names and units follow Prometheus's conventions (``_total`` counters, ``_seconds``
histograms, base units, ``cardroom_`` prefix):

- ``cardroom_requests_total{service, route, outcome}``: every request a route answered,
  ``outcome`` ``ok`` or the error code it was answered with (``awaiting_acks``,
  ``rate_limited``, ``bad_request``, ...); ``cardroom_request_seconds{service, route}``: the
  handling time of each (from the worker taking it to its reply being handed to NATS);
- ``cardroom_edge_requests_total{outcome}``: what the edge decided before any handler:
  ``checked``, ``bad_reply`` and ``no_asker`` (dropped), ``rate_limited`` (answered so);
- the auth service's (it runs no Host; :class:`CountsCollector`):
  ``cardroom_auth_requests_total{decision}`` (``admitted_player``, ``admitted_guest``,
  ``refused_<why>``, ``unanswered``) and ``cardroom_flood_kicks_total{account}``;
- ``cardroom_nats_reconnects_total``, ``cardroom_nats_disconnects_total``: of every NATS
  connection of the process (the host's, and the relay's and analytics' own);
- the services' own, registered on the same registry (:attr:`Metrics.registry`): the
  gamemaster's ``cardroom_commands_total{game_type, command, outcome}`` (a command type is a
  label once a game accepted one, else ``other``, so players cannot multiply the series),
  ``cardroom_command_seconds{game_type}``, ``cardroom_presence_changes_total{game_type,
  change}`` (away, back); the acktracker's ``cardroom_acks_total{outcome}``,
  ``cardroom_gates_released_total``, ``cardroom_notifications_resent_total``; the gate's
  (``cardroom_runtime.gate``): ``cardroom_gate_wait_seconds{game_type}`` (from a gate's
  notifications to its last acknowledgement, one sample per gate an ack released) and
  ``cardroom_acks_owed_total{game_type}`` (one per notification appended, counted by the
  gamemaster: over the same window, ``increase()`` of it less that of
  ``cardroom_acks_total{outcome="accepted"}`` is what players came to owe; the two live in
  different processes, whose restarts start them again at 0, so their totals do not
  subtract); the
  followers' lag, per event from its commit:
  ``cardroom_relay_delay_seconds`` (until JetStream has it),
  ``cardroom_projector_delay_seconds{game_type}`` (until its projection is committed) and
  ``cardroom_analytics_delay_seconds`` (until analytics committed it); the relay's
  measurement, every two seconds, of each follower's lag (itself, and every durable consumer
  of the events stream): ``cardroom_follower_lag_events{follower}`` and
  ``cardroom_follower_lag_seconds{follower}`` (the oldest unprocessed event's age); the
  timers' ``cardroom_deadlines_total{result}`` and ``cardroom_deadline_lateness_seconds``
  (from the later of a deadline's due time and the opening of the gate that held it back);
- the event store's, for this process: ``cardroom_appends_total``,
  ``cardroom_events_appended_total``, ``cardroom_append_group_size`` (appends per statement:
  the group commit), ``cardroom_postgres_connections_opened_total{pool}`` and
  ``cardroom_postgres_connections_lost_total{pool}`` (see ``cardroom_eventstore.stats``).

Errors by code are ``cardroom_requests_total``'s ``outcome``: every stable error code a
route answered is a value of it.

Counting costs a dictionary lookup and an addition per request: always on; only the HTTP
endpoint is optional.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from cardroom_eventstore.stats import GROUP_BUCKETS, STATS
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from .edge import Edge

__all__ = ["BUCKETS", "Counter", "FollowerLags", "Histogram", "Metrics", "outcome_of"]

log = logging.getLogger("cardroom.metrics")
M = TypeVar("M")

ENV_PORT = "CARDROOM_METRICS_PORT"
ENV_ADDR = "CARDROOM_METRICS_ADDR"
# from a fraction of a millisecond (an ack) to seconds (a Macaua shuffle's proof)
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class CountsCollector(Collector):
    """A counter family read at each scrape from counts a component keeps itself (the auth
    service's decisions, which runs no Host): ``known`` values are shown at 0 until counted."""

    def __init__(
        self,
        name: str,
        doc: str,
        label: str,
        read: Callable[[], Mapping[str, int]],
        known: Sequence[str] = (),
    ) -> None:
        self.name, self.doc, self.label = name, doc, label
        self.read, self.known = read, tuple(known)

    def collect(self) -> Iterable[CounterMetricFamily]:
        family = CounterMetricFamily(self.name, self.doc, labels=[self.label])
        counts = dict.fromkeys(self.known, 0) | dict(self.read())
        for value, count in sorted(counts.items()):
            family.add_metric([value], float(count))
        yield family


class _EdgeCollector(Collector):
    """The edge's own counts, read at each scrape (the edge counts anyway)."""

    def __init__(self, edge: Edge) -> None:
        self.edge = edge

    def collect(self) -> Iterable[CounterMetricFamily]:
        family = CounterMetricFamily(
            "cardroom_edge_requests",
            "Requests the service edge looked at, and what it decided before any handler",
            labels=["outcome"],
        )
        counts = self.edge.counts
        for outcome in ("checked", "bad_reply", "no_asker", "rate_limited"):
            family.add_metric([outcome], float(getattr(counts, outcome)))
        yield family


class _StoreCollector(Collector):
    """The event store's figures of this process (``cardroom_eventstore.stats``)."""

    def collect(self) -> Iterable[Metric]:
        appends = CounterMetricFamily(
            "cardroom_appends", "Appends committed to the event store (one game's batch each)"
        )
        appends.add_metric([], float(STATS.appends))
        yield appends
        events = CounterMetricFamily("cardroom_events_appended", "Events committed")
        events.add_metric([], float(STATS.events))
        yield events
        buckets: list[tuple[str, float]] = []
        running = 0
        for bound, count in zip(
            [*map(str, GROUP_BUCKETS), "+Inf"], STATS.group_counts, strict=True
        ):
            running += count
            buckets.append((bound, float(running)))
        group = HistogramMetricFamily(
            "cardroom_append_group_size",
            "Appends carried by each append statement (the group commit's size)",
        )
        group.add_metric([], buckets, float(STATS.group_sum))
        yield group
        opened = CounterMetricFamily(
            "cardroom_postgres_connections_opened",
            "Connections opened to PostgreSQL, by pool (after warm-up: reconnections)",
            labels=["pool"],
        )
        for pool, count in sorted(STATS.connections_opened.items()):
            opened.add_metric([pool], float(count))
        yield opened
        lost = CounterMetricFamily(
            "cardroom_postgres_connections_lost",
            "Connections to PostgreSQL found dead, by pool",
            labels=["pool"],
        )
        for pool, count in sorted(STATS.connections_lost.items()):
            lost.add_metric([pool], float(count))
        yield lost


class FollowerLags(Collector):
    """The followers' lag as last measured, by whoever measures it (the relay)."""

    def __init__(self) -> None:
        self.lags: dict[str, tuple[int, float]] = {}

    def collect(self) -> Iterable[Metric]:
        events = GaugeMetricFamily(
            "cardroom_follower_lag_events",
            "Events committed that a follower has not yet processed",
            labels=["follower"],
        )
        seconds = GaugeMetricFamily(
            "cardroom_follower_lag_seconds",
            "Age of the oldest event a follower has not yet processed (0 when none)",
            labels=["follower"],
        )
        for follower, (n, age) in sorted(self.lags.items()):
            events.add_metric([follower], float(n))
            seconds.add_metric([follower], age)
        yield events
        yield seconds


class Metrics:
    """One process's registry and the runtime's own metrics (see the module docs)."""

    def __init__(self, edge: Edge | None = None) -> None:
        self.registry = CollectorRegistry()
        self._own: dict[str, Any] = {}
        self.requests = Counter(
            "cardroom_requests",
            "Requests answered, by service, route and outcome (ok or the error code)",
            ["service", "route", "outcome"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "cardroom_request_seconds",
            "Time to handle a request, from a worker taking it to its reply sent",
            ["service", "route"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.reconnects = Counter(
            "cardroom_nats_reconnects", "Reconnections to NATS", registry=self.registry
        )
        self.disconnects = Counter(
            "cardroom_nats_disconnects", "Losses of the NATS connection", registry=self.registry
        )
        self.registry.register(_StoreCollector())
        if edge is not None:
            self.registry.register(_EdgeCollector(edge))
        self.port: int | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None

    # A service made twice on one host (tests do) shares its metrics, as one registry cannot
    # hold two series of one name.
    def _once(self, name: str, make: Callable[[], M]) -> M:
        if name not in self._own:
            self._own[name] = make()
        found: M = self._own[name]
        return found

    def counter(
        self,
        name: str,
        doc: str,
        labels: Iterable[str] = (),
        known: Iterable[Sequence[str]] = (),
    ) -> Counter:
        """A counter of a service's own on this process's registry. The series of ``known``
        label values are there at 0 from the start, so that ``rate()`` and ``increase()``
        see their first count (a series that appears with it starts at 1)."""
        counter = self._once(name, lambda: Counter(name, doc, list(labels), registry=self.registry))
        for values in known:
            counter.labels(*values)
        return counter

    def histogram(
        self,
        name: str,
        doc: str,
        labels: Iterable[str] = (),
        buckets: Sequence[float] = BUCKETS,
    ) -> Histogram:
        """A histogram (seconds; the runtime's buckets unless given) of a service's own."""
        return self._once(
            name,
            lambda: Histogram(name, doc, list(labels), buckets=buckets, registry=self.registry),
        )

    def follower_lags(self) -> FollowerLags:
        """The gauges of the followers' lag, registered on this registry (set ``lags``)."""

        def make() -> FollowerLags:
            lags = FollowerLags()
            self.registry.register(lags)
            return lags

        return self._once("follower_lags", make)

    def serve(self, port: int | None = None, addr: str | None = None) -> int | None:
        """Serve ``/metrics`` over HTTP (port and address from the environment when not
        given; nothing when no port is configured). Returns the port, or None."""
        if port is None:
            raw = os.environ.get(ENV_PORT, "").strip()
            if not raw:
                return None
            port = int(raw)
            if not 0 <= port <= 65535:
                raise ValueError(f"{ENV_PORT} must be a port number, not {raw!r}")
        where = addr if addr is not None else os.environ.get(ENV_ADDR, "").strip() or "0.0.0.0"
        self._server, self._thread = start_http_server(port, where, registry=self.registry)
        self.port = int(self._server.server_port)
        log.info("metrics on http://%s:%d/metrics", where, self.port)
        return self.port

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


def outcome_of(reply: bytes | None) -> str:
    """``ok``, or the error code a JSON reply carries (``unknown`` if it is neither)."""
    if reply is None:
        return "none"
    if reply.startswith(b'{"ok":true'):
        return "ok"
    marker = reply.find(b'"code":"')
    if marker < 0:
        return "ok" if b'"ok":true' in reply else "unknown"
    start = marker + len(b'"code":"')
    end = reply.find(b'"', start)
    code = reply[start:end].decode("ascii", "replace") if end > start else "unknown"
    return code if len(code) <= 40 else "unknown"
