"""deadlines of the timers service: one row per (game, key), and the version they belong to

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26 12:00:00

``deadlines`` holds what happens by itself in each game and when (the game's own deadline,
the turn timeout, the ack timeout); the gamemaster writes it after every append, the timers
service fires the due rows. ``deadline_versions`` records, per game, the stream version that
``deadlines`` was last evaluated for, so that the timers service can find a game whose
evaluation a crash skipped and ask the gamemaster to evaluate it again. See
``cardroom_timers`` for the contract.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "deadlines",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("due_at", _TZ, nullable=False),
        sa.Column("fired_at", _TZ, nullable=True),
        sa.Column("claimed_until", _TZ, nullable=True),
        sa.PrimaryKeyConstraint("game_id", "key", name="pk_deadlines"),
    )
    op.create_index(
        "ix_deadlines_unfired_due_at",
        "deadlines",
        ["due_at"],
        postgresql_where=sa.text("fired_at IS NULL"),
    )
    op.create_table(
        "deadline_versions",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("checked_at", _TZ, server_default=sa.func.now(), nullable=False),
        sa.PrimaryKeyConstraint("game_id", name="pk_deadline_versions"),
    )
    op.create_index(
        "ix_deadline_versions_active",
        "deadline_versions",
        ["game_id"],
        postgresql_where=sa.text("active"),
    )


def downgrade() -> None:
    op.drop_index("ix_deadline_versions_active", table_name="deadline_versions")
    op.drop_table("deadline_versions")
    op.drop_index("ix_deadlines_unfired_due_at", table_name="deadlines")
    op.drop_table("deadlines")
