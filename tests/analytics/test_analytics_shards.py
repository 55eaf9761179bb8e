"""Analytics over an event store in shards: each shard numbers its events' positions from 1,
and the relays' streams interleave on JetStream. The live consumer applies a batch in stream
order, which is the order a rebuild folds, so ratings (each game's update starts from what
the games before it left) come out the same both ways."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import nats
from analytics_support import T0, AnalyticsRun, publish, records_of, simulate, wait_applied
from cardroom_analytics import query_subject, read_events, rebuild
from cardroom_engine import registry

PLAYERS = ["heuristic-1", "random-1"]


def _shard(prefix: str, seed: int) -> list[dict[str, Any]]:
    """Two 66 games between the same two bots, as one shard's relay publishes them."""
    kinds = {p: p.rsplit("-", 1)[0] for p in PLAYERS}
    out: list[dict[str, Any]] = []
    for g in range(2):
        local = simulate(registry.get("sixtysix"), PLAYERS, seed + g, kinds)
        out += records_of(
            local, f"{prefix}{g}", first_position=len(out) + 1, start=T0 + timedelta(minutes=g)
        )
    return out


async def test_interleaved_shards_are_applied_in_stream_order_as_a_rebuild_folds(
    analytics_only: AnalyticsRun,
) -> None:
    run = analytics_only
    first, second = _shard("g", 0), _shard("s1-g", 10)
    # shard 1's games reach the stream first, with positions shard 0's games have too: in
    # position order shard 0's first game would finish between shard 1's two
    records = second + first
    await publish(run.nats_url, run.subjects, records)
    await wait_applied(run.engine, len(records))
    report = await rebuild(run.engine, lambda: read_events(run.nats_url, run.subjects))
    assert report.games == 4
    assert report.equal, report.differences


async def test_games_are_listed_latest_first_across_shards(analytics_only: AnalyticsRun) -> None:
    """Positions are counted per shard, so they cannot say which game is the latest: shard
    0's game, far along its own count, finished an hour before shard 1's."""
    run = analytics_only
    kinds = {p: p.rsplit("-", 1)[0] for p in PLAYERS}
    early = records_of(
        simulate(registry.get("sixtysix"), PLAYERS, 1, kinds), "g-early", first_position=1000
    )
    late = records_of(
        simulate(registry.get("sixtysix"), PLAYERS, 2, kinds),
        "s1-g-late",
        start=T0 + timedelta(hours=1),
    )
    await publish(run.nats_url, run.subjects, early + late)
    await wait_applied(run.engine, len(early) + len(late))
    nc = await nats.connect(run.nats_url)
    try:
        reply = await nc.request(query_subject(run.subjects, "games"), b"{}", timeout=10)
    finally:
        await nc.close()
    listed = json.loads(reply.data)["games"]
    assert [g["game"] for g in listed] == ["s1-g-late", "g-early"]
