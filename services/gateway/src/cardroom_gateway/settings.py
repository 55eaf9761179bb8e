"""The gateway's settings, read from the environment (``CARDROOM_GATEWAY_*``).

``CARDROOM_GATEWAY_HOST`` / ``CARDROOM_GATEWAY_PORT``
    Where the TCP listener binds (default ``127.0.0.1:45678``, the lineage's port).
``CARDROOM_GATEWAY_PLAYERS``
    ``server.arg_players`` of the take5 protocol: how many registered connections form one table
    (default 4).
``CARDROOM_GATEWAY_TURN_TIMEOUT``
    Seconds a player may stay silent when asked for a card or a row before the house bot
    plays for them (default 30).
``CARDROOM_GATEWAY_ACK_TIMEOUT``
    Seconds within which a seat must take each update (the gateway acknowledges once the line
    is written) before it is marked away and the house plays for it (default 10). A closed
    connection stops acknowledging, so this is also how long a disconnect holds a table.
``CARDROOM_GATEWAY_LINE_LIMIT`` / ``CARDROOM_GATEWAY_WRITE_TIMEOUT``
    The longest line a client may send (default 64 KiB; a longer one is refused), and how
    long a line may wait for a client that does not read before that client is dropped
    (default 30 s; its seat goes to the house).
``CARDROOM_GATEWAY_MAX_CONNECTIONS`` / ``CARDROOM_GATEWAY_REGISTER_TIMEOUT``
    At most this many connections at once (default 1000; one more is told
    ``too_many_connections`` and closed), and the seconds a connection has to send
    ``register_request`` before it is told ``register_timeout`` and closed (default 60).
``CARDROOM_GATEWAY_NEW_BURST`` / ``CARDROOM_GATEWAY_NEW_RATE`` / ``CARDROOM_GATEWAY_TRUSTED``
    Every connection is a new player, so one address may open this many at once (default 30),
    then this many a minute (default 30); one more is told ``too_many_new_connections`` and
    closed. Addresses in the trusted networks (comma-separated; default loopback and the
    private ranges, as the auth service's guests: ``cardroom_natsauth.admission``) are not
    limited; set it empty to trust none.
``CARDROOM_GATEWAY_CONFIG``
    A JSON object of take5 options for every table (``turn_count``, ``stack_size``,
    ``win_score``, ``deck_size``, ``bull_range``, ``bulls``); default: the take5 defaults.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from typing import Any

from cardroom_engine.table import (
    ACK_TIMEOUT_MAX,
    ACK_TIMEOUT_MIN,
    TURN_TIMEOUT_MAX,
    TURN_TIMEOUT_MIN,
)
from cardroom_games.take5 import Take5Config
from cardroom_natsauth.admission import (
    DEFAULT_GUEST_BURST,
    DEFAULT_GUEST_RATE,
    DEFAULT_TRUSTED,
    GuestAdmission,
    networks,
    trusted_setting,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ENV_PREFIX = "CARDROOM_GATEWAY_"

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 45678


class GatewaySettingsError(ValueError):
    """A ``CARDROOM_GATEWAY_*`` variable has a value that cannot be used."""


class GatewaySettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = DEFAULT_HOST
    port: int = Field(DEFAULT_PORT, ge=0, le=65535)
    players: int = Field(4, ge=2, le=10, description="server.arg_players")
    # the table options' own bounds: a value outside them would fail every table it opens
    turn_timeout: float = Field(30.0, ge=TURN_TIMEOUT_MIN, le=TURN_TIMEOUT_MAX)
    ack_timeout: float = Field(10.0, ge=ACK_TIMEOUT_MIN, le=ACK_TIMEOUT_MAX)
    game: dict[str, Any] = Field(default_factory=dict, description="take5 options")
    line_limit: int = Field(64 * 1024, ge=1024, le=16 * 1024 * 1024)
    write_timeout: float = Field(30.0, gt=0, le=86_400)
    max_connections: int = Field(1000, ge=1, le=1_000_000)
    register_timeout: float = Field(60.0, gt=0, le=86_400)
    new_burst: int = Field(DEFAULT_GUEST_BURST, ge=1, le=1_000_000)
    new_rate: float = Field(DEFAULT_GUEST_RATE, gt=0, le=1_000_000)
    trusted: tuple[str, ...] = DEFAULT_TRUSTED

    @field_validator("trusted")
    @classmethod
    def _networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        networks(value)  # refuses what is not a network
        return value

    def admission(self) -> GuestAdmission:
        """The buckets of new connections per address (a new connection is a new player)."""
        return GuestAdmission(rate=self.new_rate, burst=self.new_burst, trusted=self.trusted)

    @field_validator("turn_timeout", "ack_timeout", "write_timeout", "register_timeout")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number of seconds")
        return value

    @field_validator("game")
    @classmethod
    def _take5_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "turn_timeout" in value or "table" in value:
            raise ValueError("set the timeouts with CARDROOM_GATEWAY_TURN/ACK_TIMEOUT")
        config = Take5Config.model_validate(value)  # refuses an inconsistent configuration
        if config.max_players() < 2:
            raise ValueError("the deck cannot deal to two players")
        return value

    def take5_config(self) -> Take5Config:
        return Take5Config.model_validate({**self.game, "turn_timeout": self.turn_timeout})

    def table_config(self) -> dict[str, Any]:
        """The ``config`` of a create request: the take5 options and the table's timeouts.

        The turn timeout is both the game's own (take5's deadline) and the table's (the house
        plays for every silent mover); whichever fires first, the other finds nothing to do.
        """
        return {
            **self.game,
            "turn_timeout": self.turn_timeout,
            "table": {"ack_timeout": self.ack_timeout, "turn_timeout": self.turn_timeout},
        }

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GatewaySettings:
        env = os.environ if environ is None else environ
        raw: dict[str, Any] = {}
        fields = ("host", "port", "players", "turn_timeout", "ack_timeout", "line_limit")
        more = ("write_timeout", "max_connections", "register_timeout", "new_burst", "new_rate")
        for field in (*fields, *more):
            value = env.get(ENV_PREFIX + field.upper(), "").strip()
            if value:
                raw[field] = value
        raw["trusted"] = trusted_setting(env.get(ENV_PREFIX + "TRUSTED"))
        game = env.get(ENV_PREFIX + "CONFIG", "").strip()
        if game:
            try:
                raw["game"] = json.loads(game)
            except json.JSONDecodeError as exc:
                raise GatewaySettingsError(f"{ENV_PREFIX}CONFIG: not JSON ({exc})") from None
        try:
            # environment values are strings: let pydantic convert them (lax mode)
            return cls.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            name = ENV_PREFIX + ("CONFIG" if first["loc"][0] == "game" else str(first["loc"][0]))
            raise GatewaySettingsError(f"{name.upper()}: {first['msg']}") from None
