"""The PostgreSQL event store (SQLAlchemy Core + asyncpg)."""

from .appends import APPEND_LOCK_KEY, NOTIFY_CHANNEL
from .gates import NOT_GATING
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
from .tracking import Tracking, TrackingMany

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
