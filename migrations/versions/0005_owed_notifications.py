"""notifications hold only what is owed; each view carries its player's last seq;
events name their addressees

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26 07:00:00

Issue 11 (replay): the ``notifications`` table kept every notification ever sent, each with
the player's whole view when the player had actions: about twenty times the bytes of the
events themselves, and most of the cost of a rebuild. Nothing reads an acknowledged one (a
sync lists the versions the player still owes, the acktracker resends overdue ones), and the
event log already holds the history. So the table now holds the notifications a player still
owes an acknowledgement for:

- ``views.seq``: the player's last notification ``seq`` in the game (the sync's
  ``last_seq`` and the projector's numbering after a restart, formerly ``max(seq)`` of the
  notifications).
- ``events.metadata.to``: the players an event was sent to (its addressees), written by the
  event store on append. A repeated ack is told apart from a wrong one with it, and a
  rebuild counts ``seq`` from it without recomputing every message. Filled in here from the
  notifications the projector stored.
- acknowledged notifications are deleted (the acktracker's sweep keeps doing so).

Downgrade drops ``views.seq`` only: the deleted notifications are not restored
(``cardroom rebuild projector --repair`` with the older code writes them again).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "views", sa.Column("seq", sa.Integer(), nullable=False, server_default=sa.text("0"))
    )
    op.execute(
        """
UPDATE views v SET seq = n.seq
FROM (SELECT game_id, player_id, max(seq) AS seq FROM notifications GROUP BY 1, 2) AS n
WHERE v.game_id = n.game_id AND v.player_id = n.player_id
"""
    )
    op.execute(
        """
UPDATE events e SET metadata = e.metadata || jsonb_build_object('to', n.players)
FROM (
    SELECT game_id, version, jsonb_agg(player_id ORDER BY player_id) AS players
    FROM notifications GROUP BY 1, 2
) AS n
WHERE e.stream_id = n.game_id AND e.version = n.version AND NOT e.metadata ? 'to'
"""
    )
    op.execute(
        """
DELETE FROM notifications n WHERE NOT EXISTS (
    SELECT 1 FROM pending_acks p
    WHERE p.stream_id = n.game_id AND p.version = n.version AND p.player_id = n.player_id
)
"""
    )


def downgrade() -> None:
    op.drop_column("views", "seq")
