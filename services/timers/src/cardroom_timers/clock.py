"""The timers service's clock: the system's, or one a test moves by hand."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time (timezone-aware)."""
        ...

    async def sleep_until(self, when: datetime, wake: asyncio.Event) -> None:
        """Return once this clock reads ``when`` or later, or as soon as ``wake`` is set."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, when: datetime, wake: asyncio.Event) -> None:
        seconds = (when - self.now()).total_seconds()
        if seconds <= 0:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await wake.wait()


class ManualClock:
    """A clock that stands still until :meth:`advance` moves it (for tests)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime.now(UTC)
        self._moved = asyncio.Event()

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()

    async def sleep_until(self, when: datetime, wake: asyncio.Event) -> None:
        while self._now < when and not wake.is_set():
            moved = self._moved
            waiters = [asyncio.ensure_future(moved.wait()), asyncio.ensure_future(wake.wait())]
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()
