"""Deadlines: what happens in each game by itself, and when (tables of migration 0004).

- ``deadline_versions``: per game, the stream version its deadlines were evaluated for. A
  write never goes back to an older version; a game whose stream has moved past it for a
  while is *lagging* (a writer died between an append and its write) and is evaluated again.
- ``deadlines``: one row per wanted key (``game:<key>``, ``turn:<version>``,
  ``acks:<gate>``). A key wanted before keeps its due time and its ``fired_at``: a reaction
  window does not grow with every pass, and a deadline that fired does not fire again while
  its key stays. A new key is due ``seconds`` after the recorded time of the event of
  version ``since`` (the database's clock). Keys no longer wanted are deleted.

The gamemaster writes a game's deadlines after each append (:meth:`DeadlineWriter.write`);
the timers service claims the due ones under a lease (``FOR UPDATE SKIP LOCKED``, so
several instances share the work), and marks them fired or tries them again later.

The gamemaster's writes and every fired mark run on the relaxed pool (commits that do not
wait for the WAL flush): a write lost in a database crash makes the game lagging, which its
reevaluation repairs, and a lost fired mark only lets a timeout come again, which the
gamemaster answers ``stale`` (a timeout carries the version it belongs to). The timers'
claims and retries are cold statements on the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from sqlalchemy import text

from .asyncengine import AsyncEngine
from .gates import NOT_GATING
from .hot import HotPool, Statement

ACKS = "acks:"
"""Key prefix of the ack timeout: ``acks:<gate version>`` (the oldest gate still held)."""

WRITE_DELAY = 1.0
"""Seconds the gamemaster's debounced write of a game's deadlines waits at most after a
change, so that the versions of a game in quick play share one write."""

RECOVER_GRACE = 5.0
"""Seconds a game's stream may be past the version its deadlines were written for before
the timers service takes it for *lagging* (its writer died) and asks for a reconcile."""

if not 0 < WRITE_DELAY * 4 <= RECOVER_GRACE:
    # a debounced write still waiting must never look like a lost one: else every game in
    # quick play is reconciled for nothing
    raise RuntimeError("the deadline write delay must be well inside the recover grace")


class Wanted(Protocol):
    """A deadline a game wants (``cardroom_engine.TableDeadline`` is one)."""

    @property
    def key(self) -> str: ...
    @property
    def seconds(self) -> float: ...
    @property
    def since(self) -> int: ...


@dataclass(frozen=True)
class Due:
    """A claimed deadline: ``key`` of ``game`` at ``version``, due at ``due_at``."""

    game: str
    key: str
    version: int
    due_at: datetime | None = field(default=None, compare=False)


# The ack timeout is wanted for the oldest gate still held. An owed ack that holds nothing
# (its event was told to some seats only) is timed by itself only when the game waits for
# its addressee (``waited``: a prompt to the player whose turn it is), whose silence would
# stall the game otherwise; else the moment its seat was marked away would tell the others
# when that event happened (a pass in papas), and the next held gate times it instead.
_WRITE = Statement(
    f"""
WITH m AS (
    INSERT INTO deadline_versions AS v (game_id, version, active, checked_at)
    VALUES (CAST(:game AS text), CAST(:version AS integer), CAST(:active AS boolean), now())
    ON CONFLICT (game_id) DO UPDATE
    SET version = EXCLUDED.version, active = EXCLUDED.active, checked_at = now()
    WHERE v.version <= EXCLUDED.version
    RETURNING v.game_id
),
acks AS (
    SELECT min(abs(gate_version)) AS gate FROM pending_acks
    WHERE stream_id = CAST(:game AS text) AND (
        gate_version > {NOT_GATING}
        OR (gate_version < {NOT_GATING} AND player_id = ANY(CAST(:waited AS text[])))
    )
),
want AS (
    SELECT w.key, w.secs, w.since
    FROM unnest(
        CAST(:keys AS text[]), CAST(:secs AS double precision[]), CAST(:since AS integer[])
    ) AS w(key, secs, since)
    UNION ALL
    SELECT '{ACKS}' || a.gate, CAST(:ack_timeout AS double precision), a.gate
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
    CROSS JOIN LATERAL (  -- by the event's whole key: OFFSET 0 keeps it apart, else a plan
        -- made on an empty table finds the event by its game alone, reading all its events
        SELECT recorded_at FROM events
        WHERE events.stream_id = m.game_id AND events.version = w.since OFFSET 0
    ) AS e
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
UPDATE deadlines SET fired_at = now(), claimed_until = NULL
WHERE game_id = CAST(:game AS text) AND key = CAST(:key AS text)
  AND version = CAST(:version AS integer) AND fired_at IS NULL
"""
)

_CLAIM = text(
    """
UPDATE deadlines d SET claimed_until = CAST(:lease AS timestamptz)
FROM (
    SELECT game_id, key FROM deadlines
    WHERE fired_at IS NULL AND due_at <= CAST(:now AS timestamptz)
      AND (claimed_until IS NULL OR claimed_until <= CAST(:now AS timestamptz))
    ORDER BY due_at
    LIMIT CAST(:limit AS integer)
    FOR UPDATE SKIP LOCKED
) due
WHERE d.game_id = due.game_id AND d.key = due.key
RETURNING d.game_id, d.key, d.version, d.due_at
"""
)

_NEXT = text(
    """
SELECT min(GREATEST(due_at, COALESCE(claimed_until, due_at))) FROM deadlines
WHERE fired_at IS NULL
"""
)

_RETRY_AT = text(
    """
UPDATE deadlines SET claimed_until = CAST(:at AS timestamptz)
WHERE game_id = CAST(:game AS text) AND key = CAST(:key AS text)
  AND version = CAST(:version AS integer) AND fired_at IS NULL
"""
)

# The time left on a game's clocks, on the database's clock: only while its deadlines were
# written at or after the last event every seat was told of that moved the game (else they
# may be a past turn's; a version told to some seats only must not count, or a seat would
# see the answer change when it happened) and no gating ack is owed (a turn runs from the
# opening of the gate, and a game deadline waits for it). A deadline of
# the gated kind runs from the later of its event and the opening of the newest gate at or
# after it, as the gamemaster fires it (a ``later`` answer); the ack timeout is never read.
_LEFT = text(
    f"""
SELECT EXTRACT(EPOCH FROM min(
    CASE WHEN split_part(d.key, ':', 1) = CAST(:gated AS text) THEN d.due_at + GREATEST(
        interval '0',
        (SELECT max(g.released_at) FROM gates g
         WHERE g.stream_id = d.game_id AND g.version >= e.version) - e.recorded_at)
    ELSE d.due_at END
) - clock_timestamp())
FROM deadline_versions v
JOIN deadlines d ON d.game_id = v.game_id
LEFT JOIN events e ON e.stream_id = d.game_id AND e.version = CASE
    WHEN split_part(d.key, ':', 1) = CAST(:gated AS text) AND d.key ~ '^[a-z]+:[0-9]{{1,9}}$'
    THEN CAST(split_part(d.key, ':', 2) AS integer) END
WHERE v.game_id = CAST(:game AS text) AND v.active AND v.version >= CAST(:since AS integer)
  AND d.fired_at IS NULL AND NOT starts_with(d.key, '{ACKS}')
  AND split_part(d.key, ':', 1) = ANY(CAST(:kinds AS text[]))
  AND NOT EXISTS (
      SELECT 1 FROM pending_acks
      WHERE stream_id = CAST(:game AS text) AND gate_version > {NOT_GATING}
  )
"""
)

_LAGGING = text(
    """
SELECT v.game_id FROM deadline_versions v JOIN streams s ON s.stream_id = v.game_id
WHERE v.active AND s.version > v.version AND s.updated_at < CAST(:cutoff AS timestamptz)
ORDER BY s.updated_at
LIMIT CAST(:limit AS integer)
"""
)


class DeadlineWriter:
    """The writer's side: a game's deadlines after an append, and their fired marks (each
    one autocommit statement on ``pool``, the relaxed one)."""

    def __init__(self, pool: HotPool) -> None:
        self._pool = pool

    async def write(
        self,
        game: str,
        version: int,
        *,
        active: bool,
        wanted: Sequence[Wanted],
        ack_timeout: float | None,
        waited: Sequence[str] = (),
    ) -> datetime | None:
        """Record the game's deadlines at ``version`` (with the ack timeout of its oldest
        held gate, unless None, and of the acks that hold nothing owed by ``waited``, the
        players the game waits for); returns the earliest new due time."""
        params = {
            "game": game,
            "version": version,
            "active": active,
            "keys": [d.key for d in wanted],
            "secs": [float(d.seconds) for d in wanted],
            "since": [d.since for d in wanted],
            "ack_timeout": ack_timeout,
            "waited": list(waited),
        }
        row = await self._pool.fetchrow(_WRITE, params)
        assert row is not None
        next_due: datetime | None = row["next_due"]
        return next_due

    #: The name the gamemaster calls it by.
    sync = write

    async def mark_fired(self, game: str, key: str, version: int) -> None:
        """The deadline ``key`` of ``version`` has had its effect (or had none to have)."""
        await self._pool.fetch(_FIRED, {"game": game, "key": key, "version": version})


class Deadlines(DeadlineWriter):
    """Every statement on the deadlines: the writer's, and the timers'."""

    def __init__(self, relaxed: HotPool, autocommit: AsyncEngine) -> None:
        super().__init__(relaxed)
        self._engine = autocommit

    async def claim(self, now: datetime, lease: datetime, limit: int) -> list[Due]:
        """Up to ``limit`` deadlines due at ``now`` and not claimed, earliest first, each
        claimed until ``lease`` (then, unless fired, it is due again)."""
        params = {"now": now, "lease": lease, "limit": limit}
        async with self._engine.connect() as conn:
            rows = (await conn.execute(_CLAIM, params)).all()
        return [Due(str(g), str(k), int(v), d) for g, k, v, d in rows]

    async def next_due(self) -> datetime | None:
        """When the next unfired deadline is due or its claim runs out; None if none."""
        async with self._engine.connect() as conn:
            upcoming: datetime | None = await conn.scalar(_NEXT)
        return upcoming

    async def retry_at(self, due: Due, at: datetime) -> None:
        """Try the (unfired) deadline again at ``at``."""
        params = {"game": due.game, "key": due.key, "version": due.version, "at": at}
        async with self._engine.connect() as conn:
            await conn.execute(_RETRY_AT, params)

    async def time_left(
        self, game: str, since: int, *, kinds: Sequence[str], gated: str
    ) -> float | None:
        """Seconds (the database's clock; negative once past) until the earliest unfired
        deadline of ``game`` of one of ``kinds`` (a key's part before its first ``:``) is due,
        while its deadlines were written at version ``since`` or later (``since``: the last
        event every seat was told of that moved the game, the table's ``moved_at``) and its
        gate is open; else None. A deadline of kind ``gated`` (``turn:<version>``) runs from
        the later of its event and the opening of the newest gate at or after it. Never the
        ack timeout's: when a seat will be marked away is nobody else's to know."""
        params = {"game": game, "since": since, "kinds": list(kinds), "gated": gated}
        async with self._engine.connect() as conn:
            left = await conn.scalar(_LEFT, params)
        return None if left is None else float(left)

    async def lagging(self, cutoff: datetime, limit: int) -> list[str]:
        """Games still running whose stream moved past their evaluated version before
        ``cutoff``, the longest waiting first."""
        params = {"cutoff": cutoff, "limit": limit}
        async with self._engine.connect() as conn:
            return [str(g) for g in await conn.scalars(_LAGGING, params)]
