"""The event store: one entry point over its parts and its connections.

:class:`EventStore` composes the parts, one module each: :mod:`.appends`, :mod:`.log`,
:mod:`.gates`, :mod:`.tracking`, :mod:`.readmodels` and :mod:`.signatures`, and holds the
connections they share: a SQLAlchemy engine, two asyncpg pools for
:class:`~cardroom_eventstore.hot.Statement`s (``hot``, and ``relaxed`` for derived data) and
the LISTEN connection of :mod:`.log`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event as sa_event

from .appends import Appends
from .asyncengine import AsyncEngine, create_async_engine
from .deadlines import Deadlines
from .gates import Gates
from .hot import HotPool
from .log import AppendListener, Log
from .readmodels import ReadModels
from .signatures import Signatures
from .stats import STATS
from .tracking import Checkpoints

#: Connections of the hot statements' pool, besides the SQLAlchemy engine's (see :mod:`.hot`).
HOT_POOL_SIZE = 8
RELAXED_POOL_SIZE = 4

# connect() arguments SQLAlchemy's asyncpg dialect consumes itself.
_DIALECT_ONLY_ARGS = (
    "prepared_statement_cache_size",
    "prepared_statement_name_func",
    "async_creator_fn",
    "async_fallback",
)


def _count_connections(engine: AsyncEngine) -> None:
    """Count the engine's connections opened and invalidated (stats.STATS), once per engine."""
    sync = engine.sync_engine
    if sa_event.contains(sync, "connect", _engine_opened):
        return
    sa_event.listen(sync, "connect", _engine_opened)
    sa_event.listen(sync, "invalidate", _engine_lost)


def _engine_opened(*_: Any) -> None:
    STATS.opened("engine")


def _engine_lost(*_: Any) -> None:
    STATS.lost("engine")


def _listener_args(engine: AsyncEngine, connect_args: dict[str, Any]) -> dict[str, Any]:
    """asyncpg.connect() arguments for the dedicated LISTEN connection, as the engine's."""
    _, params = engine.dialect.create_connect_args(engine.url)
    merged = {**params, **connect_args}
    return {k: v for k, v in merged.items() if k not in _DIALECT_ONLY_ARGS}


class EventStore(Appends, Log, Gates, Checkpoints, ReadModels, Signatures):
    """The event store over one SQLAlchemy async engine (asyncpg)."""

    def __init__(
        self,
        engine: AsyncEngine,
        listener_args: dict[str, Any] | None = None,
        hot_pool_size: int = HOT_POOL_SIZE,
    ) -> None:
        #: Public, so other code can run its own transactions on the same database.
        self.engine = engine
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._listener_args = (
            _listener_args(engine, {}) if listener_args is None else dict(listener_args)
        )
        #: The hot statements' own pool (appends to running games, gate checks, acks).
        self.hot = HotPool(self._listener_args, hot_pool_size)
        #: The same for derived data whose loss in a database crash is repaired by whoever
        #: reads it (deadlines, the handled mark of a gate): commits that do not wait for
        #: the WAL flush. Never for events, acks or anything owed with them.
        self.relaxed = HotPool(
            {**self._listener_args, "server_settings": {"synchronous_commit": "off"}},
            min(RELAXED_POOL_SIZE, hot_pool_size),
            name="relaxed",
        )
        self._appends_heard = AppendListener(self._listener_args)
        #: The games' deadlines (the gamemaster's writes, the timers service's claims).
        self.deadlines = Deadlines(self.relaxed, self._autocommit)
        _count_connections(engine)

    @classmethod
    async def connect(
        cls, url: str, hot_pool_size: int = HOT_POOL_SIZE, **engine_kwargs: Any
    ) -> EventStore:
        """An event store on ``url`` (``postgresql+asyncpg://...``); kwargs go to the engine."""
        engine = create_async_engine(url, **engine_kwargs)
        args = _listener_args(engine, engine_kwargs.get("connect_args", {}))
        return cls(engine, args, hot_pool_size)

    @property
    def connect_args(self) -> dict[str, Any]:
        """``asyncpg.connect()`` arguments for a connection of one's own to this store's
        database (a worker process's, say)."""
        return dict(self._listener_args)

    async def close(self) -> None:
        """Close the listener connection and dispose of the engine's pool."""
        await self._appends_heard.close()
        await self.hot.close()
        await self.relaxed.close()
        await self.engine.dispose()
