"""Read models built from the events by the projector, and read by the lobby and the sync.

They live beside the event store (one database, one Alembic history) so that any service can
read them through the event store (:class:`ReadModels`, a part of ``EventStore``) without
importing another service. Only the projector (and ``cardroom rebuild``) writes them, always
inside a tracking transaction (see ``EventStore.tracking_many``), so they are exactly as
fresh as the projector's checkpoints and can be dropped and rebuilt from the events. The
acktracker only deletes notifications nobody owes any more and schedules the resends of owed
ones (``resends``, ``resend_at``: lost in a rebuild, which only starts their backoff again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa
from asyncpg import Record
from asyncpg.pool import PoolConnectionProxy
from sqlalchemy.dialects.postgresql import JSONB

from .asyncengine import AsyncEngine
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
    # The acktracker's resends of an overdue notification (see ``ReadModels.claim_resends``):
    # how many it has had, and ``resend_at``: when it was stored until its first resend, then
    # when the next one is due ('infinity': never again).
    sa.Column("resends", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column(
        "resend_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
    ),
    sa.Index("notifications_by_version", "game_id", "player_id", "version"),
    sa.Index("notifications_by_resend_at", "resend_at"),
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

#: The ``tables.status`` of a game that is over (the engine's ``TableState.status``).
FINISHED = "finished"
#: The ``tables.status`` of a table that waits for players.
LOBBY = "lobby"


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


@dataclass
class Rows:
    """A batch of read-model rows as :func:`write_rows` stores them: each kind's statement's
    parameters (None: no row of that kind), JSON as text. Plain values, so that a rebuild's
    worker process makes them and sends them to the process that writes them."""

    notifications: dict[str, list[Any]] | None = None
    views: dict[str, list[Any]] | None = None
    tables: dict[str, list[Any]] | None = None


def batch_rows(
    notes: Sequence[StoredNotification],
    views: Sequence[StoredView],
    summaries: Sequence[dict[str, Any]],
) -> Rows:
    """The rows of :func:`write_batch`, made (pure)."""
    rows = Rows()
    if notes:
        rows.notifications = {
            "games": [n.game_id for n in notes],
            "players": [n.player_id for n in notes],
            "seqs": [n.seq for n in notes],
            "versions": [n.version for n in notes],
            "payloads": [json_text(n.payload) for n in notes],
        }
    if views:
        rows.views = {
            "games": [v[0] for v in views],
            "players": [v[1] for v in views],
            "versions": [v[2] for v in views],
            "views": [json_text(v[3]) for v in views],
            "actions": [json_text(v[4]) for v in views],
            "seqs": [v[5] for v in views],
        }
    if summaries:
        # one row per game (the last summary wins): one statement may not update a row twice
        summaries = list({t["game"]: t for t in summaries}.values())
        rows.tables = {
            "games": [t["game"] for t in summaries],
            "game_types": [t["game_type"] for t in summaries],
            "statuses": [t["status"] for t in summaries],
            "summaries": [json_text(t) for t in summaries],
            "versions": [t["version"] for t in summaries],
        }
    return rows


async def write_rows(conn: PoolConnectionProxy[Record], rows: Rows) -> None:
    """Store a batch of rows (:func:`batch_rows`): one statement per kind it holds."""
    if rows.notifications is not None:
        await conn.execute(_ADD_NOTIFICATIONS.sql, *_ADD_NOTIFICATIONS.args(rows.notifications))
    if rows.views is not None:
        await conn.execute(_PUT_VIEWS.sql, *_PUT_VIEWS.args(rows.views))
    if rows.tables is not None:
        await conn.execute(_PUT_TABLES.sql, *_PUT_TABLES.args(rows.tables))


async def write_batch(
    conn: PoolConnectionProxy[Record],
    notes: Sequence[StoredNotification],
    views: Sequence[StoredView],
    summaries: Sequence[dict[str, Any]],
) -> None:
    """Store the notifications (those still owed), views and lobby summaries of a batch of
    games: one statement per kind, whatever the batch holds."""
    await write_rows(conn, batch_rows(notes, views, summaries))


async def owed(
    conn: PoolConnectionProxy[Record], games: Sequence[str]
) -> dict[str, set[tuple[int, str]]]:
    """Per game, the ``(version, player)`` acknowledgements still owed: the notifications
    worth storing."""
    out: dict[str, set[tuple[int, str]]] = {g: set() for g in games}
    for r in await conn.fetch(_OWED.sql, *_OWED.args({"games": list(games)})):
        out[str(r["stream_id"])].add((int(r["version"]), str(r["player_id"])))
    return out


# The overdue notifications to resend, claimed: each gets its next resend time in the same
# statement, so that two acktrackers never resend one notification twice. The range scan of
# ``resend_at`` up to now (in index order, up to ``limit``) passes over notifications that are
# waiting for a later resend or for none: what it reads is the young ones, the due ones, and
# the acknowledged ones that this sweep deletes next. A due one is resent when it still holds
# its game's gate; its waits double from ``first`` up to ``cap``; a finished game's is resent
# at most ``finished`` times in all. One not to be resent (an away player's, a finished game's
# past its bound) is put out of the range for good: it stays for a sync.
_CLAIM_RESENDS = sa.text(
    f"""
WITH due AS (
    SELECT n.game_id, n.player_id, n.seq,
           coalesce(t.status = '{FINISHED}', false) AS finished,
           p.gate_version <> 0 AND (
               n.resends < CAST(:finished AS integer) OR t.status IS DISTINCT FROM '{FINISHED}'
           ) AS send
    FROM notifications n
    JOIN pending_acks p
      ON p.stream_id = n.game_id AND p.version = n.version AND p.player_id = n.player_id
    LEFT JOIN tables t ON t.game_id = n.game_id
    WHERE n.resend_at <= now()
      AND (n.resends > 0
           OR n.resend_at <= now() - make_interval(secs => CAST(:due AS double precision)))
    ORDER BY n.resend_at
    LIMIT CAST(:limit AS integer)
    FOR UPDATE OF n SKIP LOCKED
)
UPDATE notifications n
SET resends = n.resends + CASE WHEN due.send THEN 1 ELSE 0 END,
    resend_at = CASE
        WHEN NOT due.send OR (due.finished AND n.resends + 1 >= CAST(:finished AS integer))
            THEN CAST('infinity' AS timestamptz)
        ELSE now() + make_interval(secs => least(
            CAST(:cap AS double precision),
            CAST(:first AS double precision) * power(2, least(n.resends + 1, 30))
        ))
    END
FROM due
WHERE n.game_id = due.game_id AND n.player_id = due.player_id AND n.seq = due.seq
RETURNING n.game_id, n.player_id, n.seq, n.version, n.payload, due.send
"""
)


# -- a rebuild's reads and deletes (``cardroom rebuild projector``, in its tracking transaction) --

#: The read models a rebuild compares and replaces.
PROJECTOR_TABLES = ("notifications", "views", "tables")

# The live rows of some games, JSON as text. Notifications: the owed ones only (an
# acknowledged row the acktracker's sweep has not deleted yet is not part of the model:
# nothing reads it; a repair deletes it with the rest). Tables: not ``updated_at`` (when,
# not what).
_LIVE = {
    "notifications": Statement(
        """
SELECT n.game_id, n.player_id, n.seq, n.version, CAST(n.payload AS text) AS payload
FROM notifications n JOIN pending_acks p
  ON p.stream_id = n.game_id AND p.version = n.version AND p.player_id = n.player_id
WHERE n.game_id = ANY(CAST(:games AS text[]))
"""
    ),
    "views": Statement(
        """
SELECT game_id, player_id, version, CAST(view AS text) AS view,
       CAST(actions AS text) AS actions, seq
FROM views WHERE game_id = ANY(CAST(:games AS text[]))
"""
    ),
    "tables": Statement(
        """
SELECT game_id, game_type, status, CAST(summary AS text) AS summary, version
FROM tables WHERE game_id = ANY(CAST(:games AS text[]))
"""
    ),
}

_DELETE = {
    table: Statement(f"DELETE FROM {table} WHERE game_id = ANY(CAST(:games AS text[]))")
    for table in PROJECTOR_TABLES
}


async def live_rows(
    conn: PoolConnectionProxy[Record], table: str, games: Sequence[str]
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The rows of ``table`` (one of :data:`PROJECTOR_TABLES`) for ``games``: the column
    names (none when there is no row) and the rows, JSON columns as text."""
    records = await conn.fetch(_LIVE[table].sql, *_LIVE[table].args({"games": list(games)}))
    return (list(records[0].keys()) if records else []), [tuple(r) for r in records]


async def delete_games(
    conn: PoolConnectionProxy[Record], tables: Sequence[str], games: Sequence[str]
) -> None:
    """Delete every row of ``games`` from ``tables`` (of :data:`PROJECTOR_TABLES`)."""
    for table in tables:
        await conn.execute(_DELETE[table].sql, *_DELETE[table].args({"games": list(games)}))


# -- reads (sync, lobby, acks) ----------------------------------------------------------------


def _note(row: Any) -> StoredNotification:
    return StoredNotification(row.game_id, row.player_id, row.seq, row.version, row.payload)


LIST_LIMIT = 100  # tables a lobby listing shows at most


class ReadModels:
    """The read models' part of :class:`~cardroom_eventstore.EventStore`: what the services
    read (the sync, the lobby, the public view) and the acktracker's upkeep."""

    engine: AsyncEngine

    async def view(self, game_id: str, player_id: str) -> StoredView | None:
        """The player's view of the game (:data:`SPECTATOR`: the public one), if stored."""
        query = sa.select(views).where(views.c.game_id == game_id, views.c.player_id == player_id)
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        return StoredView(game_id, player_id, row.version, row.view, row.actions, row.seq)

    async def last_seq(self, game_id: str, player_id: str) -> int:
        """The player's last notification ``seq`` in the game (0: none, or no such view)."""
        found = await self.view(game_id, player_id)
        return 0 if found is None else found.seq

    async def notifications_for_versions(
        self, game_id: str, player_id: str, versions: Sequence[int]
    ) -> list[StoredNotification]:
        """The player's stored notifications at ``versions``, in ``seq`` order."""
        if not versions:
            return []
        query = (
            sa.select(notifications)
            .where(
                notifications.c.game_id == game_id,
                notifications.c.player_id == player_id,
                notifications.c.version.in_(list(versions)),
            )
            .order_by(notifications.c.seq)
        )
        async with self.engine.connect() as conn:
            return [_note(r) for r in await conn.execute(query)]

    async def list_tables(
        self, game_type: str | None = None, status: str | None = None, limit: int = LIST_LIMIT
    ) -> list[tuple[datetime, dict[str, Any]]]:
        """The tables' summaries, the last changed first, each with its last change, so that
        the listings of several shards merge in one order."""
        query = (
            sa.select(tables.c.updated_at, tables.c.summary)
            .order_by(tables.c.updated_at.desc())
            .limit(limit)
        )
        if game_type is not None:
            query = query.where(tables.c.game_type == game_type)
        if status is not None:
            query = query.where(tables.c.status == status)
        async with self.engine.connect() as conn:
            return [(r.updated_at, dict(r.summary)) for r in await conn.execute(query)]

    async def waiting_tables(self, creator: str, since: datetime) -> int:
        """How many tables ``creator`` made that still wait for players (in the lobby), changed
        at ``since`` or later."""
        query = (
            sa.select(sa.func.count())
            .select_from(tables)
            .where(tables.c.status == LOBBY)
            .where(tables.c.summary["creator"].astext == creator)
            .where(tables.c.updated_at >= since)
        )
        async with self.engine.connect() as conn:
            return int(await conn.scalar(query) or 0)

    async def claim_resends(
        self, *, first: float, cap: float, finished: int, limit: int, owed_for: float | None = None
    ) -> list[StoredNotification]:
        """The stored notifications to resend now, in ``seq`` order per player, their next
        resend already scheduled: a notification whose gating ack is overdue is resent
        ``first`` seconds after it was stored (``owed_for``: that many instead, this time; 0:
        every owed one), then after twice as long each time, ``cap`` seconds at most; one of
        a finished game ``finished`` times at most. Away players' notifications hold no gate
        and are not resent (they sync when back)."""
        params = {
            "first": first,
            "due": first if owed_for is None else owed_for,
            "cap": cap,
            "finished": finished,
            "limit": limit,
        }
        async with self.engine.begin() as conn:
            rows = (await conn.execute(_CLAIM_RESENDS, params)).all()
        due = [_note(r) for r in rows if r.send]
        due.sort(key=lambda n: (n.game_id, n.player_id, n.seq))
        return due

    async def delete_acknowledged(self) -> int:
        """Delete the stored notifications nobody owes an acknowledgement for any more;
        returns how many. Those are never read (a sync and a resend go by the owed ones)."""
        async with self.engine.begin() as conn:
            result = await conn.execute(_DELETE_ACKNOWLEDGED)
        return int(result.rowcount)
