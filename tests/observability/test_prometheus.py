"""A real Prometheus scrapes a running cardroom and its figures match what was played.

Every service of the stack runs in this process (``serve all``) with its metrics served over
HTTP; a Prometheus server (Debian's ``prometheus``, which CI installs) scrapes it four times
a second while bot tables play. Then its query API must say what the event store says: as
many commands answered ``ok`` as commands recorded, every request timed, acks accepted,
the edge's counts present, one gate wait per gate released and one ack owed per
notification recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cardroom_bots.players import BotPlayer
from cardroom_client import CardroomError, Client
from cardroom_eventstore.stats import STATS
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from sqlalchemy import text as sqltext
from support.players import listener, recorded_bot
from support.stack import wait_until

from cardroom.services import SERVICES, ServiceName

load_games("support.highcard:GAME")
ALERTS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
_counter = itertools.count()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def prometheus_binary() -> str:
    found = shutil.which("prometheus") or (
        "/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None
    )
    assert found, "Prometheus is needed (Debian's prometheus package; .ci/run installs it)"
    return found


class Prometheus:
    def __init__(self, url: str) -> None:
        self.url = url

    def query(self, expr: str) -> list[dict[str, Any]]:
        q = urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{q}", timeout=5) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def rules(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/api/v1/rules", timeout=5) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        return [rule for group in body["data"]["groups"] for rule in group["rules"]]

    def value(self, expr: str) -> float | None:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None


@pytest.fixture
def prometheus(prometheus_binary: str, tmp_path: Path) -> Iterator[Callable[[int], Prometheus]]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(target_port: int) -> Prometheus:
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 250ms\n  evaluation_interval: 250ms\n"
            f"rule_files: ['{ALERTS}']\n"
            "scrape_configs:\n  - job_name: cardroom\n"
            f"    static_configs:\n      - targets: ['127.0.0.1:{target_port}']\n"
        )
        port = _free_port()
        log = (tmp_path / "prometheus.log").open("wb")
        procs.append(
            subprocess.Popen(
                [
                    prometheus_binary,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={tmp_path / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        return Prometheus(f"http://127.0.0.1:{port}")

    yield start
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.fixture
async def host(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> AsyncIterator[Host]:
    database_url = await fresh_database(migrated=True)
    h = Host(
        SERVICES[ServiceName.all],
        nats_url=nats_url,
        database_url=database_url,
        subject_root=f"{subject_root}m{next(_counter)}",
    )
    await h.start()
    h.metrics.serve(port=0, addr="127.0.0.1")
    try:
        yield h
    finally:
        await h.stop()


def _ready(prom: Prometheus) -> bool:
    try:
        with urllib.request.urlopen(f"{prom.url}/-/ready", timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


async def _paid(host: Host, games: list[str]) -> bool:
    """Whether every notification of ``games`` has been acknowledged (nothing owed)."""
    return all([not await host.store.pending(game) for game in games])


async def test_prometheus_scrapes_what_was_played(
    host: Host, nats_url: str, prometheus: Callable[[int], Prometheus]
) -> None:
    assert host.metrics.port is not None
    prom = prometheus(host.metrics.port)
    await wait_until(lambda: _ready(prom), timeout=30)
    root = host.subjects.root
    # the store's counts are the process's (earlier tests' too): what this test adds counts
    before = (STATS.appends, STATS.events, STATS.statements, STATS.group_sum)
    tables = 3
    bots = [
        BotPlayer(await Client.connect(nats_url, f"mx{i}", subject_root=root))
        for i in range(2 * tables)
    ]
    try:
        games = []
        for t in range(tables):
            a, b = bots[2 * t], bots[2 * t + 1]
            game = await a.create("highcard", {"rounds": 3}, seats=2)
            games.append(game)
            await b.join(game, "highcard")
        async with asyncio.timeout(60):
            await asyncio.gather(
                *(b.finished[g].wait() for g in games for b in bots if g in b.finished)
            )
        # a player sees the game over before it acknowledges it: closing it then could lose
        # that ack, and the owed acks below would never all be paid
        await wait_until(lambda: _paid(host, games), timeout=30)
    finally:
        await asyncio.gather(*(b.close() for b in bots), return_exceptions=True)

    # a table whose second player acknowledges everything and never acts: the house plays
    # for it when its turn times out (the timers' deadlines)
    ann = recorded_bot(await Client.connect(nats_url, "mxh1", subject_root=root))
    ben = listener(await Client.connect(nats_url, "mxh2", subject_root=root))
    try:
        timed = await ann.client.create(
            "highcard", {"rounds": 2, "table": {"turn_timeout": 0.2}}, seats=2
        )
        assert ann.bot is not None
        ann.bot.watch(timed, "highcard")
        await ben.client.join(timed)

        def over() -> bool:
            seen = ben.recorder.seen.get(timed, [])
            return any(n.message["type"] == "GameOver" for n in seen)

        await wait_until(over, timeout=60)
        await wait_until(lambda: _paid(host, [timed]), timeout=30)
    finally:
        await asyncio.gather(ann.client.close(), ben.client.close(), return_exceptions=True)
    house = [r for r in await host.store.read_stream(timed) if r.metadata.get("house")]
    assert house  # ben's bets, played by the house

    # a made-up command type is counted, but not under a label of its own
    stranger = await Client.connect(nats_url, "mxz", subject_root=root)
    try:
        with contextlib.suppress(CardroomError):
            await stranger.send(games[0], {"type": "zzz_made_up"})
    finally:
        await stranger.close()

    # what the store recorded: each accepted command appended its events under its id
    commands: set[str] = set()
    for game in [*games, timed]:
        for record in await host.store.read_stream(game):
            cid = record.metadata.get("command_id")
            if isinstance(cid, str):
                commands.add(cid)
    assert commands

    ok = 'sum(cardroom_requests_total{service="gamemaster",route="commands",outcome="ok"})'

    def scraped() -> bool:
        return prom.value(ok) == len(commands)

    await wait_until(scraped, timeout=30)  # Prometheus's next scrapes after the games
    by_type = 'sum(cardroom_commands_total{game_type="highcard",outcome="ok"})'
    await wait_until(lambda: prom.value(by_type) == len(commands), timeout=30)
    bets = prom.value('sum(cardroom_commands_total{game_type="highcard",command="bet"})')
    assert bets is not None
    assert bets > 0
    await wait_until(
        lambda: (prom.value('sum(cardroom_commands_total{command="other"})') or 0) >= 1,
        timeout=30,
    )
    assert prom.query('cardroom_commands_total{command="zzz_made_up"}') == []
    # every request is timed: the histogram's count is the requests' count, per route
    for route in ("commands", "lobby", "acks"):
        total = prom.value(f'sum(cardroom_requests_total{{route="{route}"}})')
        count = prom.value(f'sum(cardroom_request_seconds_count{{route="{route}"}})')
        assert total is not None, route
        assert total > 0, route
        assert count == total, route
    accepted = prom.value('cardroom_acks_total{outcome="accepted"}')
    assert accepted is not None
    assert accepted >= len(commands)
    checked = prom.value('cardroom_edge_requests_total{outcome="checked"}')
    assert checked is not None
    assert checked >= len(commands)
    names = {m["metric"]["__name__"] for m in prom.query('{__name__=~"cardroom_.*"}')}
    assert {
        "cardroom_requests_total",
        "cardroom_request_seconds_bucket",
        "cardroom_edge_requests_total",
        "cardroom_acks_total",
        "cardroom_gates_released_total",
        "cardroom_nats_reconnects_total",
        "cardroom_relay_delay_seconds_bucket",
        "cardroom_projector_delay_seconds_bucket",
    } <= names
    # every event was relayed and projected (the followers' delays, one sample per event)
    events = sum([len(await host.store.read_stream(g)) for g in games])

    def followed() -> bool:
        relayed = prom.value("cardroom_relay_delay_seconds_count")
        projected = prom.value('sum(cardroom_projector_delay_seconds_count{game_type="highcard"})')
        return (relayed or 0) >= events and (projected or 0) >= events

    await wait_until(followed, timeout=30)

    # the store: every event of this test's games committed through the counted appends, in
    # group commits whose sizes add up to the appends
    recorded = await host.store.read_all(0, 100_000)
    appends = len({(r.stream_id, r.metadata.get("command_id") or r.event_id) for r in recorded})
    assert appends >= len(games)

    def stored() -> bool:
        events_total = prom.value("cardroom_events_appended_total") or 0
        return events_total - before[1] == len(recorded)

    await wait_until(stored, timeout=30)
    appends_total = prom.value("cardroom_appends_total")
    groups = prom.value("cardroom_append_group_size_count")
    carried = prom.value("cardroom_append_group_size_sum")
    assert appends_total is not None
    assert groups is not None
    assert carried is not None
    assert appends_total - before[0] >= 1
    assert carried - before[3] == appends_total - before[0]  # each append in one statement
    assert 1 <= groups - before[2] <= appends_total - before[0]
    opened = prom.value('sum(cardroom_postgres_connections_opened_total{pool="hot"})')
    assert opened is not None
    assert opened >= 1

    # a counter's series are there at 0 before their first count (else rate() and
    # increase() would miss that count): outcomes no game of this test had
    for series in (
        'cardroom_acks_total{outcome="refused"}',
        'cardroom_deadlines_total{result="unanswered"}',
        'cardroom_presence_changes_total{game_type="highcard",change="back"}',
    ):
        assert prom.value(series) == 0, series

    # the timers: each house move is a turn deadline the gamemaster fired, each timed
    fired = prom.value('cardroom_deadlines_total{result="fired"}')
    assert fired is not None
    assert fired >= len(house)
    late = prom.value("cardroom_deadline_lateness_seconds_count")
    applied = prom.value('sum(cardroom_deadlines_total{result=~"fired|nothing"})')
    assert late == applied

    # deploy's dashboard: every query of its panels is one Prometheus runs
    dashboard = json.loads(
        (ALERTS.parents[1] / "grafana" / "dashboards" / "cardroom.json").read_text()
    )
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            prom.query(target["expr"])  # (asserts the query ran)

    # deploy's alerts, evaluated on what was played: each one's query runs (health "ok"), and
    # none fires for a stack that played well
    def evaluated() -> bool:
        rules = prom.rules()
        return bool(rules) and all(r.get("lastEvaluation", "").startswith("2") for r in rules)

    await wait_until(evaluated, timeout=30)
    rules = prom.rules()
    assert {r["name"] for r in rules} >= {"CardroomServiceDown", "CardroomInternalErrors"}
    assert [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"] == []
    assert [r["name"] for r in rules if r["state"] != "inactive"] == []

    # analytics' delay: one sample per event it applied (all of them, at the end)
    def analysed() -> bool:
        return (prom.value("cardroom_analytics_delay_seconds_count") or 0) >= len(recorded)

    await wait_until(analysed, timeout=30)

    # the followers' lag, measured by the relay: the relay itself and the durable consumers
    # of the events stream (the projector's, analytics'), all caught up once play is over
    def caught_up() -> bool:
        lags = prom.query("cardroom_follower_lag_events")
        followers = {m["metric"]["follower"]: float(m["value"][1]) for m in lags}
        return (
            "relay" in followers
            and any(name.endswith("analytics") for name in followers)
            and all(v == 0 for v in followers.values())
        )

    await wait_until(caught_up, timeout=30)
    ages = prom.query("cardroom_follower_lag_seconds")
    assert ages
    assert all(float(m["value"][1]) == 0 for m in ages)

    # the gate: one wait sample per gate an ack released, every gate of these games (nobody
    # was away: no gate was released by an excuse), all of them highcard's
    async with host.store.engine.connect() as conn:
        gates_released = await conn.scalar(
            sqltext("SELECT count(*) FROM gates WHERE remaining = 0 AND stream_id = ANY(:g)"),
            {"g": [*games, timed]},
        )
    assert gates_released

    def gates_counted() -> bool:
        return prom.value("cardroom_gates_released_total") == gates_released

    await wait_until(gates_counted, timeout=30)
    waits = 'sum(cardroom_gate_wait_seconds_count{game_type="highcard"})'
    assert prom.value(waits) == gates_released
    assert prom.value("sum(cardroom_gate_wait_seconds_count)") == gates_released
    # a gate waits at least for its players' round trips, and less than the test took
    waited = prom.value("sum(cardroom_gate_wait_seconds_sum)")
    assert waited is not None
    assert 0 < waited < 120 * gates_released

    # acknowledgements owed, one per notification the store records, all of them paid
    owed_in_store = sum(
        len(r.metadata.get("to", [])) for r in recorded if r.stream_id in {*games, timed}
    )
    assert owed_in_store > 0
    owed = 'sum(cardroom_acks_owed_total{game_type="highcard"})'

    def all_paid() -> bool:
        accepted = prom.value('cardroom_acks_total{outcome="accepted"}')
        return prom.value(owed) == owed_in_store and accepted == owed_in_store

    await wait_until(all_paid, timeout=30)
