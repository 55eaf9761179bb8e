"""The event store: the events of every game, and everything owed with them, in PostgreSQL.

Only this package reads or writes its tables; services call it. One entry point,
:class:`EventStore`, composes one module per concern:

- :mod:`.appends`: appends (one stream's batch, a group commit, a new stream), each with the
  command's reply, the pending acknowledgements and their gate, in one statement;
- :mod:`.log`: a stream's events, the global order (``read_all``, ``behind``), and waking
  up when an append commits (LISTEN/NOTIFY);
- :mod:`.gates`: acknowledgements, the gates they hold, excuses, releases and handled marks;
- :mod:`.tracking`: followers' checkpoints, committed with their output;
- :mod:`.deadlines`: the games' deadlines, written by the gamemaster, fired by the timers;
- :mod:`.readmodels`, :mod:`.signatures`, :mod:`.status`: the projector's read models,
  Macaua's transition signatures, and a running cardroom's figures.

:mod:`.interface` states what every store provides (``Store``); :mod:`.memory` has the same
in memory (``InMemoryEventStore``) for tests of the services without a server, and a contract
suite asserts both behave alike.

SQL. Statements on the players' path (what every command and every ack runs: appends, the
gate check, acks, command replies, the projector's writes, deadline writes) are
:class:`~cardroom_eventstore.hot.Statement`s run by asyncpg on the store's own pools: going
through SQLAlchemy's engine costs about twice their Python time (bench/README.md). Every
other statement is SQLAlchemy Core on the engine: table expressions for lookups, ``text()``
where a statement is clearer as SQL. Both write SQL with ``:name`` parameters.

Durability. Events, acknowledgements and everything owed with them commit durably. Derived
data whose loss its reader repairs (deadlines, a gate's handled mark, the projector's output
with its checkpoints, the relay's checkpoint) is written on the ``relaxed`` pool, whose
connections are set not to wait for the WAL flush: the one way a commit here skips it.
"""

from typing import TYPE_CHECKING, Any

from .model import (
    SHOWN,
    TO,
    AckResult,
    Append,
    ConcurrencyError,
    DuplicateCommand,
    EventStoreError,
    NewEvent,
    RecordedEvent,
)
from .store import EventStore
from .tracking import RelaxedTracking, Tracking, TrackingMany

if TYPE_CHECKING:
    from .memory import InMemoryEventStore


def __getattr__(name: str) -> Any:
    # the in-memory twin is for tests: a service process never imports it
    if name == "InMemoryEventStore":
        from .memory import InMemoryEventStore

        return InMemoryEventStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SHOWN",
    "TO",
    "AckResult",
    "Append",
    "ConcurrencyError",
    "DuplicateCommand",
    "EventStore",
    "EventStoreError",
    "InMemoryEventStore",
    "NewEvent",
    "RecordedEvent",
    "RelaxedTracking",
    "Tracking",
    "TrackingMany",
]
