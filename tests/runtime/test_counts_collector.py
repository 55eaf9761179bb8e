"""``CountsCollector``: counts a component keeps itself (the auth service's decisions),
served as one counter family at each scrape, the values it names at 0 before any count."""

from __future__ import annotations

import collections

from cardroom_runtime.metrics import CountsCollector, Metrics
from prometheus_client import generate_latest


def test_counts_are_read_at_each_scrape_and_named_values_start_at_0() -> None:
    counts: collections.Counter[str] = collections.Counter()
    metrics = Metrics()
    metrics.registry.register(
        CountsCollector(
            "cardroom_things", "Things, by kind", "kind", lambda: counts, ["good", "bad"]
        )
    )
    first = generate_latest(metrics.registry).decode()
    assert 'cardroom_things_total{kind="good"} 0.0' in first
    assert 'cardroom_things_total{kind="bad"} 0.0' in first
    counts["bad"] += 2
    counts["odd"] += 1
    later = generate_latest(metrics.registry).decode()
    assert 'cardroom_things_total{kind="bad"} 2.0' in later
    assert 'cardroom_things_total{kind="odd"} 1.0' in later
