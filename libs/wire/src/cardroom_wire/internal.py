"""Messages between the services (``<root>.internal.*``) and the ack's reply.

No player may publish these subjects (see ``Subjects.reply_prefix`` and the deploy
configuration); they are parsed as strictly as a player's requests all the same, so a
malformed one is refused ``bad_request`` rather than half read. Unknown fields are ignored,
so a newer sender can add one without breaking an older receiver.

The gate's messages (see ``cardroom_runtime.gate``): the acktracker sends :class:`Release`
when the last acknowledgement of a gate is recorded, and :class:`Back` when an away player
acknowledged; the gamemaster answers a release with :class:`ReleaseReply` (nobody waits for
it: releases are published). The timers service sends :class:`Timeout` and
:class:`Reconcile`; the gamemaster sends :class:`DeadlineHint`, :class:`Resend` when it
starts, and :class:`SeatBotsAt` for a player's ``bots`` request.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .ids import Token
from .messages import MAX_BOTS, MAX_VERSION


class _Internal(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    def body(self) -> dict[str, Any]:
        """The JSON object sent: fields left at None are not written."""
        return self.model_dump(exclude_none=True)


class Release(_Internal):
    """acktracker -> gamemaster: the gate at ``version`` was released; run its follow-up.

    ``open``: when the gate was released no other gating acknowledgement was owed for the
    game, which holds while the game is at ``version`` (it saves the gamemaster a look)."""

    game: Token
    version: int = Field(ge=1, le=MAX_VERSION)
    open: Literal[True] | None = None


class ReleaseReply(_Internal):
    """The gamemaster handled a release; the game is now at ``version``."""

    ok: Literal[True] = True
    handled: Literal[True] = True
    version: int


class Back(_Internal):
    """acktracker -> gamemaster: an away player acknowledged a notification: it is back."""

    game: Token
    player: Token


class Resend(_Internal):
    """gamemaster -> acktracker: a gamemaster started; send the owed notifications again now,
    however young (its predecessor may have died between appending some and publishing
    them), instead of once they are overdue."""


class Timeout(_Internal):
    """timers -> gamemaster: the deadline ``key`` of the game at ``version`` is due; ``at``:
    the timers' clock (Unix seconds), against which a turn timeout counted from a gate's
    opening is judged (answered ``later`` with its ``due`` when that is still to come)."""

    game: Token
    version: int = Field(ge=0, le=MAX_VERSION)
    key: str = Field(min_length=1)
    at: float | None = Field(None, allow_inf_nan=False)


class Reconcile(_Internal):
    """timers -> gamemaster: evaluate the game again (a crash skipped an evaluation)."""

    game: Token


class DeadlineHint(_Internal):
    """gamemaster -> timers: the game's soonest deadline is due at ``due`` (Unix seconds)."""

    game: Token
    due: float


class SeatBotsAt(_Internal):
    """gamemaster -> the service that runs bots: seat these bots at ``game`` for ``player``
    (the asker, from its subject; the lobby has checked its seat, the table's status and its
    free seats). Answered ``{"ok": true, "players": [...]}`` with the bots' player ids."""

    player: Token
    game: Token
    game_type: Token
    count: int = Field(ge=1, le=MAX_BOTS)
    kind: Token


class AckReply(_Internal):
    """The answer to a player's ack: the version it acknowledged; ``duplicate`` when it had
    been acknowledged before (harmless: acks are repeated after resends)."""

    ok: Literal[True] = True
    version: int
    duplicate: Literal[True] | None = None
