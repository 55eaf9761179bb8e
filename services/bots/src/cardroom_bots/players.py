"""Bot players: they play any game through the client SDK, on the same subjects as people.

A bot sees what its player sees: every notification's message goes to the game's bot
(``observe``), and once a notification is acknowledged and carries ``actions``, the bot
picks one (``choose``) and sends it as a command. A bot whose choices are heavy CPU work
(Macaua's, which build proofs) says so with ``heavy_choices = True``; its ``choose`` then runs
in a worker thread, so that one bot's proof does not hold up the notifications, acks and
choices of every other game on this event loop.

A bot that signs its moves (Macaua's) exposes its Ed25519 verify key as ``verify_key`` (64
lowercase hex characters); :meth:`BotPlayer.create` and :meth:`BotPlayer.join` bind it to
the bot's seat, so that games whose seats are bound to keys (``seat_keys``) seat the bot and
check every move it signs against that key. Such a bot also hands out a ``verifier(game)``:
the SDK checks every transition of the game with it and acknowledges each with the bot's
signature (or its rejection).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardroom_client import CardroomError, Client
from cardroom_engine import Bot, RandomBot, registry
from cardroom_runtime.games import bot_choice
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import Notification

log = logging.getLogger("cardroom.bots")

RETRY_SECONDS = 100.0  # how long a move waits for the gate (another seat's ack) to open


def seat_key(bot: Bot) -> str | None:
    """The verify key ``bot`` binds to its seat: its ``verify_key`` when it has one (a bot
    that signs its moves), else ``None`` (the join names no key)."""
    key = getattr(bot, "verify_key", None)
    return key if isinstance(key, str) else None


@dataclass
class BotPlayer:
    """One bot in one or more games, on its own connection."""

    client: Client
    kind: str = "random"
    rng: random.Random = field(default_factory=random.SystemRandom)
    bots: dict[str, Bot] = field(default_factory=dict)
    finished: dict[str, asyncio.Event] = field(default_factory=dict)
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    commands: int = 0
    _acting: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    _closing: bool = False

    def __post_init__(self) -> None:
        self.client.on_notification(self._observe, after_ack=self._act)

    @property
    def player(self) -> str:
        return self.client.player

    def new_bot(self, game_type: str) -> Bot:
        """A fresh bot of this player's kind for one game of ``game_type``."""
        factory = registry.get(game_type).bots.get(self.kind, RandomBot)
        return factory(self.player)

    def watch(self, game: str, game_type: str, bot: Bot | None = None) -> asyncio.Event:
        """Play ``game`` with ``bot`` (a new one when not given); set when it is over."""
        if game not in self.bots:
            self.bots[game] = bot if bot is not None else self.new_bot(game_type)
            self.finished[game] = asyncio.Event()
            # a bot of a game that signs its transitions checks and signs each of them
            verifier = getattr(self.bots[game], "verifier", None)
            if callable(verifier):
                self.client.verify(game, verifier(game))
        return self.finished[game]

    async def create(
        self, game_type: str, config: Mapping[str, Any] | None = None, *, seats: int | None = None
    ) -> str:
        """Create a table and take its first seat, bound to the bot's verify key if it has
        one (:func:`seat_key`); the bot plays it. Returns the game id."""
        bot = self.new_bot(game_type)
        game = await self.client.create(
            game_type, dict(config or {}), seats=seats, key=seat_key(bot)
        )
        self.watch(game, game_type, bot)
        return game

    async def join(self, game: str, game_type: str) -> asyncio.Event:
        """Take a seat at ``game``, bound to the bot's verify key if it has one; the bot
        plays it. Returns the event set when the game is over."""
        finished = self.watch(game, game_type)
        await self.client.join(game, key=seat_key(self.bots[game]))
        return finished

    async def _observe(self, note: Notification) -> None:
        bot = self.bots.get(note.game)
        if bot is None and note.message.get("type") == "GameStarted":
            self.watch(note.game, str(note.message["game_type"]))
            bot = self.bots[note.game]
        if bot is not None:
            bot.observe(note.message)
        if note.message.get("type") == "GameOver":
            self.outcomes[note.game] = dict(note.message.get("outcome") or {})
            self.finished.setdefault(note.game, asyncio.Event()).set()

    async def _act(self, note: Notification) -> None:
        previous = self._acting.pop(note.game, None)
        if previous is not None:  # newer news: the old choice is stale
            previous.cancel()
        if note.actions and note.game in self.bots and not self._closing:
            self._acting[note.game] = asyncio.create_task(self._choose_and_send(note))

    async def _choose_and_send(self, note: Notification) -> None:
        bot = self.bots[note.game]
        who = f"{self.player} in {note.game}"
        command = await bot_choice(bot, note.view or {}, note.actions, self.rng, who=who)
        if command is None:  # no move: the game's deadlines go on
            return
        try:
            await self.client.send(note.game, command, retry_for=RETRY_SECONDS)
            self.commands += 1
        except CardroomError as exc:
            log.debug("%s: %s refused: %s", self.player, command, exc)
        except Exception:
            if not self.client.closed:
                raise
            # the player left while this choice was on its way: nothing to send it on

    async def close(self) -> None:
        # notifications still arrive while the choices are cancelled: none starts a new one
        self._closing = True
        acting, self._acting = list(self._acting.values()), {}
        await cancel_and_wait(acting)  # (a send's cancellation can be lost: again until done)
        await self.client.close()


async def play_table(
    nats_url: str,
    game_type: str,
    players: Sequence[str] | int,
    *,
    subject_root: str = "cardroom",
    config: Mapping[str, Any] | None = None,
    kinds: Sequence[str] | None = None,
    timeout: float = 120.0,
) -> tuple[str, dict[str, Any]]:
    """Seat one bot per player at a new table, play it out, return (game id, outcome).

    ``players``: how many new players to register with the lobby (each connects with its own
    token, so under the deploy configuration a bot can act only as itself), or the ids of
    players to connect as (where NATS asks for no credentials: tests, a local stack).
    """
    if isinstance(players, int):
        clients = [
            await Client.register(nats_url, subject_root=subject_root) for _ in range(players)
        ]
    else:
        clients = [await Client.connect(nats_url, p, subject_root=subject_root) for p in players]
    bots = [
        BotPlayer(client, kind=(kinds[i % len(kinds)] if kinds else "random"))
        for i, client in enumerate(clients)
    ]
    try:
        game = await bots[0].create(game_type, config, seats=len(bots))
        for bot in bots[1:]:
            await bot.join(game, game_type)
        async with asyncio.timeout(timeout):
            await asyncio.gather(*(b.finished[game].wait() for b in bots))
        return game, bots[0].outcomes[game]
    finally:
        await asyncio.gather(*(b.close() for b in bots), return_exceptions=True)
