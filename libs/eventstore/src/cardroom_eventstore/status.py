"""What a running cardroom is doing, read from its database (``cardroom status``).

One snapshot (:func:`snapshot`) of: the tables by game type and status, with their seats and
how many of those are away (the projector's ``tables`` read model); the gates that wait for
acknowledgements, with how long the oldest has waited (from its event's commit); how far
the relay and the projector are behind the event log; and the events committed in the last
minute. Only this package reads its tables; the command renders what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa

from .asyncengine import AsyncEngine

__all__ = ["Snapshot", "TableCount", "combined", "snapshot"]

_TABLES = sa.text(
    """
SELECT game_type, status, count(*) AS tables,
       coalesce(sum(jsonb_array_length(summary -> 'seats')), 0) AS seats,
       coalesce(sum(jsonb_array_length(coalesce(summary -> 'away', '[]'::jsonb))), 0) AS away
FROM tables GROUP BY game_type, status ORDER BY game_type, status
"""
)

# a gate waits while some gating ack is owed; it has waited since its event's commit (the
# clock now, not the transaction's start: a gate committed since would read a wait below 0)
_GATES = sa.text(
    """
SELECT count(*) AS gates,
       coalesce(extract(epoch FROM clock_timestamp() - min(e.recorded_at)), 0) AS oldest
FROM (SELECT DISTINCT stream_id, gate_version FROM pending_acks WHERE gate_version > 0) AS g
JOIN events e ON e.stream_id = g.stream_id AND e.version = g.gate_version
"""
)

_LAGS = sa.text(
    """
SELECT (SELECT coalesce(max(position), 0) FROM events)
         - (SELECT coalesce(max(position), 0) FROM checkpoints WHERE name = 'relay') AS relay,
       (SELECT coalesce(sum(s.version - coalesce(c.position, 0)), 0)
        FROM streams s LEFT JOIN checkpoints c ON c.name = 'projector:' || s.stream_id
        WHERE coalesce(c.position, 0) < s.version) AS projector,
       (SELECT count(*) FROM events WHERE recorded_at > now() - interval '1 minute') AS recent
"""
)


@dataclass(frozen=True)
class TableCount:
    game_type: str
    status: str
    tables: int
    seats: int
    away: int


@dataclass(frozen=True)
class Snapshot:
    tables: list[TableCount] = field(default_factory=list)
    gates_waiting: int = 0
    oldest_gate_seconds: float = 0.0
    relay_behind: int = 0  # events not yet published on JetStream
    projector_behind: int = 0  # events not yet projected, summed over games
    events_last_minute: int = 0


def combined(snaps: list[Snapshot]) -> Snapshot:
    """Several shards' snapshots as one: counts summed, the oldest gate's wait the longest."""
    if len(snaps) == 1:
        return snaps[0]
    counts: dict[tuple[str, str], list[int]] = {}
    for snap in snaps:
        for t in snap.tables:
            into = counts.setdefault((t.game_type, t.status), [0, 0, 0])
            into[0] += t.tables
            into[1] += t.seats
            into[2] += t.away
    return Snapshot(
        tables=[TableCount(k[0], k[1], *v) for k, v in sorted(counts.items())],
        gates_waiting=sum(s.gates_waiting for s in snaps),
        oldest_gate_seconds=max((s.oldest_gate_seconds for s in snaps), default=0.0),
        relay_behind=sum(s.relay_behind for s in snaps),
        projector_behind=sum(s.projector_behind for s in snaps),
        events_last_minute=sum(s.events_last_minute for s in snaps),
    )


async def snapshot(engine: AsyncEngine) -> Snapshot:
    """One look at the database (three statements, one connection)."""
    async with engine.connect() as conn:
        tables = [
            TableCount(str(r[0]), str(r[1]), int(r[2]), int(r[3]), int(r[4]))
            for r in (await conn.execute(_TABLES)).all()
        ]
        gates = (await conn.execute(_GATES)).one()
        lags = (await conn.execute(_LAGS)).one()
    return Snapshot(
        tables=tables,
        gates_waiting=int(gates[0]),
        oldest_gate_seconds=float(gates[1]),
        relay_behind=max(0, int(lags[0])),
        projector_behind=int(lags[1]),
        events_last_minute=int(lags[2]),
    )
