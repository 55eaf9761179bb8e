"""A sync never answers from an older state than what the player was already sent.

The gamemaster tells players at once; the projector, which answers syncs, follows the event
stream a moment later. Here it hears of nothing more at all (the relay is killed once the
game has started, before any move),
so every sync after the game ended comes before the projector learnt of the end: it must
still answer with the finished game, as recent as the notifications the players hold."""

from __future__ import annotations

import asyncio

from cardroom_bots import BotPlayer
from cardroom_wire import Notification, SyncReply
from support.stack import ProcessStack, Recorder, projected, wait_until


async def test_the_first_sync_after_the_end_is_not_older_than_the_game_over(
    process_stack: ProcessStack,
) -> None:
    stack = process_stack
    players: list[tuple[BotPlayer, Recorder]] = []
    # the bots make no move until the relay is dead: a game that went on meanwhile could be
    # over, and wholly relayed and projected, before the kill
    go = asyncio.Event()
    for name in ("sa", "sb"):
        bot = BotPlayer(await stack.client(name))
        rec = Recorder()

        async def handler(note: Notification, rec: Recorder = rec, bot: BotPlayer = bot) -> None:
            await rec(note)
            await bot._observe(note)

        async def act(note: Notification, bot: BotPlayer = bot) -> None:
            await go.wait()
            await bot._act(note)

        bot.client.on_notification(handler, after_ack=act)
        players.append((bot, rec))
    game = await players[0][0].client.create("highcard", {"rounds": 3}, seats=2)
    for bot, _ in players:
        bot.watch(game, "highcard")
    await players[1][0].client.join(game)
    await wait_until(lambda: all(rec.seen.get(game) for _, rec in players))  # it started
    await projected(stack.store, game)  # the views exist
    stack.processes["relay"].kill()  # from now on the projector hears of nothing
    go.set()
    async with asyncio.timeout(120):
        await asyncio.gather(*(bot.finished[game].wait() for bot, _ in players))
    assert await stack.store.checkpoint(f"projector:{game}") < await stack.store.stream_version(
        game
    )
    for bot, rec in players:
        last = rec.seen[game][-1]
        assert last.message["type"] == "GameOver"
        client = bot.client
        subject = client.subjects.sync(game, client.player)
        reply = SyncReply.model_validate(await client.request(subject, {"type": "sync"}))
        assert reply.version >= last.version
        assert reply.view["status"] == "finished"
        assert reply.last_seq >= last.seq
