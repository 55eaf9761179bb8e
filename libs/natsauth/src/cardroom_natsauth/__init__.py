"""NATS credentials and per-player permissions for cardroom.

- :mod:`.permissions`: DESIGN.md's player rights as NATS permissions, the inbox prefixes;
- :mod:`.tokens`: the signed player tokens the lobby hands out;
- :mod:`.callout`: the auth callout responder that turns a token into a NATS user;
- :mod:`.admission`: how many new guests one address may bring;
- :mod:`.guard`: the flood guard, which throws out a connection that floods;
- :mod:`.nkeyjwt`: nkeys and NATS JWTs;
- :mod:`.deploysecrets`: the secret files of a deployment.

No I/O except :mod:`.deploysecrets` writing files; the responder is hosted by a service.
"""

from .admission import (
    DEFAULT_GUEST_BURST,
    DEFAULT_GUEST_RATE,
    DEFAULT_TRUSTED,
    GuestAdmission,
)
from .callout import (
    AUTH_CALLOUT_SUBJECT,
    DEFAULT_ACCOUNT,
    GUEST_USER,
    AuthCalloutResponder,
    AuthError,
    CalloutMessage,
    Identity,
    authorization_response,
    issue_user_jwt,
)
from .deploysecrets import deploy_secrets, read_secret, write_deploy_secrets
from .guard import (
    DEFAULT_FLOOD_BAN,
    DEFAULT_FLOOD_INTERVAL,
    DEFAULT_FLOOD_LIMIT,
    Bans,
    FloodGuard,
    FloodWatch,
)
from .nkeyjwt import JwtError, create_seed, public_key
from .permissions import (
    REGISTER_VERB,
    check_nonce,
    guest_inbox_prefix,
    guest_permissions,
    inbox_prefix,
    player_permissions,
)
from .tokens import (
    DEFAULT_TTL,
    PlayerToken,
    TokenError,
    issue_player_token,
    verify_player_token,
)

__all__ = [
    "AUTH_CALLOUT_SUBJECT",
    "DEFAULT_ACCOUNT",
    "DEFAULT_FLOOD_BAN",
    "DEFAULT_FLOOD_INTERVAL",
    "DEFAULT_FLOOD_LIMIT",
    "DEFAULT_GUEST_BURST",
    "DEFAULT_GUEST_RATE",
    "DEFAULT_TRUSTED",
    "DEFAULT_TTL",
    "GUEST_USER",
    "REGISTER_VERB",
    "AuthCalloutResponder",
    "AuthError",
    "Bans",
    "CalloutMessage",
    "FloodGuard",
    "FloodWatch",
    "GuestAdmission",
    "Identity",
    "JwtError",
    "PlayerToken",
    "TokenError",
    "authorization_response",
    "check_nonce",
    "create_seed",
    "deploy_secrets",
    "guest_inbox_prefix",
    "guest_permissions",
    "inbox_prefix",
    "issue_player_token",
    "issue_user_jwt",
    "player_permissions",
    "public_key",
    "read_secret",
    "verify_player_token",
    "write_deploy_secrets",
]
