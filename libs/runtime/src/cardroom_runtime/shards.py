"""The event store's shards: games spread over several PostgreSQL databases by game id.

``CARDROOM_DATABASE_URL`` lists the shards in order (:func:`.settings.database_urls`); each
is a whole event store of its own (:class:`~cardroom_eventstore.EventStore`: events, gates,
read models, deadlines, checkpoints), with its own global order and its own relay. A game
lives in one shard for its whole life, so everything about one game (its lock, its gate,
its order, its command ids) is one database's business, as with a single database.

Which shard holds a game is written in the game's id, so nobody looks it up and adding a
shard moves no game (:func:`shard_index`):

- an id that starts with ``s<k>-`` (``k`` from 1, no leading zero) lives in shard ``k``;
- every other id lives in shard 0: every id made before shards existed, and every id a
  table's creator chose without that mark.

The gamemaster picks the shard of a game it names itself (:meth:`Shards.new_game_id`), in
turn over every shard (``g<hex>`` on shard 0, the ids of a single database, and
``s<k>-g<hex>`` on shard ``k``). A hash of the id modulo the number of shards would need no
mark, but a shard added later would move most games; a consistent hash would still move
some, and a directory would be a lookup on every command. With one shard (one URL, today's
deployment) :meth:`Shards.of` is the only store whatever the id: nothing is parsed.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from cardroom_wire import ErrorCode, WireError, new_id

if TYPE_CHECKING:
    from cardroom_eventstore import EventStore

T = TypeVar("T")
R = TypeVar("R")

#: The mark of a game that lives in shard ``k`` >= 1 (shard 0's games carry none).
_MARK = re.compile(r"s([1-9][0-9]{0,3})-")


def shard_index(game: str) -> int:
    """The shard that holds ``game``, from its id alone (see the module documentation)."""
    if not game.startswith("s"):
        return 0
    mark = _MARK.match(game)
    return int(mark.group(1)) if mark else 0


def game_id(shard: int) -> str:
    """A fresh game id for shard ``shard`` (shard 0's ids are a single database's)."""
    return new_id("g") if shard == 0 else f"s{shard}-{new_id('g')}"


class Shards:
    """The event stores of one deployment, in shard order, and the game -> store rule."""

    #: The store that holds a game (:func:`shard_index`): with one shard, that shard for
    #: every id, without reading it. A game id naming a shard this deployment lacks names no
    #: game: :class:`WireError` ``unknown_game``.
    of: Callable[[str], EventStore]

    def __init__(self, stores: Sequence[EventStore]) -> None:
        if not stores:
            raise ValueError("no shards")
        self.stores: tuple[EventStore, ...] = tuple(stores)
        only = self.stores[0]
        self.of = (lambda game: only) if len(self.stores) == 1 else self._of
        self._turn = itertools.cycle(range(len(self.stores)))

    def __len__(self) -> int:
        return len(self.stores)

    @classmethod
    async def connect(
        cls, urls: Sequence[str], hot_pool_size: int | None = None, **engine_kwargs: Any
    ) -> Shards:
        """An event store on each URL (``engine_kwargs`` go to each one's engine; its hot
        statements' pool is ``hot_pool_size``, the store's default if None)."""
        from cardroom_eventstore import EventStore

        if hot_pool_size is not None:
            engine_kwargs["hot_pool_size"] = hot_pool_size
        stores: list[EventStore] = []
        try:
            for url in urls:
                stores.append(await EventStore.connect(url, **engine_kwargs))
        except BaseException:
            for store in stores:
                await store.close()
            raise
        return cls(stores)

    def _of(self, game: str) -> EventStore:
        return self.stores[self.index_of(game)]

    def index_of(self, game: str) -> int:
        """The position in :attr:`stores` of the shard that holds ``game``, as :attr:`of`
        finds it (with one shard, 0 whatever the id)."""
        if len(self.stores) == 1:
            return 0
        index = shard_index(game)
        if index >= len(self.stores):
            raise WireError(ErrorCode.UNKNOWN_GAME, f"no game {game!r}")
        return index

    def new_game_id(self) -> str:
        """An id for a new game, on the next shard in turn (so every shard, a new one too,
        gets its share of new games)."""
        return game_id(next(self._turn))

    def check_new(self, game: str) -> None:
        """Refuse (``bad_id``) a creator's id that names a shard this deployment lacks: the
        game would have nowhere to live, and would move once that shard is added."""
        index = shard_index(game)
        if index >= len(self.stores):
            raise WireError(
                ErrorCode.BAD_ID,
                f"game id {game!r} names shard {index}; this cardroom has {len(self.stores)} "
                "(ids starting s<number>- name a shard)",
            )

    def split(self, items: Sequence[T], game: Callable[[T], str]) -> list[list[T]]:
        """``items`` in one list per shard (by ``game(item)``), each in the given order."""
        out: list[list[T]] = [[] for _ in self.stores]
        for item in items:
            out[self._index_or_zero(game(item))].append(item)
        return out

    async def scatter(
        self,
        items: Sequence[T],
        game: Callable[[T], str],
        run: Callable[[EventStore, list[T]], Awaitable[list[R]]],
    ) -> list[R]:
        """``run`` on each shard's share of ``items`` (one call per shard that has some, all
        at once); its results (one per item) back in the items' order. With one shard,
        ``run`` on every item, nothing split."""
        if len(self.stores) == 1:
            return await run(self.stores[0], list(items))
        parts = self.split(list(enumerate(items)), lambda item: game(item[1]))
        busy = [(store, part) for store, part in zip(self.stores, parts, strict=True) if part]
        done = await asyncio.gather(*(run(store, [i for _, i in part]) for store, part in busy))
        results: list[R | None] = [None] * len(items)
        for (_, part), out in zip(busy, done, strict=True):
            for (n, _), result in zip(part, out, strict=True):
                results[n] = result
        return cast(list[R], results)

    def _index_or_zero(self, game: str) -> int:
        index = shard_index(game)
        return index if index < len(self.stores) else 0

    async def close(self) -> None:
        for store in self.stores:
            await store.close()
