"""The PostgreSQL event store (SQLAlchemy Core + asyncpg)."""

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
from .store import (
    APPEND_LOCK_KEY,
    NOT_GATING,
    NOTIFY_CHANNEL,
    EventStore,
    Tracking,
    TrackingMany,
)

__all__ = [
    "APPEND_LOCK_KEY",
    "NOTIFY_CHANNEL",
    "NOT_GATING",
    "SHOWN",
    "TO",
    "AckResult",
    "Append",
    "ConcurrencyError",
    "DuplicateCommand",
    "EventStore",
    "EventStoreError",
    "NewEvent",
    "RecordedEvent",
    "Tracking",
    "TrackingMany",
]
