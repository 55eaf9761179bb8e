"""read models of the projector: notifications, views, tables

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 22:00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "notifications",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("payload", postgresql.JSONB(), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "player_id", "seq"),
    )
    op.create_index(
        "notifications_by_version", "notifications", ["game_id", "player_id", "version"]
    )
    op.create_table(
        "views",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("view", postgresql.JSONB(), nullable=False),
        sa.Column("actions", postgresql.JSONB(), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "player_id"),
    )
    op.create_table(
        "tables",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("game_type", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("summary", postgresql.JSONB(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=True
        ),
        sa.PrimaryKeyConstraint("game_id"),
    )
    op.create_index("tables_by_status", "tables", ["status", "game_type"])


def downgrade() -> None:
    op.drop_index("tables_by_status", table_name="tables")
    op.drop_table("tables")
    op.drop_table("views")
    op.drop_index("notifications_by_version", table_name="notifications")
    op.drop_table("notifications")
