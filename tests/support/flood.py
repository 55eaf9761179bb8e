"""A hostile player's connection, as a process of its own: it sends requests as fast as it
can, with its own inbox as the reply address, and counts the answers by code.

    python -m support.flood '<json>'   # {"url", "root", "player", "count", "seconds"}

Once connected it prints ``ready`` and reads one line from its standard input: the JSON list
of the games to aim at (its own first). When done it prints one JSON line: how many requests
it sent, in how long, and the answers.
It runs in a process of its own, as a hostile client would (on a machine of its own), so that
its work does not slow the bot players of the test process, whose pace is being measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
import time
from collections import Counter
from typing import Any

import nats
import orjson
from cardroom_wire import Subjects


def requests(s: Subjects, me: str, own: str, others: list[str]) -> list[tuple[str, bytes]]:
    """One round of everything a player may ask, at its own table (in the lobby) and at
    tables that play without it: none of it would change anything, were it handled."""
    out: list[tuple[str, bytes]] = []
    for game in [own, *others]:
        out += [
            (s.cmd(game, me), b'{"type":"bet","id":"f1","amount":1}'),
            (s.cmd(game, me), b'{"type":"fold","id":"f2"}'),
            (s.ack(game, me), b'{"type":"ack","version":3}'),
            (s.ack(game, me), b'{"type":"ack","version":99}'),
            (s.sync(game, me), b'{"type":"sync"}'),
            (s.lobby("get", me), orjson.dumps({"game": game})),
        ]
        if game == own:
            out.append((s.lobby("start", me), orjson.dumps({"game": game})))
        else:  # the others' tables have started: a join is refused
            out.append((s.lobby("join", me), orjson.dumps({"game": game})))
    out += [
        (s.lobby("list", me), b"{}"),
        (s.lobby("create", me), b'{"game_type":"highcard","seats":99}'),
        (s.cmd(own, me), b"{not json"),
    ]
    return out


async def flood(url: str, root: str, player: str, count: int, seconds: float) -> dict[str, Any]:
    s = Subjects(root)
    inbox = s.inbox(player)
    nc = await nats.connect(url, inbox_prefix=inbox, name=f"flood-{player}")
    answers: Counter[str] = Counter()
    expected: list[int] = []
    all_in = asyncio.Event()

    async def count_answer(msg: Any) -> None:
        answer = orjson.loads(msg.data)
        answers["ok" if answer.get("ok") else answer["error"]["code"]] += 1
        if expected and answers.total() >= expected[0]:
            all_in.set()

    await nc.subscribe(f"{inbox}.>", cb=count_answer)
    await nc.flush()
    print("ready", flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    games = list(orjson.loads(line))
    batch = itertools.cycle(requests(s, player, games[0], games[1:]))
    sent = 0
    started = time.monotonic()
    while sent < count and time.monotonic() - started < seconds:
        for subject, data in itertools.islice(batch, 200):
            await nc.publish(subject, data, reply=f"{inbox}.f.{sent}")
            sent += 1
        await asyncio.sleep(0)  # let the answers in
    await nc.flush()
    elapsed = time.monotonic() - started
    # every request is answered once, handled or refused
    expected.append(sent)
    if answers.total() >= sent:
        all_in.set()
    with contextlib.suppress(TimeoutError):  # the test tells the missing answers
        await asyncio.wait_for(all_in.wait(), 60)
    await nc.flush()  # and any answer beyond one each
    await nc.close()
    return {"sent": sent, "elapsed": elapsed, "answers": dict(answers)}


def main() -> None:
    args = orjson.loads(sys.argv[1])
    result = asyncio.run(
        flood(args["url"], args["root"], args["player"], int(args["count"]), float(args["seconds"]))
    )
    sys.stdout.write(orjson.dumps(result).decode() + "\n")


if __name__ == "__main__":
    main()
