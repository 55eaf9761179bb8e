"""The gamemaster: lobby requests, player commands and timeouts -> the table aggregate -> events.

One decision, one transaction: the events it causes, their pending acks and the command id's
answer are appended together (optimistic concurrency on the game's version). The gate is read
from the store, not from memory, so several gamemasters can serve one game: the loser of a
race reloads and tries again. Follow-ups run when the acktracker reports a released gate.

Time and presence (see ``cardroom_engine.table``):

- after every change the gamemaster writes the game's deadlines for the timers service
  (:mod:`.deadlines`); the timers service sends ``<root>.internal.timeout`` when one is due,
  with the version it belongs to; a timeout for a version or key the game has moved past is
  stale and changes nothing;
- ``acks:<gate>`` (the ack timeout) marks every player who still owes a gating ack of that gate
  away (``table.away``); an away player's acks stop holding the gate (``EventStore.excuse``), and
  the house bot plays for them whenever the game waits for them;
- an ack, a sync or a command from an away player marks them back (``table.back``): the
  gamemaster listens to ``<root>.sync.*.*`` in a queue group of its own, without answering
  (the projector answers), and the acktracker tells it (``<root>.internal.back``) when an ack
  was owed while away (only the acktracker knows; listening to every ack cost the gamemaster
  two messages per event);
- ``<root>.internal.reconcile`` evaluates a game again (deadlines, stuck away acks,
  follow-ups): the timers service asks for it when a crash skipped an evaluation.

A game whose rules say ``heavy = True`` (Macaua: ``decide`` checks proofs, about 0.1 s for a
shuffle) has its commands decided, and its deadlines fired, in a worker thread
(``asyncio.to_thread``), still under the game's lock, so the event loop serves every other
game meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cardroom_engine import Event, Rejection, Table, TableState, numbering, registry
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
    readmodels,
)
from cardroom_eventstore.deadlines import ACKS, DeadlineWriter
from cardroom_eventstore.hot import Batcher
from cardroom_runtime import logs, tracing
from cardroom_runtime.gate import Follower, GameGate
from cardroom_runtime.host import Service, storage_unavailable
from cardroom_wire import (
    Back,
    Command,
    CreateTable,
    DeadlineHint,
    ErrorCode,
    GetTable,
    JoinTable,
    ListTables,
    Reconcile,
    Register,
    Release,
    ReleaseReply,
    RenewToken,
    Resend,
    StartTable,
    Timeout,
    WireError,
    decode_json,
    dumps,
    ok,
)
from cardroom_wire import (
    parse as parse_request,
)

from .credentials import Credentials
from .signing import TransitionSignatures

log = logging.getLogger("cardroom.gamemaster")

CACHE_SIZE = 10_000
RETRIES = 5
WORKERS = 64  # requests handled at once; one game's are serialised by its lock
APPEND_BATCH = 256  # appends (of as many games) per statement at most
DEADLINE_WRITE_DELAY = (
    1.0  # seconds a game's deadline write waits at most for more versions to share it
)
ADVANCE_LIMIT = 10_000  # appends in a row without anyone present to acknowledge (a runaway game)


Item = tuple[Event, dict[str, Any]]  # an event and its metadata
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


class Gamemaster(Service):
    name = "gamemaster"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rng = random.SystemRandom()
        self._cache: OrderedDict[str, Loaded] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self._deadlines: list[DeadlineWriter] = []  # one per shard
        self._credentials: Credentials | None = None
        self._deadline_writers: dict[str, asyncio.Task[None]] = {}
        self._deadlines_wanted: dict[str, Loaded] = {}
        self.gates = Follower(self.rt)
        self._appends: Batcher[Append, list[RecordedEvent] | EventStoreError] | None = None
        self._signatures: TransitionSignatures | None = None
        self._catching_up: asyncio.Task[None] | None = None
        metrics = self.rt.metrics
        self._commands = metrics.counter(
            "cardroom_commands",
            "Players' commands, by game type, command type and outcome (ok or the code)",
            ["game_type", "command", "outcome"],
        )
        self._command_seconds = metrics.histogram(
            "cardroom_command_seconds", "Time to handle a command", ["game_type"]
        )
        self._command_types: dict[str, set[str]] = {}
        self._presence = metrics.counter(
            "cardroom_presence_changes", "Players marked away and back", ["game_type", "change"]
        )

    @property
    def signatures(self) -> TransitionSignatures:
        if self._signatures is None:
            self._signatures = TransitionSignatures(self.shards.of)
        return self._signatures

    @property
    def credentials(self) -> Credentials:
        # read on first use, so building the AsyncAPI document does not ask for the secret
        if self._credentials is None:
            self._credentials = Credentials.from_env(self.subjects.root)
        return self._credentials

    @property
    def appends(self) -> Batcher[Append, list[RecordedEvent] | EventStoreError]:
        """Group commit: the appends of all games that arrive while one statement is being
        written go together in the next (``EventStore.append_group``): a quiet room waits
        for nothing, a busy one writes one statement and one commit for many games."""
        if self._appends is None:
            self._appends = Batcher(self._append_group, APPEND_BATCH)
        return self._appends

    async def _append_group(
        self, batches: list[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]:
        # one statement per shard, at once
        return await self.shards.scatter(batches, _stream_of, self._append_shard)

    @staticmethod
    async def _append_shard(
        store: EventStore, batches: list[Append]
    ) -> list[list[RecordedEvent] | EventStoreError]:
        if len(batches) == 1 or len({b.stream_id for b in batches}) < len(batches):
            return await store.append_each(batches)  # (one game twice: not from here)
        return await store.append_group(batches)

    def deadlines(self, game: str) -> DeadlineWriter:
        """The deadline writer of the game's shard."""
        if not self._deadlines:
            self._deadlines = [DeadlineWriter(store.relaxed) for store in self.shards.stores]
        return self._deadlines[self.shards.index_of(game)]

    def register(self) -> None:
        s = self.subjects

        def serve(subject: str, title: str, handler: Any) -> None:
            self.serve(
                subject, queue="gamemaster", title=title, handler=handler, max_workers=WORKERS
            )

        serve(s.lobby_all, "lobby", self.on_lobby)
        serve(s.cmd_all, "commands", self.on_command)
        serve(s.release, "release", self.on_release)
        serve(s.timeout, "timeout", self.on_timeout)
        serve(s.reconcile, "reconcile", self.on_reconcile)
        # back from away: a sync (heard here too), or an ack of what they missed (the
        # acktracker tells, since only it knows an ack was owed while away)
        self.listen(
            s.sync_all,
            queue="gamemaster-presence",
            title="presence-syncs",
            listener=self.on_presence,
            max_workers=WORKERS,
        )
        self.listen(s.back, queue="gamemaster", title="back", listener=self.on_back, max_workers=8)

    # -- loading -------------------------------------------------------------------------------
    def _lock(self, game: str) -> asyncio.Lock:
        lock = self._locks.get(game)
        if lock is None:
            lock = self._locks[game] = asyncio.Lock()
        return lock

    async def load(self, game: str, *, fresh: bool = False, remember: bool = True) -> Loaded:
        """The game, from the cache or (``fresh``) from the store. Only a holder of the game's
        lock may ``remember`` what it read: a read without it may finish before an append
        of the lock's holder commits, and caching it would put the game back a version (the
        next command would be judged on a state that is gone)."""
        cached = None if fresh else self._cache.get(game)
        if cached is not None:
            self._cache.move_to_end(game)
            return cached
        records = await self.store_of(game).read_stream(game)
        if not records:
            raise WireError(ErrorCode.UNKNOWN_GAME, f"no game {game!r}")
        table = Table(registry.get(records[0].stream_type))
        state = table.evolve(None, {**records[0].data, "type": records[0].type})
        seqs: dict[str, int] = {}
        entries = (({**r.data, "type": r.type}, r.metadata.get(TO)) for r in records[1:])
        loaded = Loaded(table, numbering.fold(table, state, seqs, entries), seqs=seqs)
        if remember:
            self._remember(game, loaded)
        return loaded

    async def gate_open(self, loaded: Loaded, handled: set[int] | None = None) -> bool:
        """Whether every present addressee of the last batch has acknowledged it (see
        ``Follower.is_open``: ``handled`` are released gates the caller follows up)."""
        state = loaded.state
        return await self.gates.is_open(loaded.gate, state.game_id, state.version, handled)

    def _behind(self, game: str, version: int) -> bool:
        """True when the cached state (if any) is older than ``version``."""
        cached = self._cache.get(game)
        return cached is not None and cached.state.version < version

    def _remember(self, game: str, loaded: Loaded) -> None:
        self._cache[game] = loaded
        self._cache.move_to_end(game)
        while len(self._cache) > CACHE_SIZE:
            old, _ = self._cache.popitem(last=False)
            self._locks.pop(old, None)

    async def _session(
        self,
        game: str,
        work: Callable[[Loaded], Awaitable[T]],
        *,
        fresh: bool = False,
        at: int | None = None,
        busy: str = "the game is busy",
    ) -> T:
        """The unit of work on one game: under the game's lock, load it (from the cache
        unless ``fresh`` or the cache is behind version ``at``) and run ``work`` on it, which
        appends and publishes through :meth:`_append`. When another writer moved the game on
        (the append's version check, or a command id appended meanwhile) it runs again on
        the game read afresh, ``RETRIES`` times at most, then answers ``conflict``."""
        for attempt in range(RETRIES):
            async with self._lock(game):
                stale = fresh or attempt > 0 or (at is not None and self._behind(game, at))
                loaded = await self.load(game, fresh=stale)
                try:
                    return await work(loaded)
                except (ConcurrencyError, DuplicateCommand):
                    continue
        raise WireError(ErrorCode.CONFLICT, busy)

    # -- appending -----------------------------------------------------------------------------
    async def _append(
        self,
        loaded: Loaded,
        items: Sequence[Item],
        *,
        command_id: str | None = None,
        handled_gate: int | None = None,
    ) -> Appended:
        """Append events with their addressees; the state is updated (cached).

        Away addressees owe their acks without holding the gate: they are excused right after
        the append. If that release is lost in a crash, the ack timeout or a reconcile finds
        the away player's gating acks and excuses them again.
        """
        table, state = loaded.table, loaded.state
        game = state.game_id
        new: list[NewEvent] = []
        addressed: set[str] = set()
        seqs = dict(loaded.seqs)
        notes: list[tuple[str, int, bytes]] = []  # (player, seq, notification)
        for event, meta in items:
            after, numbered = numbering.notify(table, state, event, seqs)
            for n in numbered:
                assert n.document is not None  # (every document is built when none are owed)
                notes.append((n.player, n.seq, dumps(n.document)))
            to = frozenset(n.player for n in numbered)
            addressed |= to
            data = {k: v for k, v in event.items() if k != "type"}
            # each addressee acknowledges the version it was shown (TableState.seen): not the
            # event's own once the game addressed an event to some seats only
            shown = {n.player: n.version for n in numbered}
            if all(v == after.version for v in shown.values()):
                shown = {}
            new.append(NewEvent(event["type"], data, dict(meta), to, shown=shown))
            state = after
        actor = items[-1][1].get("actor") if items else None
        reply = ok(version=state.seen(actor)) if command_id else None
        if handled_gate is None:  # (a command after a release without follow-up)
            handled_gate = loaded.gate.piggyback()
        try:
            with tracing.span("append", {"cardroom.game": game, "cardroom.events": len(new)}):
                appended = await self.appends.submit(
                    Append(
                        stream_id=game,
                        stream_type=state.game_type,
                        expected_version=loaded.state.version,
                        events=new,
                        command_id=command_id,
                        reply=reply,
                        handled_gate=handled_gate,
                    )
                )
                if isinstance(appended, EventStoreError):
                    raise appended
                tracing.tag("cardroom.version", state.version)
        except BaseException:
            self._cache.pop(game, None)  # another instance moved on, or the outcome is unknown
            raise
        loaded.state = state
        loaded.seqs = seqs
        if handled_gate is not None:
            loaded.gate.unmarked.discard(handled_gate)
        self.gates.owed.labels(state.game_type).inc(len(notes))
        for stored in new:
            if stored.type in PRESENCE:
                self._presence.labels(state.game_type, stored.type.removeprefix("table.")).inc()
        await self._publish(game, notes)
        away = addressed & set(state.away)
        released: list[int] = []
        if away:
            try:
                released = await self.store_of(game).excuse(game, away)
            except Exception:  # the ack timeout or a reconcile excuses them later
                log.exception("excusing %s in %s", sorted(away), game)
                return Appended([], True)
        gated = bool(addressed - set(state.away))
        if not gated:
            loaded.gate.open_at = state.version
        return Appended(released, gated)

    async def _publish(self, game: str, notes: Sequence[tuple[str, int, bytes]]) -> None:
        """Send the notifications of a committed append to their players at once.

        Best effort: they are stored by the projector (the same ``seq`` numbers, so the same
        messages) and the acktracker resends any whose gating ack is overdue, so a crash or a
        broken connection here only delays them. Published under the game's lock, on one
        connection: each player receives them in order. While tracing, each goes out in a
        span of its own whose context it carries, so the player's ack continues the trace.
        """
        connection = self.rt.broker.connection
        try:
            if not tracing.enabled():
                for player, _, payload in notes:
                    await connection.publish(self.subjects.player(player, game), payload)
                return
            for player, seq, payload in notes:
                with tracing.span(
                    "notify",
                    {"cardroom.game": game, "cardroom.player": player, "cardroom.seq": seq},
                    kind=tracing.SpanKind.PRODUCER,
                ):
                    await connection.publish(
                        self.subjects.player(player, game), payload, headers=tracing.headers()
                    )
        except Exception:
            log.warning("notifications of %s not sent now; the acktracker resends them", game)

    async def _after(self, loaded: Loaded, appended: Appended) -> None:
        """Move on at once when nobody present has to acknowledge what was appended."""
        if appended.released or not appended.gated:
            await self._advance(loaded, set(appended.released))

    async def _advance(self, loaded: Loaded, handled: set[int]) -> None:
        """While the gate is open: the follow-up, else the house's moves for away players.

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
                    items = [(e, {}) for e in table.follow_up(state, self.rng)]
                if not items:
                    away = [p for p in table.movers(state) if p in state.away]
                    for player, events in table.house_moves(state, away, self.rng):
                        items += [(e, {"actor": player, "house": True}) for e in events]
                tracing.tag("cardroom.events", len(items))
                if not items:
                    break
                gate = max(handled) if handled else None
                appended = await self._append(loaded, items, handled_gate=gate)
            if gate is not None:
                handled.discard(gate)
            handled.update(appended.released)
            if appended.gated and not appended.released:
                break
        else:
            log.warning("%s: still moving after %d appends; stopping here", game, ADVANCE_LIMIT)
        if handled:
            self.gates.mark_later(loaded.gate, game, handled)

    def _write_deadlines_soon(self, loaded: Loaded) -> None:
        """:meth:`_write_deadlines` in the background: a command's reply does not wait for it.

        Deadlines are best effort either way (a lost write is found by the timers service,
        which asks for a reconcile) and a write never goes back a version. One writer per game
        at a time; it waits first, so the versions of a game in quick play share one write
        (due times are counted from the events' recorded times, so waiting moves none): a
        quarter of the game's shortest deadline, at most ``DEADLINE_WRITE_DELAY``. Then it
        writes the newest state it was handed, and goes round again if a newer one came while
        it wrote.
        """
        game = loaded.state.game_id
        self._deadlines_wanted[game] = loaded
        running = self._deadline_writers.get(game)
        if running is None or running.done():
            state = loaded.state
            soonest = [d.seconds for d in loaded.table.deadlines(state)]
            if state.options.ack_timeout is not None:
                soonest.append(state.options.ack_timeout)
            delay = min([DEADLINE_WRITE_DELAY, *(s / 4 for s in soonest)])
            self._deadline_writers[game] = asyncio.create_task(
                self._write_deadlines_later(game, delay)
            )

    async def _write_deadlines_later(self, game: str, delay: float) -> None:
        await asyncio.sleep(max(delay, 0.0))
        while (loaded := self._deadlines_wanted.pop(game, None)) is not None:
            await self._write_deadlines(loaded)
        self._deadline_writers.pop(game, None)  # no await since the check above: nothing slipped in

    async def start(self) -> None:
        # what a predecessor that died left undone: releases it never followed up, and
        # notifications it appended and never published (the acktracker sends those again)
        self._catching_up = asyncio.create_task(self._follow_unhandled(), name="release-catch-up")
        try:
            await self.rt.broker.connection.publish(self.subjects.resend, dumps(Resend().body()))
        except Exception:  # the acktracker's sweep sends them once they are overdue
            log.warning("resend not asked for at start", exc_info=True)

    async def _follow_unhandled(self) -> None:
        """Follow up, at start, every release left unhandled (sent while no gamemaster
        listened, or lost with one that died): the games wait for this process's start only,
        not for the acktracker's sweep too (``cardroom_runtime.gate``, step 5)."""
        try:
            unhandled = await self.gates.unhandled()
        except Exception:
            log.warning("unhandled releases not read; the acktracker's sweep resends them")
            return
        results = await asyncio.gather(
            *(self._follow_release(game, version) for game, version in unhandled),
            return_exceptions=True,
        )
        for (game, version), result in zip(unhandled, results, strict=True):
            if isinstance(result, Exception):
                log.warning("release %s@%s not followed up at start: %r", game, version, result)
        if unhandled:
            log.info("followed up %d release(s) left unhandled", len(unhandled))

    async def stop(self) -> None:
        """Finish the deadline writes still running (bounded: they are best effort). Marks of
        released gates still waiting are dropped: the acktracker's sweep sends those releases
        again, to whichever gamemaster runs then."""
        if self._catching_up is not None:
            self._catching_up.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._catching_up
        marks = self.gates.running()
        running = [t for t in (*self._deadline_writers.values(), *marks) if not t.done()]
        if running:
            await asyncio.wait(running, timeout=5)
        if self._appends is not None:
            await self._appends.close()
        await super().stop()

    async def _write_deadlines(self, loaded: Loaded, *, force: bool = False) -> None:
        """Write the game's deadlines for its current version (best effort: a write lost
        here is found by the timers service, which asks for a reconcile)."""
        state = loaded.state
        if not force and loaded.deadlines_at == state.version:
            return
        try:
            due = await self.deadlines(state.game_id).sync(
                state.game_id,
                state.version,
                active=state.status != "finished",
                wanted=loaded.table.deadlines(state),
                ack_timeout=state.options.ack_timeout if state.status == "playing" else None,
            )
        except Exception:
            log.exception("writing the deadlines of %s@%s", state.game_id, state.version)
            return
        loaded.deadlines_at = state.version
        if due is not None:
            try:
                await self.rt.broker.publish(
                    dumps(DeadlineHint(game=state.game_id, due=due.timestamp())),
                    self.subjects.deadline_hint,
                )
            except Exception:  # a hint only: the timers service polls anyway
                log.debug("deadline hint for %s not sent", state.game_id, exc_info=True)

    # -- lobby ---------------------------------------------------------------------------------
    async def on_lobby(self, subject: str, body: bytes) -> dict[str, Any]:
        """``<root>.lobby.<verb>.<asker>``: the asker is the player the request acts for (for
        ``register``, a guest's nonce); the broker lets a player publish only as itself, so
        the actor comes from the subject, never from the body."""
        verb, asker = self.subjects.parse_lobby(subject)
        payload = decode_json(body)
        if isinstance(payload, dict) and "type" not in payload:
            payload = {**payload, "type": verb}
        if verb == "create":
            return await self._create(asker, parse_request(CreateTable, payload))
        if verb == "join":
            req = parse_request(JoinTable, payload)
            # the key is bound to the asker's own seat: the subject names the asker
            return await self._lobby_change(req.game, asker, "join", key=req.key)
        if verb == "start":
            start = parse_request(StartTable, payload)
            return await self._lobby_change(start.game, asker, "start")
        if verb == "list":
            lst = parse_request(ListTables, payload)
            found = await self._list_tables(lst)
            return ok(tables=found, game_types=registry.names())
        if verb == "register":
            parse_request(Register, payload)
            return ok(**self.credentials.register())
        if verb == "renew":
            renew = parse_request(RenewToken, payload)
            granted = self.credentials.renew(renew.token)
            if granted["player"] != asker:  # a token is renewed only by its own player
                raise WireError(ErrorCode.BAD_TOKEN, "cannot renew: the token is not yours")
            return ok(**granted)
        if verb == "get":
            get = parse_request(GetTable, payload)
            return ok(table=await self._summary(get.game))
        raise WireError(ErrorCode.BAD_REQUEST, f"unknown lobby request {verb!r}")

    async def _summary(self, game: str) -> dict[str, Any]:
        """A table's summary as the store has it now: from the cache when it holds the
        stored version (one lookup), else read afresh, without the game's lock (anyone may
        ask, as often as the rate limit lets them) and so without caching what was read."""
        cached = self._cache.get(game)
        if cached is not None:
            state = cached.state
            if state.version == await self.store_of(game).stream_version(game):
                return state.summary()
        loaded = await self.load(game, fresh=True, remember=False)
        return loaded.state.summary()

    async def _list_tables(self, lst: ListTables) -> list[dict[str, Any]]:
        """The lobby's listing: every shard's tables (each shard's listing is in its own
        read models), merged."""
        found = await asyncio.gather(
            *(
                readmodels.list_tables_dated(store.engine, lst.game_type, lst.status)
                for store in self.shards.stores
            )
        )
        merged = sorted(
            (row for part in found for row in part), key=lambda row: row[0], reverse=True
        )
        return [summary for _, summary in merged[: readmodels.LIST_LIMIT]]

    async def _create(self, player: str, req: CreateTable) -> dict[str, Any]:
        if req.game is None:
            game_id = self.shards.new_game_id()  # the shard is in the id (cardroom_runtime.shards)
        else:
            game_id = req.game
            self.shards.check_new(game_id)
        table = Table(registry.get(req.game_type))
        events = table.create(game_id, player, req.config, req.seats, key=req.key)
        async with self._lock(game_id):
            try:
                await self.store_of(game_id).append(
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
            self._remember(game_id, loaded)
            await self._write_deadlines(loaded)
        return ok(game=game_id, table=loaded.state.summary())

    async def _lobby_change(
        self, game: str, player: str, verb: str, *, key: str | None = None
    ) -> dict[str, Any]:
        async def change(loaded: Loaded) -> dict[str, Any]:
            table, state = loaded.table, loaded.state
            if verb == "join":
                events = table.join(state, player, self.rng, key=key)
            else:
                events = table.start(state, player, self.rng)
            await self._after(
                loaded, await self._append(loaded, [(e, {"actor": player}) for e in events])
            )
            await self._write_deadlines(loaded)
            state = loaded.state
            return ok(game=game, version=state.seen(player), table=state.summary())

        return await self._session(game, change, busy="the table is busy; try again")

    # -- commands --------------------------------------------------------------------------------
    async def on_command(self, subject: str, body: bytes) -> dict[str, Any]:
        """:meth:`_command`, counted by game type, command type and outcome."""
        t0 = time.perf_counter()
        outcome = "internal"
        kind = "invalid"
        try:
            _, game, player = self.subjects.parse_input(subject)
            command = parse_request(Command, decode_json(body))
            kind = _label(command.type)
            tracing.tag("cardroom.command", kind)
            # what is logged from here names the command, the host's line of the request too
            # (the host restores the context it found when the request is done)
            logs.bind(command=command.id)
            reply = await self._command(game, player, command)
            outcome = "ok"
            return reply
        except WireError as exc:
            outcome = exc.code
            raise
        finally:
            cached = self._cache.get(subject.rsplit(".", 2)[-2])  # <root>.cmd.<game>.<player>
            game_type = cached.state.game_type if cached is not None else "unknown"
            # a label's values must stay few whatever players send: a command type is named
            # once the game has accepted one of it, else it counts as "other"
            known = self._command_types.setdefault(game_type, set())
            if outcome == "ok" and len(known) < 64:
                known.add(kind)
            self._commands.labels(game_type, kind if kind in known else "other", outcome).inc()
            self._command_seconds.labels(game_type).observe(time.perf_counter() - t0)

    async def _command(self, game: str, player: str, command: Command) -> dict[str, Any]:
        cached = self._cache.get(game)
        if cached is not None and _outsider(cached.state, player):
            # refused whatever the gate and the command id (no command of this player was
            # ever accepted here): without the game's lock and the store, so that a player
            # who is not at this table cannot slow the ones who are
            cached.table.decide(cached.state, player, command.fields(), self.rng, gate_open=True)
        return await self._session(
            game,
            lambda loaded: self._decide_command(loaded, player, command),
            busy="the game is busy; try again",
        )

    async def _decide_command(
        self, loaded: Loaded, player: str, command: Command
    ) -> dict[str, Any]:
        """Decide a player's command on the loaded game, append and publish what it causes.

        A command id seen before is answered as the first time. It is looked up only when
        the command is refused or changes nothing, or its append fails; an accepted one is
        caught by the append (the command id is unique per game), which saves a round trip
        on every command."""
        table, state = loaded.table, loaded.state
        game = state.game_id
        gate_open = await self.gate_open(loaded)
        if gate_open and (halt := await self.signatures.halt(table.game, state)):
            await self._commit(loaded, [(e, {}) for e in halt])
            raise WireError(ErrorCode.GAME_FINISHED, "the table halted: see its outcome")
        # a command from an away player takes the seat back, in the same batch
        back: list[Item] = [(e, {"actor": player}) for e in table.mark_back(state, player)]
        before = state
        for event, _ in back:
            before = table.evolve(before, event)
        try:
            with tracing.span("decide", {"cardroom.game": game, "cardroom.player": player}):
                events = await _decide(table, before, player, command.fields(), self.rng, gate_open)
                tracing.tag("cardroom.events", len(events))
        except Rejection:
            previous = await self.store_of(game).command_reply(game, command.id)
            if previous is not None:
                return previous
            # refused on this instance's copy: another gamemaster may have moved the game on
            # (the turn, the gate), so a refusal counts only on the game as it is now
            now = await self.store_of(game).stream_version(game)
            if now > state.version:
                raise ConcurrencyError(game, state.version, now) from None  # run again, fresh
            if back:
                await self._commit(loaded, back)
            raise
        if not events and not back:
            previous = await self.store_of(game).command_reply(game, command.id)
            return previous if previous is not None else ok(version=state.seen(player))
        meta: dict[str, Any] = {"actor": player, "command_id": command.id}
        items = back + [(e, meta) for e in events]
        try:
            appended = await self._append(loaded, items, command_id=command.id if events else None)
            await self._after(loaded, appended)
        except (ConcurrencyError, DuplicateCommand):
            previous = await self.store_of(game).command_reply(game, command.id)
            if previous is not None:  # the same command, answered before
                return previous
            raise  # the session runs it again
        self._write_deadlines_soon(loaded)  # after the reply: the player waits for nothing else
        return ok(version=loaded.state.seen(player))

    async def _commit(self, loaded: Loaded, items: Sequence[Item]) -> None:
        """Append, move on if nobody present must acknowledge, write the deadlines."""
        try:
            appended = await self._append(loaded, items)
        except ConcurrencyError:
            return  # another instance moved the game on; whoever comes next decides again
        await self._after(loaded, appended)
        await self._write_deadlines(loaded)

    # -- follow-ups ------------------------------------------------------------------------------
    async def on_release(self, subject: str, body: bytes) -> dict[str, Any]:
        release = parse_request(Release, decode_json(body))
        tracing.tag("cardroom.game", release.game)
        tracing.tag("cardroom.version", release.version)
        return await self._follow_release(release.game, release.version, is_open=bool(release.open))

    async def _follow_release(
        self, game: str, version: int, *, is_open: bool = False
    ) -> dict[str, Any]:
        async def follow_up(loaded: Loaded) -> dict[str, Any]:
            # the acktracker saw no gating ack owed at all once this gate was released; true
            # while the game is at that version (see AckResult.open)
            if is_open and loaded.state.version == version:
                loaded.gate.open_at = version
            await self._advance(loaded, {version})
            self._write_deadlines_soon(loaded)
            return ReleaseReply(version=loaded.state.version).body()

        return await self._session(game, follow_up, at=version)

    # -- time ------------------------------------------------------------------------------------
    async def on_timeout(self, subject: str, body: bytes) -> dict[str, Any]:
        """A deadline is due: ``{"game", "version", "key"}`` from the timers service.

        Answers ``result``: ``fired`` (it had its effect), ``nothing`` (it was due but changed
        nothing), ``stale`` (the game has moved past that version or key: ignored), or
        ``deferred`` (the gate is closed: ask again shortly).
        """
        timeout = parse_request(Timeout, decode_json(body))
        game, version, key = timeout.game, timeout.version, timeout.key

        async def fire(loaded: Loaded) -> dict[str, Any]:
            result = await self._timeout(loaded, version, key)
            if result in ("fired", "nothing"):
                await self.deadlines(game).mark_fired(game, key, version)
            await self._write_deadlines(loaded, force=result == "stale")
            return ok(result=result, version=loaded.state.version)

        return await self._session(game, fire, at=version)

    async def _timeout(self, loaded: Loaded, version: int, key: str) -> str:
        table, state = loaded.table, loaded.state
        if state.version != version:
            return "stale"
        if key.startswith(ACKS):
            return await self._ack_timeout(loaded, int(key.removeprefix(ACKS)))
        if key not in {d.key for d in table.deadlines(state)}:
            return "stale"
        if not await self.gate_open(loaded):
            return "deferred"  # nobody has seen the last update yet: the game waits
        items: list[Item] = []
        # a heavy game's timeout may be CPU work too (Macaua's audit deadline opens every
        # position the published keys open): off the loop, under the game's lock like decide
        if table.game.heavy:
            fired = await asyncio.to_thread(table.fire, state, key, self.rng)
        else:
            fired = table.fire(state, key, self.rng)
        for player, events in fired:
            meta: dict[str, Any] = {"timeout": key}
            if player is not None:
                meta |= {"actor": player, "house": True}
            items += [(e, meta) for e in events]
        if not items:
            return "nothing"
        await self._after(loaded, await self._append(loaded, items))
        return "fired"

    async def _ack_timeout(self, loaded: Loaded, gate: int) -> str:
        """Everyone who still owes a gating ack of ``gate`` (or older) is marked away."""
        table, state = loaded.table, loaded.state
        game = state.game_id
        if state.status != "playing":
            return "nothing"
        late = await self.store_of(game).debtors(game, gate)
        if not late:
            return "nothing"
        items: list[Item] = []
        after = state
        for player in state.seats:
            if player in late:
                for event in table.mark_away(after, player):
                    items.append((event, {"reason": "ack_timeout"}))
                    after = table.evolve(after, event)
        released: list[int] = []
        if items:
            released += (await self._append(loaded, items)).released
            log.info("%s: %s away (no ack of gate %s)", game, ", ".join(sorted(late)), gate)
        released += await self.store_of(game).excuse(game, late & set(loaded.state.away))
        await self._advance(loaded, set(released))
        return "fired"

    async def on_reconcile(self, subject: str, body: bytes) -> dict[str, Any]:
        """Evaluate a game again: excuse stuck acks of away players, move on if the gate is
        open, write the deadlines. Asked by the timers service after a skipped evaluation."""
        game = parse_request(Reconcile, decode_json(body)).game

        async def evaluate(loaded: Loaded) -> dict[str, Any]:
            state = loaded.state
            released: list[int] = []
            if state.status == "playing" and state.away:
                store = self.store_of(game)
                stuck = await store.debtors(game) & set(state.away)
                released = await store.excuse(game, stuck)
            await self._advance(loaded, set(released))
            await self._write_deadlines(loaded, force=True)
            return ok(version=loaded.state.version)

        return await self._session(game, evaluate, fresh=True)

    # -- presence --------------------------------------------------------------------------------
    async def on_presence(self, subject: str, body: bytes) -> None:
        """A sync from a player: if they are away, they are back."""
        try:
            _, game, player = self.subjects.parse_input(subject)
        except Exception:
            return  # the answering service tells the sender what is wrong
        await self._present(game, player)

    async def _present(self, game: str, player: str) -> None:
        cached = self._cache.get(game)
        if cached is not None and player not in cached.state.away:
            return
        try:
            await self.mark_back(game, player)
        except WireError:
            return
        except Exception as exc:
            if storage_unavailable(exc):  # their next ack or sync tries again
                log.debug("marking %s back in %s: storage unavailable", player, game)
            else:
                log.exception("marking %s back in %s", player, game)

    async def on_back(self, subject: str, body: bytes) -> None:
        """``{"game", "player"}`` from the acktracker: an away player acknowledged."""
        try:
            back = parse_request(Back, decode_json(body))
        except WireError:
            log.warning("a malformed back message: %r", body[:200])
            return
        await self._present(back.game, back.player)

    async def mark_back(self, game: str, player: str) -> None:
        async with self._lock(game):
            loaded = await self.load(game)
            events = loaded.table.mark_back(loaded.state, player)
            if events:
                await self._commit(loaded, [(e, {"actor": player}) for e in events])
                log.info("%s: %s is back", game, player)


def _stream_of(batch: Append) -> str:
    return batch.stream_id


def _label(kind: str) -> str:
    """A command's ``type`` as a metrics label: a short printable word, else ``other``."""
    if 0 < len(kind) <= 24 and kind.isascii() and kind.isprintable():
        return kind
    return "other"


def _outsider(state: TableState, player: str) -> bool:
    """No command of ``player`` can ever be accepted at this table: it has started and the
    player has no seat (seats are fixed once it starts). True even of a copy another
    gamemaster has moved on since; a copy still in the lobby may not be (the table may have
    started since), so a command to it is judged on the game as it is."""
    return state.status != "lobby" and player not in state.seats


__all__ = ["Gamemaster", "Rejection"]


async def _decide(
    table: Table,
    state: TableState,
    player: str,
    fields: dict[str, Any],
    rng: random.Random,
    gate_open: bool,
) -> list[Event]:
    """``table.decide``, in a worker thread for a heavy game: its checks are CPU work that
    would hold up every other game on the event loop. The caller holds the game's lock, so
    one game's commands are still decided one at a time, in order; the table and its states
    are immutable (what they cache when read is the same whichever thread computes it)."""
    if table.game.heavy:
        return await asyncio.to_thread(
            table.decide, state, player, fields, rng, gate_open=gate_open
        )
    return table.decide(state, player, fields, rng, gate_open=gate_open)
