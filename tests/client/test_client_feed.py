"""The client SDK's feed: notifications handled once, in ``seq`` order, across syncs.

The sync replies here come from a stand-in responder on a real NATS server, so the test can
choose what each reply says and when it arrives.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
from cardroom_client import Client
from cardroom_wire import Notification, Subjects
from support.stack import wait_until


def _note(seq: int) -> dict[str, Any]:
    # ack False: nothing to acknowledge, so the test needs no acktracker
    return Notification(
        game="g1", player="p1", seq=seq, version=seq, message={"type": "M"}, ack=False
    ).model_dump(mode="json")


def _reply(seqs: range, last_seq: int) -> dict[str, Any]:
    return {
        "ok": True,
        "game": "g1",
        "player": "p1",
        "version": last_seq,
        "view": {},
        "notifications": [_note(s) for s in seqs],
        "last_seq": last_seq,
    }


async def test_overlapping_syncs_skip_nothing(nats_url: str, subject_root: str) -> None:
    """Two sync replies queued before the first is handled: the end of the first may only
    skip to its own ``last_seq`` (an earlier client skipped to the second one's, and lost
    what only the second one listed)."""
    root = f"{subject_root}feed"
    server = await nats.connect(nats_url)
    replies = [_reply(range(3, 7), 6), _reply(range(4, 10), 9)]

    async def answer(msg: Any) -> None:
        await msg.respond(json.dumps(replies.pop(0)).encode())

    await server.subscribe(Subjects(root).sync("g1", "p1"), cb=answer)
    await server.flush()
    client = await Client.connect(nats_url, "p1", subject_root=root)
    seen: list[int] = []
    both_queued = asyncio.Event()

    async def handler(note: Notification) -> None:
        seen.append(note.seq)
        if note.seq == 3:  # hold the feed until the second reply is queued too
            await both_queued.wait()

    client.on_notification(handler)
    try:
        client._feed("g1").last_seq = 2
        await client.sync("g1")
        await client.sync("g1")
        both_queued.set()
        await wait_until(lambda: seen[-1:] == [9], timeout=10)
        assert seen == [3, 4, 5, 6, 7, 8, 9]
    finally:
        await client.close()
        await server.close()


async def test_a_fresh_client_handles_what_its_first_sync_lists(
    nats_url: str, subject_root: str
) -> None:
    """A client started again in a game (``last_seq`` 0) whose sync lists notifications 12
    and 14 (everything else acknowledged, by its earlier run): it handles both, in order.
    An earlier client held them as after a gap and dropped them at the reply's end, then
    acknowledged their resends unhandled."""
    root = f"{subject_root}fresh"
    server = await nats.connect(nats_url)
    reply = _reply(range(0), 14) | {"notifications": [_note(12), _note(14)]}

    async def answer(msg: Any) -> None:
        await msg.respond(json.dumps(reply).encode())

    await server.subscribe(Subjects(root).sync("g1", "p1"), cb=answer)
    await server.flush()
    client = await Client.connect(nats_url, "p1", subject_root=root)
    seen: list[int] = []

    async def handler(note: Notification) -> None:
        seen.append(note.seq)

    client.on_notification(handler)
    try:
        synced = await client.follow("g1")
        assert synced is not None
        assert synced.last_seq == 14
        await wait_until(lambda: client._feed("g1").last_seq == 14, timeout=10)
        assert seen == [12, 14]
    finally:
        await client.close()
        await server.close()
