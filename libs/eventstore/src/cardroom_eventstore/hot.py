"""Raw asyncpg for the statements every command and every ack runs.

A statement through SQLAlchemy's async engine costs about twice the Python time of one on a
bare asyncpg connection (bench/README.md has the figures), and the commands, gate checks and
acks of every game pay it several times per transition. These statements therefore run on
small asyncpg pools of their own, written as SQL with named parameters (``:name``, as
SQLAlchemy's ``text``) and converted to asyncpg's ``$n``.

The pool does not reset a connection when it is returned (asyncpg's default costs a round
trip per use): these statements run outside transactions and set no session state.

Its connections use generic plans (``plan_cache_mode = force_generic_plan``). asyncpg prepares
every statement once per connection, but PostgreSQL's default then plans each execution
afresh whenever the generic plan's estimate looks worse than the custom plans of the first
five executions, which is always so for these statements: their arrays (``unnest`` of the
batch) and CTEs make the generic estimate pessimistic, and planning costs about as much as
executing. Every statement here is a lookup by key (the primary keys of streams, gates,
pending acks, commands, checkpoints, views, deadlines), so the connections also turn
sequential scans off (``enable_seqscan = off``): a generic plan is made once per connection,
with the statistics of that moment, and kept until the next ANALYZE of its tables. A service
that starts on a new database prepares its statements while the tables are empty, where a scan
looks cheapest; without the setting those plans would read ``events``, ``commands`` and
``pending_acks`` whole for every ack and group commit until autovacuum analyses them, a cost
growing with the log. ``tests/eventstore/test_generic_plans.py`` checks that every statement
finds its rows by index on an empty database and on a large one.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

import asyncpg
import sqlalchemy.exc
from asyncpg.pool import PoolConnectionProxy

from .stats import STATS

log = logging.getLogger("cardroom.eventstore")

T = TypeVar("T")
R = TypeVar("R")
CANCEL_AGAIN = 1.0  # seconds between cancellations of a batch task that has not ended

# Errors that say the database cannot be reached now, rather than that it refused a statement
# (the refusal is about what the statement carried, so one item of a batch may be the cause).
_UNREACHABLE: tuple[type[BaseException], ...] = (
    OSError,  # refused, reset, timed out (TimeoutError is one)
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.TooManyConnectionsError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,
    sqlalchemy.exc.DisconnectionError,
    sqlalchemy.exc.TimeoutError,  # no pooled connection came free
)


def unreachable(error: BaseException | None) -> bool:
    """True when ``error`` (or what caused it) says the database cannot be reached now: every
    statement would fail alike, so a batch is not retried item by item."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, _UNREACHABLE) or getattr(error, "connection_invalidated", False):
            return True
        error = error.__cause__ or error.__context__
    return False


_NAMED = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


class Statement:
    """A SQL text with ``:name`` parameters, run by asyncpg with positional ones."""

    def __init__(self, sql: str) -> None:
        self.names: list[str] = []

        def number(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self.names:
                self.names.append(name)
            return f"${self.names.index(name) + 1}"

        self.sql = _NAMED.sub(number, sql)

    def args(self, params: Mapping[str, Any]) -> list[Any]:
        return [params[name] for name in self.names]


#: Session settings of every hot connection (see the module's docstring).
GENERIC_PLANS = {"plan_cache_mode": "force_generic_plan", "enable_seqscan": "off"}


async def _no_reset(connection: asyncpg.Connection[asyncpg.Record]) -> None:
    """Nothing to reset: hot statements leave no session state behind."""


class HotPool:
    """A lazily opened asyncpg pool (``max_size`` connections) for :class:`Statement`s.

    A statement that meets a connection whose protocol state is broken runs once more on
    another: asyncpg raises ``InternalClientError`` ("cannot switch to state ...; another
    operation is in progress") before anything is sent, so the retry is safe (answering a
    command ``internal`` instead would stall its game).
    """

    def __init__(self, connect_args: Mapping[str, Any], max_size: int, name: str = "hot") -> None:
        settings = {**GENERIC_PLANS, **connect_args.get("server_settings", {})}
        self._connect_args = {**connect_args, "server_settings": settings}
        self._max_size = max_size
        self.name = name  # in the connection counts (stats.STATS)
        self._pool: asyncpg.Pool[asyncpg.Record] | None = None
        self._opening = asyncio.Lock()

    async def _get(self) -> asyncpg.Pool[asyncpg.Record]:
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    self._pool = await asyncpg.create_pool(
                        **self._connect_args,
                        min_size=0,
                        max_size=self._max_size,
                        reset=_no_reset,
                        init=self._opened,
                    )
        return self._pool

    async def _opened(self, connection: asyncpg.Connection[asyncpg.Record]) -> None:
        STATS.opened(self.name)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[PoolConnectionProxy[asyncpg.Record]]:
        pool = await self._get()
        async with pool.acquire() as conn:
            yield conn

    async def fetch(self, statement: Statement, params: Mapping[str, Any]) -> list[asyncpg.Record]:
        args = statement.args(params)
        return await self._run(lambda conn: conn.fetch(statement.sql, *args))

    async def fetchrow(
        self, statement: Statement, params: Mapping[str, Any]
    ) -> asyncpg.Record | None:
        args = statement.args(params)
        return await self._run(lambda conn: conn.fetchrow(statement.sql, *args))

    async def _run(self, call: Callable[[PoolConnectionProxy[asyncpg.Record]], Awaitable[R]]) -> R:
        for attempt in range(2):
            async with self.connection() as conn:
                try:
                    return await call(conn)
                except asyncpg.exceptions.InternalClientError:
                    conn.terminate()  # broken: it must not go back to the pool
                    STATS.lost(self.name)
                    if attempt:
                        raise
                except Exception as exc:
                    if unreachable(exc):
                        STATS.lost(self.name)
                    raise
        raise AssertionError("unreachable")

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()


class Batcher(Generic[T, R]):
    """Natural batching: items submitted while a batch is being written wait, and go together
    in the next one (at most ``max_size``), so a quiet moment costs no added wait and a busy
    one costs one statement for many items. ``run`` answers a batch with one result per item
    in order.

    The items of a batch come from different players and games, so one item must not fail the
    others: when ``run`` raises for a batch of several, each item is run again alone, in
    order, and gets its own result or error. Only when the database cannot be reached
    (:func:`unreachable`) does every item get the batch's error at once (alone, each would
    fail the same way); so does every item still waiting after one of them met it alone.

    An item submitted while nothing is being written is written at once by its own task, a
    batch of one: handing it to the batch task and back would cost two task switches on
    every command of a quiet room (the latency path). Items that arrive meanwhile wait for it and
    go together in the next batch, as ever: one statement in flight at a time (two would
    halve the batches under load, and double the statements).
    """

    def __init__(self, run: Callable[[list[T]], Awaitable[list[R]]], max_size: int) -> None:
        self._run = run
        self._max_size = max_size
        self._queue: list[tuple[T, asyncio.Future[R]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()  # set while no batch is being written
        self._idle.set()

    async def submit(self, item: T) -> R:
        if self._idle.is_set() and not self._queue:
            self._idle.clear()
            try:
                return (await self._run([item]))[0]
            finally:
                self._idle.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._loop(), name="batcher")
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        self._wake.set()
        return await future

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                await self._idle.wait()  # a submitter's own write: after it
                batch = self._queue[: self._max_size]
                del self._queue[: self._max_size]
                self._idle.clear()
                try:
                    await self._write(batch)
                except Exception as exc:  # a ``run`` that answered the wrong number of results
                    for _, future in batch:
                        _fail(future, exc)
                except BaseException:
                    for _, future in batch:
                        _fail(future, RuntimeError("stopped"))
                    raise
                finally:
                    self._idle.set()

    async def _write(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        """Run one batch and settle its futures (see the class: item by item if it fails)."""
        try:
            results = await self._run([item for item, _ in batch])
        except Exception as exc:
            if len(batch) == 1 or unreachable(exc):
                for _, future in batch:
                    _fail(future, exc)
                return
            log.warning(
                "a batch of %d failed (%s); writing its items one by one",
                len(batch),
                type(exc).__name__,
            )
            await self._write_each(batch)
            return
        for (_, future), result in zip(batch, results, strict=True):
            _answer(future, result)

    async def _write_each(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        down: Exception | None = None  # the database went away meanwhile: the rest fail so
        for item, future in batch:
            if down is not None:
                _fail(future, down)
                continue
            try:
                result = (await self._run([item]))[0]
            except Exception as exc:
                if unreachable(exc):
                    down = exc
                _fail(future, exc)
            else:
                _answer(future, result)

    async def close(self) -> None:
        """Stop; whatever still waits gets an error. The batch task is cancelled again
        until it ends: Python 3.11's ``asyncio.wait_for`` inside a driver can lose a
        cancellation that comes as its future completes, and the write then goes on."""
        task, self._task = self._task, None
        while task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=CANCEL_AGAIN)
        for _, future in self._queue:
            if not future.done():
                future.set_exception(RuntimeError("stopped"))
        self._queue.clear()


# (a submitter that stopped waiting has a done future: nobody to answer)
def _answer(future: asyncio.Future[R], result: R) -> None:
    if not future.done():
        future.set_result(result)


def _fail(future: asyncio.Future[R], error: Exception) -> None:
    if not future.done():
        future.set_exception(error)
