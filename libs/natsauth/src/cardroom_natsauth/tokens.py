"""Player tokens: what the lobby hands a player, and what the player shows NATS to connect.

A token says "this is player P until time T" and is signed with a secret the lobby and the
auth service share (HMAC-SHA256), bound to the subject root so a token of one deployment is
worthless in another. It is opaque to the player and short enough for a URL or a header:

    <player>.<expires, unix seconds>.<signature, base64url>

A token has exactly one spelling, in ASCII: the player is an id (letters, digits, ``-``,
``_``), the expiry is decimal without a leading zero (``[1-9][0-9]{0,11}``) and the signature
is the unpadded base64url of the 32-byte HMAC (43 characters). Anything else (Unicode digits,
a leading zero, padding, standard base64, whitespace, a non-string) is
``TokenError("malformed token")``, and :func:`verify_player_token` raises nothing but
:class:`TokenError` for whatever it is given as a token.

Nothing is stored: any lobby instance can issue, any auth service instance can verify, and a
new player needs no change anywhere (in particular no NATS restart). A token cannot be revoked
before it expires; keep lifetimes to a session (a day by default) and let the client renew.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
import time
from dataclasses import dataclass
from typing import Final

from cardroom_wire import MAX_ID_LENGTH, InvalidId, check_id

DEFAULT_TTL: Final = 24 * 3600.0
_CONTEXT: Final = b"cardroom-player-token/v1"
MIN_SECRET_BYTES: Final = 16
MAX_EXPIRES: Final = 10**12 - 1
"""The latest expiry a token can state: twelve decimal digits."""

# explicit ASCII classes: ``\d`` and str.isdigit() would also take other scripts' digits
_EXPIRES: Final = re.compile(r"[1-9][0-9]{0,11}")
_SIGNATURE: Final = re.compile(r"[A-Za-z0-9_-]{43}")
_MAX_TOKEN_LENGTH: Final = MAX_ID_LENGTH + 1 + len(str(MAX_EXPIRES)) + 1 + 43


class TokenError(ValueError):
    """A token that is malformed, forged, for another deployment, or expired."""


@dataclass(frozen=True)
class PlayerToken:
    """What a verified token says."""

    player: str
    expires: int


def token_key(secret: bytes | str) -> bytes:
    """The HMAC key of ``secret``; ValueError when it is too short to be one."""
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
    if not (math.isfinite(ttl) and ttl > 0):
        raise ValueError("a token's lifetime must be positive")
    expires = int((time.time() if now is None else now) + ttl)
    if not 0 < expires <= MAX_EXPIRES:
        raise ValueError(f"a token's expiry must be between 1 and {MAX_EXPIRES}")
    return f"{player}.{expires}.{_signature(token_key(secret), root, player, expires)}"


def verify_player_token(
    secret: bytes | str, root: str, token: object, *, now: float | None = None
) -> PlayerToken:
    """The player and expiry of ``token``, or :class:`TokenError` (and nothing else).

    ``secret`` and ``root`` are the deployment's own: a short secret or a root that is not an
    id raise ValueError, whatever the token.
    """
    key = token_key(secret)
    check_id(root, "subject root")
    if not isinstance(token, str) or len(token) > _MAX_TOKEN_LENGTH:
        raise TokenError("malformed token")
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("malformed token")
    player, expires_text, signature = parts
    try:
        check_id(player, "player id")
    except InvalidId:
        raise TokenError("malformed token") from None
    if not _EXPIRES.fullmatch(expires_text) or not _SIGNATURE.fullmatch(signature):
        raise TokenError("malformed token")
    expires = int(expires_text)
    expected = _signature(key, root, player, expires)
    # compared as text with the canonical encoding: another spelling of the digest fails
    if not hmac.compare_digest(expected, signature):
        raise TokenError("bad token signature")
    if expires <= (time.time() if now is None else now):
        raise TokenError("token expired")
    return PlayerToken(player, expires)


__all__ = [
    "DEFAULT_TTL",
    "MAX_EXPIRES",
    "PlayerToken",
    "TokenError",
    "issue_player_token",
    "token_key",
    "verify_player_token",
]
