"""cardroom_runtime.tasks: a stop ends even when a task loses its cancellation."""

from __future__ import annotations

import asyncio

from cardroom_runtime.tasks import cancel_and_wait


async def _deaf(entered: asyncio.Event, swallowed: list[int]) -> None:
    """A loop that swallows its first cancellation, as one lost inside Python 3.11's
    ``asyncio.wait_for`` is; it ends only when cancelled again."""
    entered.set()
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if swallowed:
                raise
            swallowed.append(1)


async def test_a_task_that_loses_a_cancellation_is_cancelled_again() -> None:
    entered, swallowed = asyncio.Event(), []
    task = asyncio.create_task(_deaf(entered, swallowed))
    await entered.wait()
    # one cancellation is not enough: the task runs on
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=0.2)
    assert not done
    assert swallowed == [1]
    await asyncio.wait_for(cancel_and_wait([task, None], again=0.05), 5)
    assert task.cancelled()


async def test_finished_and_failed_tasks_are_left_as_they_are() -> None:
    async def fail() -> None:
        raise ValueError("boom")

    async def quick() -> int:
        return 1

    failed, finished = asyncio.create_task(fail()), asyncio.create_task(quick())
    await asyncio.wait({failed, finished})
    await cancel_and_wait([failed, finished])
    assert finished.result() == 1
    assert isinstance(failed.exception(), ValueError)
