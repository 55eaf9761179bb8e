"""The gamemaster: lobby requests, player commands and timeouts -> the table aggregate -> events.

Each handler takes its wire model, parsed by the runtime (hostile input never reaches it),
and who sent it (read from the subject), and runs one unit of work on one game
(:class:`~.session.Sessions`: the game's lock, load, decide, append and publish, run again
on a fresh load when another writer moved the game on). What to append is the engine's
decision (``Table``, :mod:`cardroom_engine.steps`); the handlers read from the store only
what the engine cannot know (the gate, who owes an ack, the transitions' signatures).
Follow-ups run when the acktracker reports a released gate. A command is :mod:`.commands`,
the lobby :mod:`.lobby`, what a due deadline does :mod:`.timeouts`, a player back from away
:mod:`.presence`, the deadline writes :mod:`.deadline_writes`, the command metrics
:mod:`.metrics`; the group commit and the notifications' way out are the session's.

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
import logging
import random
from typing import Any

from cardroom_engine import registry
from cardroom_runtime import logs, tracing
from cardroom_runtime.gate import Follower
from cardroom_runtime.host import Asker, Service, Unanswered
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import (
    Back,
    Command,
    CreateTable,
    DeadlineHint,
    ErrorCode,
    GetTable,
    JoinTable,
    ListTables,
    LobbyRequest,
    Reconcile,
    Register,
    Release,
    ReleaseReply,
    RenewToken,
    Resend,
    SeatBots,
    SeatBotsAt,
    StartTable,
    SyncRequest,
    Timeout,
    WireError,
    ok,
)
from pydantic import BaseModel

from .commands import Commands
from .credentials import Credentials
from .deadline_writes import DeadlineWrites
from .lobby import Lobby
from .metrics import CommandCounts
from .presence import Presence
from .session import GroupCommit, Loaded, Notifier, Sessions
from .signing import TransitionSignatures
from .timeouts import Timeouts

log = logging.getLogger("cardroom.gamemaster")

WORKERS = 64  # requests handled at once; one game's are serialised by its lock
BOTS_TIMEOUT = 30.0  # seconds to seat the bots of one request (each registers and joins)
BOTS_AT_ONCE = WORKERS // 4
"""``bots`` requests carried out at once. Each holds a lobby worker until the service that
runs bots answers (up to ``BOTS_TIMEOUT``); the rest of the workers stay free for everyone's
other requests when that service is slow or away, whoever asks for bots."""


class Gamemaster(Service):
    name = "gamemaster"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rng = random.SystemRandom()
        self._credentials: Credentials | None = None
        self._catching_up: asyncio.Task[None] | None = None
        self.appends = GroupCommit(lambda: self.shards)
        self.gates = Follower(self.rt)
        self.signatures = TransitionSignatures(self.store_of)
        self.deadlines = DeadlineWrites(self.store_of, self._hint)
        metrics = self.rt.metrics
        presence = metrics.counter(
            "cardroom_presence_changes",
            "Players marked away and back",
            ["game_type", "change"],
            known=[(game, change) for game in registry.names() for change in ("away", "back")],
        )
        self.sessions = Sessions(
            store_of=self.store_of,
            submit=self.appends.submit,
            notifier=Notifier(self.rt.broker, self.subjects),
            gates=self.gates,
            signatures=self.signatures,
            deadlines=self.deadlines,
            presence=presence,
            rng=self.rng,
        )
        self.commands = Commands(self.sessions, self.signatures, self.deadlines, self.rng)
        self.lobby = Lobby(
            self.sessions,
            lambda: self.shards,
            lambda: self.credentials,
            self.rng,
            self._seat_bots,
            bots_at_once=BOTS_AT_ONCE,
        )
        self.timeouts = Timeouts(self.sessions)
        self.presence = Presence(self.sessions)
        self.counts = CommandCounts(metrics, self.sessions.cached)

    @property
    def credentials(self) -> Credentials:
        # read on first use, so building the AsyncAPI document does not ask for the secret
        if self._credentials is None:
            self._credentials = Credentials.from_env(self.subjects.root)
        return self._credentials

    def register(self) -> None:
        s = self.subjects

        def serve(subject: str, title: str, model: type[BaseModel], handler: Any) -> None:
            self.serve(
                subject,
                queue="gamemaster",
                title=title,
                model=model,
                handler=handler,
                max_workers=WORKERS,
            )

        serve(s.lobby_all, "lobby", LobbyRequest, self.on_lobby)
        serve(s.cmd_all, "commands", Command, self.on_command)
        serve(s.release, "release", Release, self.on_release)
        serve(s.timeout, "timeout", Timeout, self.on_timeout)
        serve(s.reconcile, "reconcile", Reconcile, self.on_reconcile)
        # back from away: a sync (heard here too), or an ack of what they missed (the
        # acktracker tells, since only it knows an ack was owed while away)
        self.listen(
            s.sync_all,
            queue="gamemaster-presence",
            title="presence-syncs",
            model=SyncRequest,
            listener=self.on_presence,
            max_workers=WORKERS,
        )
        self.listen(
            s.back,
            queue="gamemaster",
            title="back",
            model=Back,
            listener=self.on_back,
            max_workers=8,
        )

    # -- lobby ---------------------------------------------------------------------------------
    async def on_lobby(self, request: LobbyRequest, asker: Asker) -> dict[str, Any]:
        """``<root>.lobby.<verb>.<asker>`` (see :mod:`.lobby`): the body's ``type`` is the
        verb (a body without one takes it)."""
        req, player = request.root, asker.player
        assert player is not None  # (a lobby subject names its asker)
        if req.type != asker.verb:
            raise WireError(ErrorCode.BAD_REQUEST, f"a {req.type!r} request on {asker.verb!r}")
        lobby = self.lobby
        match req:
            case CreateTable():
                return await lobby.create(player, req)
            case JoinTable():
                return await lobby.join(player, req)
            case StartTable():
                return await lobby.start(player, req)
            case ListTables():
                return await lobby.listing(req)
            case Register():
                return lobby.register(player)
            case RenewToken():
                return lobby.renew(player, req)
            case GetTable():
                return ok(table=await lobby.summary(req.game))
            case SeatBots():
                return await lobby.bots(player, req)

    # -- commands --------------------------------------------------------------------------------
    async def on_command(self, command: Command, asker: Asker) -> dict[str, Any]:
        """A player's command, counted by game type, command type and outcome."""
        game, player = asker.seat
        with self.counts.command(game, command.type) as count:
            tracing.tag("cardroom.command", count.kind)
            # what is logged from here names the command, the host's line of the request too
            # (the host restores the context it found when the request is done)
            logs.bind(command=command.id)
            return await self.commands.handle(game, player, command)

    # -- follow-ups ------------------------------------------------------------------------------
    async def on_release(self, release: Release, _: Asker) -> dict[str, Any]:
        """The acktracker released a gate: move the game on from it."""
        logs.bind(game=release.game)  # (internal subjects name no game: the host binds none)
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
    async def on_timeout(self, timeout: Timeout, _: Asker) -> dict[str, Any]:
        """A deadline is due: ``{"game", "version", "key"}`` from the timers service.

        Answers ``result``: ``fired`` (it had its effect), ``nothing`` (it was due but changed
        nothing), ``stale`` (the game has moved past that version or key: ignored),
        ``deferred`` (the gate is closed: ask again shortly), or ``later`` with ``due`` (Unix
        seconds: a turn timeout counted from the opening of the gate after the turn began).
        ``fired`` and ``nothing`` may name ``ready`` (Unix seconds): when the game could first
        take the timeout, if a gate held it back (the timers count its lateness from the later
        of that and its due time).
        """
        game, version, key = timeout.game, timeout.version, timeout.key
        logs.bind(game=game)

        async def fire(loaded: Loaded) -> dict[str, Any]:
            fired = await self.timeouts.fire(loaded, version, key, timeout.at)
            result = fired.result
            if result in ("fired", "nothing"):
                await self.deadlines.mark_fired(game, key, version)
            await self.deadlines.now(loaded, force=result == "stale")
            times = {
                name: when.timestamp()
                for name, when in (("due", fired.due), ("ready", fired.ready))
                if when is not None
            }
            return ok(result=result, version=loaded.state.version, **times)

        return await self.sessions.run(game, fire, at=version)

    async def on_reconcile(self, reconcile: Reconcile, _: Asker) -> dict[str, Any]:
        """Evaluate a game again: excuse stuck acks of away players, move on if the gate is
        open, write the deadlines. Asked by the timers service after a skipped evaluation."""
        logs.bind(game=reconcile.game)

        async def evaluate(loaded: Loaded) -> dict[str, Any]:
            await self.timeouts.reconcile(loaded)
            await self.deadlines.now(loaded, force=True)
            return ok(version=loaded.state.version)

        return await self.sessions.run(reconcile.game, evaluate, fresh=True)

    async def _seat_bots(self, request: SeatBotsAt) -> dict[str, Any]:
        """Ask the service that runs bots to seat them; its answer, as it is."""
        try:
            return await self.rt.ask(self.subjects.bots, request, BOTS_TIMEOUT)
        except Unanswered as exc:
            why = "no service here runs bots" if exc.nobody else f"not seated: {exc.reason}"
            raise WireError(ErrorCode.UNAVAILABLE, why) from None

    async def _hint(self, hint: DeadlineHint) -> None:
        await self.rt.tell(self.subjects.deadline_hint, hint)

    # -- presence --------------------------------------------------------------------------------
    async def on_presence(self, _: SyncRequest, asker: Asker) -> None:
        """A sync from a player: if they are away, they are back."""
        await self.presence.present(*asker.seat)

    async def on_back(self, back: Back, _: Asker) -> None:
        """``{"game", "player"}`` from the acktracker: an away player acknowledged."""
        await self.presence.present(back.game, back.player)

    # -- start and stop --------------------------------------------------------------------------
    async def start(self) -> None:
        # what a predecessor that died left undone: releases it never followed up, and
        # notifications it appended and never published (the acktracker sends those again)
        self._catching_up = asyncio.create_task(self._follow_unhandled(), name="release-catch-up")
        try:
            await self.rt.tell(self.subjects.resend, Resend())
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
        await cancel_and_wait([self._catching_up])
        running = [*self.deadlines.running(), *self.gates.running()]
        if running:
            await asyncio.wait(running, timeout=5)
        await self.appends.close()
        await super().stop()


__all__ = ["Gamemaster"]
