"""Killing a service process (SIGKILL) mid-game and starting it again loses nothing."""

from __future__ import annotations

import asyncio

import pytest
from cardroom_bots import BotPlayer
from cardroom_engine import Table, registry
from cardroom_wire import Notification
from support.stack import ProcessStack, Recorder, as_event, contiguous, projected, wait_until

GAMES = 4


async def _seat_bots(stack: ProcessStack) -> tuple[list[str], list[tuple[BotPlayer, Recorder]]]:
    players: list[tuple[BotPlayer, Recorder]] = []
    games = []
    for g in range(GAMES):
        pair = []
        for p in ("a", "b"):
            bot = BotPlayer(await stack.client(f"g{g}{p}"))
            rec = Recorder()
            observe = bot._observe

            async def handler(note: Notification, rec: Recorder = rec, observe=observe) -> None:
                await rec(note)
                await observe(note)

            bot.client.on_notification(handler, after_ack=bot._act)
            pair.append((bot, rec))
        game = await pair[0][0].client.create("highcard", {"rounds": 4}, seats=2)
        for bot, _ in pair:
            bot.watch(game, "highcard")
        await pair[1][0].client.join(game)
        games.append(game)
        players += pair
    return games, players


@pytest.mark.parametrize("victim", ["relay", "projector", "acktracker", "gamemaster"])
async def test_kill_and_restart_loses_nothing(process_stack: ProcessStack, victim: str) -> None:
    stack = process_stack
    games, players = await _seat_bots(stack)

    def received() -> int:
        return sum(len(n) for _, rec in players for n in rec.seen.values())

    await wait_until(lambda: received() >= 12, timeout=60)  # mid-game
    stack.processes[victim].kill()
    await stack.processes[victim].start()
    async with asyncio.timeout(120):
        await asyncio.gather(*(bot.finished[g].wait() for bot, _ in players for g in bot.bots))

    table = Table(registry.get("highcard"))
    for game in games:
        records = await stack.store.read_stream(game)
        assert [r.version for r in records] == list(range(1, len(records) + 1))
        assert table.replay([as_event(r) for r in records]).status == "finished"
        ids = [r.metadata.get("command_id") for r in records if r.metadata.get("command_id")]
        assert len(ids) == len(set(ids))  # no command applied twice
    # the projector follows the games (players get their notifications from the gamemaster):
    # once it has caught up, it has stored exactly what every player saw
    for game in games:
        await projected(stack.store, game)
    for bot, rec in players:
        for game in bot.bots:
            seqs = rec.seqs(game)
            assert contiguous(seqs), (victim, bot.player, seqs)
            stored = await stack.store.last_seq(game, bot.player)
            assert seqs[-1] == stored  # saw every notification the projector made
    assert stack.processes[victim].starts == 2
