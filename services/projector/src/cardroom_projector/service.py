"""The projector: events -> per-player notifications and views, published privately.

It consumes the JetStream event stream as a durable consumer. For each event it computes
what every addressee receives (the game's ``notify``), numbers each player's notifications
without gaps (``seq``), stores them with the players' views and its per-game checkpoint in
one transaction (exactly-once effects), then publishes each notification on
``<root>.player.<player>.<game>`` and the spectator view on ``<root>.public.<game>``.

Redelivered events (version at or below the checkpoint) are published again from the stored
notifications: clients drop duplicates by ``seq``. An event that arrives ahead of a missing
one makes the projector read the gap from the store first, so the order is always the
game's version order whatever JetStream redelivers.

It also answers ``<root>.sync.<game>.<player>``: the player's view and every notification
that player has not acknowledged, in order.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from cardroom_engine import Table, TableState, registry
from cardroom_eventstore import readmodels
from cardroom_eventstore.readmodels import SPECTATOR, StoredNotification
from cardroom_runtime.host import Service, ensure_events_stream, replying
from cardroom_wire import (
    ErrorCode,
    Notification,
    PublicUpdate,
    SyncReply,
    WireError,
    decode_json,
    dumps,
)
from faststream import AckPolicy
from faststream.nats import JStream, NatsMessage
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy.ext.asyncio import AsyncConnection

log = logging.getLogger("cardroom.projector")

CACHE_SIZE = 10_000
ACK_WAIT = 5.0  # seconds before JetStream redelivers an event nobody acknowledged


def checkpoint_name(game: str) -> str:
    return f"projector:{game}"


@dataclass
class Projection:
    """The projector's in-memory picture of one game at its checkpoint."""

    table: Table
    state: TableState
    seqs: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Projected:
    version: int
    notes: list[StoredNotification]
    public: PublicUpdate


def project_events(
    proj: Projection | None, records: list[dict[str, Any]]
) -> tuple[Projection, list[Projected], list[tuple[str, dict[str, Any], list[dict[str, Any]]]]]:
    """Fold events into a projection; return what to store and publish. Pure.

    ``records`` are events in the public schema (``type``, ``data``, ``version``, ...).
    This is the projector's own code path, also used by replays and rebuilds.
    """
    out: list[Projected] = []
    for rec in records:
        event = {**rec["data"], "type": rec["type"]}
        if proj is None:
            table = Table(registry.get(rec["game_type"]))
            proj = Projection(table, table.evolve(None, event))
            before = None
        else:
            before = proj.state
            proj.state = proj.table.evolve(before, event)
        state = proj.state
        assert state.version == rec["version"], (state.version, rec["version"])
        notes: list[StoredNotification] = []
        if before is not None:
            for player, message in proj.table.notify(before, event, state).items():
                seq = proj.seqs.get(player, 0) + 1
                proj.seqs[player] = seq
                actions = proj.table.actions(state, player)
                note = Notification(
                    game=state.game_id,
                    player=player,
                    seq=seq,
                    version=state.version,
                    message=message,
                    actions=actions,
                    view=proj.table.view(state, player) if actions else None,
                )
                notes.append(
                    StoredNotification(
                        state.game_id, player, seq, state.version, note.model_dump(mode="json")
                    )
                )
        public = PublicUpdate(
            game=state.game_id, version=state.version, view=proj.table.view(state, None)
        )
        out.append(Projected(state.version, notes, public))
    assert proj is not None
    views = [
        (p, proj.table.view(proj.state, p), proj.table.actions(proj.state, p))
        for p in proj.state.seats
    ]
    views.append((SPECTATOR, proj.table.view(proj.state, None), []))
    return proj, out, views


class Projector(Service):
    name = "projector"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cache: OrderedDict[str, Projection] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def prepare(self) -> None:
        await ensure_events_stream(self.rt.nats_url, self.subjects)

    def register(self) -> None:
        s = self.subjects
        stream = JStream(s.events_stream, declare=False)
        self.rt.broker.subscriber(
            s.events_all,
            stream=stream,
            # a durable push consumer with a deliver group (nats-py names the durable after
            # the queue): events arrive as they are stored (a pull batch would wait to
            # fill), survive restarts, and several projectors can share the stream
            queue=f"{s.root}-projector",
            deliver_policy=DeliverPolicy.ALL,
            # an event delivered to a projector that died before acknowledging it comes
            # again after ack_wait; JetStream's default (30 s) holds that game as long
            config=ConsumerConfig(filter_subjects=[], ack_wait=ACK_WAIT),
            # games in parallel; one game's events in order (its lock, and the gap reading)
            max_workers=16,
            ack_policy=AckPolicy.NACK_ON_ERROR,
            title="projector",
        )(self.on_event)
        self.rt.broker.subscriber(s.sync_all, queue="projector", title="sync", max_workers=32)(
            replying(self.on_sync)
        )

    def _lock(self, game: str) -> asyncio.Lock:
        lock = self._locks.get(game)
        if lock is None:
            lock = self._locks[game] = asyncio.Lock()
        return lock

    async def on_event(self, msg: NatsMessage) -> None:
        record = json.loads(msg.body)
        await self.handle(record)

    async def handle(self, record: dict[str, Any]) -> None:
        game, version = record["game"], int(record["version"])
        async with self._lock(game):
            async with self.store.tracking(checkpoint_name(game)) as tracking:
                # derived data: no need to wait for the WAL flush. A crash that loses this
                # commit loses output and checkpoint together; the next event of the game
                # finds the gap and projects it again, with the same seq numbers.
                await tracking.conn.execute(ASYNC_COMMIT)
                done = tracking.position
                if version <= done:
                    projected = None
                else:
                    projected = await self._project(tracking.conn, record, done)
                    await tracking.advance(version)
            if projected is None:
                await self._republish(game, version)
            else:
                for item in projected:
                    await self._publish(item.notes, item.public)

    async def _project(
        self, conn: AsyncConnection, record: dict[str, Any], done: int
    ) -> list[Projected]:
        game, version = record["game"], int(record["version"])
        proj = self._cache.get(game)
        if proj is not None and proj.state.version != done:
            proj = None  # another projector instance moved this game on
        if proj is None and done > 0:
            history = await self.store.read_stream(game, 1, done)
            proj, _, _ = project_events(None, [_public(r) for r in history])
            proj.seqs = await readmodels.last_seqs(conn, game)
        before = proj.state if proj is not None else None
        if version == done + 1:
            records = [record]
        else:  # a gap: read what is missing from the store, in order
            records = [_public(r) for r in await self.store.read_stream(game, done + 1, version)]
        try:
            proj, out, views = project_events(proj, records)
        except Exception:
            self._cache.pop(game, None)
            raise
        for item in out:
            await readmodels.add_notifications(conn, item.notes)
        await readmodels.put_views(conn, game, proj.state.version, views)
        if _listing_changed(before, proj.state):
            await readmodels.put_table(conn, proj.state.summary())
        self._cache[game] = proj
        self._cache.move_to_end(game)
        while len(self._cache) > CACHE_SIZE:
            old, _ = self._cache.popitem(last=False)
            self._locks.pop(old, None)
        return out

    async def _publish(self, notes: list[StoredNotification], public: PublicUpdate) -> None:
        await self.publish_notifications(notes)
        await self.rt.broker.publish(dumps(public), self.subjects.public(public.game))

    async def _republish(self, game: str, version: int) -> None:
        await self.publish_notifications(
            await readmodels.notifications_at(self.store.engine, game, version)
        )

    # -- sync -------------------------------------------------------------------------------------
    async def on_sync(self, subject: str, body: bytes) -> dict[str, Any]:
        _, game, player = self.subjects.parse_input(subject)
        if body.strip():
            payload = decode_json(body)
            if not isinstance(payload, dict) or payload.get("type", "sync") != "sync":
                raise WireError(ErrorCode.BAD_REQUEST, 'a sync request is {"type": "sync"}')
        found = await readmodels.get_view(self.store.engine, game, player)
        if found is None:
            if await self.store.stream_version(game) == 0:
                raise WireError(ErrorCode.UNKNOWN_GAME, f"no game {game!r}")
            raise WireError(ErrorCode.NOT_SEATED, "you are not seated at this table")
        version, view, actions = found
        # last_seq first: every notification up to it is then either acknowledged or still
        # pending when the pending list is read, so a client may skip up to last_seq safely
        last_seq = await readmodels.last_seq(self.store.engine, game, player)
        pending = await self.store.pending_for_player(game, player)
        notes = await readmodels.notifications_for_versions(
            self.store.engine, game, player, pending
        )
        reply = SyncReply(
            game=game,
            player=player,
            version=version,
            view=view,
            actions=actions,
            notifications=[Notification.model_validate(n.payload) for n in notes],
            last_seq=last_seq,
        )
        return reply.model_dump(mode="json")


ASYNC_COMMIT = sa.text("SET LOCAL synchronous_commit = off")


def _listing_changed(before: TableState | None, after: TableState) -> bool:
    """The lobby listing shows seats and status: rewrite it only when they change."""
    return before is None or (before.status, before.seats) != (after.status, after.seats)


def _public(record: Any) -> dict[str, Any]:
    return {
        "game": record.stream_id,
        "game_type": record.stream_type,
        "version": record.version,
        "type": record.type,
        "data": record.data,
    }
