"""Every hosted game plays to its end through the services, with its own bots."""

from __future__ import annotations

from typing import Any

import pytest
from cardroom_bots import play_table
from cardroom_engine import Table, registry
from cardroom_runtime.games import load_games
from support.stack import Stack, as_event

load_games("")
REAL = [name for name in registry.names() if name != "highcard"]
# small configurations: the point is the whole path, not a long game
CONFIGS: dict[str, dict[str, Any]] = {"take5": {"turn_count": 4, "win_score": 20}}


def test_the_real_games_are_registered() -> None:
    assert {"sixtysix", "take5", "papas"} <= set(REAL)


@pytest.mark.parametrize("game_type", REAL)
async def test_bots_play_a_real_game_through_the_services(stack: Stack, game_type: str) -> None:
    game, outcome = await play_table(
        stack.nats_url,
        game_type,
        ["p1", "p2", "p3"],
        subject_root=stack.root,
        config=CONFIGS.get(game_type, {}),
        kinds=["heuristic", "random"],
        timeout=240,
    )
    records = await stack.store.read_stream(game)
    assert [r.version for r in records] == list(range(1, len(records) + 1))
    final = Table(registry.get(game_type)).replay([as_event(r) for r in records])
    assert final.status == "finished"
    assert final.outcome == outcome
    assert sorted(p for group in outcome["ranking"] for p in group) == ["p1", "p2", "p3"]
