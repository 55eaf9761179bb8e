"""Tracking records (checkpoints): how far a follower has processed the global order.

A follower's output and its checkpoint commit in one transaction (exactly-once effects):
:meth:`Checkpoints.tracking` locks one record on a SQLAlchemy connection,
:meth:`Checkpoints.tracking_many` several (a projector's batch of games) on a raw asyncpg
connection of the relaxed pool. A commit that need not wait for the WAL flush is one on
the relaxed pool, whose connections are set so (``EventStore.relaxed``): one record too,
with ``tracking(name, durable=False)``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Literal, overload

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from sqlalchemy import func, select, text, update

from .asyncengine import AsyncConnection, AsyncEngine
from .hot import HotPool, Statement
from .schema import checkpoints

# Creates the tracking record on first use; ON CONFLICT DO UPDATE locks the row either way, so
# two trackers of one name serialise and the second starts from the first one's checkpoint.
_TRACK = text(
    """
INSERT INTO checkpoints (name, position) VALUES (CAST(:name AS text), 0)
ON CONFLICT (name) DO UPDATE SET position = checkpoints.position
RETURNING position
"""
)

# The same for many names at once (in the order given: sorted by the caller).
_TRACK_MANY = Statement(
    """
INSERT INTO checkpoints (name, position)
SELECT n.name, 0 FROM unnest(CAST(:names AS text[])) WITH ORDINALITY AS n(name, i) ORDER BY n.i
ON CONFLICT (name) DO UPDATE SET position = checkpoints.position
RETURNING name, position
"""
)

_ADVANCE_MANY = Statement(
    """
UPDATE checkpoints c SET position = u.position, updated_at = now()
FROM unnest(CAST(:names AS text[]), CAST(:positions AS bigint[])) AS u(name, position)
WHERE c.name = u.name
"""
)


class TrackingMany:
    """Several tracking records locked in one transaction (see :meth:`EventStore.tracking_many`).

    ``positions`` maps each name to its checkpoint; :meth:`advance` moves some of them, in the
    same transaction as the caller's writes on ``conn``.
    """

    def __init__(
        self, conn: PoolConnectionProxy[asyncpg.Record], positions: dict[str, int]
    ) -> None:
        self.conn = conn
        self.positions = positions

    async def advance(self, moves: dict[str, int]) -> None:
        for name, position in moves.items():
            if position < self.positions[name]:
                raise ValueError(f"checkpoint {name!r} cannot go back from {self.positions[name]}")
        if moves:
            names = sorted(moves)
            params = {"names": names, "positions": [moves[n] for n in names]}
            await self.conn.execute(_ADVANCE_MANY.sql, *_ADVANCE_MANY.args(params))
            self.positions.update(moves)


class Tracking:
    """A projection's tracking record, inside the projection's own transaction.

    ``conn`` is the transaction for the projection's writes; ``position`` is the checkpoint
    (locked for the transaction); :meth:`advance` moves it in the same transaction, so the
    projection's effects and its checkpoint commit, or roll back, together.
    """

    def __init__(self, conn: AsyncConnection, name: str, position: int) -> None:
        self.conn = conn
        self.name = name
        self.position = position

    async def advance(self, position: int) -> None:
        """Record that everything up to ``position`` is processed (commits with the block)."""
        if position < self.position:
            raise ValueError(f"checkpoint {self.name!r} cannot go back from {self.position}")
        await self.conn.execute(
            update(checkpoints)
            .where(checkpoints.c.name == self.name)
            .values(position=position, updated_at=func.now())
        )
        self.position = position


class RelaxedTracking:
    """One tracking record locked in a transaction on the relaxed pool, whose commit does
    not wait for the WAL flush (see :meth:`Checkpoints.tracking`): ``conn`` is that
    transaction's asyncpg connection."""

    def __init__(self, many: TrackingMany, name: str) -> None:
        self.conn = many.conn
        self.name = name
        self.position = many.positions[name]
        self._many = many

    async def advance(self, position: int) -> None:
        """Record that everything up to ``position`` is processed (commits with the block)."""
        await self._many.advance({self.name: position})
        self.position = position


class Checkpoints:
    """The tracking part of :class:`~cardroom_eventstore.EventStore`."""

    engine: AsyncEngine
    _autocommit: AsyncEngine
    relaxed: HotPool

    async def checkpoint(self, name: str) -> int:
        """The position recorded under ``name``; 0 when none."""
        query = select(checkpoints.c.position).where(checkpoints.c.name == name)
        async with self._autocommit.connect() as conn:
            position = await conn.scalar(query)
        return 0 if position is None else int(position)

    async def checkpoints(self, prefix: str) -> list[tuple[str, int]]:
        """Every tracking record whose name starts with ``prefix``, by name."""
        query = (
            select(checkpoints.c.name, checkpoints.c.position)
            .where(checkpoints.c.name.startswith(prefix, autoescape=True))
            .order_by(checkpoints.c.name)
        )
        async with self._autocommit.connect() as conn:
            return [(str(n), int(p)) for n, p in (await conn.execute(query)).all()]

    @overload
    def tracking(
        self, name: str, *, durable: Literal[True] = ...
    ) -> AbstractAsyncContextManager[Tracking]: ...

    @overload
    def tracking(
        self, name: str, *, durable: bool = ...
    ) -> AbstractAsyncContextManager[Tracking | RelaxedTracking]: ...

    def tracking(
        self, name: str, *, durable: bool = True
    ) -> AbstractAsyncContextManager[Tracking | RelaxedTracking]:
        """A transaction with the tracking record ``name`` locked; see :class:`Tracking`.

        Commits when the block ends, rolls back (checkpoint included) when it raises.
        ``durable=False``: on the relaxed pool (a :class:`RelaxedTracking`), whose commit
        does not wait for the WAL flush, for a follower whose effects are idempotent
        elsewhere (the relay: JetStream drops what it publishes again), so that losing the
        checkpoint in a database crash only means doing it again.
        """
        return self._durable(name) if durable else self._relaxed(name)

    @asynccontextmanager
    async def _durable(self, name: str) -> AsyncIterator[Tracking]:
        async with self.engine.begin() as conn:
            position = await conn.scalar(_TRACK, {"name": name})
            yield Tracking(conn, name, int(position or 0))

    @asynccontextmanager
    async def _relaxed(self, name: str) -> AsyncIterator[RelaxedTracking]:
        async with self.tracking_many([name]) as many:
            yield RelaxedTracking(many, name)

    @asynccontextmanager
    async def tracking_many(self, names: Collection[str]) -> AsyncIterator[TrackingMany]:
        """:meth:`tracking` for several records in one transaction (a batch of projections),
        on a raw asyncpg connection of the relaxed pool: projections are derived data, and
        a commit lost in a crash loses their output and checkpoints together.

        The records are locked in name order, so two batches over the same names cannot
        deadlock; all of them commit, or roll back, together.
        """
        ordered = sorted(set(names))
        async with self.relaxed.connection() as conn, conn.transaction():
            rows = await conn.fetch(_TRACK_MANY.sql, *_TRACK_MANY.args({"names": ordered}))
            yield TrackingMany(conn, {str(r["name"]): int(r["position"]) for r in rows})
