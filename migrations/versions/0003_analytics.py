"""analytics: games, results, ratings, game types (cardroom_analytics.schema)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26 10:00:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "analytics_games",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("game_type", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("creator", sa.Text(), nullable=True),
        sa.Column("max_seats", sa.Integer(), nullable=True),
        sa.Column("seats", postgresql.JSONB(), nullable=False),
        sa.Column("config", postgresql.JSONB(), nullable=False),
        sa.Column("created_at", _TZ, nullable=True),
        sa.Column("started_at", _TZ, nullable=True),
        sa.Column("finished_at", _TZ, nullable=True),
        sa.Column("duration_s", sa.Double(), nullable=True),
        sa.Column("events", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("last_command", sa.Text(), nullable=True),
        sa.Column("outcome", postgresql.JSONB(), nullable=True),
        sa.PrimaryKeyConstraint("game_id", name="pk_analytics_games"),
    )
    op.create_index(
        "ix_analytics_games_game_type_status", "analytics_games", ["game_type", "status"]
    )
    op.create_index("ix_analytics_games_finished_at", "analytics_games", ["finished_at"])
    op.create_table(
        "analytics_results",
        sa.Column("game_id", sa.Text(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("game_type", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=True),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Double(), nullable=True),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("finished_at", _TZ, nullable=False),
        sa.Column("mu_before", sa.Double(), nullable=False),
        sa.Column("sigma_before", sa.Double(), nullable=False),
        sa.Column("mu_after", sa.Double(), nullable=False),
        sa.Column("sigma_after", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "player_id", name="pk_analytics_results"),
    )
    op.create_index(
        "ix_analytics_results_game_type_player_id",
        "analytics_results",
        ["game_type", "player_id"],
    )
    op.create_table(
        "analytics_ratings",
        sa.Column("game_type", sa.Text(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=True),
        sa.Column("mu", sa.Double(), nullable=False),
        sa.Column("sigma", sa.Double(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("rank_sum", sa.Integer(), nullable=False),
        sa.Column("score_sum", sa.Double(), nullable=False),
        sa.Column("last_game", sa.Text(), nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.PrimaryKeyConstraint("game_type", "player_id", name="pk_analytics_ratings"),
    )
    op.create_table(
        "analytics_game_types",
        sa.Column("game_type", sa.Text(), nullable=False),
        sa.Column("created", sa.Integer(), nullable=False),
        sa.Column("started", sa.Integer(), nullable=False),
        sa.Column("finished", sa.Integer(), nullable=False),
        sa.Column("events", sa.BigInteger(), nullable=False),
        sa.Column("moves", sa.BigInteger(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("duration_total_s", sa.Double(), nullable=False),
        sa.Column("duration_min_s", sa.Double(), nullable=True),
        sa.Column("duration_max_s", sa.Double(), nullable=True),
        sa.Column("first_event_at", _TZ, nullable=True),
        sa.Column("last_event_at", _TZ, nullable=True),
        sa.PrimaryKeyConstraint("game_type", name="pk_analytics_game_types"),
    )


def downgrade() -> None:
    op.drop_table("analytics_game_types")
    op.drop_table("analytics_ratings")
    op.drop_index("ix_analytics_results_game_type_player_id", table_name="analytics_results")
    op.drop_table("analytics_results")
    op.drop_index("ix_analytics_games_finished_at", table_name="analytics_games")
    op.drop_index("ix_analytics_games_game_type_status", table_name="analytics_games")
    op.drop_table("analytics_games")
