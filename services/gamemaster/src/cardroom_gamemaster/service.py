"""The gamemaster: lobby requests, player commands and timeouts -> the table aggregate -> events.

Each handler parses its message and runs one unit of work on one game
(:class:`~.session.Sessions`: the game's lock, load, decide, append and publish, run again
on a fresh load when another writer moved the game on). What to append is the engine's
decision (``Table``, :mod:`cardroom_engine.steps`); the handlers read from the store only
what the engine cannot know (the gate, who owes an ack, the transitions' signatures).
Follow-ups run when the acktracker reports a released gate. The lobby is :mod:`.lobby`, what
a due deadline does :mod:`.timeouts`, the deadline writes :mod:`.deadline_writes`, the command
metrics :mod:`.metrics`.

Time and presence (see ``cardroom_engine.table``):

- after every change the gamemaster writes the game's deadlines for the timers service;
  the timers service sends ``<root>.internal.timeout`` when one is due, with the version it
  belongs to; a timeout for a version or key the game has moved past is stale and changes
  nothing;
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
from collections.abc import Sequence
from typing import Any

from cardroom_engine import Rejection, steps
from cardroom_eventstore import (
    Append,
    ConcurrencyError,
    DuplicateCommand,
    EventStore,
    EventStoreError,
    RecordedEvent,
)
from cardroom_eventstore.hot import Batcher
from cardroom_runtime import logs, tracing
from cardroom_runtime.gate import Follower
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
from .deadline_writes import DeadlineWrites
from .lobby import Lobby
from .metrics import CommandCounts, label
from .session import Item, Loaded, Note, Sessions
from .signing import TransitionSignatures
from .timeouts import Timeouts

log = logging.getLogger("cardroom.gamemaster")

WORKERS = 64  # requests handled at once; one game's are serialised by its lock
APPEND_BATCH = 256  # appends (of as many games) per statement at most


class Gamemaster(Service):
    name = "gamemaster"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rng = random.SystemRandom()
        self._credentials: Credentials | None = None
        self._appends: Batcher[Append, list[RecordedEvent] | EventStoreError] | None = None
        self._catching_up: asyncio.Task[None] | None = None
        self.gates = Follower(self.rt)
        self.signatures = TransitionSignatures(self.store_of)
        self.deadlines = DeadlineWrites(self.store_of, self._hint)
        metrics = self.rt.metrics
        self.sessions = Sessions(
            store_of=self.store_of,
            # (looked up at each call: the group commit starts on first use, and a test may
            # replace _publish)
            submit=lambda batch: self.appends.submit(batch),
            publish=lambda game, notes: self._publish(game, notes),
            gates=self.gates,
            signatures=self.signatures,
            deadlines=self.deadlines,
            presence=metrics.counter(
                "cardroom_presence_changes", "Players marked away and back", ["game_type", "change"]
            ),
            rng=self.rng,
        )
        self.lobby = Lobby(self.sessions, lambda: self.shards, lambda: self.credentials, self.rng)
        self.timeouts = Timeouts(self.sessions)
        self.counts = CommandCounts(metrics, self.sessions.cached)

    @property
    def _cache(self) -> dict[str, Loaded]:
        """The games this process holds (tests look into it)."""
        return self.sessions.cache

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

    # -- lobby ---------------------------------------------------------------------------------
    async def on_lobby(self, subject: str, body: bytes) -> dict[str, Any]:
        """``<root>.lobby.<verb>.<asker>`` (see :mod:`.lobby`)."""
        verb, asker = self.subjects.parse_lobby(subject)
        payload = decode_json(body)
        if isinstance(payload, dict) and "type" not in payload:
            payload = {**payload, "type": verb}
        lobby = self.lobby
        match verb:
            case "create":
                return await lobby.create(asker, parse_request(CreateTable, payload))
            case "join":
                return await lobby.join(asker, parse_request(JoinTable, payload))
            case "start":
                return await lobby.start(asker, parse_request(StartTable, payload))
            case "list":
                return await lobby.listing(parse_request(ListTables, payload))
            case "register":
                return lobby.register(parse_request(Register, payload))
            case "renew":
                return lobby.renew(asker, parse_request(RenewToken, payload))
            case "get":
                return ok(table=await self._summary(parse_request(GetTable, payload).game))
        raise WireError(ErrorCode.BAD_REQUEST, f"unknown lobby request {verb!r}")

    async def _summary(self, game: str) -> dict[str, Any]:
        # (a test holds a read back here, to prove a read without the lock caches nothing)
        return await self.lobby.summary(game)

    # -- commands --------------------------------------------------------------------------------
    async def on_command(self, subject: str, body: bytes) -> dict[str, Any]:
        """A player's command, counted by game type, command type and outcome."""
        with self.counts.command(subject) as count:
            _, game, player = self.subjects.parse_input(subject)
            command = parse_request(Command, decode_json(body))
            count.kind = label(command.type)
            tracing.tag("cardroom.command", count.kind)
            # what is logged from here names the command, the host's line of the request too
            # (the host restores the context it found when the request is done)
            logs.bind(command=command.id)
            return await self._command(game, player, command)

    async def _command(self, game: str, player: str, command: Command) -> dict[str, Any]:
        cached = self.sessions.cached(game)
        if cached is not None and steps.outsider(cached.state, player):
            # refused whatever the gate and the command id (no command of this player was
            # ever accepted here): without the game's lock and the store, so that a player
            # who is not at this table cannot slow the ones who are
            cached.table.decide(cached.state, player, command.fields(), self.rng, gate_open=True)
        return await self.sessions.run(
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
        state, sessions = loaded.state, self.sessions
        gate_open = await sessions.gate_open(loaded)
        if gate_open and (halt := await self.signatures.halt(loaded.table.game, state)):
            await sessions.commit(loaded, [(e, {}) for e in halt])
            raise WireError(ErrorCode.GAME_FINISHED, "the table halted: see its outcome")
        decided = await self._decide(loaded, player, command, gate_open)
        back: list[Item] = [(e, {"actor": player}) for e in decided.back]
        if decided.rejection is not None:
            return await self._refused(loaded, command, decided.rejection, back)
        if not decided.events and not back:
            previous = await self._reply_before(state.game_id, command.id)
            return previous if previous is not None else ok(version=state.seen(player))
        meta: dict[str, Any] = {"actor": player, "command_id": command.id}
        items = back + [(e, meta) for e in decided.events]
        try:
            command_id = command.id if decided.events else None
            await sessions.after(
                loaded, await sessions.append(loaded, items, command_id=command_id)
            )
        except (ConcurrencyError, DuplicateCommand):
            if (previous := await self._reply_before(state.game_id, command.id)) is not None:
                return previous  # the same command, answered before
            raise  # the session runs it again
        self.deadlines.soon(loaded)  # after the reply: the player waits for nothing else
        return ok(version=loaded.state.seen(player))

    async def _refused(
        self, loaded: Loaded, command: Command, rejection: Rejection, back: list[Item]
    ) -> dict[str, Any]:
        """A refused command: answered as the first time if its id was accepted before,
        else refused (the seat taken back all the same, if the player was away)."""
        state = loaded.state
        if (previous := await self._reply_before(state.game_id, command.id)) is not None:
            return previous
        # refused on this instance's copy: another gamemaster may have moved the game on
        # (the turn, the gate), so a refusal counts only on the game as it is now
        await self._still_at(state.game_id, state.version)
        if back:
            await self.sessions.commit(loaded, back)
        raise rejection

    async def _decide(
        self, loaded: Loaded, player: str, command: Command, gate_open: bool
    ) -> steps.Decided:
        """``steps.decide_command``, in a worker thread for a heavy game: its checks are CPU
        work that would hold up every other game on the event loop. The caller holds the
        game's lock, so one game's commands are still decided one at a time, in order; the
        table and its states are immutable (what they cache when read is the same whichever
        thread computes it)."""
        args = (loaded.table, loaded.state, player, command.fields(), self.rng)
        with tracing.span(
            "decide", {"cardroom.game": loaded.state.game_id, "cardroom.player": player}
        ):
            if loaded.table.game.heavy:
                decided = await asyncio.to_thread(steps.decide_command, *args, gate_open=gate_open)
            else:
                decided = steps.decide_command(*args, gate_open=gate_open)
            tracing.tag("cardroom.events", len(decided.events))
        return decided

    async def _reply_before(self, game: str, command_id: str) -> dict[str, Any] | None:
        """The answer a command id got when it was accepted before, if it was."""
        return await self.store_of(game).command_reply(game, command_id)

    async def _still_at(self, game: str, version: int) -> None:
        """Raise ConcurrencyError (the session runs the work again, fresh) if the stored game
        has moved past ``version``."""
        now = await self.store_of(game).stream_version(game)
        if now > version:
            raise ConcurrencyError(game, version, now)

    async def _publish(self, game: str, notes: Sequence[Note]) -> None:
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
            await self.sessions.advance(loaded, {version})
            self.deadlines.soon(loaded)
            return ReleaseReply(version=loaded.state.version).body()

        return await self.sessions.run(game, follow_up, at=version)

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
            result = await self.timeouts.fire(loaded, version, key)
            if result in ("fired", "nothing"):
                await self.deadlines.mark_fired(game, key, version)
            await self.deadlines.now(loaded, force=result == "stale")
            return ok(result=result, version=loaded.state.version)

        return await self.sessions.run(game, fire, at=version)

    async def on_reconcile(self, subject: str, body: bytes) -> dict[str, Any]:
        """Evaluate a game again: excuse stuck acks of away players, move on if the gate is
        open, write the deadlines. Asked by the timers service after a skipped evaluation."""
        game = parse_request(Reconcile, decode_json(body)).game

        async def evaluate(loaded: Loaded) -> dict[str, Any]:
            await self.timeouts.reconcile(loaded)
            await self.deadlines.now(loaded, force=True)
            return ok(version=loaded.state.version)

        return await self.sessions.run(game, evaluate, fresh=True)

    async def _hint(self, hint: DeadlineHint) -> None:
        await self.rt.broker.publish(dumps(hint), self.subjects.deadline_hint)

    # -- presence --------------------------------------------------------------------------------
    async def on_presence(self, subject: str, body: bytes) -> None:
        """A sync from a player: if they are away, they are back."""
        try:
            _, game, player = self.subjects.parse_input(subject)
        except Exception:
            return  # the answering service tells the sender what is wrong
        await self._present(game, player)

    async def on_back(self, subject: str, body: bytes) -> None:
        """``{"game", "player"}`` from the acktracker: an away player acknowledged."""
        try:
            back = parse_request(Back, decode_json(body))
        except WireError:
            log.warning("a malformed back message: %r", body[:200])
            return
        await self._present(back.game, back.player)

    async def _present(self, game: str, player: str) -> None:
        cached = self.sessions.cached(game)
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

    async def mark_back(self, game: str, player: str) -> None:
        async with self.sessions.lock(game):
            loaded = await self.sessions.load(game)
            events = loaded.table.mark_back(loaded.state, player)
            if events:
                await self.sessions.commit(loaded, [(e, {"actor": player}) for e in events])
                log.info("%s: %s is back", game, player)

    # -- start and stop --------------------------------------------------------------------------
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
        running = [*self.deadlines.running(), *self.gates.running()]
        if running:
            await asyncio.wait(running, timeout=5)
        if self._appends is not None:
            await self._appends.close()
        await super().stop()


def _stream_of(batch: Append) -> str:
    return batch.stream_id


__all__ = ["Gamemaster", "Loaded", "Rejection"]
