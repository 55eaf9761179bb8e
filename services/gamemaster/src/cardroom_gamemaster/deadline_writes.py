"""Writing a game's deadlines for the timers service, now or debounced.

After every change the gamemaster writes the game's deadlines at its new version
(:mod:`cardroom_eventstore.deadlines`). Best effort either way: a write lost here is found by
the timers service (the game is *lagging*), which asks for a reconcile; and a write never
goes back a version.

A command's reply waits for no write (:meth:`DeadlineWrites.soon`): one writer per game at a
time, which waits first, so the versions of a game in quick play share one write (due
times are counted from the events' recorded times, so waiting moves none): a quarter of the
game's shortest deadline, at most ``WRITE_DELAY``, well inside the ``RECOVER_GRACE`` the
timers service allows before it takes the game for lagging (both defined, and checked
against each other, in :mod:`cardroom_eventstore.deadlines`). Then it writes the newest state
it was handed, and goes round again if a newer one came while it wrote. At stop the waits
are cut short (:meth:`DeadlineWrites.running`): what is owed is written at once, so that a
graceful stop neither loses it nor waits out the delay.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from cardroom_eventstore.deadlines import WRITE_DELAY
from cardroom_eventstore.interface import Store
from cardroom_wire import DeadlineHint

if TYPE_CHECKING:
    from .session import Loaded

log = logging.getLogger("cardroom.gamemaster")


class DeadlineWrites:
    """``store_of``: the event store that holds a game; ``hint``: tells the timers service
    of an earlier due time (a hint only: it polls anyway; a test may put another in its
    place)."""

    def __init__(
        self,
        store_of: Callable[[str], Store],
        hint: Callable[[DeadlineHint], Awaitable[None]],
    ) -> None:
        self._store_of = store_of
        self.hint = hint
        self._writers: dict[str, asyncio.Task[None]] = {}
        self._wanted: dict[str, Loaded] = {}
        self._stopping = asyncio.Event()

    async def now(self, loaded: Loaded, *, force: bool = False) -> None:
        """Write the game's deadlines for its current version, unless this process wrote
        them for that version already (``force``: write them again)."""
        state = loaded.state
        if not force and loaded.deadlines_at == state.version:
            return
        try:
            due = await self._store_of(state.game_id).deadlines.write(
                state.game_id,
                state.version,
                active=state.status != "finished",
                wanted=loaded.table.deadlines(state),
                ack_timeout=state.options.ack_timeout if state.status == "playing" else None,
                # a game that tells some events to some seats only: whom it waits for, whose
                # acks of such events are timed by themselves (a silent mover must not stall it)
                waited=loaded.table.movers(state) if loaded.table.game.private_events else (),
            )
        except Exception:
            log.exception("writing the deadlines of %s@%s", state.game_id, state.version)
            return
        loaded.deadlines_at = state.version
        if due is not None:
            try:
                await self.hint(DeadlineHint(game=state.game_id, due=due.timestamp()))
            except Exception:  # a hint only: the timers service polls anyway
                log.debug("deadline hint for %s not sent", state.game_id, exc_info=True)

    def soon(self, loaded: Loaded) -> None:
        """:meth:`now` in the background, debounced (see the module)."""
        game = loaded.state.game_id
        self._wanted[game] = loaded
        running = self._writers.get(game)
        if running is None or running.done():
            state = loaded.state
            soonest = [d.seconds for d in loaded.table.deadlines(state)]
            if state.options.ack_timeout is not None:
                soonest.append(state.options.ack_timeout)
            delay = min([WRITE_DELAY, *(s / 4 for s in soonest)])
            self._writers[game] = asyncio.create_task(self._later(game, delay))

    async def _later(self, game: str, delay: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(delay, 0.0)):
                await self._stopping.wait()
        while (loaded := self._wanted.pop(game, None)) is not None:
            await self.now(loaded)
        self._writers.pop(game, None)  # no await since the check above: nothing slipped in

    async def mark_fired(self, game: str, key: str, version: int) -> None:
        """The deadline ``key`` of ``version`` has had its effect (or had none to have)."""
        await self._store_of(game).deadlines.mark_fired(game, key, version)

    def running(self) -> list[asyncio.Task[None]]:
        """At stop: the writes still running, told to write at once, to be waited for."""
        self._stopping.set()
        return [t for t in self._writers.values() if not t.done()]
