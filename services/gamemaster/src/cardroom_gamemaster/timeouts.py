"""What happens by itself in a game: a due deadline, and a reconcile.

The timers service sends a deadline with the version it belongs to (``Timeout``); the
gamemaster runs it in a unit of work on the game (:class:`~.session.Sessions`). What a game's
own deadline or a turn timeout does is the engine's (``Table.fire``); the ack timeout
(``acks:<gate>``) marks away everyone who still owes a gating ack of that gate
(``steps.mark_late_away``), whose acks then stop holding the game (``excuse``), and the house
plays for them whenever the game waits for them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from cardroom_engine import steps
from cardroom_engine.table import TURN_DEADLINE
from cardroom_eventstore.deadlines import ACKS
from cardroom_runtime import logs

from .session import Item, Loaded, Sessions

log = logging.getLogger("cardroom.gamemaster")


class Fired(NamedTuple):
    """What a timeout did (:meth:`Timeouts.fire`): its ``result``, with ``later`` the time
    it is due at, with ``fired`` or ``nothing`` when the game could first have taken it."""

    result: str
    due: datetime | None = None
    ready: datetime | None = None


class Timeouts:
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    async def fire(self, loaded: Loaded, version: int, key: str, at: float | None = None) -> Fired:
        """The deadline ``key`` of ``version`` is due (at ``at``, the timers' clock, Unix
        seconds): ``fired`` (it had its effect), ``nothing`` (it changed nothing), ``stale``
        (the game has moved past that version or key), ``deferred`` (the gate is closed:
        nobody has seen the last update yet) or ``later`` with the time it is due at (a turn
        timeout whose players could act only once a gate opened after the turn began).

        ``fired`` and ``nothing`` name when the game could first take it (``ready``): the
        opening of its newest gate; for a turn timeout, the turn's time counted from the
        opening of the newest gate since the turn began (None for an ack timeout, which
        waits for no gate, or while no such gate has opened). Its
        lateness counts from its due time or from then, whichever is later: waiting for a
        gate is the game's rule, not the timers' delay."""
        table, state = loaded.table, loaded.state
        if state.version != version:
            return Fired("stale")
        if key.startswith(ACKS):
            return Fired(await self._acks(loaded, int(key.removeprefix(ACKS))))
        wanted = {d.key: d for d in table.deadlines(state)}
        if key not in wanted:
            return Fired("stale")
        if not await self.sessions.gate_open(loaded):
            return Fired("deferred")  # nobody has seen the last update yet: the game waits
        store = self.sessions.store_of(state.game_id)
        if key.startswith(TURN_DEADLINE):
            # the players who must act could not act before the gate that followed the turn's
            # start opened: their clock runs from then (else a seat slow to acknowledge, within
            # its ack timeout, could have the house play another's whole turn)
            ready = await store.opened_since(state.game_id, wanted[key].since)
            if ready is not None:
                ready += timedelta(seconds=wanted[key].seconds)
                if at is not None and ready.timestamp() > at:
                    return Fired("later", due=ready)
        else:
            ready = await store.opened_since(state.game_id, 0)  # the newest gate's opening
        # a heavy game's timeout may be CPU work too (Macaua's audit deadline opens every
        # position the published keys open): off the loop, under the game's lock like decide
        if table.game.heavy:
            fired = await asyncio.to_thread(table.fire, state, key, self.sessions.rng)
        else:
            fired = table.fire(state, key, self.sessions.rng)
        items: list[Item] = []
        for player, events in fired:
            meta: dict[str, Any] = {"timeout": key}
            if player is not None:
                meta |= {"actor": player, "house": True}
            items += [(e, meta) for e in events]
        if not items:
            return Fired("nothing", ready=ready)
        await self.sessions.after(loaded, await self.sessions.append(loaded, items))
        return Fired("fired", ready=ready)

    async def _acks(self, loaded: Loaded, gate: int) -> str:
        """Everyone who still owes a gating ack of ``gate`` (or older) is marked away."""
        state, game = loaded.state, loaded.state.game_id
        if state.status != "playing":
            return "nothing"
        late = await self.sessions.store_of(game).debtors(game, gate)
        if not late:
            return "nothing"
        released: list[int] = []
        if away := steps.mark_late_away(loaded.table, state, late):
            items: list[Item] = [(e, {"reason": "ack_timeout"}) for e in away]
            released += (await self.sessions.append(loaded, items)).released
            for player in sorted(late):
                token = logs.bind(game=game, player=player)
                log.info("%s: %s away (no ack of gate %s)", game, player, gate)
                logs.unbind(token)
        released += await self.sessions.store_of(game).excuse(game, late & set(loaded.state.away))
        await self.sessions.advance(loaded, set(released))
        return "fired"

    async def reconcile(self, loaded: Loaded) -> None:
        """Excuse the stuck acks of away players (an excuse lost in a crash), then move on if
        the gate is open."""
        state, game = loaded.state, loaded.state.game_id
        released: list[int] = []
        if state.status == "playing" and state.away:
            store = self.sessions.store_of(game)
            stuck = await store.debtors(game) & set(state.away)
            released = await store.excuse(game, stuck)
        await self.sessions.advance(loaded, set(released))
