"""A stand-in for a library call that loses a cancellation: Python 3.11's
``asyncio.wait_for`` can swallow one that comes as its future completes, and the call then
goes on as if nothing had happened."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class LosesFirstCancellation:
    """``await call.wait()`` blocks for ever, carries on after its first cancellation and
    ends at the next; ``cancellations`` counts them, ``entered`` is set once it waits."""

    def __init__(self) -> None:
        self.cancellations = 0
        self.entered = asyncio.Event()

    async def wait(self) -> None:
        self.entered.set()
        while True:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancellations += 1
                if self.cancellations > 1:
                    raise


async def ends(stopping: Coroutine[Any, Any, None], timeout: float = 10) -> bool:
    """Whether ``stopping`` ends within ``timeout`` seconds, waited for without cancelling
    it (a cancellation of a stop could itself end the wait that is being tested)."""
    task = asyncio.create_task(stopping)
    done, _ = await asyncio.wait([task], timeout=timeout)
    return task in done
