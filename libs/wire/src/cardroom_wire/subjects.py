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
LOBBY_VERBS = ("create", "join", "start", "list", "get", "bots", "register", "renew")
REGISTER = "register"
"""The one lobby verb a guest asks: its subject names the guest's nonce, not a player."""


@dataclass(frozen=True)
class Subjects:
    root: str = DEFAULT_ROOT

    def __post_init__(self) -> None:
        check_id(self.root, "subject root")

    # -- lobby (request/reply) ---------------------------------------------------------
    def lobby(self, verb: str, asker: str) -> str:
        """``<root>.lobby.<verb>.<asker>``: the asker is the player the request acts for (the
        broker lets a player publish only its own), or for ``register`` the guest's nonce."""
        if verb not in LOBBY_VERBS:
            raise ValueError(f"unknown lobby verb {verb!r}")
        return f"{self.root}.lobby.{verb}.{check_id(asker, 'player id')}"

    @property
    def lobby_all(self) -> str:
        return f"{self.root}.lobby.*.*"

    def lobby_of(self, player: str) -> str:
        """Every lobby request of ``player`` (a permission pattern)."""
        return f"{self.root}.lobby.*.{check_id(player, 'player id')}"

    def parse_lobby(self, subject: str) -> tuple[str, str]:
        """Split ``<root>.lobby.<verb>.<asker>`` into (verb, asker); validates the asker."""
        parts = subject.split(".")
        if len(parts) != 4 or parts[0] != self.root or parts[1] != "lobby":
            raise InvalidId(f"not a lobby subject: {subject!r}")
        return parts[2], check_id(parts[3], "player id")

    # -- where replies go ----------------------------------------------------------------
    def inbox(self, player: str) -> str:
        """The inbox prefix of ``player``: the replies to its requests go below it, and only
        there (a client connects with it; nats-py: ``inbox_prefix=``)."""
        return f"_INBOX_{self.root}.{check_id(player, 'player id')}"

    def guest_inbox(self, nonce: str) -> str:
        """The inbox prefix of a guest that asks the lobby with ``nonce``."""
        return f"_GUEST_{self.root}.{check_id(nonce, 'guest nonce')}"

    @property
    def service_inbox(self) -> str:
        """The inbox prefix of the services' and operators' own connections (nats-py's
        default): no player may subscribe below it (deploy/nats/auth.conf)."""
        return "_INBOX"

    def reply_prefix(self, subject: str) -> str | None:
        """The inbox prefix of whoever may ask on ``subject``: a request's answer goes only
        below it. The asker is named by the subject, which the broker checks; the reply
        address is not checked by NATS, so a service that answered on any reply address would
        publish with its own rights wherever a player pointed it. None: nobody may ask here.
        """
        parts = subject.split(".")
        if len(parts) < 2 or parts[0] != self.root:
            return None
        kind = parts[1]
        if kind in ("internal", "analytics"):  # between services, or an operator's queries
            return self.service_inbox
        if len(parts) != 4 or not parts[3]:
            return None
        if kind in ("cmd", "ack", "sync"):
            return f"_INBOX_{self.root}.{parts[3]}"
        if kind == "lobby":
            if parts[2] == REGISTER:
                return f"_GUEST_{self.root}.{parts[3]}"
            return f"_INBOX_{self.root}.{parts[3]}"
        return None

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
    def resend(self) -> str:
        """gamemaster -> acktracker: a gamemaster started, send the owed notifications again
        now, ``{}`` (no reply)."""
        return f"{self.root}.internal.resend"

    @property
    def bots(self) -> str:
        """gamemaster -> the service that runs bots (the web edge): seat bots at a table the
        asker of a ``bots`` lobby request sits at, ``{"game", "count", "kind"}``."""
        return f"{self.root}.internal.bots"

    @property
    def reconcile(self) -> str:
        """timers -> gamemaster: evaluate a game's deadlines again, ``{"game"}``."""
        return f"{self.root}.internal.reconcile"

    @property
    def deadline_hint(self) -> str:
        """gamemaster -> timers: a deadline earlier than usual, ``{"game", "due"}`` (epoch s)."""
        return f"{self.root}.internal.deadlines"

    def delivery(self, consumer: str) -> str:
        """Where JetStream pushes the event stream to the replicas of a push consumer (their
        deliver group): one subject for all of them (``cardroom_runtime.nats.subscribe_group``
        says why), under ``internal``, which no player may read."""
        return f"{self.root}.internal.deliver.{consumer}"

    @property
    def internal_all(self) -> str:
        return f"{self.root}.internal.>"

    def parse_input(self, subject: str) -> tuple[str, str, str]:
        """Split ``<root>.<kind>.<game>.<player>`` into (kind, game, player); validates ids."""
        parts = subject.split(".")
        if len(parts) != 4 or parts[0] != self.root:
            raise InvalidId(f"not an input subject: {subject!r}")
        return parts[1], check_id(parts[2], "game id"), check_id(parts[3], "player id")
