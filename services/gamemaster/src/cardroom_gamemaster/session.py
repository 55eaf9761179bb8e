"""The unit of work on one game, in which the gamemaster's handlers change it.

:meth:`Sessions.run` takes the game's lock, loads the game (this process's cache, else its
events) and runs the handler's work on it. The work appends through :meth:`Sessions.append`:
one transaction with the events, their addressees' pending acks and the command id's answer
(optimistic concurrency on the game's version), then the notifications are published. When
another writer moved the game on (the version check, or the command id appended meanwhile)
the work runs again on the game read afresh, :data:`RETRIES` times at most, then the answer
is ``conflict``. The gate is read from the store, not from memory, so several gamemasters can
serve one game.

Once nobody present must acknowledge what was appended (or a release says they all have),
:meth:`Sessions.advance` moves the game on: what follows is decided by the engine
(:func:`cardroom_engine.steps.next_moves`) and appended the same way.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from cardroom_engine import Event, Table, TableState, numbering, registry, steps
from cardroom_engine.table import PRESENCE
from cardroom_eventstore import (
    TO,
    Append,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    EventStoreError,
    NewEvent,
    RecordedEvent,
)
from cardroom_eventstore.hot import Batcher
from cardroom_eventstore.interface import Store
from cardroom_runtime import tracing
from cardroom_runtime.gate import Follower, GameGate
from cardroom_runtime.metrics import Counter
from cardroom_runtime.shards import Shards
from cardroom_wire import ErrorCode, Subjects, WireError, dumps, ok
from faststream.nats import NatsBroker

from .deadline_writes import DeadlineWrites
from .signing import TransitionSignatures

log = logging.getLogger("cardroom.gamemaster")

CACHE_SIZE = 10_000
RETRIES = 5
ADVANCE_LIMIT = 10_000  # appends in a row without anyone present to acknowledge (a runaway game)
APPEND_BATCH = 256  # appends (of as many games) per statement at most

Item = tuple[Event, dict[str, Any]]  # an event and its metadata
Note = tuple[str, int, bytes]  # a notification: (player, seq, document)
T = TypeVar("T")


@dataclass
class Loaded:
    table: Table
    state: TableState
    deadlines_at: int = -1  # the version whose deadlines this process wrote last
    # each player's last notification number (``seq``), as the projector numbers them
    seqs: dict[str, int] = field(default_factory=dict)
    gate: GameGate = field(default_factory=GameGate)  # what this process knows of its gate


@dataclass(frozen=True)
class Appended:
    released: list[int]  # gates the excuse of away addressees released (ours to follow up)
    gated: bool  # somebody present must acknowledge this batch


Result = list[RecordedEvent] | EventStoreError


class GroupCommit:
    """The appends of all games that arrive while one statement is being written go together
    in the next (``EventStore.append_group``, one statement per shard, at once): a quiet room
    waits for nothing, a busy one writes one statement and one commit for many games."""

    def __init__(self, shards: Callable[[], Shards]) -> None:
        self._shards = shards  # (read when asked: the host sets them up after the services)
        self._batcher: Batcher[Append, Result] | None = None

    async def submit(self, batch: Append) -> Result:
        if self._batcher is None:  # started on first use, on the loop that serves
            self._batcher = Batcher(self._group, APPEND_BATCH)
        return await self._batcher.submit(batch)

    async def close(self) -> None:
        if self._batcher is not None:
            await self._batcher.close()

    async def _group(self, batches: list[Append]) -> list[Result]:
        return await self._shards().scatter(batches, _stream_of, append_shard)


async def append_shard(store: EventStore, batches: list[Append]) -> list[Result]:
    """One shard's share of a group commit: one statement, unless a game appears twice."""
    if len(batches) == 1 or len({b.stream_id for b in batches}) < len(batches):
        return await store.append_each(batches)  # (one game twice: not from here)
    return await store.append_group(batches)


def _stream_of(batch: Append) -> str:
    return batch.stream_id


class Publisher(Protocol):
    async def publish(self, game: str, notes: Sequence[Note]) -> None: ...


class Notifier:
    """Sends a committed append's notifications to their players at once, on the broker's
    connection (:class:`Publisher`; a test collects them with another).

    Best effort: they are stored by the projector (the same ``seq`` numbers, so the same
    messages) and the acktracker resends any whose gating ack is overdue, so a crash or a
    broken connection here only delays them. Published under the game's lock, on one
    connection: each player receives them in order. While tracing, each goes out in a span
    of its own whose context it carries, so the player's ack continues the trace.
    """

    def __init__(self, broker: NatsBroker, subjects: Subjects) -> None:
        self.broker = broker
        self.subjects = subjects

    async def publish(self, game: str, notes: Sequence[Note]) -> None:
        connection, player_subject = self.broker.connection, self.subjects.player
        try:
            if not tracing.enabled():
                for player, _, payload in notes:
                    await connection.publish(player_subject(player, game), payload)
                return
            for player, seq, payload in notes:
                with tracing.span(
                    "notify",
                    {"cardroom.game": game, "cardroom.player": player, "cardroom.seq": seq},
                    kind=tracing.SpanKind.PRODUCER,
                ):
                    await connection.publish(
                        player_subject(player, game), payload, headers=tracing.headers()
                    )
        except Exception:
            log.warning("notifications of %s not sent now; the acktracker resends them", game)


@dataclass
class _Batch:
    """Events numbered for appending: the state after them, each player's notification
    numbers then, the events to store, the notifications to send and who they address."""

    state: TableState
    seqs: dict[str, int]
    events: list[NewEvent] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    addressed: set[str] = field(default_factory=set)

    @property
    def holds(self) -> bool:
        """Some event was told to every seat: the gate waits (``TableState.left_out``)."""
        return any(event.holds for event in self.events)


def _numbered(loaded: Loaded, items: Sequence[Item]) -> _Batch:
    """The events of ``items`` on the loaded game, with their addressees and notifications
    (:func:`cardroom_engine.numbering.notify`, as the projector numbers them)."""
    table, state = loaded.table, loaded.state
    batch = _Batch(state, dict(loaded.seqs))
    for event, meta in items:
        after, numbered = numbering.notify(table, state, event, batch.seqs)
        for n in numbered:
            assert n.document is not None  # (every document is built when none are owed)
            batch.notes.append((n.player, n.seq, dumps(n.document)))
        to = frozenset(n.player for n in numbered)
        batch.addressed |= to
        data = {k: v for k, v in event.items() if k != "type"}
        # each addressee acknowledges the version it was shown (TableState.seen): not the
        # event's own once the game addressed an event to some seats only
        shown = {n.player: n.version for n in numbered}
        if all(v == after.version for v in shown.values()):
            shown = {}
        # an event told to some seats only holds no gate, even beside one told to all: the
        # others would meet it held in their own commands' answers (TableState.left_out)
        holds = not after.left_out(state)
        batch.events.append(NewEvent(event["type"], data, dict(meta), to, shown=shown, holds=holds))
        state = after
    batch.state = state
    return batch


class GameLock:
    """One game's lock, counting who holds or awaits it (see :meth:`Sessions.lock`)."""

    __slots__ = ("game", "lock", "sessions", "users")

    def __init__(self, sessions: Sessions, game: str) -> None:
        self.sessions = sessions
        self.game = game
        self.lock = asyncio.Lock()
        self.users = 0

    async def __aenter__(self) -> None:
        self.users += 1
        try:
            await self.lock.acquire()
        except BaseException:
            self._leave()
            raise

    async def __aexit__(self, *_: object) -> None:
        self.lock.release()
        self._leave()

    def _leave(self) -> None:
        self.users -= 1
        sessions = self.sessions
        if not self.users and self.game not in sessions.cache:
            del sessions._locks[self.game]


class Sessions:
    """Units of work on games, with the cache and the locks they share.

    ``submit`` appends one batch (:class:`GroupCommit`); ``notifier`` sends a committed
    append's notifications of one game (:class:`Publisher`, looked up at each append: a test
    may put another in its place).
    """

    def __init__(
        self,
        *,
        store_of: Callable[[str], Store],
        submit: Callable[[Append], Awaitable[Result]],
        notifier: Publisher,
        gates: Follower,
        signatures: TransitionSignatures,
        deadlines: DeadlineWrites,
        presence: Counter,
        rng: random.Random,
    ) -> None:
        self.store_of = store_of
        self.submit = submit
        self.notifier = notifier
        self.gates = gates
        self.signatures = signatures
        self.deadlines = deadlines
        self.presence = presence
        self.rng = rng
        self.cache: OrderedDict[str, Loaded] = OrderedDict()
        self._locks: dict[str, GameLock] = {}

    # -- the unit of work ----------------------------------------------------------------------
    async def run(
        self,
        game: str,
        work: Callable[[Loaded], Awaitable[T]],
        *,
        fresh: bool = False,
        at: int | None = None,
        busy: str = "the game is busy",
    ) -> T:
        """Under the game's lock, load it (from the cache unless ``fresh`` or the cache is
        behind version ``at``) and run ``work`` on it; on another writer's move, again on
        the game read afresh (see the module)."""
        for attempt in range(RETRIES):
            async with self.lock(game):
                stale = fresh or attempt > 0 or (at is not None and self._behind(game, at))
                loaded = await self.load(game, fresh=stale)
                try:
                    return await work(loaded)
                except (ConcurrencyError, DuplicateCommand):
                    continue
        raise WireError(ErrorCode.CONFLICT, busy)

    def lock(self, game: str) -> GameLock:
        """The game's lock in this process (``async with``). It is kept while someone holds
        or awaits it, or while the game is cached: an id a player names that is no game (or
        a game not kept) leaves nothing behind once answered, so naming ever new ids cannot
        grow this process's memory."""
        entry = self._locks.get(game)
        if entry is None:
            entry = self._locks[game] = GameLock(self, game)
        return entry

    def cached(self, game: str) -> Loaded | None:
        """This process's copy of the game, if any (it may be behind the store)."""
        return self.cache.get(game)

    async def load(self, game: str, *, fresh: bool = False, remember: bool = True) -> Loaded:
        """The game, from the cache or (``fresh``) from the store. Only a holder of the game's
        lock may ``remember`` what it read: a read without it may finish before an append
        of the lock's holder commits, and caching it would put the game back a version (the
        next command would be judged on a state that is gone)."""
        cached = None if fresh else self.cache.get(game)
        if cached is not None:
            self.cache.move_to_end(game)
            return cached
        records = await self.store_of(game).read_stream(game)
        if not records:
            raise WireError(ErrorCode.UNKNOWN_GAME, f"no game {game!r}")
        table = Table(registry.get(records[0].stream_type))
        state = table.evolve(None, {**records[0].data, "type": records[0].type})
        seqs: dict[str, int] = {}
        entries = (({**r.data, "type": r.type}, r.metadata.get(TO)) for r in records[1:])
        loaded = Loaded(table, numbering.fold(table, state, seqs, entries), seqs=seqs)
        table.settle(loaded.state)  # kept: what it computes lazily, not the events behind it
        if remember:
            self.remember(game, loaded)
        return loaded

    def remember(self, game: str, loaded: Loaded) -> None:
        self.cache[game] = loaded
        self.cache.move_to_end(game)
        while len(self.cache) > CACHE_SIZE:
            old, _ = self.cache.popitem(last=False)
            entry = self._locks.get(old)
            if entry is not None and not entry.users:  # (a holder lets it go when done)
                del self._locks[old]

    def _behind(self, game: str, version: int) -> bool:
        """True when the cached state (if any) is older than ``version``."""
        cached = self.cache.get(game)
        return cached is not None and cached.state.version < version

    async def gate_open(self, loaded: Loaded, handled: set[int] | None = None) -> bool:
        """Whether every present addressee of the last batch has acknowledged it (see
        ``Follower.is_open``: ``handled`` are released gates the caller follows up)."""
        state = loaded.state
        return await self.gates.is_open(loaded.gate, state.game_id, state.version, handled)

    # -- appending -----------------------------------------------------------------------------
    async def append(
        self,
        loaded: Loaded,
        items: Sequence[Item],
        *,
        command_key: str | None = None,
        handled_gate: int | None = None,
    ) -> Appended:
        """Append events with their addressees and publish their notifications; the state
        is updated (cached).

        Away addressees owe their acks without holding the gate: they are excused right after
        the append. If that release is lost in a crash, the ack timeout or a reconcile finds
        the away player's gating acks and excuses them again.
        """
        batch = _numbered(loaded, items)
        state, game = batch.state, batch.state.game_id
        actor = items[-1][1].get("actor") if items else None
        reply = ok(version=state.seen(actor)) if command_key else None
        if handled_gate is None:  # (a command after a release without follow-up)
            handled_gate = loaded.gate.piggyback()
        append = Append(
            stream_id=game,
            stream_type=state.game_type,
            expected_version=loaded.state.version,
            events=batch.events,
            command_id=command_key,
            reply=reply,
            handled_gate=handled_gate,
        )
        try:
            with tracing.span("append", {"cardroom.game": game, "cardroom.events": len(items)}):
                appended = await self.submit(append)
                if isinstance(appended, EventStoreError):
                    raise appended
                tracing.tag("cardroom.version", state.version)
        except BaseException:
            self.cache.pop(game, None)  # another instance moved on, or the outcome is unknown
            raise
        loaded.state, loaded.seqs = state, batch.seqs
        if handled_gate is not None:
            loaded.gate.unmarked.discard(handled_gate)
        self._count(batch)
        await self.notifier.publish(game, batch.notes)
        return await self._excuse_away(loaded, batch.addressed, batch.holds)

    def _count(self, batch: _Batch) -> None:
        game_type = batch.state.game_type
        self.gates.owed.labels(game_type).inc(len(batch.notes))
        for stored in batch.events:
            if stored.type in PRESENCE:
                self.presence.labels(game_type, stored.type.removeprefix("table.")).inc()

    async def _excuse_away(self, loaded: Loaded, addressed: set[str], holds: bool) -> Appended:
        """Excuse the away addressees of what was just appended; whether anybody present
        must acknowledge it before the game moves on (never, for a batch that holds no
        gate)."""
        state, game = loaded.state, loaded.state.game_id
        away = addressed & set(state.away)
        released: list[int] = []
        if away:
            try:
                released = await self.store_of(game).excuse(game, away)
            except Exception:  # the ack timeout or a reconcile excuses them later
                log.exception("excusing %s in %s", sorted(away), game)
                return Appended([], True)
        gated = holds and bool(addressed - set(state.away))
        if not gated:
            loaded.gate.open_at = state.version
        return Appended(released, gated)

    async def commit(self, loaded: Loaded, items: Sequence[Item]) -> None:
        """Append, move on if nobody present must acknowledge, write the deadlines."""
        try:
            appended = await self.append(loaded, items)
        except ConcurrencyError:
            return  # another instance moved the game on; whoever comes next decides again
        await self.after(loaded, appended)
        await self.deadlines.now(loaded)

    # -- moving on -----------------------------------------------------------------------------
    async def after(self, loaded: Loaded, appended: Appended) -> None:
        """Move on at once when nobody present has to acknowledge what was appended."""
        if appended.released or not appended.gated:
            await self.advance(loaded, set(appended.released))

    async def advance(self, loaded: Loaded, handled: set[int]) -> None:
        """While the gate is open: a halt (a signed game's bad transition), else what the
        engine says follows (``steps.next_moves``).

        ``handled`` are released gates whose follow-up this call is responsible for; they are
        marked handled (with the first append, by the gate check that finds the game held by
        a newer gate, or at the end). Everything here is decided from the current state, so
        running it again (a resent release) changes nothing.
        """
        table = loaded.table
        game = loaded.state.game_id
        for _ in range(ADVANCE_LIMIT):
            state = loaded.state
            if state.status != "playing" or not await self.gate_open(loaded, handled):
                break
            with tracing.span("follow_up", {"cardroom.game": game}):
                # a game that signs its transitions halts on a rejection or a missing signature
                items: list[Item] = [(e, {}) for e in await self.signatures.halt(table.game, state)]
                if not items:
                    for player, events in steps.next_moves(table, state, self.rng):
                        meta = {} if player is None else {"actor": player, "house": True}
                        items += [(e, meta) for e in events]
                tracing.tag("cardroom.events", len(items))
                if not items:
                    break
                gate = max(handled) if handled else None
                appended = await self.append(loaded, items, handled_gate=gate)
            if gate is not None:
                handled.discard(gate)
            handled.update(appended.released)
            if appended.gated and not appended.released:
                break
        else:
            log.warning("%s: still moving after %d appends; stopping here", game, ADVANCE_LIMIT)
        if handled:
            self.gates.mark_later(loaded.gate, game, handled)


__all__ = [
    "ADVANCE_LIMIT",
    "CACHE_SIZE",
    "RETRIES",
    "Appended",
    "GameLock",
    "GroupCommit",
    "Item",
    "Loaded",
    "Notifier",
    "Publisher",
    "Sessions",
]
