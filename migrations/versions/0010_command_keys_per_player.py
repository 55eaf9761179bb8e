"""command keys per player: a stored command answer is keyed by ``<player>.<command id>``

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-29 17:20:00

A command id is the player's own choice, unique among that player's moves, so two seats of a
table may name the same one. The gamemaster therefore keys the answer it stores for a command
(``commands.command_id``, the event store's idempotency key) by the player and the id. Rows
stored before held the id alone; this prefixes each with the player whose command it was (the
``actor`` of the stream's events that carry that ``command_id`` in their metadata), so that a
resend across the upgrade is still answered as the first time. A row with no such event (an
event store used directly, as the benchmarks do) is left as it is.

Downgrade takes the prefix off again; where rows of one stream would then have the same id,
one of them is kept (a resend of another would be decided again).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        UPDATE commands c SET command_id = e.actor || '.' || c.command_id
        FROM (
            SELECT DISTINCT stream_id, metadata->>'command_id' AS command_id,
                   metadata->>'actor' AS actor
            FROM events
            WHERE metadata ? 'command_id' AND metadata ? 'actor'
        ) e
        WHERE e.stream_id = c.stream_id AND e.command_id = c.command_id
          AND position('.' IN c.command_id) = 0
        """
    )


def downgrade() -> None:
    # of the rows that would share a stream and id, keep an unprefixed one, else the first
    # player's
    op.execute(
        """
        DELETE FROM commands c USING commands d
        WHERE c.stream_id = d.stream_id AND c.command_id <> d.command_id
          AND position('.' IN c.command_id) > 0
          AND split_part(c.command_id, '.', 2) = CASE
              WHEN position('.' IN d.command_id) > 0 THEN split_part(d.command_id, '.', 2)
              ELSE d.command_id END
          AND (position('.' IN d.command_id) = 0 OR d.command_id < c.command_id)
        """
    )
    op.execute(
        """
        UPDATE commands SET command_id = split_part(command_id, '.', 2)
        WHERE position('.' IN command_id) > 0
        """
    )
