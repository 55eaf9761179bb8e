"""The web edge: serves the browser client and lets browsers reach NATS.

``cardroom serve all`` (so ``make run``) runs it beside the other services. It serves:

- ``/`` and the built client (``web/`` in the repository, built into ``static/`` here by
  ``make web``);
- ``/config.json``: the subject root and where a browser speaks NATS over WebSocket;
- ``/api/games``: the game types, their player counts, bot kinds and default options (what
  ``cardroom games`` prints), for the lobby's create form;
- ``/api/public?game=``: the spectators' view of a table as the projector stored it last (what
  ``<root>.public.<game>`` carried last), so a spectator sees the present before the next
  move; public information only (503 ``unavailable`` while the database is away);
- ``/nats``: a WebSocket carrying the NATS protocol to the NATS server, byte for byte, for a
  server without a WebSocket listener of its own (a local nats-server on 4222). The bridge
  authenticates nothing and adds no rights: the browser sends its own ``CONNECT`` with its
  own credentials, and the broker judges it as it judges any client. Where the NATS server
  listens for WebSocket itself and asks every client for credentials (deploy/'s),
  ``CARDROOM_NATS_WS_URL`` names it (or, comma-separated, a cluster's listeners) and
  browsers go there directly (and ``/nats`` is 404: no bridge, through which every guest
  would reach NATS from this edge's address); the embedded one takes no browser (it asks
  for none). The bridge takes a browser only from this page: a handshake with an
  ``Origin`` header must name the ``Host`` it was sent to (``http://`` or ``https://`` and
  that host and port), and that ``Host`` must be an address, ``localhost`` or a name in
  ``CARDROOM_WEB_NAMES`` (else a site that made its own name resolve here would pass), else
  403 ``forbidden_origin``; a page of another site (or, with ``CARDROOM_WEB_HOST=0.0.0.0``,
  of another machine) in a visitor's browser could otherwise act as any player where NATS
  asks for no credentials (make run's). A handshake without ``Origin`` is no browser's, and
  no page can leave it out: it is let through (the broker judges its ``CONNECT``). A proxy
  in front must pass the browser's ``Host`` on.

Every answer carries the page's Content-Security-Policy (its own scripts and libsodium's
WebAssembly, its own styles and images, connections to itself and to the configured NATS
listeners only, never framed) and ``X-Frame-Options: DENY``. Only GET and HEAD are answered
(any other method: 405 ``method_not_allowed`` with ``Allow``); HEAD gets GET's headers
without the body. A path that is no URL is 400 ``bad_request``; an ``/api/`` path that names
nothing is a JSON 404 ``not_found`` (any other unknown path without a dot is the page, which
routes by its fragment). A request with a body (a ``Content-Length`` other than 0, a
``Transfer-Encoding``) never reaches this module: websockets' HTTP parser refuses it and
closes the connection without an answer.

It also runs the bots a player seats at its table: the player asks the lobby
(``<root>.lobby.bots.<player>``, so the broker names the asker), the gamemaster checks that
the asker sits at the table and that the seats are free, and asks here
(``<root>.internal.bots``, which no player may publish). Each bot registers with the lobby as
a new player and plays with its own token, exactly as ``cardroom bots`` does, so it can act
only for its own seat.

The browser holds one player's token and acts only through that player's subjects; nothing
here acts for a browser (DESIGN.md, "The web client").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import json
import logging
import mimetypes
import os
import random
import re
from collections.abc import Collection
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from cardroom_client import CardroomError, Client
from cardroom_engine import NEW_TABLE, Bot, registry
from cardroom_eventstore import readmodels
from cardroom_runtime.games import bot_choice
from cardroom_runtime.host import Asker, Service, storage_unavailable
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import ErrorCode, Notification, SeatBotsAt, WireError, check_id, ok
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
"""Where ``make web`` writes the built client."""

DEFAULT_PORT = 8765
BOT_GAME_SECONDS = 3600.0
"""A bot leaves a game it is still seated at after this long (an abandoned table)."""
BOTS_PER_PLAYER = 24
"""Bots one player may have playing at once (a few full tables): past it ``too_many_bots``,
so that one player cannot fill this process with games of bots."""
BOTS_AT_ONCE = 500
"""Bots this process plays at once (``CARDROOM_WEB_BOTS``): past it ``unavailable``."""


@dataclass(frozen=True)
class WebSettings:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    nats_ws_url: str | None = None
    bots: int = BOTS_AT_ONCE
    names: tuple[str, ...] = ()
    """Host names (besides IP addresses and ``localhost``) the bridge is reached by
    (``CARDROOM_WEB_NAMES``, comma-separated)."""

    @classmethod
    def from_env(cls) -> WebSettings:
        raw = os.environ.get("CARDROOM_WEB_PORT", "").strip()
        try:
            port = int(raw) if raw else DEFAULT_PORT
        except ValueError:
            port = -1
        if not 0 <= port <= 65535:
            raise ValueError(f"CARDROOM_WEB_PORT={raw!r}: expected a port number (0: any free)")
        bots = os.environ.get("CARDROOM_WEB_BOTS", "").strip()
        if bots and not bots.isdigit():
            raise ValueError(f"CARDROOM_WEB_BOTS={bots!r}: expected a whole number")
        return cls(
            bots=int(bots) if bots else BOTS_AT_ONCE,
            host=os.environ.get("CARDROOM_WEB_HOST", "").strip() or "127.0.0.1",
            port=port,
            nats_ws_url=os.environ.get("CARDROOM_NATS_WS_URL", "").strip() or None,
            names=tuple(
                n.strip().lower()
                for n in os.environ.get("CARDROOM_WEB_NAMES", "").split(",")
                if n.strip()
            ),
        )


def games_catalog() -> list[dict[str, Any]]:
    """Every hosted game type, for the lobby's create form, with the options a table created
    now gets by default (Macaua's shuffle proof: the argument, which the page makes)."""
    out = []
    for name in registry.names():
        game = registry.get(name)
        defaults = game.config_model.model_validate({}, context={NEW_TABLE: True})
        out.append(
            {
                "type": name,
                "min_players": game.min_players,
                "max_players": game.max_players,
                "bots": sorted(game.bots),
                "defaults": defaults.model_dump(mode="json"),
            }
        )
    return out


class _Bot:
    """One bot seat: a player of its own (registered with the lobby), playing one game."""

    def __init__(self, client: Client, bot: Bot, game: str) -> None:
        self.client = client
        self.bot = bot
        self.game = game
        self.over = asyncio.Event()
        self.rng = random.SystemRandom()
        self._acting: asyncio.Task[None] | None = None
        client.on_notification(self._observe, after_ack=self._act)
        # a bot that signs its moves (Macaua's) checks and signs every transition too
        verifier = getattr(bot, "verifier", None)
        if callable(verifier):
            client.verify(game, verifier(game))

    @property
    def key(self) -> str | None:
        """The verify key the bot binds to its seat, when it signs its moves."""
        key = getattr(self.bot, "verify_key", None)
        return key if isinstance(key, str) else None

    async def _observe(self, note: Notification) -> None:
        if note.game != self.game:
            return
        self.bot.observe(note.message)
        if note.message.get("type") == "GameOver":
            self.over.set()

    async def _act(self, note: Notification) -> None:
        if self._acting is not None:  # newer news: the old choice is stale
            self._acting.cancel()
            self._acting = None
        if note.game == self.game and note.actions:
            self._acting = asyncio.create_task(self._send(note))

    async def _send(self, note: Notification) -> None:
        who = f"bot {self.client.player} in {self.game}"
        choice = await bot_choice(self.bot, note.view or {}, note.actions, self.rng, who=who)
        if choice is None:  # no move: the game's deadlines go on
            return
        with contextlib.suppress(CardroomError):
            await self.client.send(self.game, choice, retry_for=60.0)

    async def play(self) -> None:
        try:
            async with asyncio.timeout(BOT_GAME_SECONDS):
                await self.over.wait()
        except TimeoutError:
            pass
        finally:
            if self._acting is not None:
                self._acting.cancel()
            await self.client.close()


class Web(Service):
    """``cardroom serve web`` (and part of ``all``): the page, its API and the NATS bridge."""

    name = "web"

    settings_override: ClassVar[WebSettings | None] = None
    """Tests may set settings here instead of the environment."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings = self.settings_override or WebSettings.from_env()
        self.server: Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._bots_of: dict[str, int] = {}  # player -> its bots seated or being seated

    @property
    def port(self) -> int | None:
        if self.server is None:
            return None
        for sock in self.server.sockets:
            return int(sock.getsockname()[1])
        return None

    @property
    def url(self) -> str | None:
        port = self.port
        host = self.settings.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        return None if port is None else f"http://{host}:{port}/"

    async def start(self) -> None:
        try:
            self.server = await serve(
                self._bridge,
                self.settings.host,
                self.settings.port,
                process_request=self._http,
                max_size=2 * 1024 * 1024,
                compression=None,
            )
        except OSError as exc:
            # not fatal, as for the TCP gateway: the services still serve every other client
            log.error(
                "web: cannot listen on %s:%s (%s); the web client is OFF "
                "(set CARDROOM_WEB_PORT, 0 picks a free port)",
                self.settings.host,
                self.settings.port,
                exc,
            )
            return
        log.info("web: the browser client on %s", self.url)

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 5)
        await cancel_and_wait(list(self._tasks))

    # -- HTTP -------------------------------------------------------------------------------
    async def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        try:
            response = await self._route(request)
        except Exception as exc:
            if not storage_unavailable(exc):
                raise
            # as every request's answer while the database is away: retried, not a 500
            response = _json(_error("unavailable", "storage is unavailable; try again"), 503)
        if response is None:
            return None  # the WebSocket handshake goes on: the bridge
        headers = response.headers
        headers["Content-Security-Policy"] = self._policy(_one(request.headers, "Host"))
        headers["X-Frame-Options"] = "DENY"
        if request.method == "HEAD":  # the headers GET would have, Content-Length included
            return dataclasses.replace(response, body=b"")
        return response

    async def _route(self, request: Request) -> Response | None:
        if request.method not in ("GET", "HEAD"):
            return _not_allowed("GET, HEAD")
        try:
            path = urlsplit(request.path).path
        except ValueError:  # "//[x": not a URL ("Invalid IPv6 URL")
            return _json(_error("bad_request", "not a request path"), 400)
        if path == "/nats":
            if self.settings.nats_ws_url is not None:
                # browsers go to the NATS servers' own listeners: no bridge to open here,
                # through which every guest would reach NATS from this edge's address (one
                # the auth callout may trust, skipping its limits on new guests)
                return _json(_error("not_found", "no bridge here: see /config.json"), 404)
            if request.method != "GET":  # only a GET opens a WebSocket
                return _not_allowed("GET")
            if not _same_origin(request.headers):
                # a page of another site (or of another machine's) in a visitor's browser:
                # behind the bridge it could act as any player where NATS asks for no
                # credentials (make run's own). No Origin: not a browser, not a page's doing.
                return _json(_error("forbidden_origin", "not this page's origin"), 403)
            if not _known_host(request.headers, self.settings.names):
                # a page whose site's name was made to resolve to this machine (DNS
                # rebinding) sends its own name as both Origin and Host: only an address,
                # localhost or a name configured here is this edge's own
                return _json(_error("forbidden_origin", "not a name of this edge"), 403)
            return None
        if path == "/config.json":
            return _json({"root": self.subjects.root, "nats_ws": self._nats_ws()})
        if path == "/api/games":
            return _json({"games": games_catalog()})
        if path == "/api/public":
            return await self._public(request)
        if path == "/api" or path.startswith("/api/"):
            return _json(_error("not_found", "no such API"), 404)
        return self._static(path)

    def _policy(self, host: str | None) -> str:
        """The page's Content-Security-Policy: its own scripts (and libsodium's WebAssembly),
        styles and images only, never framed, and connections to itself and to where it
        speaks NATS only (the configured listeners, else this edge's bridge)."""
        connect = ["'self'"]
        urls = self._nats_ws()
        if urls is not None:
            for url in [urls] if isinstance(urls, str) else urls:
                source = _ws_source(url)
                if source is not None:
                    connect.append(source)
        elif host is not None and _HOST.fullmatch(host):
            # 'self' means ws:/wss: too in CSP 3; older browsers need them named
            connect += [f"ws://{host}", f"wss://{host}"]
        return "; ".join(
            [
                "default-src 'self'",
                "script-src 'self' 'wasm-unsafe-eval'",
                f"connect-src {' '.join(connect)}",
                "img-src 'self' data:",
                "style-src 'self'",
                "frame-ancestors 'none'",
                "base-uri 'none'",
                "form-action 'self'",
                "object-src 'none'",
            ]
        )

    async def _public(self, request: Request) -> Response:
        game = (parse_qs(urlsplit(request.path).query).get("game") or [""])[0]
        try:
            check_id(game, "game id")
        except ValueError:
            return _json(_error("bad_id", "not a game id"), 400)
        try:
            store = self.store_of(game)
        except WireError:  # the id names a shard this cardroom lacks: no such table
            stored = None
        else:
            stored = await store.view(game, readmodels.SPECTATOR)
        if stored is None:
            return _json(_error("unknown_game", "no public view of that table yet"), 404)
        return _json(
            {"type": "public", "game": game, "version": stored.version, "view": stored.view}
        )

    def _static(self, path: str) -> Response:
        name = path.lstrip("/") or "index.html"
        try:
            file = (STATIC / name).resolve()
            found = file.is_relative_to(STATIC.resolve()) and file.is_file()
        except (OSError, ValueError):
            # a path the file system cannot look up (a part longer than a file name:
            # ENAMETOOLONG; a NUL byte) is a missing file, not a handler's failure with a
            # traceback
            found = False
        if not found:
            if not (STATIC / "index.html").is_file():
                return _text(
                    "The web client is not built: run `make web` (make run does it).",
                    HTTPStatus.SERVICE_UNAVAILABLE,
                )
            if "." in name.rsplit("/", 1)[-1]:
                return _text("not found", HTTPStatus.NOT_FOUND)
            file = STATIC / "index.html"  # the page routes by its # fragment
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        return _response(HTTPStatus.OK, file.read_bytes(), kind)

    def _nats_ws(self) -> str | list[str] | None:
        """Where browsers reach NATS: one URL, or a cluster's list (nats.ws takes either)."""
        url = self.settings.nats_ws_url
        if url is None or "," not in url:
            return url
        return [part.strip() for part in url.split(",") if part.strip()]

    # -- WebSocket: the NATS bridge -------------------------------------------------------------
    async def _bridge(self, ws: ServerConnection) -> None:
        # the first server of a cluster's list that answers
        for server in self.rt.nats_url.split(","):
            url = urlsplit(server.strip())
            try:
                reader, writer = await asyncio.open_connection(url.hostname, url.port or 4222)
                break
            except OSError:
                continue
        else:
            await ws.close(1011, "NATS is not reachable")
            return

        async def up() -> None:
            async for message in ws:
                writer.write(message if isinstance(message, bytes) else message.encode())
                await writer.drain()

        async def down() -> None:
            while data := await reader.read(65536):
                await ws.send(data)

        tasks = [asyncio.create_task(up()), asyncio.create_task(down())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            writer.close()
            await ws.close()

    def register(self) -> None:
        self.serve(
            self.subjects.bots,
            queue="web-bots",
            title="bots",
            model=SeatBotsAt,
            handler=self.on_seat_bots,
            max_workers=8,
        )

    async def on_seat_bots(self, request: SeatBotsAt, _: Asker) -> dict[str, Any]:
        """The lobby checked a player's ``bots`` request: seat them, answer their ids."""
        player, count = request.player, request.count
        if self._bots_of.get(player, 0) + count > BOTS_PER_PLAYER:
            raise WireError(
                ErrorCode.TOO_MANY_BOTS,
                f"you have bots playing at {BOTS_PER_PLAYER} seats; wait for a game to end",
            )
        if sum(self._bots_of.values()) + count > self.settings.bots:
            raise WireError(ErrorCode.UNAVAILABLE, "this cardroom plays all the bots it can now")
        try:
            players = await self.seat_bots(request)
        except CardroomError as exc:
            raise WireError(exc.code, exc.message) from None
        return ok(players=players)

    def _count_bot(self, player: str, change: int) -> None:
        left = self._bots_of.get(player, 0) + change
        if left > 0:
            self._bots_of[player] = left
        else:
            self._bots_of.pop(player, None)

    async def seat_bots(self, request: SeatBotsAt) -> list[str]:
        """Seat the request's bots (each a new player), counted as its asker's bots until
        their games end; return their player ids. A bot that cannot join (the seat was taken
        meanwhile) ends the request with that refusal; those seated before it stay and play."""
        game, player = request.game, request.player
        factory = registry.get(request.game_type).bots.get(request.kind)
        if factory is None:  # (the lobby checked it: a game type this process lacks)
            raise CardroomError("bad_request", f"no bot {request.kind!r} in this game")
        # a bot is a guest, then a player: never with this service's own credentials
        addresses = [urlsplit(server.strip()) for server in self.rt.nats_url.split(",")]
        bare = [f"{a.scheme}://{a.hostname}:{a.port or 4222}" for a in addresses]
        seated: list[str] = []
        self._count_bot(player, request.count)  # held while they register: a burst counts
        try:
            for _ in range(request.count):
                client = await Client.register(bare, subject_root=self.subjects.root)
                try:
                    bot = _Bot(client, factory(client.player), game)
                    await client.join(game, key=bot.key)
                except BaseException:
                    await client.close()
                    raise
                task = asyncio.create_task(bot.play(), name=f"web-bot-{client.player}")
                self._count_bot(player, 1)  # until its game ends
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                task.add_done_callback(lambda _: self._count_bot(player, -1))
                seated.append(client.player)
        finally:
            self._count_bot(player, -request.count)
        return seated


def _response(status: HTTPStatus, body: bytes, kind: str) -> Response:
    headers = Headers()
    headers["Content-Type"] = kind
    headers["Content-Length"] = str(len(body))
    headers["Cache-Control"] = "no-cache"
    headers["X-Content-Type-Options"] = "nosniff"
    return Response(status.value, status.phrase, headers, body)


def _not_allowed(allow: str) -> Response:
    response = _json(_error("method_not_allowed", f"only {allow} here"), 405)
    response.headers["Allow"] = allow
    return response


_HOST = re.compile(r"(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
"""A Host header fit to name in a policy (nothing that could end a directive)."""


def _one(headers: Headers, name: str) -> str | None:
    """The header's one value (None when it is absent or given more than once)."""
    values = headers.get_all(name)
    return values[0].strip() if len(values) == 1 else None


def _same_origin(headers: Headers) -> bool:
    """A request without ``Origin`` (not a browser's), or from a page served by this host:
    its ``Origin`` is ``http(s)://`` and the ``Host`` it was sent to (ports included)."""
    if not headers.get_all("Origin"):
        return True
    origin, host = _one(headers, "Origin"), _one(headers, "Host")
    if origin is None or not host:
        return False
    origin, host = origin.lower(), host.lower()
    return origin in (f"http://{host}", f"https://{host}")


def _known_host(headers: Headers, names: Collection[str]) -> bool:
    """Whether the ``Host`` a request was sent to names this edge: an IP address,
    ``localhost``, or one of ``names`` (any port). A request without it is no browser's."""
    host = _one(headers, "Host")
    if host is None:
        return not headers.get_all("Host")
    try:
        name = urlsplit(f"//{host}").hostname  # lower case, without brackets or port
    except ValueError:
        return False
    return name is not None and (name == "localhost" or name in names or _is_address(name))


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _ws_source(url: str) -> str | None:
    """A CSP source for a NATS WebSocket URL: its scheme, host and port (None if it is not a
    ws:// or wss:// URL)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if parts.scheme not in ("ws", "wss") or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    source = host if port is None else f"{host}:{port}"
    return f"{parts.scheme}://{source}" if _HOST.fullmatch(source) else None


def _error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


def _json(value: Any, status: int = HTTPStatus.OK) -> Response:
    return _response(HTTPStatus(status), json.dumps(value).encode(), "application/json")


def _text(text: str, status: HTTPStatus) -> Response:
    return _response(status, text.encode(), "text/plain; charset=utf-8")
