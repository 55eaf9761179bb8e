"""Acknowledgement gates: the acknowledgements owed per event, and the gate they hold.

An append with addressees writes one row of ``pending_acks`` per addressee and one ``gates``
row counting them (:mod:`.appends`). An ack deletes its pending row and counts the gate down
under the gate's row lock, so exactly one ack, the last, releases it. An away player's owed
acks are excused (:meth:`Gates.excuse`): the rows stay, for its sync, but hold no gate
(``gate_version`` :data:`NOT_GATING`). An event that holds nothing (``NewEvent.holds``
false: told to some seats only) owes its acks under ``-version`` (:meth:`.model.Append.owed`):
no gate waits for them, yet they are resent and listed by a sync; the ack timeout times
them with the next gate that holds, or by themselves when the game waits for their
addressee (:mod:`.deadlines`), and an ack of one is not an away player's. A released gate
is marked handled once its follow-up is appended (``Append.handled_gate``) or found
unnecessary; the sweep finds those left unhandled (:meth:`Gates.unhandled_releases`). The
protocol the services run over these rows, and its timing, is specified in one place:
``cardroom_runtime.gate``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg
from sqlalchemy import func, select, text

from .asyncengine import AsyncEngine
from .hot import HotPool, Statement
from .model import SHOWN, TO, AckResult
from .schema import events, gates, pending_acks

#: The first key of the per-game advisory locks of ack batches (two-key advisory locks are a
#: space apart from the one-key global append lock).
ACK_LOCK_CLASS = int.from_bytes(b"ack", "big")

# Acks, many at once (``i`` numbers them). The pending row is the arbiter: whoever deletes it
# owns the decrement. The pending rows the batch deletes count their gates down by how many
# each lost, under the gate's row lock, and of the acks that bring a gate to 0 the last one
# reports the release (as if they came one after the other). ``open`` leaves out the rows this
# very statement deletes (its snapshot still sees them). Two batches would lock their rows in no
# set order and could deadlock, so a batch first takes a transaction-level advisory lock per
# game, in game order (``l``, which the delete joins, so it is read first), and batches of the
# same games take turns. The released event is read in a lateral subquery kept apart by
# ``OFFSET 0``: joined plainly, a generic plan made on an empty table looks it up by the game
# alone and reads every event of the game for each ack. ``open``'s look at the batch's own
# acks is kept apart the same way, or such a plan anti-joins them with every owed row.
_ACK_MANY = Statement(
    f"""
WITH a AS (
    SELECT * FROM unnest(
        CAST(:streams AS text[]), CAST(:versions AS integer[]), CAST(:players AS text[])
    ) WITH ORDINALITY AS a(stream_id, version, player_id, i)
),
l AS (
    SELECT count(*) AS n FROM (
        SELECT pg_advisory_xact_lock({ACK_LOCK_CLASS}, hashtext(g.stream_id))
        FROM (SELECT DISTINCT stream_id FROM a ORDER BY stream_id) AS g
    ) AS locked
),
once AS (  -- an ack repeated in the batch: the first one counts, the others are refused
    SELECT DISTINCT ON (stream_id, version, player_id) * FROM a
    ORDER BY stream_id, version, player_id, i
),
d AS (
    DELETE FROM pending_acks p USING once AS a, l
    WHERE p.stream_id = a.stream_id AND p.version = a.version AND p.player_id = a.player_id
    RETURNING a.i, p.stream_id, p.gate_version
),
c AS (
    SELECT stream_id, gate_version, count(*) AS n, max(i) AS last
    FROM d WHERE gate_version > 0 GROUP BY stream_id, gate_version
),
u AS (
    UPDATE gates g
    SET remaining = g.remaining - c.n,
        released_at = CASE WHEN g.remaining = c.n THEN now() ELSE g.released_at END
    FROM c
    WHERE g.stream_id = c.stream_id AND g.version = c.gate_version
    RETURNING g.version, g.remaining, c.last
)
SELECT a.i, EXISTS (SELECT 1 FROM d WHERE d.i = a.i) AS deleted, r.version AS released,
       e.stream_type AS game_type, extract(epoch FROM now() - e.recorded_at) AS waited,
       EXISTS (SELECT 1 FROM d WHERE d.i = a.i AND d.gate_version = 0) AS away,
       r.version IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM pending_acks p
           WHERE p.stream_id = a.stream_id AND p.gate_version > 0
             AND NOT EXISTS (
                 SELECT 1 FROM a AS mine
                 WHERE mine.stream_id = p.stream_id AND mine.version = p.version
                   AND mine.player_id = p.player_id OFFSET 0)
       ) AS open
FROM a LEFT JOIN u AS r ON r.last = a.i AND r.remaining = 0
LEFT JOIN LATERAL (  -- the released event, looked up by its whole key (see below)
    SELECT stream_type, recorded_at FROM events
    WHERE events.stream_id = a.stream_id AND events.version = r.version OFFSET 0
) AS e ON true
ORDER BY a.i
"""
)

#: Tries of a batch of acks that met a deadlock (with another batch, or an excuse).
ACK_TRIES = 3

#: The versions a row can hold (``integer`` columns): an ack of any other names no event, and
#: is refused here rather than sent to fail the statement it shares with other players' acks.
VERSIONS = range(-(2**31), 2**31)

NOT_GATING = 0
"""The ``gate_version`` of an acknowledgement that is owed but holds no gate (no gate has
version 0): an away player's, see :meth:`EventStore.excuse`."""

# True when no acknowledgement that holds the gate is owed for the stream.
_OPEN_SQL = f"""NOT EXISTS (
    SELECT 1 FROM pending_acks
    WHERE stream_id = CAST(:stream_id AS text) AND gate_version > {NOT_GATING}
)"""

_GATE_OPEN = Statement(f"SELECT {_OPEN_SQL}")

# The gate check of a release's follow-up: when the game is not open, the released gates
# are marked handled in the same statement (whatever opens the game releases a gate of its
# own, whose follow-up moves the game on); when it is open they are not, and the follow-up's
# append marks them (``Append.handled_gate``).
# (A data-modifying WITH runs to completion whether or not the query reads it.)
_GATE_OPEN_MARKING = Statement(
    f"""
WITH o AS (SELECT {_OPEN_SQL} AS open),
m AS (
    UPDATE gates SET handled = true
    FROM o
    WHERE NOT o.open AND gates.stream_id = CAST(:stream_id AS text)
      AND gates.version = ANY(CAST(:versions AS integer[]))
)
SELECT o.open FROM o
"""
)

_MARK_HANDLED = Statement(
    """
UPDATE gates SET handled = true
WHERE stream_id = CAST(:stream_id AS text) AND version = CAST(:version AS integer)
"""
)


_DEBTORS = text(
    """
SELECT DISTINCT player_id FROM pending_acks
WHERE stream_id = CAST(:stream_id AS text) AND gate_version <> 0
  AND abs(gate_version) <= CAST(:gate AS integer)
"""
)

# Lock the players' gating rows first (a concurrent ack either deleted a row already, and it is
# skipped, or waits and then deletes the row we moved, which counts nothing down), then count
# each gate down by the rows it lost; whoever brings ``remaining`` to 0 reports the release.
_EXCUSE = text(
    """
WITH old AS (
    SELECT version, player_id, gate_version FROM pending_acks
    WHERE stream_id = CAST(:stream_id AS text)
      AND player_id = ANY(CAST(:players AS text[])) AND gate_version <> 0
    FOR UPDATE
),
moved AS (
    UPDATE pending_acks p SET gate_version = 0 FROM old
    WHERE p.stream_id = CAST(:stream_id AS text) AND p.version = old.version
      AND p.player_id = old.player_id
    RETURNING old.gate_version
)
SELECT gate_version, count(*) AS n FROM moved WHERE gate_version > 0
GROUP BY gate_version ORDER BY gate_version
"""
)

_RELEASE = text(
    """
UPDATE gates
SET remaining = remaining - CAST(:n AS integer),
    released_at = CASE WHEN remaining = CAST(:n AS integer) THEN now() ELSE released_at END
WHERE stream_id = CAST(:stream_id AS text) AND version = CAST(:version AS integer)
RETURNING remaining
"""
)


@dataclass(frozen=True, eq=False)
class Released(AckResult):
    """The result of the ack that released a gate, with two measurements for the gate's
    metrics: the game's type and the seconds since the gate's notifications (its append's
    commit). They are not part of the outcome: it equals the :class:`AckResult` it extends."""

    game_type: str = ""
    waited: float = 0.0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AckResult):
            return NotImplemented
        return _outcome(self) == _outcome(other)

    __hash__ = AckResult.__hash__


def _outcome(result: AckResult) -> tuple[bool, int | None, bool, bool]:
    return (result.accepted, result.released_gate, result.open, result.away)


class Gates:
    """The gate part of :class:`~cardroom_eventstore.EventStore`."""

    engine: AsyncEngine
    _autocommit: AsyncEngine
    hot: HotPool
    relaxed: HotPool

    async def ack(self, stream_id: str, version: int, player_id: str) -> AckResult:
        """Acknowledge one event version for one player: :meth:`ack_many` of one."""
        return (await self.ack_many([(stream_id, version, player_id)]))[0]

    async def ack_many(self, acks: Sequence[tuple[str, int, str]]) -> list[AckResult]:
        """:meth:`ack` for many ``(stream, version, player)`` at once, in one statement.

        The results are those the acks would have had one after the other in this order,
        except ``open``, which holds as of the batch's commit (a later ack of the batch may
        open the game for an earlier release). A deadlock with another statement locking the
        same rows (an excuse) is retried. An ack of a version no column can hold is refused
        without the database, like an ack of a version that does not exist.
        """
        if not acks:
            return []
        valid = [a for a in acks if a[1] in VERSIONS]
        if len(valid) < len(acks):
            found = iter(await self.ack_many(valid))
            return [next(found) if a[1] in VERSIONS else AckResult(accepted=False) for a in acks]
        params = {
            "streams": [a[0] for a in acks],
            "versions": [a[1] for a in acks],
            "players": [a[2] for a in acks],
        }
        for attempt in range(ACK_TRIES):
            try:
                rows = await self.hot.fetch(_ACK_MANY, params)
                break
            except asyncpg.DeadlockDetectedError:
                if attempt == ACK_TRIES - 1:
                    raise
        return [
            (
                Released(
                    accepted=True,
                    released_gate=r["released"],
                    open=bool(r["open"]),
                    away=bool(r["away"]),
                    game_type=r["game_type"],
                    waited=float(r["waited"]),
                )
                if r["released"] is not None and r["game_type"] is not None
                else AckResult(
                    accepted=True,
                    released_gate=r["released"],
                    open=bool(r["open"]),
                    away=bool(r["away"]),
                )
            )
            if r["deleted"]
            else AckResult(accepted=False)
            for r in rows
        ]

    async def pending(self, stream_id: str) -> dict[int, frozenset[str]]:
        """Event version -> the players who still owe its acknowledgement."""
        query = (
            select(pending_acks.c.version, pending_acks.c.player_id)
            .where(pending_acks.c.stream_id == stream_id)
            .order_by(pending_acks.c.version)
        )
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(query)).all()
        owed: dict[int, set[str]] = {}
        for version, player_id in rows:
            owed.setdefault(version, set()).add(player_id)
        return {version: frozenset(players) for version, players in owed.items()}

    async def pending_for_player(self, stream_id: str, player_id: str) -> list[int]:
        """The versions this player has not acknowledged yet, ascending."""
        query = (
            select(pending_acks.c.version)
            .where(pending_acks.c.stream_id == stream_id, pending_acks.c.player_id == player_id)
            .order_by(pending_acks.c.version)
        )
        async with self._autocommit.connect() as conn:
            return list((await conn.scalars(query)).all())

    async def addressed(self, stream_id: str, version: int, player_id: str) -> bool:
        """Whether the event at ``version`` was sent to the player (its ``metadata.to``)."""
        if version not in VERSIONS:
            return False
        query = select(events.c.metadata[TO].op("?")(player_id)).where(
            events.c.stream_id == stream_id,
            events.c.version == version,
            events.c.metadata.op("?")(SHOWN).is_not(True),
        )
        # an event whose addressees were shown versions of their own (``metadata.shown``)
        shown = select(events.c.version).where(
            events.c.stream_id == stream_id,
            events.c.metadata[SHOWN][player_id].as_integer() == version,
        )
        async with self._autocommit.connect() as conn:
            if await conn.scalar(query):
                return True
            return await conn.scalar(shown.limit(1)) is not None

    async def gate_open(self, stream_id: str, *, handled: Collection[int] = ()) -> bool:
        """True when no acknowledgement that holds the gate is owed for the stream (rows of
        ``gate_version`` :data:`NOT_GATING` are owed by away players and hold nothing).

        ``handled``: released gates whose follow-up the caller is looking for; if the game is
        not open, they are marked handled by the same statement (as
        :meth:`mark_gate_handled`: the release that opens the game takes their place), which
        saves a statement on every release that finds the game held by a newer gate.
        """
        if not handled:
            row = await self.hot.fetchrow(_GATE_OPEN, {"stream_id": stream_id})
            assert row is not None
            return bool(row[0])
        # the relaxed pool, as mark_gate_handled: a mark lost in a crash is sent again
        params = {"stream_id": stream_id, "versions": sorted(handled)}
        row = await self.relaxed.fetchrow(_GATE_OPEN_MARKING, params)
        assert row is not None
        return bool(row["open"])

    async def debtors(self, stream_id: str, gate: int = 2**31 - 1) -> set[str]:
        """The players who owe a gating acknowledgement of a gate up to ``gate``."""
        async with self._autocommit.connect() as conn:
            rows = await conn.scalars(_DEBTORS, {"stream_id": stream_id, "gate": gate})
            return {str(p) for p in rows}

    async def excuse(self, stream_id: str, players: Collection[str]) -> list[int]:
        """The players' owed acknowledgements stop holding the gate; returns the gates released.

        For away players: the rows stay (``gate_version`` :data:`NOT_GATING`) until they
        acknowledge them, so their sync still lists everything they missed; the acktracker's
        :meth:`ack` deletes such a row and counts no gate down. Each release is reported once,
        here or by an ack (the rows are locked first, gates counted down in ascending order).
        """
        if not players:
            return []
        released: list[int] = []
        async with self.engine.begin() as conn:
            counts = (
                await conn.execute(_EXCUSE, {"stream_id": stream_id, "players": sorted(players)})
            ).all()
            for gate_version, n in counts:
                remaining = await conn.scalar(
                    _RELEASE, {"stream_id": stream_id, "version": int(gate_version), "n": int(n)}
                )
                if remaining == 0:
                    released.append(int(gate_version))
        return released

    async def opened_since(self, stream_id: str, version: int) -> datetime | None:
        """When the newest gate of ``version`` or later was released (None: none was): a
        player could act on what the event of ``version`` told it only from then on."""
        query = select(func.max(gates.c.released_at)).where(
            gates.c.stream_id == stream_id, gates.c.version >= version
        )
        async with self._autocommit.connect() as conn:
            opened: datetime | None = await conn.scalar(query)
        return opened

    async def unhandled_releases(
        self, limit: int = 100, *, older_than: float = 0.0
    ) -> list[tuple[str, int]]:
        """Released gates whose follow-up has not been handled yet, oldest release first;
        with ``older_than``, only those released at least that many seconds ago (a release
        younger than that is most likely being handled right now)."""
        query = (
            select(gates.c.stream_id, gates.c.version)
            .where(gates.c.remaining == 0, gates.c.handled.is_(False))
            .order_by(gates.c.released_at, gates.c.stream_id, gates.c.version)
            .limit(limit)
        )
        if older_than > 0:
            since = func.now() - func.make_interval(0, 0, 0, 0, 0, 0, older_than)
            query = query.where(gates.c.released_at <= since)
        async with self._autocommit.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [(str(stream_id), int(version)) for stream_id, version in rows]

    async def mark_gate_handled(self, stream_id: str, version: int) -> None:
        """Mark the gate's follow-up as handled (see also ``Append.handled_gate``)."""
        # lost in a crash, the gate is found unhandled and its release sent again
        await self.relaxed.fetch(_MARK_HANDLED, {"stream_id": stream_id, "version": version})
