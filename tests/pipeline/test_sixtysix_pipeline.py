"""The 66 game end to end on real NATS and PostgreSQL: 3 and 5 bots play whole multi-round
games in both protocol generations, and the stored log replays to the outcome they saw."""

from __future__ import annotations

import pytest
from cardroom_bots import play_table
from cardroom_engine import Table, registry
from cardroom_games.sixtysix.state import ROUND_DEALT
from cardroom_runtime.games import load_games
from support.stack import Stack, as_event

load_games("")


@pytest.mark.parametrize("players", [3, 5])
@pytest.mark.parametrize("protocol", ["v1", "v2"])
async def test_bots_play_a_whole_sixtysix_game(stack: Stack, protocol: str, players: int) -> None:
    seats = [f"p{i}" for i in range(1, players + 1)]
    game, outcome = await play_table(
        stack.nats_url,
        "sixtysix",
        seats,
        subject_root=stack.root,
        config={"protocol": protocol},
        kinds=["heuristic", "random"],
        timeout=300,
    )
    records = await stack.store.read_stream(game)
    assert [r.version for r in records] == list(range(1, len(records) + 1))
    final = Table(registry.get("sixtysix")).replay([as_event(r) for r in records])
    assert final.status == "finished"
    assert final.outcome == outcome
    assert final.game.protocol == protocol
    # nobody scores 66 in one round (at most 4 cards of 13 plus 5), so a game has rounds
    assert sum(r.type == ROUND_DEALT for r in records) >= 2
    assert sorted(p for group in outcome["ranking"] for p in group) == seats
