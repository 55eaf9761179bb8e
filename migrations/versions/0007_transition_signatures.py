"""transition signatures: what each player acknowledged a signed game's transition with

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27 03:30:00

A game that signs its transitions (Macaua) has every player check each one and acknowledge it
with a signature over it, or with a rejection. ``transition_signatures`` keeps them, one row
per (game, version, player): the signature (hex) or the rejection (code, reason, blame,
evidence). The acktracker writes a row only while that acknowledgement is owed; the
gamemaster reads them before it moves the game on. Downgrade drops the table.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "transition_signatures",
        sa.Column("stream_id", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("signature", sa.Text(), nullable=True),
        sa.Column("rejection", JSONB(), nullable=True),
        sa.Column(
            "recorded_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.PrimaryKeyConstraint(
            "stream_id", "version", "player_id", name="pk_transition_signatures"
        ),
    )


def downgrade() -> None:
    op.drop_table("transition_signatures")
