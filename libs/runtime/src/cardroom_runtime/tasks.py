"""Stopping a service's own background tasks so that a stop always ends.

Python 3.11's ``asyncio.wait_for`` (used inside asyncpg, nats-py and SQLAlchemy's asyncio
layer) swallows a cancellation that arrives as its inner future completes. A background loop
cancelled at that moment carries on as if nothing happened, and ``task.cancel(); await
task`` then waits for ever: the service's stop hangs. :func:`cancel_and_wait` cancels again
until the task has ended, so a lost cancellation costs at most ``again`` seconds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

AGAIN = 1.0
"""Seconds between cancellations of a task that has not ended yet."""


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any] | None], again: float = AGAIN) -> None:
    """Cancel ``tasks`` (None: nothing) and wait until each has ended, cancelling again every
    ``again`` seconds while one runs on. Their results are dropped and an error is logged
    at debug level (a stopping service has no one to tell)."""
    every = [task for task in tasks if task is not None]
    while running := [task for task in every if not task.done()]:
        for task in running:
            task.cancel()
        await asyncio.wait(running, timeout=again)
    for task in every:
        if not task.cancelled() and task.exception() is not None:
            log.debug("%s ended with an error", task.get_name(), exc_info=task.exception())


__all__ = ["AGAIN", "cancel_and_wait"]
