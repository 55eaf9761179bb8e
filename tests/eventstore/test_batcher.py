"""The natural batching of appends and acks (``Batcher``): no wait when idle, one batch for
what arrives while a batch is being written, a failed batch retried item by item (see also
test_batch_isolation.py)."""

from __future__ import annotations

import asyncio

import pytest
from cardroom_eventstore.hot import Batcher
from support.cancellation import LosesFirstCancellation, ends


class Recorder:
    """A ``run`` that holds each batch until told to go on, and records the batches."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.tasks: list[asyncio.Task[object] | None] = []
        self.go = asyncio.Event()
        self.started = asyncio.Event()
        self.fail: set[int] = set()
        self.in_flight = 0
        self.most_in_flight = 0

    async def run(self, items: list[int]) -> list[int]:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return await self._run(items)
        finally:
            self.in_flight -= 1

    async def _run(self, items: list[int]) -> list[int]:
        self.batches.append(items)
        self.tasks.append(asyncio.current_task())
        self.started.set()
        await self.go.wait()
        if self.fail & set(items):
            raise RuntimeError("refused")
        return [i * 10 for i in items]


async def test_idle_items_run_at_once_in_the_submitters_task() -> None:
    rec = Recorder()
    rec.go.set()
    batcher: Batcher[int, int] = Batcher(rec.run, 10)
    assert await batcher.submit(1) == 10
    assert await batcher.submit(2) == 20
    assert rec.batches == [[1], [2]]
    assert rec.tasks == [asyncio.current_task()] * 2  # no hand-over to the batch task
    await batcher.close()


async def test_items_that_arrive_while_one_is_written_go_together() -> None:
    rec = Recorder()
    batcher: Batcher[int, int] = Batcher(rec.run, 3)
    first = asyncio.create_task(batcher.submit(1))
    await rec.started.wait()
    rest = [asyncio.create_task(batcher.submit(i)) for i in range(2, 7)]
    await asyncio.sleep(0)  # let them queue
    rec.go.set()
    assert await first == 10
    assert [await t for t in rest] == [20, 30, 40, 50, 60]
    # the first alone, then the five that waited, in batches of at most three, one batch
    # being written at a time
    assert rec.batches == [[1], [2, 3, 4], [5, 6]]
    assert rec.most_in_flight == 1
    await batcher.close()


async def test_a_failed_batch_fails_only_its_bad_item_and_the_batcher_goes_on() -> None:
    rec = Recorder()
    rec.fail = {3}
    batcher: Batcher[int, int] = Batcher(rec.run, 10)
    first = asyncio.create_task(batcher.submit(1))
    await rec.started.wait()
    waiting = [asyncio.create_task(batcher.submit(i)) for i in (2, 3)]
    await asyncio.sleep(0)
    rec.go.set()
    assert await first == 10
    assert await waiting[0] == 20  # written again alone
    with pytest.raises(RuntimeError, match="refused"):
        await waiting[1]
    assert rec.batches == [[1], [2, 3], [2], [3]]
    with pytest.raises(RuntimeError, match="refused"):
        await batcher.submit(3)  # idle again: alone, in this task
    assert await batcher.submit(4) == 40
    await batcher.close()


async def test_close_ends_a_batch_whose_cancellation_was_lost() -> None:
    """A write that carries on after its first cancellation: ``close`` cancels again until
    the batch task has ended, and its waiting item gets an error."""
    hold = asyncio.Event()
    write = LosesFirstCancellation()

    async def run(items: list[int]) -> list[int]:
        if items == [1]:
            await hold.wait()  # the submitter's own write, while 2 queues for the batch task
            return [10]
        await write.wait()
        return [20]

    batcher: Batcher[int, int] = Batcher(run, 10)
    first = asyncio.create_task(batcher.submit(1))
    await asyncio.sleep(0)
    second = asyncio.create_task(batcher.submit(2))
    await asyncio.sleep(0)  # queued for the batch task
    hold.set()
    assert await first == 10
    await write.entered.wait()
    assert await ends(batcher.close()), "close waited for ever on the batch task"
    assert write.cancellations == 2
    with pytest.raises(RuntimeError, match="stopped"):
        await second
