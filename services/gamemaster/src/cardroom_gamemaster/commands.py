"""A player's command: decided on the game (:func:`cardroom_engine.steps.decide_command`),
appended with what it causes, answered.

A command id seen before from the same player is answered as the first time. It is looked up
only when the command is refused or changes nothing, or its append fails; an accepted one is
caught by the append (the store's key, :func:`command_key`, is unique per game), which saves a
round trip on every command.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from cardroom_engine import Rejection, steps
from cardroom_eventstore import ConcurrencyError, DuplicateCommand
from cardroom_runtime import tracing
from cardroom_wire import Command, ErrorCode, WireError, ok

from .deadline_writes import DeadlineWrites
from .session import Item, Loaded, Sessions
from .signing import TransitionSignatures


def command_key(player: str, command_id: str) -> str:
    """The store's idempotency key of ``player``'s command ``command_id``.

    A command id is the player's own (unique among its moves), so two seats may name the same
    one: keyed by the id alone, the second seat would be answered the first one's reply (a
    version counted as another player sees the game) and its command dropped. ``.`` is in
    neither id, so the key is unambiguous."""
    return f"{player}.{command_id}"


class Commands:
    def __init__(
        self,
        sessions: Sessions,
        signatures: TransitionSignatures,
        deadlines: DeadlineWrites,
        rng: random.Random,
    ) -> None:
        self.sessions = sessions
        self.signatures = signatures
        self.deadlines = deadlines
        self.rng = rng

    async def handle(self, game: str, player: str, command: Command) -> dict[str, Any]:
        """``player``'s command in a unit of work on ``game``."""
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
        """Decide the command on the loaded game, append and publish what it causes."""
        gate_open = await self.sessions.gate_open(loaded)
        if gate_open:
            await self._halt_if_due(loaded)
        decided = await self._decide(loaded, player, command, gate_open)
        back: list[Item] = [(e, {"actor": player}) for e in decided.back]
        key = command_key(player, command.id)
        if decided.rejection is not None:
            return await self._refused(loaded, key, decided.rejection, back)
        if not decided.events and not back:
            previous = await self._reply_before(loaded, key)
            return previous if previous is not None else ok(version=loaded.state.seen(player))
        meta: dict[str, Any] = {"actor": player, "command_id": command.id}
        items = back + [(e, meta) for e in decided.events]
        previous = await self._append(loaded, items, key, bool(decided.events))
        if previous is not None:
            return previous  # the same command, answered before
        self.deadlines.soon(loaded)  # after the reply: the player waits for nothing else
        return ok(version=loaded.state.seen(player))

    async def _halt_if_due(self, loaded: Loaded) -> None:
        """A game that signs its transitions halts on a bad one: then no command is taken."""
        if halt := await self.signatures.halt(loaded.table.game, loaded.state):
            await self.sessions.commit(loaded, [(e, {}) for e in halt])
            raise WireError(ErrorCode.GAME_FINISHED, "the table halted: see its outcome")

    async def _append(
        self, loaded: Loaded, items: list[Item], key: str, answered: bool
    ) -> dict[str, Any] | None:
        """Append (the command's key with its answer when ``answered``: the command itself
        caused events) and move on; on another writer's append, the answer this command got
        before if it was accepted then (else the session runs the command again)."""
        sessions = self.sessions
        try:
            appended = await sessions.append(loaded, items, command_key=key if answered else None)
            await sessions.after(loaded, appended)
        except (ConcurrencyError, DuplicateCommand):
            if (previous := await self._reply_before(loaded, key)) is not None:
                return previous
            raise
        return None

    async def _refused(
        self, loaded: Loaded, key: str, rejection: Rejection, back: list[Item]
    ) -> dict[str, Any]:
        """A refused command: answered as the first time if its id was accepted before,
        else refused (the seat taken back all the same, if the player was away)."""
        if (previous := await self._reply_before(loaded, key)) is not None:
            return previous
        # refused on this instance's copy: another gamemaster may have moved the game on
        # (the turn, the gate), so a refusal counts only on the game as it is now
        state = loaded.state
        now = await self.sessions.store_of(state.game_id).stream_version(state.game_id)
        if now > state.version:
            raise ConcurrencyError(state.game_id, state.version, now)  # run again, fresh
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

    async def _reply_before(self, loaded: Loaded, key: str) -> dict[str, Any] | None:
        """The answer the command of this :func:`command_key` got when it was accepted
        before, if it was."""
        game = loaded.state.game_id
        return await self.sessions.store_of(game).command_reply(game, key)
