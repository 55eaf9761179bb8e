"""Rebuilding analytics from the first event, and checking it against the live tables.

:func:`read_events` reads the whole JetStream event stream from its first message (an
ephemeral consumer: the live one is not disturbed). :func:`rebuild` then, in one
transaction holding the analytics lock (the live consumer waits):

1. reads the live tables (the snapshot to compare with);
2. folds every event up to each game's live checkpoint into an empty ledger;
3. deletes every analytics row and writes the rebuilt ones;
4. compares them with the snapshot, and commits, or rolls back when they differ (unless
   ``repair``: then the rebuilt rows, the fold of the events, replace the live ones).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from cardroom_runtime.nats import connect
from cardroom_wire import Subjects
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from sqlalchemy.ext.asyncio import AsyncEngine

from . import db
from .fold import Ledger
from .records import BadRecord, Record

FETCH = 1000


async def read_events(nats_url: str, subjects: Subjects, *, timeout: float = 10.0) -> list[Record]:
    """Every event record on the stream, first to last (as of the call), in stream order."""
    nc = await connect(nats_url, f"cardroom-analytics-rebuild-{subjects.root}")
    try:
        js = nc.jetstream(timeout=timeout)
        info = await js.stream_info(subjects.events_stream)
        last = info.state.last_seq
        if not info.state.messages:
            return []
        sub = await js.pull_subscribe(
            subjects.events_all,
            stream=subjects.events_stream,
            config=ConsumerConfig(
                deliver_policy=DeliverPolicy.ALL,
                ack_policy=AckPolicy.NONE,
                inactive_threshold=60.0,
                mem_storage=True,
            ),
        )
        out: list[Record] = []
        try:
            seq = 0
            while seq < last:
                for msg in await sub.fetch(FETCH, timeout=timeout):
                    seq = msg.metadata.sequence.stream
                    if seq > last:
                        break
                    with contextlib.suppress(BadRecord):  # the live consumer drops them too
                        out.append(Record.decode(msg.data))
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return out
    finally:
        await nc.close()


@dataclass
class RebuildReport:
    events: int = 0  # records read
    applied: int = 0  # records folded (at or below the live checkpoints)
    games: int = 0
    rows: int = 0  # rows compared
    differences: list[str] = field(default_factory=list)
    replaced: bool = False  # the rebuilt rows were committed
    seconds: float = 0.0

    @property
    def equal(self) -> bool:
        return not self.differences


class _Rollback(Exception):
    pass


def fold(records: Sequence[Record], checkpoints: dict[str, int] | None = None) -> Ledger:
    """Fold records into an empty ledger; with ``checkpoints``, only up to those versions."""
    ledger = Ledger()
    for record in records:
        if checkpoints is None or record.version <= checkpoints.get(record.game, 0):
            ledger.apply(record)
    return ledger


async def rebuild(
    engine: AsyncEngine,
    source: Callable[[], Awaitable[Sequence[Record]]],
    *,
    repair: bool = False,
) -> RebuildReport:
    """Drop, rebuild from the first event and compare (see the module documentation)."""
    began = time.perf_counter()
    report = RebuildReport()
    try:
        async with engine.begin() as conn:
            await db.lock(conn)
            live = await db.snapshot(conn)
            checkpoints = {key[0]: row["version"] for key, row in live["analytics_games"].items()}
            records = await source()  # read under the lock: the live tables cannot move on
            ledger = fold(records, checkpoints)
            report.events, report.applied = len(records), ledger.applied
            report.games = len(ledger.games)
            ledger.changed_games = set(ledger.games)
            ledger.changed_types = set(ledger.types)
            ledger.changed_ratings = set(ledger.ratings)
            await db.clear(conn)
            await db.save(conn, ledger)
            rebuilt = await db.snapshot(conn)
            report.rows = sum(len(rows) for rows in rebuilt.values())
            report.differences = db.differences(live, rebuilt)
            if report.differences and not repair:
                raise _Rollback
            report.replaced = True
    except _Rollback:
        pass
    report.seconds = time.perf_counter() - began
    return report
