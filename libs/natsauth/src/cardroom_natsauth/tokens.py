"""Player tokens: what the lobby hands a player, and what the player shows NATS to connect.

A token says "this is player P until time T" and is signed with a secret the lobby and the
auth service share (HMAC-SHA256), bound to the subject root so a token of one deployment is
worthless in another. It is opaque to the player and short enough for a URL or a header:

    <player>.<expires, unix seconds>.<signature, base64url>

Nothing is stored: any lobby instance can issue, any auth service instance can verify, and a
new player needs no change anywhere (in particular no NATS restart). A token cannot be revoked
before it expires; keep lifetimes to a session (a day by default) and let the client renew.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Final

from cardroom_wire import InvalidId, check_id

DEFAULT_TTL: Final = 24 * 3600.0
_CONTEXT: Final = b"cardroom-player-token/v1"
MIN_SECRET_BYTES: Final = 16


class TokenError(ValueError):
    """A token that is malformed, forged, for another deployment, or expired."""


@dataclass(frozen=True)
class PlayerToken:
    """What a verified token says."""

    player: str
    expires: int


def _secret(secret: bytes | str) -> bytes:
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    if len(key) < MIN_SECRET_BYTES:
        raise ValueError(f"a token secret needs at least {MIN_SECRET_BYTES} bytes")
    return key


def _signature(key: bytes, root: str, player: str, expires: int) -> str:
    message = b"|".join((_CONTEXT, root.encode(), player.encode(), str(expires).encode()))
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue_player_token(
    secret: bytes | str,
    root: str,
    player: str,
    *,
    ttl: float = DEFAULT_TTL,
    now: float | None = None,
) -> str:
    """A token for ``player`` under subject root ``root``, valid for ``ttl`` seconds."""
    check_id(root, "subject root")
    check_id(player, "player id")
    if ttl <= 0:
        raise ValueError("a token's lifetime must be positive")
    expires = int((time.time() if now is None else now) + ttl)
    return f"{player}.{expires}.{_signature(_secret(secret), root, player, expires)}"


def verify_player_token(
    secret: bytes | str, root: str, token: str, *, now: float | None = None
) -> PlayerToken:
    """The player and expiry of ``token``, or :class:`TokenError`."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        raise TokenError("malformed token")
    player, expires_text, signature = parts
    try:
        check_id(player, "player id")
    except InvalidId:
        raise TokenError("malformed token") from None
    if not expires_text.isdigit() or len(expires_text) > 12:
        raise TokenError("malformed token")
    expires = int(expires_text)
    expected = _signature(_secret(secret), root, player, expires)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        raise TokenError("bad token signature")
    if expires <= (time.time() if now is None else now):
        raise TokenError("token expired")
    return PlayerToken(player, expires)


__all__ = [
    "DEFAULT_TTL",
    "PlayerToken",
    "TokenError",
    "issue_player_token",
    "verify_player_token",
]
