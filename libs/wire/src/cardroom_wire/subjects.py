"""The NATS subjects of cardroom.

Every subject starts with a configurable root token (``cardroom`` by default) so that several
deployments or test runs can share one NATS server without seeing each other's traffic.
Identity is carried by the subject: a player's rights can then be expressed as subject
permissions in NATS (see deploy/).
"""

from __future__ import annotations

from dataclasses import dataclass

from .ids import InvalidId, check_id

DEFAULT_ROOT = "cardroom"
LOBBY_VERBS = ("create", "join", "start", "list", "get", "register", "renew")


@dataclass(frozen=True)
class Subjects:
    root: str = DEFAULT_ROOT

    def __post_init__(self) -> None:
        check_id(self.root, "subject root")

    # -- lobby (request/reply) ---------------------------------------------------------
    def lobby(self, verb: str) -> str:
        if verb not in LOBBY_VERBS:
            raise ValueError(f"unknown lobby verb {verb!r}")
        return f"{self.root}.lobby.{verb}"

    @property
    def lobby_all(self) -> str:
        return f"{self.root}.lobby.*"

    # -- a player's inputs (request/reply) ---------------------------------------------
    def cmd(self, game: str, player: str) -> str:
        return f"{self.root}.cmd.{check_id(game, 'game id')}.{check_id(player, 'player id')}"

    def ack(self, game: str, player: str) -> str:
        return f"{self.root}.ack.{check_id(game, 'game id')}.{check_id(player, 'player id')}"

    def sync(self, game: str, player: str) -> str:
        return f"{self.root}.sync.{check_id(game, 'game id')}.{check_id(player, 'player id')}"

    @property
    def cmd_all(self) -> str:
        return f"{self.root}.cmd.*.*"

    @property
    def ack_all(self) -> str:
        return f"{self.root}.ack.*.*"

    @property
    def sync_all(self) -> str:
        return f"{self.root}.sync.*.*"

    # -- outputs -----------------------------------------------------------------------
    def player(self, player: str, game: str) -> str:
        return f"{self.root}.player.{check_id(player, 'player id')}.{check_id(game, 'game id')}"

    def player_all(self, player: str) -> str:
        return f"{self.root}.player.{check_id(player, 'player id')}.>"

    def public(self, game: str) -> str:
        return f"{self.root}.public.{check_id(game, 'game id')}"

    @property
    def public_all(self) -> str:
        return f"{self.root}.public.>"

    def events(self, game_type: str, game: str) -> str:
        return f"{self.root}.events.{check_id(game_type, 'game type')}.{check_id(game, 'game id')}"

    @property
    def events_all(self) -> str:
        return f"{self.root}.events.>"

    @property
    def events_stream(self) -> str:
        """The JetStream stream that holds ``<root>.events.>``."""
        return f"{self.root.upper().replace('-', '_')}_EVENTS"

    # -- between services (never granted to players) -----------------------------------
    @property
    def release(self) -> str:
        """acktracker -> gamemaster: a gate was released, run the follow-up."""
        return f"{self.root}.internal.release"

    @property
    def timeout(self) -> str:
        """timers -> gamemaster: a deadline is due, ``{"game", "version", "key"}``."""
        return f"{self.root}.internal.timeout"

    @property
    def back(self) -> str:
        """acktracker -> gamemaster: an away player acknowledged something, so they are back,
        ``{"game", "player"}`` (no reply)."""
        return f"{self.root}.internal.back"

    @property
    def reconcile(self) -> str:
        """timers -> gamemaster: evaluate a game's deadlines again, ``{"game"}``."""
        return f"{self.root}.internal.reconcile"

    @property
    def deadline_hint(self) -> str:
        """gamemaster -> timers: a deadline earlier than usual, ``{"game", "due"}`` (epoch s)."""
        return f"{self.root}.internal.deadlines"

    @property
    def internal_all(self) -> str:
        return f"{self.root}.internal.>"

    def parse_input(self, subject: str) -> tuple[str, str, str]:
        """Split ``<root>.<kind>.<game>.<player>`` into (kind, game, player); validates ids."""
        parts = subject.split(".")
        if len(parts) != 4 or parts[0] != self.root:
            raise InvalidId(f"not an input subject: {subject!r}")
        return parts[1], check_id(parts[2], "game id"), check_id(parts[3], "player id")
