"""event store: events, streams, pending acks, gates, commands, snapshots, checkpoints

Revision ID: 0001
Revises:
Create Date: 2025-11-25 21:30:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_EMPTY_JSON = sa.text("'{}'::jsonb")


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("position", sa.BigInteger(), sa.Identity(always=True), nullable=False),
        sa.Column("stream_id", sa.Text(), nullable=False),
        sa.Column("stream_type", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Uuid(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("data", postgresql.JSONB(), nullable=False),
        sa.Column("metadata", postgresql.JSONB(), server_default=_EMPTY_JSON, nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.func.now(),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("position", name="pk_events"),
        sa.UniqueConstraint("event_id", name="uq_events_event_id"),
        sa.UniqueConstraint("stream_id", "version", name="uq_events_stream_id_version"),
    )
    op.create_table(
        "streams",
        sa.Column("stream_id", sa.Text(), nullable=False),
        sa.Column("stream_type", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("stream_id", name="pk_streams"),
    )
    op.create_table(
        "pending_acks",
        sa.Column("stream_id", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("gate_version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("stream_id", "version", "player_id", name="pk_pending_acks"),
    )
    op.create_table(
        "gates",
        sa.Column("stream_id", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("remaining", sa.Integer(), nullable=False),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("handled", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.PrimaryKeyConstraint("stream_id", "version", name="pk_gates"),
        sa.CheckConstraint("remaining >= 0", name=op.f("ck_gates_remaining_not_negative")),
    )
    op.create_index(
        "ix_gates_unhandled_releases",
        "gates",
        ["released_at"],
        postgresql_where=sa.text("remaining = 0 AND NOT handled"),
    )
    op.create_table(
        "commands",
        sa.Column("stream_id", sa.Text(), nullable=False),
        sa.Column("command_id", sa.Text(), nullable=False),
        sa.Column("reply", postgresql.JSONB(), server_default=_EMPTY_JSON, nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.func.now(),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("stream_id", "command_id", name="pk_commands"),
    )
    op.create_table(
        "snapshots",
        sa.Column("stream_id", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", postgresql.JSONB(), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.func.now(),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("stream_id", name="pk_snapshots"),
    )
    op.create_table(
        "checkpoints",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("name", name="pk_checkpoints"),
    )


def downgrade() -> None:
    op.drop_table("checkpoints")
    op.drop_table("snapshots")
    op.drop_table("commands")
    op.drop_index("ix_gates_unhandled_releases", table_name="gates")
    op.drop_table("gates")
    op.drop_table("pending_acks")
    op.drop_table("streams")
    op.drop_table("events")
