"""What this process's event stores did: appends, group-commit sizes, database connections.

Plain counters of the process (one set for every store it opens), kept here so the store
needs no metrics library; the runtime exposes them in Prometheus's format at each scrape
(``cardroom_runtime.metrics``). Counting is an addition per statement: always on.

- ``appends`` / ``events``: appends committed (one game's batch each) and their events;
- ``statements`` and ``group_sizes``: append statements run, and how many appends each one
  carried (a group commit carries many, a quiet room's append one), as histogram buckets;
- ``connections_opened[pool]``: connections opened to PostgreSQL by each pool (``hot``,
  ``relaxed``, ``engine``, ``listener``); a pool opens its connections as it needs them, so
  after warm-up a rising count means connections were lost and opened again;
- ``connections_lost[pool]``: connections found dead (a statement met an unreachable
  database, the listener was terminated, the engine invalidated a connection).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

__all__ = ["GROUP_BUCKETS", "STATS", "StoreStats"]

# appends per statement: a histogram's upper bounds (the last bucket, +Inf, is implicit)
GROUP_BUCKETS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclass
class StoreStats:
    appends: int = 0
    events: int = 0
    statements: int = 0
    # counts per bucket of GROUP_BUCKETS, then +Inf (not cumulative); and their sum
    group_counts: list[int] = field(default_factory=lambda: [0] * (len(GROUP_BUCKETS) + 1))
    group_sum: int = 0
    connections_opened: dict[str, int] = field(default_factory=dict)
    connections_lost: dict[str, int] = field(default_factory=dict)

    def statement(self, appends: int) -> None:
        """One append statement ran, carrying ``appends`` appends."""
        self.statements += 1
        self.group_counts[bisect.bisect_left(GROUP_BUCKETS, appends)] += 1
        self.group_sum += appends

    def appended(self, events: int) -> None:
        """One append was committed, with ``events`` events."""
        self.appends += 1
        self.events += events

    def opened(self, pool: str) -> None:
        self.connections_opened[pool] = self.connections_opened.get(pool, 0) + 1

    def lost(self, pool: str) -> None:
        self.connections_lost[pool] = self.connections_lost.get(pool, 0) + 1


STATS = StoreStats()
"""This process's figures (every store adds to them)."""
