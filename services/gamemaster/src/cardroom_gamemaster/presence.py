"""An away player is back: their sync (heard beside the projector, which answers it), or
their ack of what they missed (the acktracker tells, since only it knows an ack was owed
while away) marks them back (``table.back``); their command does so itself
(``steps.decide_command``)."""

from __future__ import annotations

import logging

from cardroom_runtime.host import storage_unavailable
from cardroom_wire import WireError

from .session import Sessions

log = logging.getLogger("cardroom.gamemaster")


class Presence:
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    async def present(self, game: str, player: str) -> None:
        """``player`` was heard from: mark them back if they are away. Never raises: nobody
        waits for an answer, and their next ack or sync tries again."""
        cached = self.sessions.cached(game)
        if cached is not None and player not in cached.state.away:
            return
        try:
            await self.mark_back(game, player)
        except WireError:
            return
        except Exception as exc:
            if storage_unavailable(exc):
                log.debug("marking %s back in %s: storage unavailable", player, game)
            else:
                log.exception("marking %s back in %s", player, game)

    async def mark_back(self, game: str, player: str) -> None:
        sessions = self.sessions
        async with sessions.lock(game):
            loaded = await sessions.load(game)
            events = loaded.table.mark_back(loaded.state, player)
            if events:
                await sessions.commit(loaded, [(e, {"actor": player}) for e in events])
                log.info("%s: %s is back", game, player)
