"""drop snapshots: a game is loaded from its events (and the gamemaster's cache)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 06:00:00

``snapshots`` was written by nothing but tests and read by nothing. Downgrade creates the
empty table again, as 0001 made it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_table("snapshots")


def downgrade() -> None:
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
