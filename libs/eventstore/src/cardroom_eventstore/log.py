"""The log: a stream's events, the global order, and waking up when an append commits.

Positions may have gaps (rolled-back appends), but an event never becomes visible below a
position already read (:mod:`.appends`), so a follower that reads "after the last position
seen" skips none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from sqlalchemy import func, select, text

from .appends import NOTIFY_CHANNEL
from .asyncengine import AsyncEngine
from .hot import Statement
from .jsontext import json_value
from .model import RecordedEvent
from .schema import events, streams
from .stats import STATS

_EVENT_COLUMNS = (
    events.c.position,
    events.c.stream_id,
    events.c.stream_type,
    events.c.version,
    events.c.event_id,
    events.c.type,
    events.c.data,
    events.c["metadata"],
    events.c.recorded_at,
)

#: Per game, each event up to a version (``:upto``, one per game of ``:games``) as one row,
#: its JSON as text: a range of the (stream_id, version) index per game (LATERAL; without its
#: ORDER BY the planner turns this into a join that scans the whole events table). A game's
#: rows come in version order. Run on a connection of one's own by a rebuild's worker
#: processes (``cardroom rebuild projector``), and by the floor of bench/bench_replay.py.
HISTORIES = Statement(
    """
SELECT d.game, h.stream_type, h.version, h.type, h.data, h.sent_to
FROM unnest(CAST(:games AS text[]), CAST(:upto AS integer[])) AS d(game, upto)
CROSS JOIN LATERAL (
  SELECT e.stream_type, e.version, e.type, CAST(e.data AS text) AS data,
         CAST(e.metadata -> 'to' AS text) AS sent_to
  FROM events e WHERE e.stream_id = d.game AND e.version <= d.upto
  ORDER BY e.version
) AS h
"""
)

#: Streams by type, of a list of any length (one array, not a parameter per stream)
_STREAM_TYPES = text(
    """
SELECT stream_type, count(*) FROM streams
WHERE stream_id = ANY(CAST(:ids AS text[]))
GROUP BY stream_type
"""
)

#: Per game: its type and its events as (version, the event's data with its ``type``, its
#: ``metadata.to``; None when it has none), in version order.
History = dict[str, tuple[str, list[tuple[int, dict[str, Any], list[str] | None]]]]


async def read_histories(
    conn: asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record],
    upto: dict[str, int],
) -> History:
    """Each game's events up to ``upto[game]`` (:data:`HISTORIES`), decoded, in version
    order. Decoded as the rows come, in one pass (a rebuild's hot loop, one pass per event
    fewer than grouping the rows first); the addressees are a few distinct lists, decoded
    once each and shared, so they are to be read only."""
    games = list(upto)
    history: History = {}
    addressees: dict[str, list[str]] = {}
    rows = await conn.fetch(
        HISTORIES.sql, *HISTORIES.args({"games": games, "upto": [upto[g] for g in games]})
    )
    game_at: str | None = None  # a game's rows come together: its list is looked up once
    read: list[tuple[int, dict[str, Any], list[str] | None]] = []
    for game, stream_type, version, type_, data, sent_to in rows:
        if game != game_at:
            found = history.get(game)
            if found is None:
                found = history[game] = (stream_type, [])
            game_at, read = game, found[1]
        event = json_value(data)
        event["type"] = type_  # {**event, "type": type_} without the copy: it is ours
        to = None
        if sent_to is not None:
            to = addressees.get(sent_to)
            if to is None:
                to = addressees[sent_to] = json_value(sent_to)
        read.append((version, event, to))
    for _, read in history.values():
        read.sort(key=itemgetter(0))  # in order already (one pass), unless read otherwise
    return history


class Log:
    """The reading part of :class:`~cardroom_eventstore.EventStore`."""

    _autocommit: AsyncEngine
    _appends_heard: AppendListener

    async def read_stream(
        self, stream_id: str, from_version: int = 1, to_version: int | None = None
    ) -> list[RecordedEvent]:
        """The stream's events with from_version <= version <= to_version, in version order."""
        query = select(*_EVENT_COLUMNS).where(
            events.c.stream_id == stream_id, events.c.version >= from_version
        )
        if to_version is not None:
            query = query.where(events.c.version <= to_version)
        query = query.order_by(events.c.version)
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [RecordedEvent(*row) for row in rows]

    async def stream_version(self, stream_id: str) -> int:
        """The stream's current version; 0 when it does not exist."""
        async with self._autocommit.connect() as conn:
            version = await conn.scalar(
                select(streams.c.version).where(streams.c.stream_id == stream_id)
            )
        return 0 if version is None else int(version)

    async def stream_types(self, stream_ids: Sequence[str]) -> dict[str, int]:
        """The types of the streams ``stream_ids`` (a game's is its game type), each with how
        many of them are of it; streams that do not exist are left out."""
        params = {"ids": list(stream_ids)}
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(_STREAM_TYPES, params)).all()
        return {str(t): int(n) for t, n in rows}

    async def behind(self, after_position: int, cap: int = 100_000) -> tuple[int, datetime | None]:
        """How far a follower at ``after_position`` is behind: the events committed after it
        (counted up to ``cap``) and the commit time of the first of them (None if none)."""
        later = select(events.c.position).where(events.c.position > after_position)
        count = select(func.count()).select_from(later.limit(cap).subquery())
        first = (
            select(events.c.recorded_at)
            .where(events.c.position > after_position)
            .order_by(events.c.position)
            .limit(1)
        )
        async with self._autocommit.connect() as conn:
            n = int(await conn.scalar(count) or 0)
            oldest = await conn.scalar(first) if n else None
        return n, oldest

    async def read_all(self, after_position: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """Up to ``limit`` events with position > after_position, in position (commit) order.

        Positions may have gaps (rolled-back appends), but an event never becomes visible
        below a position already read, so tailing "after the last position seen" skips none.
        """
        query = (
            select(*_EVENT_COLUMNS)
            .where(events.c.position > after_position)
            .order_by(events.c.position)
            .limit(limit)
        )
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [RecordedEvent(*row) for row in rows]

    # The timeout is part of the contract (a tailing reader re-reads at least that often).
    async def wait_for_append(self, timeout: float) -> bool:
        """Wait until an append commits (LISTEN on ``cardroom_events``), at most ``timeout`` s.

        True when an append was notified since the previous call returned (possibly before
        this call), or when the listener connection had died and was re-established (appends
        may have been missed: read again). False on timeout. The first call starts listening.
        """
        return await self._appends_heard.wait(timeout)


class AppendListener:
    """The LISTEN connection on :data:`~cardroom_eventstore.appends.NOTIFY_CHANNEL`, opened
    on the first wait and again after it died (a death wakes the waiters: appends may have
    been missed)."""

    def __init__(self, connect_args: dict[str, Any]) -> None:
        self._connect_args = connect_args
        self._listener: asyncpg.Connection[asyncpg.Record] | None = None
        self._listener_lock = asyncio.Lock()
        self._listened_before = False
        self._generation = 0
        self._seen_generation = 0
        self._changed = asyncio.Event()

    async def wait(self, timeout: float) -> bool:
        """See :meth:`Log.wait_for_append`."""
        reconnected = await self._ensure_listener()
        if reconnected or self._generation != self._seen_generation:
            self._seen_generation = self._generation
            return True
        changed = self._changed
        try:
            async with asyncio.timeout(timeout):
                await changed.wait()
        except TimeoutError:
            return False
        # Woken by a notification or by the listener's death; in the latter case appends may
        # have been missed (True either way) and listening resumes before returning.
        await self._ensure_listener()
        self._seen_generation = self._generation
        return True

    async def _ensure_listener(self) -> bool:
        """Open the listener connection if needed; True if it replaced one that died."""
        if self._listener is not None and not self._listener.is_closed():
            return False
        async with self._listener_lock:
            if self._listener is not None and not self._listener.is_closed():
                return False
            listener = await asyncpg.connect(**self._connect_args)
            try:
                await listener.add_listener(NOTIFY_CHANNEL, self._on_notify)
            except BaseException:
                await listener.close()
                raise
            listener.add_termination_listener(self._on_terminate)
            STATS.opened("listener")
            self._listener = listener
            reconnected = self._listened_before
            self._listened_before = True
            return reconnected

    def _wake(self) -> None:
        self._generation += 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _on_notify(
        self,
        connection: asyncpg.Connection[asyncpg.Record],
        pid: int,
        channel: str,
        payload: object,
    ) -> None:
        self._wake()

    def _on_terminate(self, connection: asyncpg.Connection[asyncpg.Record]) -> None:
        # Wake the waiters: the next wait_for_append reconnects and reports a possible miss.
        if connection is self._listener:
            STATS.lost("listener")
            self._wake()

    async def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None and not listener.is_closed():
            await listener.close()
