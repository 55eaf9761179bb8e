"""One player floods the services while bot tables play: the tables keep their pace, the
flooder is answered ``rate_limited`` past its rate, and nothing it sends changes anything for
anyone else.

Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections import Counter
from typing import Any

import nats
import orjson
import pytest
import sqlalchemy as sa
from cardroom_bots import play_table
from cardroom_engine.table import STARTED
from cardroom_runtime.edge import Edge
from cardroom_wire import Subjects
from support.players import check_stream
from support.stack import ProcessStack, Stack, wait_until

TABLES = 4
ROUNDS = 8
RUNS = 2  # quiet and flooded runs, taking turns
FLOOD = 20_000  # messages at most
FLOOD_SECONDS = 6.0  # and for this long at most
ANSWERING_ROUTES = 4  # lobby and commands (gamemaster), acks (acktracker), syncs (projector)


class Flood:
    """The flooding player's process (support.flood): started ahead, so that it is connected
    when the tables start; told its targets, it floods and reports."""

    def __init__(self, stack: ProcessStack, player: str) -> None:
        self.stack = stack
        self.player = player
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        args = {
            "url": self.stack.nats_url,
            "root": self.stack.root,
            "player": self.player,
            "count": FLOOD,
            "seconds": FLOOD_SECONDS,
        }
        env = self.stack.processes["gamemaster"].env  # finds support/ on PYTHONPATH
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "support.flood",
            orjson.dumps(args).decode(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        assert self.proc.stdout is not None
        async with asyncio.timeout(30):
            assert (await self.proc.stdout.readline()).strip() == b"ready"

    async def go(self, games: list[str]) -> None:
        assert self.proc is not None
        assert self.proc.stdin is not None
        self.proc.stdin.write(orjson.dumps(games) + b"\n")
        await self.proc.stdin.drain()

    async def result(self) -> dict[str, Any]:
        assert self.proc is not None
        assert self.proc.stdout is not None
        async with asyncio.timeout(120):
            line = await self.proc.stdout.readline()
            assert await self.proc.wait() == 0
        result: dict[str, Any] = orjson.loads(line)
        return result

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()


async def _tables(stack: Stack, run: str) -> tuple[float, list[str]]:
    """Play ``TABLES`` bot tables at once; how long until the last finished, and their ids."""
    started = time.monotonic()
    results = await asyncio.gather(
        *(
            play_table(
                stack.nats_url,
                "highcard",
                [f"{run}t{t}p{p}" for p in range(3)],
                subject_root=stack.root,
                config={"rounds": ROUNDS},
                timeout=120,
            )
            for t in range(TABLES)
        )
    )
    for game, outcome in results:
        assert outcome, f"{game} ended without an outcome"
    return time.monotonic() - started, [game for game, _ in results]


async def _started(stack: Stack, known: set[str]) -> list[str]:
    """The bot tables, once every one has started (at a table still in the lobby, a join is
    a player's right, and would take a bot's seat)."""
    found: list[str] = []

    async def started() -> bool:
        async with stack.store.engine.connect() as conn:
            rows = await conn.scalars(
                sa.text("SELECT stream_id FROM events WHERE type = :t"), {"t": STARTED}
            )
            found[:] = [g for g in rows if g not in known]
        return len(found) >= TABLES

    await wait_until(started, timeout=30)
    return found


def _cpu(stack: ProcessStack) -> dict[str, float]:
    """CPU seconds each service process has used so far (user + system), and this one."""
    out = {}
    for name, process in stack.processes.items():
        assert process.proc is not None
        with open(f"/proc/{process.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[name] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    out["test"] = time.process_time()
    return out


def _spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before[k] for k in before}


def _cpus(spent: Counter[str]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in spent.items())


def _times(times: list[float]) -> str:
    return " + ".join(f"{t:.2f}" for t in times)


@pytest.mark.slow
async def test_a_flood_leaves_the_other_tables_their_pace(process_stack: ProcessStack) -> None:
    """Quiet and flooded runs of the same tables take turns (after a warm-up table), so that
    what other work on this machine does to one run does it to both kinds alike."""
    stack = process_stack
    s = Subjects(stack.root)
    owner = await stack.client("flooder")
    own_game = await owner.create("highcard", {}, seats=2)  # a table of its own, in the lobby
    before = await stack.store.stream_version(own_game)
    warm, _ = await play_table(
        stack.nats_url, "highcard", ["warm0", "warm1"], subject_root=stack.root
    )
    quiet: list[float] = []
    loud: list[float] = []
    games: list[str] = []
    results: list[dict[str, Any]] = []
    cpu = {"quiet": Counter[str](), "flooded": Counter[str]()}
    for run in range(RUNS):
        start = _cpu(stack)
        took, played = await _tables(stack, f"q{run}")
        cpu["quiet"].update(_spent(start, _cpu(stack)))
        quiet.append(took)
        games += played
        flood = Flood(stack, "flooder")
        await flood.start()
        try:
            start = _cpu(stack)
            tables = asyncio.create_task(_tables(stack, f"f{run}"))
            victims = await _started(stack, {own_game, warm, *games})
            await flood.go([own_game, *victims])
            took, played = await tables
            cpu["flooded"].update(_spent(start, _cpu(stack)))
            results.append(await flood.result())
        finally:
            flood.kill()
        loud.append(took)
        games += played

    sent = sum(r["sent"] for r in results)
    answers = sum((Counter(r["answers"]) for r in results), Counter[str]())
    limited = answers["rate_limited"]
    print(
        f"flood: {TABLES} tables of {ROUNDS} rounds, quiet {_times(quiet)} s, flooded "
        f"{_times(loud)} s ({sum(loud) / sum(quiet):.2f}x); each flood "
        + ", ".join(f"{r['sent']} messages in {r['elapsed']:.2f} s" for r in results)
        + f"; {limited} of {sent} answered rate_limited; answers {dict(answers)}; "
        f"CPU seconds quiet {_cpus(cpu['quiet'])}, flooded {_cpus(cpu['flooded'])}"
    )
    assert answers.total() == sent  # every request answered, once
    assert sum(loud) <= 2 * sum(quiet), f"the flood slowed the tables: {quiet} -> {loud}"
    # past each asker's burst and rate, per answering subscription, everything is refused
    limits = Edge(s)  # the rate and burst the service processes read from the environment
    for r in results:
        handled = r["sent"] - r["answers"].get("rate_limited", 0)
        allowed = ANSWERING_ROUTES * (limits.burst + limits.rate * (r["elapsed"] + 1.0))
        assert handled <= allowed, (handled, allowed)
    assert limited > sent / 2
    # nothing it sent changed anything for anyone: its own table is as it was, every table is
    # the bots', played out cleanly, and no event anywhere is the flooder's
    assert await stack.store.stream_version(own_game) == before
    async with stack.store.engine.connect() as conn:
        streams = set(await conn.scalars(sa.text("SELECT stream_id FROM streams")))
        by_flooder = await conn.scalar(
            sa.text(
                "SELECT count(*) FROM events WHERE metadata->>'actor' = 'flooder' "
                "AND stream_id <> :own"
            ),
            {"own": own_game},
        )
    assert streams == {own_game, warm, *games}
    assert by_flooder == 0
    for game in games:
        check_stream(await stack.store.read_stream(game))
    # and the services logged no failure
    for name, process in stack.processes.items():
        bad = [line for line in process.tail if " ERROR " in line or "Traceback" in line]
        assert not bad, f"{name}: {bad[:5]}"


async def test_every_request_is_answered_once_rate_limited_or_not(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """A subject served by one service and heard by another (a sync: the projector answers,
    the gamemaster listens for presence) is answered once, also when it is rate limited."""
    caplog.set_level(logging.INFO)
    assert stack.host is not None
    edge = stack.host.edge
    edge.rate, edge.burst = 1.0, 5.0
    alice = await stack.client("alice")
    game = await alice.create("highcard", {}, seats=2)
    s = alice.subjects
    got: Counter[str] = Counter()
    codes: Counter[str] = Counter()

    async def count(msg: Any) -> None:
        got[msg.subject] += 1
        answer = orjson.loads(msg.data)
        codes["ok" if answer.get("ok") else answer["error"]["code"]] += 1

    nc = await nats.connect(stack.nats_url)
    await nc.subscribe(f"{s.inbox('alice')}.once.>", cb=count)
    requests = [
        (s.sync(game, "alice"), b'{"type":"sync"}'),
        (s.cmd(game, "alice"), b'{"type":"fold","id":"x"}'),
        (s.ack(game, "alice"), b'{"type":"ack","version":1}'),
        (s.lobby("get", "alice"), orjson.dumps({"game": game})),
    ]
    sent = 0
    checked = edge.counts.checked
    for subject, data in requests:
        for i in range(30):
            await nc.publish(subject, data, reply=f"{s.inbox('alice')}.once.{sent}.{i}")
            sent += 1
    await nc.flush()
    # every subscription that hears a request has checked it (a sync: two of them), and what
    # it published has reached the server and come back to this connection
    heard = sent + 30
    await wait_until(lambda: edge.counts.checked - checked >= heard, timeout=20)
    await stack.host.broker.connection.flush()
    await nc.flush()
    await wait_until(lambda: len(got) >= sent, timeout=20)
    await nc.close()
    assert len(got) == sent
    assert set(got.values()) == {1}, [k for k, v in got.items() if v > 1][:5]
    assert codes["rate_limited"] >= len(requests) * (30 - 6)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
