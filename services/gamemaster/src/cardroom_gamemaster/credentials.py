"""The lobby's credentials: a new player id with its token (``register``), a fresh token for
a current one (``renew``).

Tokens are :mod:`cardroom_natsauth.tokens`: stateless, so any gamemaster replica can issue and
renew and any auth service replica can verify, as long as they share the secret
``CARDROOM_PLAYER_TOKEN_SECRET`` (docker-compose passes it as a secret file). Without it (the
development setup, where NATS has no auth callout and tokens gate nothing) the lobby signs
with a random per-process secret and says so in its log; such tokens are only good for
``renew`` against the same process.

``renew`` needs the current, unexpired token in the request: a lobby request does not say who
sent it, so holding the token is the proof of being that player.

A guest is one player: the id ``register`` grants is a keyed hash of the guest's nonce (the
token secret is the key, the subject root is bound in), so asking again with the same nonce
grants the same player a fresh token. A new player therefore costs a new guest connection,
which the auth callout admits, and not one more request on a connection that is already
open: the per-player rate limit would let one guest name hundreds of new players a second,
each with its own tables waiting. Only the holder of a nonce can ask with it (a guest may
publish on its own nonce's subject only), and the id tells nothing of the nonce.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardroom_natsauth import inbox_prefix
from cardroom_natsauth.tokens import (
    DEFAULT_TTL,
    MIN_SECRET_BYTES,
    TokenError,
    issue_player_token,
    verify_player_token,
)
from cardroom_wire import ErrorCode, WireError

log = logging.getLogger(__name__)

SECRET_ENV = "CARDROOM_PLAYER_TOKEN_SECRET"
TTL_ENV = "CARDROOM_PLAYER_TOKEN_TTL"


@dataclass(frozen=True)
class Credentials:
    root: str
    secret: str
    ttl: float = DEFAULT_TTL

    @classmethod
    def from_env(cls, root: str, env: Mapping[str, str] = os.environ) -> Credentials:
        secret = env.get(SECRET_ENV, "").strip()
        if not secret:
            log.warning(
                "%s is not set: the lobby signs player tokens with a random secret of its own "
                "(fine without the NATS auth callout; set it when deploying)",
                SECRET_ENV,
            )
            secret = secrets.token_urlsafe(32)
        elif len(secret.encode()) < MIN_SECRET_BYTES:
            raise ValueError(f"{SECRET_ENV} needs at least {MIN_SECRET_BYTES} bytes")
        ttl_text = env.get(TTL_ENV, "").strip()
        ttl = float(ttl_text) if ttl_text else DEFAULT_TTL
        if not 0 < ttl <= 366 * 86_400:
            raise ValueError(f"{TTL_ENV} must be between 0 and a year of seconds")
        return cls(root, secret, ttl)

    def _grant(self, player: str) -> dict[str, Any]:
        token = issue_player_token(self.secret, self.root, player, ttl=self.ttl)
        return {
            "player": player,
            "token": token,
            "expires": int(token.split(".")[1]),
            "inbox_prefix": inbox_prefix(self.root, player),
        }

    def register(self, nonce: str) -> dict[str, Any]:
        """The player of the guest with ``nonce`` (see the module): its id and a fresh token."""
        return self._grant(self.player_of(nonce))

    def player_of(self, nonce: str) -> str:
        """The player id a guest's nonce registers: 64 bits, as random ids have."""
        # its own context: never the message of a token's signature under the same key
        message = b"cardroom-guest-player/v1\0%s\0%s" % (self.root.encode(), nonce.encode())
        return "p" + hmac.new(self.secret.encode(), message, hashlib.sha256).hexdigest()[:16]

    def renew(self, token: object, *, now: float | None = None) -> dict[str, Any]:
        """A fresh token for the player of ``token``, which must be valid now.

        Whatever ``token`` is, a bad one is ``bad_token``: verify_player_token raises nothing
        but TokenError for it.
        """
        try:
            held = verify_player_token(self.secret, self.root, token, now=now)
        except TokenError as exc:
            # the reason (malformed, forged, expired) tells the holder nothing it did not know
            raise WireError(ErrorCode.BAD_TOKEN, f"cannot renew: {exc}") from None
        return self._grant(held.player)
