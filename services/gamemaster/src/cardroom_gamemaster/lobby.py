"""The lobby: tables created, joined, started, listed and read; guests registered and their
tokens renewed (``<root>.lobby.<verb>.<asker>``).

The asker is the player a request acts for (for ``register``, a guest's nonce): the broker
lets a player publish only as itself, so the actor comes from the subject, never from the
body. A join or a start is a unit of work on the game like a command
(:class:`~.session.Sessions`); a create appends the game's first events (a game id taken
already is ``conflict``). ``bots`` is checked here (the asker's seat, the table's status, its
free seats, the game's bot kinds) and carried out by the service that runs bots
(``<root>.internal.bots``), whose answer goes back to the asker as it is.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from cardroom_engine import Event, Table, TableState, registry
from cardroom_eventstore import Append, ConcurrencyError, NewEvent, readmodels
from cardroom_runtime.settings import SettingsError
from cardroom_runtime.shards import Shards
from cardroom_wire import (
    CreateTable,
    ErrorCode,
    JoinTable,
    ListTables,
    RenewToken,
    SeatBots,
    SeatBotsAt,
    StartTable,
    WireError,
    ok,
)

from .credentials import Credentials
from .session import Loaded, Sessions

OPEN_TABLES = 16
"""Tables one player may have waiting for players (``CARDROOM_OPEN_TABLES``; 0: no limit):
a player who makes table after table (the rate limit lets one make a hundred a second) would
bury everyone else's in the lobby's listing and fill the store. A waiting table untouched
for ``OPEN_WINDOW`` no longer counts, so tables nobody joined do not lock their creator
out. The count is the lobby's read model's, so a burst can pass the limit by what the
projector has not yet written (a few tables)."""
OPEN_WINDOW = timedelta(hours=1)


def open_tables_limit() -> int:
    """``CARDROOM_OPEN_TABLES``; a value that is not a whole number is a setting that cannot
    be used (``cardroom serve`` says so in one line and exits 78)."""
    raw = os.environ.get("CARDROOM_OPEN_TABLES", "").strip()
    if not raw:
        return OPEN_TABLES
    if not raw.isdigit():
        raise SettingsError(f"CARDROOM_OPEN_TABLES={raw!r}: expected a whole number")
    return int(raw)


class Lobby:
    def __init__(
        self,
        sessions: Sessions,
        shards: Callable[[], Shards],
        credentials: Callable[[], Credentials],
        rng: random.Random,
        seat_bots: Callable[[SeatBotsAt], Awaitable[dict[str, Any]]],
        *,
        bots_at_once: int,
    ) -> None:
        self.sessions = sessions
        self._shards = shards  # (read when asked: the host sets them up after the services)
        self._credentials = credentials  # (read on first use: the secret is asked for then)
        self.rng = rng
        self._seat_bots = seat_bots
        # game -> bots asked for and not yet answered, here: each bot is a new player, made
        # before it joins, so requests at once must not ask for more than the free seats
        self._bots_pending: dict[str, int] = {}
        # bots requests being carried out: each waits for the service that runs bots
        self._seating = 0
        self._bots_at_once = bots_at_once
        self.open_tables = open_tables_limit()

    async def create(self, player: str, req: CreateTable) -> dict[str, Any]:
        shards = self._shards()
        if req.game is None:
            game_id = shards.new_game_id()  # the shard is in the id (cardroom_runtime.shards)
        else:
            game_id = req.game
            shards.check_new(game_id)
        table = Table(registry.get(req.game_type))
        events = table.create(game_id, player, req.config, req.seats, key=req.key)
        await self._check_open(player)
        sessions = self.sessions
        async with sessions.lock(game_id):
            try:
                await sessions.store_of(game_id).append(
                    Append(
                        stream_id=game_id,
                        stream_type=req.game_type,
                        expected_version=0,
                        events=[
                            NewEvent(e["type"], {k: v for k, v in e.items() if k != "type"})
                            for e in events
                        ],
                    )
                )
            except ConcurrencyError:
                raise WireError(ErrorCode.CONFLICT, f"game {game_id!r} exists already") from None
            loaded = Loaded(table, table.replay(events))
            sessions.remember(game_id, loaded)
            await sessions.deadlines.now(loaded)
        return ok(game=game_id, table=loaded.state.summary())

    async def join(self, player: str, req: JoinTable) -> dict[str, Any]:
        """Seat the asker (the key is bound to the asker's own seat: the subject names it)."""
        key = req.key
        return await self._change(
            req.game, player, lambda t, s: t.join(s, player, self.rng, key=key)
        )

    async def start(self, player: str, req: StartTable) -> dict[str, Any]:
        return await self._change(req.game, player, lambda t, s: t.start(s, player, self.rng))

    async def bots(self, player: str, req: SeatBots) -> dict[str, Any]:
        """Seat bots at a table the asker sits at, while it waits for players and has the
        seats: those the store shows free, less the bots this process is seating there now
        (a seat taken meanwhile by a player refuses the bots that no longer fit,
        ``table_full``, and keeps those seated before). A burst of requests therefore makes
        no more bots than the free seats, per gamemaster process. At most ``bots_at_once``
        requests are carried out at once (each holds a worker until the service that runs
        bots answers): the next is ``unavailable``, and changes nothing."""
        table = await self.summary(req.game)
        if player not in table["seats"]:
            raise WireError(ErrorCode.NOT_SEATED, "only a player at the table may seat bots")
        if table["status"] != "lobby":
            raise WireError(ErrorCode.ALREADY_STARTED, "the table has started")
        game_type = str(table["game_type"])
        kinds = sorted(registry.get(game_type).bots)
        if req.kind not in kinds:
            raise WireError(
                ErrorCode.BAD_REQUEST, f"{game_type} has no bot {req.kind!r}: {', '.join(kinds)}"
            )
        pending = self._bots_pending.get(req.game, 0)
        free = int(table["max_seats"]) - len(table["seats"]) - pending
        if req.count > free:
            raise WireError(ErrorCode.TABLE_FULL, f"the table has {max(free, 0)} free seat(s)")
        if self._seating >= self._bots_at_once:
            raise WireError(ErrorCode.UNAVAILABLE, "bots are being seated at many tables")
        self._seating += 1
        self._bots_pending[req.game] = pending + req.count
        try:
            return await self._seat_bots(
                SeatBotsAt(
                    player=player,
                    game=req.game,
                    game_type=game_type,
                    count=req.count,
                    kind=req.kind,
                )
            )
        finally:
            self._seating -= 1
            left = self._bots_pending[req.game] - req.count
            if left:
                self._bots_pending[req.game] = left
            else:
                del self._bots_pending[req.game]

    async def _change(
        self, game: str, player: str, decide: Callable[[Table, TableState], list[Event]]
    ) -> dict[str, Any]:
        sessions = self.sessions

        async def change(loaded: Loaded) -> dict[str, Any]:
            events = decide(loaded.table, loaded.state)
            appended = await sessions.append(loaded, [(e, {"actor": player}) for e in events])
            await sessions.after(loaded, appended)
            await sessions.deadlines.now(loaded)
            state = loaded.state
            return ok(game=game, version=state.seen(player), table=state.summary())

        return await sessions.run(game, change, busy="the table is busy; try again")

    async def _check_open(self, player: str) -> None:
        """Refuse a new table to a player with :data:`OPEN_TABLES` waiting for players."""
        limit = self.open_tables
        if limit <= 0:
            return
        since = datetime.now(UTC) - OPEN_WINDOW
        counts = await asyncio.gather(
            *(store.waiting_tables(player, since) for store in self._shards().stores)
        )
        if sum(counts) >= limit:
            raise WireError(
                ErrorCode.TOO_MANY_TABLES,
                f"you have {limit} tables waiting for players: start or fill one first",
            )

    async def summary(self, game: str) -> dict[str, Any]:
        """A table's summary as the store has it now: from the cache when it holds the
        stored version (one lookup), else read afresh, without the game's lock (anyone may
        ask, as often as the rate limit lets them) and so without caching what was read."""
        sessions = self.sessions
        cached = sessions.cached(game)
        if cached is not None:
            state = cached.state
            if state.version == await sessions.store_of(game).stream_version(game):
                return state.summary()
        loaded = await sessions.load(game, fresh=True, remember=False)
        return loaded.state.summary()

    async def listing(self, lst: ListTables) -> dict[str, Any]:
        """The lobby's listing: every shard's tables (each shard's listing is in its own
        read models), merged, and the game types."""
        found = await asyncio.gather(
            *(store.list_tables(lst.game_type, lst.status) for store in self._shards().stores)
        )
        merged = sorted(
            (row for part in found for row in part), key=lambda row: row[0], reverse=True
        )
        tables = [summary for _, summary in merged[: readmodels.LIST_LIMIT]]
        return ok(tables=tables, game_types=registry.names())

    def register(self, nonce: str) -> dict[str, Any]:
        """The player id and a fresh token of the guest with ``nonce`` (the asker)."""
        return ok(**self._credentials().register(nonce))

    def renew(self, asker: str, req: RenewToken) -> dict[str, Any]:
        """A fresh token for the request's, which must be the asker's own."""
        granted = self._credentials().renew(req.token)
        if granted["player"] != asker:  # a token is renewed only by its own player
            raise WireError(ErrorCode.BAD_TOKEN, "cannot renew: the token is not yours")
        return ok(**granted)
