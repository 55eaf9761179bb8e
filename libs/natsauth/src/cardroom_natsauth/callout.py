"""The NATS auth callout responder: it turns a player token into a user with its permissions.

With ``auth_callout`` in the server configuration (deploy/nats/auth.conf), every connection
that is not one of the static service users is put on hold while the server asks, on
``$SYS.REQ.USER.AUTH`` in the AUTH account, "who is this?". The request is a JWT signed by the
server that carries what the client sent in CONNECT (token, user, password) and a fresh user
nkey for the connection. This responder

1. checks the request (a server signed it, for this issuer),
2. identifies the client: a player by its token (:mod:`.tokens`), or a guest by its nonce,
3. replies with a response JWT, signed by the issuer account key that the server trusts,
   holding a user JWT for the connection's nkey with exactly that player's permissions
   (:mod:`.permissions`), placed in the application account, expiring with the token;
   or with an error, and the server refuses the connection.

Every request gets exactly one answer, so that no client waits for the server's callout
timeout and no request stops the responder:

- credentials that prove no player or guest: a refusal, an authorization response whose
  ``error`` says why (the server logs it; the client only learns it was refused);
- a request that does not verify (not a signed JWT, not made by the server it names, for
  another issuer): a refusal too, addressed to the server id and user nkey the request names
  when both can be read. A refusal grants nothing, so answering even a forgery is harmless,
  and the server that did ask refuses its client at once;
- a request naming no readable server id and user nkey: there is no one to address, so one
  warning line is logged, and the server refuses the client at its timeout;
- a failure of the responder itself while identifying the client: a refusal, and one warning
  line naming the exception.

Nothing in a request or in a client's CONNECT options makes :meth:`~AuthCalloutResponder.handle`
raise or log a traceback. The one error it logs is a server that encrypts its requests
(``xkey``): a configuration this responder does not support, which it cannot answer.

Nothing about a player is configured in NATS, so a player added after the server started
connects at once. The responder is stateless: run as many as you like, they share the queue
group. It holds no connection of its own; a service hosts it::

    responder = AuthCalloutResponder(issuer_seed=..., token_secret=..., root="cardroom")
    await nc.subscribe(responder.subject, queue=responder.queue, cb=responder.handle)

where ``nc`` is a nats-py client connected as the auth user of the AUTH account.
"""

from __future__ import annotations

import collections
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from . import nkeyjwt
from .admission import GuestAdmission
from .guard import Bans, ban_key
from .permissions import check_nonce, guest_permissions, player_permissions
from .tokens import TokenError, token_key, verify_player_token

log = logging.getLogger("cardroom.natsauth")

AUTH_CALLOUT_SUBJECT: Final = "$SYS.REQ.USER.AUTH"
AUTH_REQUEST_AUDIENCE: Final = "nats-authorization-request"
XKEY_HEADER: Final = "Nats-Server-Xkey"
DEFAULT_ACCOUNT: Final = "CARDROOM"
GUEST_USER: Final = "guest"
DEFAULT_GUEST_TTL: Final = 300.0
DEFAULT_MAX_SUBSCRIPTIONS: Final = 1000
"""The ``subs`` limit written into user JWTs. nats-server does not apply the limits of an
auth-callout user's JWT, so the deployment enforces it (``max_subscriptions`` in
deploy/nats/nats.conf, the same number)."""
NO_LIMIT: Final = -1
CLIENT_CONNECTIONS: Final = ("STANDARD", "WEBSOCKET")
"""How players and guests may connect: as NATS clients over TCP or WebSocket (no MQTT, no
leaf node)."""


class AuthError(Exception):
    """The client may not connect. The message goes back to the server's log, not the client;
    ``reason`` is one of :data:`REFUSALS`, for the responder's counts."""

    def __init__(self, message: str, reason: str = "credentials") -> None:
        super().__init__(message)
        self.reason = reason


REFUSALS: Final = ("malformed", "forged", "credentials", "banned", "guest_limit", "failed")
"""Why a client was refused, as counted: a request that is no valid JWT, one not made by
the server it names (or for another issuer), credentials that prove nobody, a player or
address the flood guard threw out, too many new guests from one address, the responder's
own failure."""


class CalloutMessage(Protocol):
    """What the responder needs of a received message (a nats-py ``Msg`` fits)."""

    @property
    def data(self) -> bytes: ...

    @property
    def headers(self) -> dict[str, str] | None: ...

    async def respond(self, data: bytes) -> None: ...


@dataclass(frozen=True)
class Identity:
    """Who a connection is, once its credentials have been checked."""

    kind: str  # "player" or "guest"
    name: str  # the player id, or the guest's nonce
    permissions: dict[str, Any]
    expires: int


def issue_user_jwt(
    issuer_seed: str,
    user_nkey: str,
    *,
    account: str,
    name: str,
    permissions: Mapping[str, Any],
    expires: int | None = None,
    max_subscriptions: int = NO_LIMIT,
    max_payload: int = NO_LIMIT,
    max_data: int = NO_LIMIT,
    connection_types: Sequence[str] | None = None,
    now: float | None = None,
) -> str:
    """A user JWT for the connection with public key ``user_nkey``, signed by the issuer.

    ``account`` is where the user lands: without an operator, the name of a configured account
    (the JWT's audience). ``permissions`` has the user-JWT shape (``pub``/``sub``/``resp``).
    ``expires`` (unix seconds) ends the connection when reached. ``connection_types`` limits
    how the user may connect (``STANDARD``, ``WEBSOCKET``, ``MQTT``, ``LEAFNODE``, ...).
    """
    if not nkeyjwt.is_public_key(user_nkey, nkeyjwt.USER):
        raise ValueError(f"not a user public key: {user_nkey!r}")
    claims: dict[str, Any] = {
        "sub": user_nkey,
        "aud": account,
        "name": name,
        "nats": {
            **dict(permissions),
            "subs": max_subscriptions,
            "data": max_data,
            "payload": max_payload,
            "type": "user",
        },
    }
    if connection_types is not None:
        claims["nats"]["allowed_connection_types"] = list(connection_types)
    if expires is not None:
        claims["exp"] = int(expires)
    return nkeyjwt.encode(claims, issuer_seed, now=now)


def authorization_response(
    issuer_seed: str,
    *,
    server_id: str,
    user_nkey: str,
    user_jwt: str | None = None,
    error: str | None = None,
    now: float | None = None,
) -> str:
    """The callout's answer to server ``server_id`` about ``user_nkey``: a user JWT or an error."""
    if (user_jwt is None) == (error is None):
        raise ValueError("an authorization response carries either a user JWT or an error")
    nats: dict[str, Any] = {"type": "authorization_response"}
    if user_jwt is not None:
        nats["jwt"] = user_jwt
    else:
        nats["error"] = error
    return nkeyjwt.encode({"sub": user_nkey, "aud": server_id, "nats": nats}, issuer_seed, now=now)


class AuthCalloutResponder:
    """Answers the server's authorization requests for players and guests (see module doc)."""

    subject: Final = AUTH_CALLOUT_SUBJECT
    queue: Final = "cardroom-auth"

    def __init__(
        self,
        *,
        issuer_seed: str,
        token_secret: bytes | str,
        root: str = "cardroom",
        account: str = DEFAULT_ACCOUNT,
        guests: bool = True,
        guest_ttl: float = DEFAULT_GUEST_TTL,
        max_subscriptions: int = DEFAULT_MAX_SUBSCRIPTIONS,
        bans: Bans | None = None,
        admission: GuestAdmission | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not issuer_seed.startswith("SA"):
            raise ValueError("the issuer must be an account seed (SA...)")
        self._seed = issuer_seed
        self.issuer = nkeyjwt.public_key(issuer_seed)
        token_key(token_secret)  # a secret too short is refused now, not at the first client
        self._secret = token_secret
        self.root = root
        self.account = account
        self.guests = guests
        self.guest_ttl = guest_ttl
        self.max_subscriptions = max_subscriptions
        self.bans = bans  # who the flood guard threw out, refused for a while (.guard)
        self.admission = admission  # how many new guests an address may bring (.admission)
        self._clock = clock
        # what it decided, for the metrics: admitted_player, admitted_guest, refused_<reason
        # of REFUSALS>, unanswered (no server id and user nkey to answer)
        self.counts: collections.Counter[str] = collections.Counter()
        player_permissions(root, "probe")  # validates the root now, not at the first client

    # -- the message handler --------------------------------------------------------------
    async def handle(self, msg: CalloutMessage) -> None:
        """Subscription callback: answer one authorization request (see the module doc).

        Never raises, never logs a traceback: what cannot be answered is one log line.
        """
        try:
            headers = msg.headers
            if headers and XKEY_HEADER in headers:
                log.error(
                    "auth callout: the server encrypts requests (xkey), which this responder "
                    "does not support; remove 'xkey' from auth_callout"
                )
                return
            reply = self.authorize(msg.data)
        except Exception as exc:  # authorize() answers all it can read: a bug, not a request
            log.warning("auth callout: cannot answer a request: %s", _describe(exc))
            return
        if reply is None:
            return
        try:
            await msg.respond(reply)
        except Exception as exc:  # no reply subject, or the connection is going away
            log.warning("auth callout: cannot send an answer: %s", _describe(exc))

    # -- the decision, pure ---------------------------------------------------------------
    def authorize(self, request: object) -> bytes | None:
        """The response JWT to one request JWT: a user JWT or a refusal. None (and a warning
        logged) only when the request names no server id and user nkey to answer."""
        now = self._clock()
        problem: str | None = None
        try:
            claims = nkeyjwt.decode(request)
        except nkeyjwt.JwtError as exc:
            problem = f"malformed request: {exc}"
            try:  # only to find whom to refuse: nothing in it is trusted
                claims = nkeyjwt.decode(request, verify=False)
            except nkeyjwt.JwtError:
                log.warning("auth callout: cannot answer a request that is not a JWT: %s", exc)
                self.counts["unanswered"] += 1
                return None
        nats = claims.get("nats")
        nats = nats if isinstance(nats, dict) else {}
        server = nats.get("server_id")
        server_id = server.get("id") if isinstance(server, dict) else None
        user_nkey = nats.get("user_nkey")
        if not nkeyjwt.is_public_key(server_id, nkeyjwt.SERVER) or not nkeyjwt.is_public_key(
            user_nkey, nkeyjwt.USER
        ):
            log.warning(
                "auth callout: cannot answer a request without a server id and a user nkey%s",
                f" ({problem})" if problem else "",
            )
            self.counts["unanswered"] += 1
            return None
        client = nats.get("client_info")
        client = client if isinstance(client, dict) else {}
        try:
            if problem is not None:
                raise AuthError(problem, "malformed")
            if (
                nats.get("type") != "authorization_request"
                or claims.get("aud") != AUTH_REQUEST_AUDIENCE
                or claims.get("iss") != server_id
            ):
                raise AuthError("the request was not made by the server it names", "forged")
            if claims.get("sub") != self.issuer:
                raise AuthError("the request is for another issuer", "forged")
            connect = nats.get("connect_opts")
            identity = self.identify(connect if isinstance(connect, dict) else {}, now=now)
            if self.bans is not None:
                user = identity.name if identity.kind == "player" else GUEST_USER
                left = self.bans.remaining(ban_key(user, str(client.get("host", ""))))
                if left > 0:
                    raise AuthError(
                        f"thrown out for flooding; refused for {left:.0f} s more", "banned"
                    )
            if identity.kind == "guest" and self.admission is not None:
                wait = self.admission.admit(str(client.get("host", "")))
                if wait > 0:
                    raise AuthError(
                        f"too many new guests from this address; the next in {math.ceil(wait)} s",
                        "guest_limit",
                    )
            user_jwt = issue_user_jwt(
                self._seed,
                user_nkey,
                account=self.account,
                name=identity.name if identity.kind == "player" else GUEST_USER,
                permissions=identity.permissions,
                expires=identity.expires,
                max_subscriptions=self.max_subscriptions,
                connection_types=CLIENT_CONNECTIONS,
                now=now,
            )
        except AuthError as exc:
            log.info(
                "auth callout: refused %s (client %s): %s",
                _shown(client.get("host")),
                _shown(client.get("id")),
                exc,
            )
            error = str(exc)
            self.counts[f"refused_{exc.reason}"] += 1
        except Exception as exc:  # a bug must refuse the client, not leave it waiting
            log.warning(
                "auth callout: refused %s (client %s): the responder failed: %s",
                _shown(client.get("host")),
                _shown(client.get("id")),
                _describe(exc),
            )
            error = "the auth service could not identify the client"
            self.counts["refused_failed"] += 1
        else:
            log.debug("auth callout: %s %s connected", identity.kind, identity.name)
            self.counts[f"admitted_{identity.kind}"] += 1
            response = authorization_response(
                self._seed, server_id=server_id, user_nkey=user_nkey, user_jwt=user_jwt, now=now
            )
            return response.encode()
        response = authorization_response(
            self._seed, server_id=server_id, user_nkey=user_nkey, error=error, now=now
        )
        return response.encode()

    def identify(self, connect: Mapping[str, Any], *, now: float | None = None) -> Identity:
        """Who the CONNECT options ``connect`` prove the client is, or :class:`AuthError`.

        - ``auth_token=<player token>``: that player;
        - ``user=<player>``, ``pass=<player token>``: that player (the names must agree);
        - ``user=guest``, ``pass=<nonce>``: a guest, when guests are allowed.
        """
        now = self._clock() if now is None else now
        token = connect.get("auth_token")
        user = connect.get("user")
        password = connect.get("pass")
        if user == GUEST_USER and not token:
            if not self.guests:
                raise AuthError("guests are not allowed")
            try:
                nonce = check_nonce(password)
            except ValueError as exc:
                raise AuthError(str(exc)) from None
            return Identity(
                "guest",
                nonce,
                guest_permissions(self.root, nonce),
                int(now + self.guest_ttl),
            )
        if not token and isinstance(user, str) and password:
            token = password
        if not token:
            raise AuthError("no credentials")
        try:
            verified = verify_player_token(self._secret, self.root, token, now=now)
        except TokenError as exc:
            raise AuthError(str(exc)) from None
        if user and not connect.get("auth_token") and user != verified.player:
            raise AuthError("the user name does not match the token")
        return Identity(
            "player",
            verified.player,
            player_permissions(self.root, verified.player),
            verified.expires,
        )


def _shown(value: object) -> str:
    """A value of a request, fit for one log line."""
    if isinstance(value, str | int) and not isinstance(value, bool):
        return repr(value)[:80]
    return "?"


def _describe(exc: BaseException) -> str:
    """An exception on one line: its type and the start of its message."""
    return f"{type(exc).__name__}: {str(exc)[:200]!r}"


__all__ = [
    "AUTH_CALLOUT_SUBJECT",
    "DEFAULT_ACCOUNT",
    "GUEST_USER",
    "AuthCalloutResponder",
    "AuthError",
    "CalloutMessage",
    "Identity",
    "authorization_response",
    "issue_user_jwt",
]
