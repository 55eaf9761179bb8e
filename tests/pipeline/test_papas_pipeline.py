"""Dónde las papas queman end to end on real NATS and PostgreSQL, with the timers service.

2, 4 and 6 bots play whole games; and the reaction window's deadline closes a window nobody
answers: a player that stays silent in its first windows makes the timers service fire the
game's ``reaction`` deadline, which the log shows as ``papas.not_interrupted`` with reason
``deadline`` (the timeout's key in its metadata), and the game goes on to its end.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest
from cardroom_bots import play_table
from cardroom_bots.players import BotPlayer
from cardroom_engine import Table, registry
from cardroom_runtime.games import load_games
from cardroom_wire import Notification
from support.stack import Stack, as_event

load_games("")


@pytest.mark.parametrize("players", [2, 4, 6])
async def test_bots_play_a_whole_papas_game(stack: Stack, players: int) -> None:
    seats = [f"p{i}" for i in range(1, players + 1)]
    game, outcome = await play_table(
        stack.nats_url,
        "papas",
        seats,
        subject_root=stack.root,
        kinds=["heuristic", "random"],
        timeout=300,
    )
    records = await stack.store.read_stream(game)
    assert [r.version for r in records] == list(range(1, len(records) + 1))
    final = Table(registry.get("papas")).replay([as_event(r) for r in records])
    assert final.status == "finished"
    assert final.outcome == outcome
    assert sorted(p for group in outcome["ranking"] for p in group) == seats


@dataclass
class SilentAtFirst(BotPlayer):
    """Ignores its first ``silent_windows`` reaction windows, then plays like its bot."""

    silent_windows: int = 3
    ignored: set[int] = field(default_factory=set)

    async def _act(self, note: Notification) -> None:
        windows = {int(a["window"]) for a in note.actions if a.get("type") == "SkipReaction"}
        if windows and (windows <= self.ignored or len(self.ignored) < self.silent_windows):
            self.ignored |= windows
            return
        await super()._act(note)


async def test_the_reaction_deadline_closes_an_unanswered_window(stack: Stack) -> None:
    silent = 3
    bots = [
        BotPlayer(await stack.client("p1"), kind="heuristic"),
        SilentAtFirst(await stack.client("p2"), kind="heuristic", silent_windows=silent),
    ]
    game = await bots[0].client.create("papas", {"reaction_seconds": 0.3}, seats=2)
    for bot in bots:
        bot.watch(game, "papas")
    await bots[1].client.join(game)
    async with asyncio.timeout(300):
        await asyncio.gather(*(b.finished[game].wait() for b in bots))

    records = await stack.store.read_stream(game)
    closed = [r for r in records if r.type == "papas.not_interrupted"]
    by_deadline = [r for r in closed if r.data["reason"] == "deadline"]
    # p2 is the only one who can react to p1's plays: each window it ignored ran out
    assert len(bots[1].ignored) == silent
    assert len(by_deadline) >= silent
    for record in by_deadline:
        assert record.metadata.get("timeout") == f"game:reaction:{record.data['window']}"
    # afterwards the windows closed because everyone passed, not by the clock alone
    assert any(r.data["reason"] == "all_skipped" for r in closed)
    final = Table(registry.get("papas")).replay([as_event(r) for r in records])
    assert final.status == "finished"


async def test_private_passes_are_acknowledged_by_the_versions_shown(stack: Stack) -> None:
    """A pass is told to the passer only, and the others do not see the version move: every
    addressee acknowledges by the version it was shown (``metadata.shown``), and the game
    never waits on an ack that cannot match (nobody is marked away for want of one)."""
    seats = ["q1", "q2", "q3", "q4"]
    game, outcome = await play_table(
        stack.nats_url,
        "papas",
        seats,
        subject_root=stack.root,
        config={"table": {"ack_timeout": 5}},
        kinds=["heuristic", "random"],
        timeout=300,
    )
    records = await stack.store.read_stream(game)
    assert not [r for r in records if r.type == "table.away"]
    passes = [r for r in records if r.type == "papas.reaction_skipped"]
    assert passes, "somebody passed"
    for record in passes:
        assert record.metadata["to"] == [record.data["player"]]
    # after the first pass the others' numbers run behind the log's
    shown = [r for r in records if r.metadata.get("shown")]
    assert shown
    assert all(min(r.metadata["shown"].values()) < r.version for r in shown)
    final = Table(registry.get("papas")).replay([as_event(r) for r in records])
    assert final.private == len(passes)
    assert sorted(p for group in outcome["ranking"] for p in group) == seats
