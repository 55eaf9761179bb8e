"""Read models built from the events by the projector, and read by the lobby and the sync.

They live beside the event store (one database, one Alembic history) so that any service can
read them through this module without importing another service. Only the projector (and
``cardroom rebuild``) writes them, always inside a tracking transaction (see
``EventStore.tracking_many``), so they are exactly as fresh as the projector's checkpoints and
can be dropped and rebuilt from the events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import sqlalchemy as sa
from asyncpg import Record
from asyncpg.pool import PoolConnectionProxy
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncEngine

from .hot import Statement
from .jsontext import json_text

readmodels = sa.MetaData()

notifications = sa.Table(
    "notifications",
    readmodels,
    sa.Column("game_id", sa.Text, primary_key=True),
    sa.Column("player_id", sa.Text, primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("payload", JSONB, nullable=False),
    sa.Index("notifications_by_version", "game_id", "player_id", "version"),
)

views = sa.Table(
    "views",
    readmodels,
    sa.Column("game_id", sa.Text, primary_key=True),
    sa.Column("player_id", sa.Text, primary_key=True),  # "" is the spectator
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("view", JSONB, nullable=False),
    sa.Column("actions", JSONB, nullable=False),
    # the player's last notification seq in the game (0: none yet; always 0 for the spectator)
    sa.Column("seq", sa.Integer, nullable=False, server_default=sa.text("0")),
)

tables = sa.Table(
    "tables",
    readmodels,
    sa.Column("game_id", sa.Text, primary_key=True),
    sa.Column("game_type", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("summary", JSONB, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now()),
    sa.Index("tables_by_status", "status", "game_type"),
)

SPECTATOR = ""


@dataclass(frozen=True)
class StoredNotification:
    game_id: str
    player_id: str
    seq: int
    version: int
    payload: dict[str, Any]


class StoredView(NamedTuple):
    """One row of ``views``: a player's (or the spectator's) view at ``version``."""

    game_id: str
    player_id: str
    version: int
    view: dict[str, Any]
    actions: list[dict[str, Any]]
    seq: int


# -- writes (the projector's batches, inside its tracking transaction; raw asyncpg) ----------

# Only what is still owed: a notification whose ack is in already (a quick player acks what
# the gamemaster sent before the projector gets here) is not stored. One acknowledged while
# this statement runs may still be written; the acktracker's sweep deletes it
# (``delete_acknowledged``), and nothing reads it meanwhile (readers go by ``pending_acks``).
_ADD_NOTIFICATIONS = Statement(
    """
INSERT INTO notifications (game_id, player_id, seq, version, payload)
SELECT n.game_id, n.player_id, n.seq, n.version, CAST(n.payload AS jsonb)
FROM unnest(CAST(:games AS text[]), CAST(:players AS text[]), CAST(:seqs AS integer[]),
            CAST(:versions AS integer[]), CAST(:payloads AS text[]))
    AS n(game_id, player_id, seq, version, payload)
WHERE EXISTS (
    SELECT 1 FROM pending_acks p
    WHERE p.stream_id = n.game_id AND p.version = n.version AND p.player_id = n.player_id
)
"""
)

_PUT_VIEWS = Statement(
    """
INSERT INTO views (game_id, player_id, version, view, actions, seq)
SELECT v.game_id, v.player_id, v.version, CAST(v.view AS jsonb), CAST(v.actions AS jsonb),
       v.seq
FROM unnest(CAST(:games AS text[]), CAST(:players AS text[]), CAST(:versions AS integer[]),
            CAST(:views AS text[]), CAST(:actions AS text[]), CAST(:seqs AS integer[]))
    AS v(game_id, player_id, version, view, actions, seq)
ON CONFLICT (game_id, player_id) DO UPDATE
SET version = EXCLUDED.version, view = EXCLUDED.view, actions = EXCLUDED.actions,
    seq = EXCLUDED.seq
"""
)

_OWED = Statement(
    """
SELECT stream_id, version, player_id FROM pending_acks
WHERE stream_id = ANY(CAST(:games AS text[]))
"""
)

_DELETE_ACKNOWLEDGED = sa.text(
    """
DELETE FROM notifications n WHERE NOT EXISTS (
    SELECT 1 FROM pending_acks p
    WHERE p.stream_id = n.game_id AND p.version = n.version AND p.player_id = n.player_id
)
"""
)

_PUT_TABLES = Statement(
    """
INSERT INTO tables (game_id, game_type, status, summary, version)
SELECT t.game_id, t.game_type, t.status, CAST(t.summary AS jsonb), t.version
FROM unnest(CAST(:games AS text[]), CAST(:game_types AS text[]), CAST(:statuses AS text[]),
            CAST(:summaries AS text[]), CAST(:versions AS integer[]))
    AS t(game_id, game_type, status, summary, version)
ON CONFLICT (game_id) DO UPDATE
SET status = EXCLUDED.status, summary = EXCLUDED.summary, version = EXCLUDED.version,
    updated_at = now()
"""
)


async def write_batch(
    conn: PoolConnectionProxy[Record],
    notes: Sequence[StoredNotification],
    views: Sequence[StoredView],
    summaries: Sequence[dict[str, Any]],
) -> None:
    """Store the notifications (those still owed), views and lobby summaries of a batch of
    games: one statement per kind, whatever the batch holds."""
    if notes:
        params = {
            "games": [n.game_id for n in notes],
            "players": [n.player_id for n in notes],
            "seqs": [n.seq for n in notes],
            "versions": [n.version for n in notes],
            "payloads": [json_text(n.payload) for n in notes],
        }
        await conn.execute(_ADD_NOTIFICATIONS.sql, *_ADD_NOTIFICATIONS.args(params))
    if views:
        params = {
            "games": [v[0] for v in views],
            "players": [v[1] for v in views],
            "versions": [v[2] for v in views],
            "views": [json_text(v[3]) for v in views],
            "actions": [json_text(v[4]) for v in views],
            "seqs": [v[5] for v in views],
        }
        await conn.execute(_PUT_VIEWS.sql, *_PUT_VIEWS.args(params))
    if summaries:
        # one row per game (the last summary wins): one statement may not update a row twice
        summaries = list({t["game"]: t for t in summaries}.values())
        params = {
            "games": [t["game"] for t in summaries],
            "game_types": [t["game_type"] for t in summaries],
            "statuses": [t["status"] for t in summaries],
            "summaries": [json_text(t) for t in summaries],
            "versions": [t["version"] for t in summaries],
        }
        await conn.execute(_PUT_TABLES.sql, *_PUT_TABLES.args(params))


async def owed(
    conn: PoolConnectionProxy[Record], games: Sequence[str]
) -> dict[str, set[tuple[int, str]]]:
    """Per game, the ``(version, player)`` acknowledgements still owed: the notifications
    worth storing."""
    out: dict[str, set[tuple[int, str]]] = {g: set() for g in games}
    for r in await conn.fetch(_OWED.sql, *_OWED.args({"games": list(games)})):
        out[str(r["stream_id"])].add((int(r["version"]), str(r["player_id"])))
    return out


async def delete_acknowledged(engine: AsyncEngine) -> int:
    """Delete the stored notifications nobody owes an acknowledgement for any more; returns
    how many. Those are never read (a sync and a resend go by the owed ones)."""
    async with engine.begin() as conn:
        result = await conn.execute(_DELETE_ACKNOWLEDGED)
    return int(result.rowcount)


# -- reads (sync, lobby, acks) ----------------------------------------------------------------


def _note(row: Any) -> StoredNotification:
    return StoredNotification(row.game_id, row.player_id, row.seq, row.version, row.payload)


async def notifications_for_versions(
    engine: AsyncEngine, game_id: str, player_id: str, versions: Sequence[int]
) -> list[StoredNotification]:
    if not versions:
        return []
    async with engine.connect() as conn:
        rows = await conn.execute(
            sa.select(notifications)
            .where(
                notifications.c.game_id == game_id,
                notifications.c.player_id == player_id,
                notifications.c.version.in_(list(versions)),
            )
            .order_by(notifications.c.seq)
        )
        return [_note(r) for r in rows]


async def last_seq(engine: AsyncEngine, game_id: str, player_id: str) -> int:
    """The player's last notification ``seq`` in the game (0: none, or no such view)."""
    found = await get_view(engine, game_id, player_id)
    return 0 if found is None else found.seq


async def get_view(engine: AsyncEngine, game_id: str, player_id: str) -> StoredView | None:
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                sa.select(views).where(views.c.game_id == game_id, views.c.player_id == player_id)
            )
        ).first()
        if row is None:
            return None
        return StoredView(game_id, player_id, row.version, row.view, row.actions, row.seq)


async def list_tables(
    engine: AsyncEngine,
    *,
    game_type: str | None = None,
    status: str | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    query = sa.select(tables.c.summary).order_by(tables.c.updated_at.desc()).limit(limit)
    if game_type is not None:
        query = query.where(tables.c.game_type == game_type)
    if status is not None:
        query = query.where(tables.c.status == status)
    async with engine.connect() as conn:
        return [dict(r.summary) for r in await conn.execute(query)]
