"""owed notifications carry their resends: how many, and when the next is due

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26 19:00:00

The acktracker resends a stored notification whose gating ack is overdue. Each one now backs
off on its own (its waits double up to a cap, and a finished game's stop after a few), so
each row of ``notifications`` records:

- ``resends``: how many times it was resent;
- ``resend_at``: when it was stored, until its first resend; then when the next resend is
  due ('infinity': never again). Indexed, so that the sweep reads only the due rows.

Rows stored before this migration count as stored now. Downgrade drops both columns.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "notifications",
        sa.Column("resends", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    op.add_column(
        "notifications",
        sa.Column(
            "resend_at",
            sa.DateTime(timezone=True),
            nullable=False,
            server_default=sa.func.now(),
        ),
    )
    op.create_index("notifications_by_resend_at", "notifications", ["resend_at"])


def downgrade() -> None:
    op.drop_index("notifications_by_resend_at", table_name="notifications")
    op.drop_column("notifications", "resend_at")
    op.drop_column("notifications", "resends")
