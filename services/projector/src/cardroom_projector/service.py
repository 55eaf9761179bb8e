"""The projector: events -> per-player notifications and views, published privately.

It consumes the JetStream event stream as a durable consumer. For each event it computes
what every addressee receives (the game's ``notify``), numbers each player's notifications
without gaps (``seq``), stores those still owed an acknowledgement with the players' views
(each with the player's last ``seq``) and its per-game checkpoint in one transaction
(exactly-once effects), then publishes the spectator view on ``<root>.public.<game>``. A
notification acknowledged before its event gets here is counted but neither built nor
stored: the event log is the history, the ``notifications`` table what is owed.

It does not publish the players' notifications: the gamemaster sends each one as soon as its
event commits (computed by the same code from the same events, so with the same ``seq`` and
content), which saves the relay -> JetStream -> projector hops on every command. What is
stored here is what reconnects (sync) and the acktracker's resends of overdue notifications
read. Redelivered events (version at or below the checkpoint) change nothing. An event that
arrives ahead of a missing one makes the projector read the gap from the store first, so the
order is always the game's version order whatever JetStream redelivers.

It also answers ``<root>.sync.<game>.<player>``: the player's view and every notification
that player has not acknowledged, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cardroom_engine import TABLE_PREFIX, Event, Table, TableState, numbering, registry
from cardroom_engine.table import GAME_DEADLINE, TURN_DEADLINE
from cardroom_eventstore import TO, EventStore, readmodels
from cardroom_eventstore.readmodels import SPECTATOR, StoredNotification, StoredView
from cardroom_runtime.host import Asker, Service, ensure_events_stream, storage_unavailable
from cardroom_runtime.metrics import Histogram
from cardroom_runtime.nats import subscribe_group
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import (
    ErrorCode,
    Notification,
    PublicUpdate,
    SyncReply,
    SyncRequest,
    WireError,
    dumps,
)
from cardroom_wire.events import BadRecord, EventRecord
from faststream import AckPolicy
from faststream.nats import JStream
from nats.aio.msg import Msg
from nats.js.api import ConsumerConfig, DeliverPolicy

log = logging.getLogger("cardroom.projector")

CACHE_SIZE = 10_000
ACK_WAIT = 5.0  # seconds before JetStream redelivers an event nobody acknowledged
TURN_KIND = TURN_DEADLINE.removesuffix(":")  # the kinds of deadline a sync tells the time of
GAME_KIND = GAME_DEADLINE.removesuffix(":")
LINGER = 0.01  # seconds a batch waits for more events after its first
BATCH = 256  # events per batch (and in flight from JetStream at once)


def checkpoint_name(game: str) -> str:
    return f"projector:{game}"


@dataclass
class Projection:
    """The projector's in-memory picture of one game at its checkpoint."""

    table: Table
    state: TableState
    seqs: dict[str, int] = field(default_factory=dict)
    listing: dict[str, Any] | None = None
    """The game's row of the lobby listing (``tables``): its summary as of the last event
    that changed what the listing shows (:func:`listing_changed`). A function of the log
    alone, so that the live projector, whatever its batches, and a rebuild store the same;
    replaced (never changed in place) by the fold of such an event."""


@dataclass(frozen=True)
class Projected:
    version: int
    notes: list[StoredNotification]
    public: PublicUpdate | None  # None when not asked for (rebuilds publish nothing)


#: One event as :func:`project_log` takes it: its version, the event as the game's rules
#: read it (its data with its ``type``), and its ``metadata.to`` (None when it has none).
Entry = tuple[int, Event, Sequence[str] | None]


def project_events(
    proj: Projection | None,
    records: list[dict[str, Any]],
    *,
    spectator: bool = True,
    owed: Collection[tuple[int, str]] | None = None,
) -> tuple[Projection, list[Projected], list[StoredView]]:
    """:func:`project_log` over events in the public schema (``type``, ``data``,
    ``version``, ``game_type``, ``metadata``)."""
    entries: list[Entry] = [
        (rec["version"], {**rec["data"], "type": rec["type"]}, rec.get("metadata", {}).get(TO))
        for rec in records
    ]
    game_type = records[0]["game_type"] if records else ""
    return project_log(proj, game_type, entries, spectator=spectator, owed=owed)


def project_log(
    proj: Projection | None,
    game_type: str,
    entries: Iterable[Entry],
    *,
    spectator: bool = True,
    owed: Collection[tuple[int, str]] | None = None,
) -> tuple[Projection, list[Projected], list[StoredView]]:
    """Fold events into a projection; return what to store and publish, and the views at the
    end. Pure. This is the projector's own code path, also used by replays and rebuilds.

    ``proj``: the projection the events follow (None: they start with the game's first, of
    ``game_type``). ``spectator``: compute each event's spectator view (published live; a
    rebuild has no use for it). ``owed``: compute only the notifications of these
    ``(version, player)`` (the ones still to be acknowledged, the only ones stored); the
    others are only counted for ``seq``, from the event's ``metadata.to`` when it has one,
    without running the game's ``notify``. With None, every notification is computed (what a
    replay shows a player). The list holds one :class:`Projected` per event with something
    to store or publish, in order. The projection's ``listing`` is the summary as of the
    last event that changed the listing (only the table's own events can: each is folded
    on its own, never in a run).
    """
    out: list[Projected] = []
    # An event with its addressees recorded and none of its notifications owed is only
    # counted (without a spectator view to build, also folded in runs: a rebuild's hot
    # path). A player acknowledges the version it sees (``TableState.seen``), never above
    # the event's own: so nothing before the first owed version is owed, and in a game
    # without events for some seats only, nothing at a version not owed. The rest is folded
    # one by one and asked (``numbering.notify`` with the addressees: the game's ``notify``
    # runs only for an event with something owed).
    owed_at = None if owed is None else {version for version, _ in owed}
    first_owed = 0 if owed_at is None else min(owed_at, default=sys.maxsize)
    table = None if proj is None else proj.table
    state = None if proj is None else proj.state
    seqs: dict[str, int] = {} if proj is None else proj.seqs
    listing = None if proj is None else proj.listing
    run: list[Event] = []  # counted events not yet folded into ``state``
    tally = numbering.Tally()  # counted events not yet numbered into ``seqs``
    expected = 1 if state is None else state.version + 1
    for version, event, sent_to in entries:
        if version != expected:
            raise ValueError(f"event version {version} applied as {expected}")
        expected += 1
        counted = False
        if (
            sent_to is not None
            and table is not None
            and (
                version < first_owed
                or (owed_at is not None and version not in owed_at and not table.private_events)
            )
        ):
            tally.add(sent_to)
            if not spectator and not event["type"].startswith(TABLE_PREFIX):
                run.append(event)
                continue
            counted = True
        notes: list[StoredNotification] = []
        if run and state is not None and table is not None:
            state, run = table.evolve_many(state, run), []
        before = state
        private = 0 if state is None else state.private
        if state is None or table is None:
            table = Table(registry.get(game_type))
            state = table.evolve(None, event)  # the table's creation: nobody is notified
        elif counted:
            state = table.evolve(state, event)
        else:
            tally.into(seqs)
            state, numbered = numbering.notify(
                table, state, event, seqs, owed=owed, sent_to=sent_to
            )
            notes = [
                StoredNotification(state.game_id, n.player, n.seq, n.version, n.document)
                for n in numbered
                if n.document is not None
            ]
        if listing_changed(before, state):
            listing = state.summary()
        # an event for some seats only (it counts in ``private``) is nothing to a spectator:
        # not even a message
        public = (
            PublicUpdate(game=state.game_id, version=state.seen(None), view=table.view(state, None))
            if spectator and state.private == private
            else None
        )
        if notes or public is not None:
            out.append(Projected(version, notes, public))
    if state is None or table is None:
        raise ValueError("no events")
    if run:
        state = table.evolve_many(state, run)
    tally.into(seqs)
    if proj is None:
        proj = Projection(table, state, seqs, listing)
    else:
        proj.state = state
        proj.listing = listing
    views = [
        StoredView(
            state.game_id,
            p,
            state.seen(p),
            table.view(state, p),
            table.actions(state, p),
            seqs.get(p, 0),
        )
        for p in state.seats
    ]
    views.append(
        StoredView(state.game_id, SPECTATOR, state.seen(None), table.view(state, None), [], 0)
    )
    return proj, out, views


class Projector(Service):
    name = "projector"
    background = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cache: OrderedDict[str, Projection] = OrderedDict()
        self._queue: list[tuple[dict[str, Any], Msg]] = []
        self._sub: Any = None
        self._wake = asyncio.Event()
        self._batcher: asyncio.Task[None] | None = None
        self._stopping = False
        self._delay_metric: Histogram | None = None

    @property
    def _delay(self) -> Histogram:
        """From an event's commit until its projection was committed (made on first use)."""
        if self._delay_metric is None:
            self._delay_metric = self.rt.metrics.histogram(
                "cardroom_projector_delay_seconds",
                "From an event's commit until its projection was committed",
                ["game_type"],
            )
        return self._delay_metric

    async def prepare(self) -> None:
        await ensure_events_stream(self.rt.nats_url, self.subjects)

    def register(self) -> None:
        s = self.subjects
        if not self.rt.direct:
            # the AsyncAPI document: what the projector consumes (served below on nats-py)
            self.rt.broker.subscriber(
                s.events_all,
                stream=JStream(s.events_stream, declare=False),
                queue=self._durable,
                deliver_policy=DeliverPolicy.ALL,
                config=ConsumerConfig(filter_subjects=[], ack_wait=ACK_WAIT),
                ack_policy=AckPolicy.MANUAL,
                title="projector",
            )(self._documented)
        self.serve(
            s.sync_all,
            queue="projector",
            title="sync",
            model=SyncRequest,
            handler=self.on_sync,
            max_workers=32,
        )

    @property
    def _durable(self) -> str:
        return f"{self.subjects.root}-projector"

    async def _documented(self, record: EventRecord) -> None:
        """Stands for :meth:`_on_msg` in the AsyncAPI document only."""

    async def start(self) -> None:
        s = self.subjects
        self._batcher = asyncio.create_task(self._batches(), name="projector-batches")
        # A durable push consumer with a deliver group (nats-py names the durable after the
        # queue, as FastStream did before): events arrive as they are stored, survive
        # restarts, and several projectors share the stream. On nats-py directly: FastStream's
        # per-message pipeline cost more than the projection itself. JetStream holds at most
        # its max_ack_pending (1000) unacknowledged events per consumer in flight.
        self._sub = await subscribe_group(
            self.rt.broker.connection.jetstream(),
            s.events_all,
            stream=s.events_stream,
            group=self._durable,
            deliver_subject=s.delivery("projector"),
            cb=self._on_msg,
            # an event delivered to a projector that died before acknowledging it comes
            # again after ack_wait; JetStream's default (30 s) holds that game as long
            ack_wait=ACK_WAIT,
        )

    async def stop(self) -> None:
        self._stopping = True
        if self._sub is not None:
            with contextlib.suppress(Exception):  # the connection may be gone already
                await self._sub.unsubscribe()
        await cancel_and_wait([self._batcher])
        # what was not acknowledged comes again (here after a restart, or to another projector)
        self._queue.clear()

    async def _on_msg(self, msg: Msg) -> None:
        """Queue an event for the next batch; it is acknowledged once its batch commits."""
        if self._stopping:
            return  # not acknowledged: delivered again
        try:
            record = EventRecord.read(msg.data)
        except BadRecord as exc:
            log.error("dropping a malformed event on %s: %s", msg.subject, exc)
            await msg.term()  # it would fail every time: JetStream must not deliver it again
            return
        self._queue.append((record, msg))
        self._wake.set()

    async def _batches(self) -> None:
        """Project what arrived, many events (of many games) per transaction.

        After the first event it lingers ``LINGER`` for more: one transaction, one checkpoint
        statement and one insert per kind of row then serve them all, instead of about eight
        statements per event. A batch that fails is retried event by event, so one bad
        event fails alone (it is not acknowledged, and comes again after ``ACK_WAIT``) while
        the others are acknowledged; unless the database is unreachable, when every event
        would fail alike and none is acknowledged.
        """
        while True:
            await self._wake.wait()
            await asyncio.sleep(LINGER)
            self._wake.clear()
            while self._queue:
                batch, self._queue = self._queue[:BATCH], self._queue[BATCH:]
                await self._project_batch(batch)

    async def _project_batch(self, batch: list[tuple[dict[str, Any], Msg]]) -> None:
        try:
            await self.handle_many([record for record, _ in batch])
            done = [msg for _, msg in batch]
        except Exception as exc:
            done = []
            if storage_unavailable(exc):
                log.warning("a batch of %d events: storage unavailable", len(batch))
            elif len(batch) > 1:
                log.exception("a batch of %d events failed; one by one now", len(batch))
                done = await self._project_each(batch)
            else:
                log.exception("projecting %s", _named(batch[0][0]))
        for msg in done:
            try:
                await msg.ack()
            except Exception:  # lost: the event comes again, and changes nothing then
                log.debug("ack of %s not sent", msg.subject, exc_info=True)

    async def _project_each(self, batch: list[tuple[dict[str, Any], Msg]]) -> list[Msg]:
        """Project a failed batch's events one by one; the messages of those that succeeded
        (the rest are not acknowledged, and come again)."""
        done: list[Msg] = []
        for record, msg in batch:
            try:
                await self.handle_many([record])
                done.append(msg)
            except Exception as exc:
                if storage_unavailable(exc):  # the rest would fail alike
                    log.warning("projecting %s: storage unavailable", _named(record))
                    break
                log.exception("projecting %s", _named(record))
        return done

    async def handle_many(self, records: list[dict[str, Any]]) -> None:
        """Project events of any games in one transaction with their games' checkpoints
        (one per shard: a game's read models and checkpoint are in its shard).

        Events at or below a game's checkpoint (redelivered) change nothing; a game whose
        events do not follow its checkpoint has the missing ones read from the store first.
        """
        shards = self.shards
        if len(shards) == 1:
            publics = await self._handle_shard(shards.stores[0], records)
        else:
            parts = shards.split(records, lambda record: str(record["game"]))
            publics = []
            for store, part in zip(shards.stores, parts, strict=True):
                if part:
                    publics += await self._handle_shard(store, part)
        now = datetime.now(UTC)
        for record in records:
            stamp = record.get("recorded_at")
            if isinstance(stamp, str):
                delay = (now - datetime.fromisoformat(stamp)).total_seconds()
                self._delay.labels(str(record.get("game_type", ""))).observe(delay)
        for public in publics:
            await self.rt.broker.connection.publish(
                self.subjects.public(public.game), dumps(public)
            )

    async def _handle_shard(
        self, store: EventStore, records: list[dict[str, Any]]
    ) -> list[PublicUpdate]:
        """Project events of games of one shard in one transaction; the spectator views to
        publish once it committed."""
        by_game: dict[str, list[dict[str, Any]]] = {}
        for record in records:
            by_game.setdefault(record["game"], []).append(record)
        publics: list[PublicUpdate] = []
        names = {game: checkpoint_name(game) for game in by_game}
        # derived data, on the relaxed pool (no wait for the WAL flush): a crash that loses
        # this commit loses output and checkpoints together; the next event of a game finds
        # the gap and projects it again, with the same seq numbers
        async with store.tracking_many(names.values()) as tracking:
            conn = tracking.conn
            notes: list[StoredNotification] = []
            views: list[StoredView] = []
            summaries: list[dict[str, Any]] = []
            moves: dict[str, int] = {}
            # what is acknowledged already (the gamemaster sent it) is neither built nor stored
            owed = await readmodels.owed(conn, sorted(by_game))
            for game in sorted(by_game):
                done = tracking.positions[names[game]]
                top = max(int(r["version"]) for r in by_game[game])
                if top <= done:
                    continue
                out = await self._project(
                    store, game, by_game[game], done, top, owed[game], views, summaries
                )
                for item in out:
                    notes.extend(item.notes)
                    if item.public is not None:
                        publics.append(item.public)
                moves[names[game]] = top
            await readmodels.write_batch(conn, notes, views, summaries)
            await tracking.advance(moves)
        return publics

    async def _project(
        self,
        store: EventStore,
        game: str,
        records: list[dict[str, Any]],
        done: int,
        top: int,
        owed: set[tuple[int, str]],
        views: list[StoredView],
        summaries: list[dict[str, Any]],
    ) -> list[Projected]:
        proj = await self._projection_at(store, game, done)
        listed = proj.listing if proj is not None else None
        fresh = {int(r["version"]): r for r in records if int(r["version"]) > done}
        if sorted(fresh) != list(range(done + 1, top + 1)):
            # a gap: read what is missing from the store, in order
            fresh = {r.version: record_of(r) for r in await store.read_stream(game, done + 1, top)}
        try:
            proj, out, rows = project_events(proj, [fresh[v] for v in sorted(fresh)], owed=owed)
        except Exception:
            self._cache.pop(game, None)
            raise
        views.extend(rows)
        if proj.listing is not listed and proj.listing is not None:
            # an event of these changed the listing: its row as of the last such event
            summaries.append(proj.listing)
        self._keep(game, proj)
        return out

    def _keep(self, game: str, proj: Projection) -> None:
        self._cache[game] = proj
        self._cache.move_to_end(game)
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    # -- sync -------------------------------------------------------------------------------------
    async def on_sync(self, request: SyncRequest, asker: Asker) -> dict[str, Any]:
        """A player's view and every notification it has not acknowledged
        (``<root>.sync.<game>.<player>``; the body is exactly ``{"type": "sync"}``)."""
        game, player = asker.seat
        store = self.store_of(game)
        caught = await self._catch_up(store, game)
        found = await store.view(game, player)
        if found is None:
            version = await store.stream_version(game)
            if version == 0:
                raise WireError(ErrorCode.UNKNOWN_GAME, f"no game {game!r}")
            if await store.checkpoint(checkpoint_name(game)) < version:
                # the gamemaster tells players at once; this projection follows a moment later
                raise WireError(ErrorCode.UNAVAILABLE, "the table is being brought up to date")
            raise WireError(ErrorCode.NOT_SEATED, "you are not seated at this table")
        # the view's seq first: every notification up to it is then either acknowledged or
        # still pending when the pending list is read, so a client may skip up to it safely
        version, view, actions, last_seq = found[2:]
        pending = await store.pending_for_player(game, player)
        notes = await store.notifications_for_versions(game, player, pending)
        left = await self._turn_left(store, game, caught, view)
        reply = SyncReply(
            game=game,
            player=player,
            version=version,
            view=view,
            actions=actions,
            notifications=[Notification.model_validate(n.payload) for n in notes],
            last_seq=last_seq,
            turn_due_in_ms=left,
        )
        return reply.model_dump(mode="json")

    async def _projection_at(self, store: EventStore, game: str, version: int) -> Projection | None:
        """The game's projection at ``version``: the cached one, else the fold of its log up
        to it (another projector instance may have moved it on, or this one forgotten it);
        None before its first event."""
        proj = self._cache.get(game)
        if proj is not None and proj.state.version == version:
            return proj
        if version == 0:
            return None
        history = await store.read_stream(game, 1, version)
        proj, _, _ = project_events(
            None, [record_of(r) for r in history], spectator=False, owed=frozenset()
        )
        return proj

    async def _turn_left(
        self, store: EventStore, game: str, version: int, view: dict[str, Any]
    ) -> int | None:
        """The milliseconds left on the game's clocks (``SyncReply.turn_due_in_ms``), the
        same for every seat: the table's turn timeout and the game's own deadline, both
        counted from events every seat was told of (the table's ``moved_at``) and the opening
        of a gate (which every seat's own commands tell it). Read from the deadlines written
        at or after that event, so an event told to some seats only changes no seat's answer
        (nor a moment after it, before the deadlines are written again)."""
        if view.get("status") != "playing":
            return None
        proj = await self._projection_at(store, game, version)
        if proj is None:
            return None
        self._keep(game, proj)  # as a batch keeps it: the next sync folds no log
        since = proj.state.moved_at
        kinds = [TURN_KIND, GAME_KIND]
        left = await store.deadlines.time_left(game, since, kinds=kinds, gated=TURN_KIND)
        return None if left is None else max(0, int(left * 1000))

    async def _catch_up(self, store: EventStore, game: str) -> int:
        """Project what the game's stream holds beyond this projection before a sync is
        answered: the gamemaster tells players at once and the events reach this projector
        a moment later, so a sync answered from what it had could be older than a
        notification the player already has (the last one of a game, typically). Returns
        the stream's version, which the views are at least at now."""
        version = await store.stream_version(game)
        done = await store.checkpoint(checkpoint_name(game))
        if 0 < done < version:
            records = await store.read_stream(game, done + 1, version)
            await self.handle_many([record_of(r) for r in records])
        return version


def _named(record: dict[str, Any]) -> str:
    return f"{record.get('game')}@{record.get('version')}"


def listing_changed(before: TableState | None, after: TableState) -> bool:
    """Whether the event from ``before`` to ``after`` changes the table's row of the lobby
    listing: its seats, its status or the seats away (the table's own events; a game's
    events change none of them). The row is then the summary as of that event, and the
    events up to the next such one leave it as it is, so that it is not rewritten on every
    move: a table in play lists the ``version`` of its last such change."""
    return (
        before is None
        or before.status != after.status
        or before.seats != after.seats
        or before.away != after.away
    )


def record_of(record: Any) -> dict[str, Any]:
    """A stored event as the event stream carries it (what :meth:`Projector.handle_many`
    takes)."""
    return {
        "game": record.stream_id,
        "game_type": record.stream_type,
        "version": record.version,
        "type": record.type,
        "data": record.data,
        "metadata": record.metadata,
    }
