"""Writing a game's deadlines for the timers service (tables of migration 0004).

After every append the gamemaster evaluates the new state (``Table.deadlines``, plus the ack
timeout of the oldest gate still waiting for a gating acknowledgement) and writes it with one
statement:

- ``deadline_versions``: the stream version this evaluation belongs to. The statement writes
  nothing when a newer version is recorded already (an evaluation never goes back), and the
  timers service asks for a new evaluation of a game whose stream has moved past it (a crash
  between the append and this write).
- ``deadlines``: one row per wanted key. A key wanted before keeps its due time (and its
  ``fired_at``): a reaction window does not grow with every pass, and a deadline that has
  fired does not fire again while its key stays. A new key is due ``seconds`` after the
  recorded time of the event of version ``since``. Keys no longer wanted are deleted.

Due times are the database's clock (``events.recorded_at``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from cardroom_engine import TableDeadline
from cardroom_eventstore.hot import HotPool, Statement

ACKS = "acks:"
"""Key prefix of the ack timeout: ``acks:<gate version>`` (the oldest gate still held)."""

_SYNC = Statement(
    """
WITH m AS (
    INSERT INTO deadline_versions AS v (game_id, version, active, checked_at)
    VALUES (CAST(:game AS text), CAST(:version AS integer), CAST(:active AS boolean), now())
    ON CONFLICT (game_id) DO UPDATE
    SET version = EXCLUDED.version, active = EXCLUDED.active, checked_at = now()
    WHERE v.version <= EXCLUDED.version
    RETURNING v.game_id
),
acks AS (
    SELECT min(gate_version) AS gate FROM pending_acks
    WHERE stream_id = CAST(:game AS text) AND gate_version <> 0
),
want AS (
    SELECT w.key, w.secs, w.since
    FROM unnest(
        CAST(:keys AS text[]), CAST(:secs AS double precision[]), CAST(:since AS integer[])
    ) AS w(key, secs, since)
    UNION ALL
    SELECT 'acks:' || a.gate, CAST(:ack_timeout AS double precision), a.gate
    FROM acks a
    WHERE a.gate IS NOT NULL AND CAST(:ack_timeout AS double precision) IS NOT NULL
),
gone AS (
    DELETE FROM deadlines d USING m
    WHERE d.game_id = m.game_id AND d.key NOT IN (SELECT key FROM want)
),
put AS (
    INSERT INTO deadlines AS d (game_id, key, version, due_at)
    SELECT m.game_id, w.key, CAST(:version AS integer),
           e.recorded_at + make_interval(secs => w.secs)
    FROM m CROSS JOIN want w
    JOIN events e ON e.stream_id = m.game_id AND e.version = w.since
    ON CONFLICT (game_id, key) DO UPDATE
    SET version = EXCLUDED.version, claimed_until = NULL
    WHERE d.version < EXCLUDED.version
    RETURNING d.due_at, d.fired_at
)
SELECT (SELECT count(*) FROM m) AS written,
       (SELECT min(due_at) FROM put WHERE fired_at IS NULL) AS next_due
"""
)

_FIRED = Statement(
    """
UPDATE deadlines SET fired_at = now()
WHERE game_id = CAST(:game AS text) AND key = CAST(:key AS text)
  AND version = CAST(:version AS integer) AND fired_at IS NULL
"""
)


class DeadlineWriter:
    """Writes the deadlines of games (each call is one autocommit statement).

    On a pool whose commits do not wait for the WAL flush: a write lost in a database crash
    is found by the timers service (the game's stream is past the recorded version) and
    repaired by a reconcile, and a lost ``fired_at`` only lets a stale timeout come again,
    which the gamemaster answers ``stale``.
    """

    def __init__(self, pool: HotPool) -> None:
        self._pool = pool

    async def sync(
        self,
        game: str,
        version: int,
        *,
        active: bool,
        wanted: Sequence[TableDeadline],
        ack_timeout: float | None,
    ) -> datetime | None:
        """Record the game's deadlines at ``version``; returns the earliest new due time."""
        params = {
            "game": game,
            "version": version,
            "active": active,
            "keys": [d.key for d in wanted],
            "secs": [float(d.seconds) for d in wanted],
            "since": [d.since for d in wanted],
            "ack_timeout": ack_timeout,
        }
        row = await self._pool.fetchrow(_SYNC, params)
        assert row is not None
        next_due: datetime | None = row["next_due"]
        return next_due

    async def mark_fired(self, game: str, key: str, version: int) -> None:
        """The deadline ``key`` of ``version`` has had its effect (or had none to have)."""
        await self._pool.fetch(_FIRED, {"game": game, "key": key, "version": version})
