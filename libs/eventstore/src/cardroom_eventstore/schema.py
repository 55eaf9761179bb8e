"""The event store's tables, as SQLAlchemy Core metadata.

Alembic owns the schema (``migrations/versions``); this module describes the same tables so
queries can be built from them and a test can prove that the migrations and this module agree.

No foreign keys: every row is written by :class:`cardroom_eventstore.EventStore` in the same
transaction as the stream row it belongs to, and a foreign key would cost an index probe and a
row lock per inserted event on the hottest path.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Identity,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    Uuid,
    false,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

NAMING_CONVENTION = {
    "pk": "pk_%(table_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

#: Every event of every stream; ``position`` is the global (commit) order.
events = Table(
    "events",
    metadata,
    Column("position", BigInteger, Identity(always=True), nullable=False),
    Column("stream_id", Text, nullable=False),
    Column("stream_type", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("event_id", Uuid(as_uuid=True), nullable=False),
    Column("type", Text, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("recorded_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("position"),
    UniqueConstraint("event_id"),
    UniqueConstraint("stream_id", "version"),
)

#: One row per stream: its type and current version (the optimistic-concurrency arbiter).
streams = Table(
    "streams",
    metadata,
    Column("stream_id", Text, nullable=False),
    Column("stream_type", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("stream_id"),
)

#: The acknowledgements still owed: one row per (event version, addressee).
pending_acks = Table(
    "pending_acks",
    metadata,
    Column("stream_id", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("player_id", Text, nullable=False),
    Column("gate_version", Integer, nullable=False),
    PrimaryKeyConstraint("stream_id", "version", "player_id"),
)

#: What each addressee acknowledged a transition of a game that signs its transitions with
#: (Macaua): its signature over the transition, or its rejection. Written by the acktracker
#: with the ack (only while the ack is owed), read by the gamemaster before it moves on.
transition_signatures = Table(
    "transition_signatures",
    metadata,
    Column("stream_id", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("player_id", Text, nullable=False),
    Column("signature", Text, nullable=True),
    Column("rejection", JSONB, nullable=True),
    Column("recorded_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("stream_id", "version", "player_id"),
)

#: One gate per appended batch with addressees; released when ``remaining`` reaches 0.
gates = Table(
    "gates",
    metadata,
    Column("stream_id", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("remaining", Integer, nullable=False),
    Column("released_at", DateTime(timezone=True), nullable=True),
    Column("handled", Boolean, nullable=False, server_default=false()),
    PrimaryKeyConstraint("stream_id", "version"),
    CheckConstraint("remaining >= 0", name="remaining_not_negative"),
    Index(
        "ix_gates_unhandled_releases",
        "released_at",
        postgresql_where=text("remaining = 0 AND NOT handled"),
    ),
)

#: Command ids already handled per stream, with the reply first given (idempotency).
commands = Table(
    "commands",
    metadata,
    Column("stream_id", Text, nullable=False),
    Column("command_id", Text, nullable=False),
    Column("reply", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("recorded_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("stream_id", "command_id"),
)

#: Tracking records: how far a projection or relay has processed the global order.
checkpoints = Table(
    "checkpoints",
    metadata,
    Column("name", Text, nullable=False),
    Column("position", BigInteger, nullable=False, server_default=text("0")),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("name"),
)

__all__ = [
    "checkpoints",
    "commands",
    "events",
    "gates",
    "metadata",
    "pending_acks",
    "streams",
]
