"""The gateway service: the take5 line protocol over TCP, as a client of cardroom's subjects.

Every TCP connection that sends ``register_request`` waits in the lobby; each group of
``players`` (the protocol's ``server.arg_players``) becomes one table: one SDK
:class:`~cardroom_client.Client` per connection, the first creates a take5 table with the
gateway's options and timeouts, the others join it, and the full table starts by itself.
From then on the gateway only translates:

- each notification of a seat becomes its take5 line(s) (:func:`~.lines.translate`); the line
  is written and flushed **before** the handler returns, so the SDK acknowledges only what
  the TCP client has been sent;
- each ``play_response`` / ``choose_response`` becomes the same command on the player's
  subject; a refusal becomes an ``error`` line and the open request is sent again.

Bad clients: a malformed or unexpected line gets an ``error`` line (and the open request
again); a silent player is played for by the house after the turn timeout (the table's and
take5's ``turn_timeout``); a closed connection closes its Client, so its acknowledgements stop,
the ack timeout marks the seat away and the house plays for it until the game ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import secrets
from typing import Any, ClassVar

from cardroom_client import CardroomError, Client
from cardroom_games.take5.protocol import PLAY_RESPONSE
from cardroom_runtime.host import Service
from cardroom_runtime.tasks import cancel_and_wait
from cardroom_wire import ErrorCode, Notification

from .lines import (
    REGISTER_REQUEST,
    REQUESTS,
    Incoming,
    LineError,
    LineErrorCode,
    blank,
    encode,
    error_line,
    parse,
    translate,
)
from .settings import GatewaySettings

log = logging.getLogger("cardroom.gateway")

GAME_TYPE = "take5"
STALE_CODES = frozenset({ErrorCode.NOT_YOUR_TURN, "already_played", ErrorCode.GAME_FINISHED})

_numbers = itertools.count(1)


class Connection:
    """One TCP client: its stream, whether it registered, and its seat once at a table."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        write_timeout: float = 30.0,
    ) -> None:
        self.number = next(_numbers)
        self.write_timeout = write_timeout
        self.reader = reader
        self.writer = writer
        self.registered = False
        self.seat: Seat | None = None
        self.closed = asyncio.Event()
        self.lock = asyncio.Lock()
        """Held while lines are written: what is written under it stays together."""

    async def send(self, line: dict[str, Any]) -> None:
        """Write one line and wait until it is handed to the socket."""
        async with self.lock:
            await self.write(line)

    async def write(self, *lines: dict[str, Any]) -> None:
        """Write lines (the caller holds :attr:`lock`)."""
        if self.closed.is_set():
            raise ConnectionError("the TCP client is gone")
        self.writer.write(b"".join(encode(line) for line in lines))
        try:
            await asyncio.wait_for(self.writer.drain(), self.write_timeout)
        except TimeoutError:
            # a client that does not read: drop it (its seat goes to the house)
            self.closed.set()
            self.writer.transport.abort()
            raise ConnectionError("the TCP client does not read its lines") from None

    async def send_quietly(self, line: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.send(line)

    async def close(self) -> None:
        self.closed.set()
        with contextlib.suppress(Exception):
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), 5)


class Seat:
    """One connection's seat at one table, played through its own SDK client."""

    def __init__(self, gateway: Gateway, conn: Connection, client: Client) -> None:
        self.gateway = gateway
        self.conn = conn
        self.client = client
        self.game: str | None = None
        self.pending: dict[str, Any] | None = None
        """The open request line (play_request or choose_request) the client must answer."""
        self.seated = False
        """True once the table is set up (until then a lost connection is left to it)."""
        self.over = False
        self._closing: asyncio.Task[None] | None = None

    @property
    def player(self) -> str:
        return self.client.player

    # -- cardroom -> TCP ----------------------------------------------------------------------
    async def on_notification(self, note: Notification) -> None:
        """Write the note's take5 lines; returning means "written", and the SDK then acks."""
        self.game = note.game
        lines = translate(note.message, self.player)
        if lines and self.conn.closed.is_set():
            # no ack: the ack timeout marks this seat away and the house plays for it
            raise ConnectionError(f"{self.player}: the TCP client is gone")
        if note.message.get("type") in ("game_over", "GameOver"):
            self.over = True  # a client may leave once it has its game_over
        for line in lines:
            async with self.conn.lock:
                # the open request is known before the client can answer it
                self.pending = line if line["type"] in REQUESTS else None
                await self.conn.write(line)

    async def after_ack(self, note: Notification) -> None:
        if note.message.get("type") == "GameOver":
            self.pending = None
            self.close_later(close_connection=True)

    # -- TCP -> cardroom ----------------------------------------------------------------------
    async def respond(self, incoming: Incoming) -> None:
        request = self.pending
        if request is None or REQUESTS[request["type"]] != incoming.type:
            asked = "nothing" if request is None else request["type"]
            await self.refuse(
                LineErrorCode.OUT_OF_ORDER,
                f"{incoming.type} is not expected now (the open request is {asked})",
            )
            return
        if incoming.type == PLAY_RESPONSE and not self.gateway.in_deck(incoming.data):
            # no hand holds it: refused here, so that no number beyond the deck leaves the edge
            await self.refuse(LineErrorCode.ILLEGAL_MOVE, "that card is not in your hand")
            return
        game = self.game
        assert game is not None
        command = {"type": incoming.type, "data": incoming.data}
        try:
            # "not now" refusals (another seat's ack, a busy table) are retried by the SDK
            # with one command id, so the answer is applied at most once
            await self.client.send(game, command, retry_for=self.gateway.settings.turn_timeout + 10)
        except CardroomError as exc:
            if self.pending is not request:
                # the house has played for this seat meanwhile (the turn timeout)
                await self.refuse(LineErrorCode.OUT_OF_ORDER, "too late: the house played")
                return
            if exc.code in STALE_CODES:
                self.pending = None  # the server says this request is over
            await self.refuse(*_line_error(exc))
            return
        if self.pending is request:
            self.pending = None

    async def refuse(self, code: LineErrorCode, message: str) -> None:
        """An error line, then the open request again (if one is open), together."""
        with contextlib.suppress(ConnectionError, RuntimeError):
            async with self.conn.lock:
                lines = [error_line(code, message)]
                if self.pending is not None:
                    lines.append(self.pending)
                await self.conn.write(*lines)

    # -- the end --------------------------------------------------------------------------
    def close_later(self, *, close_connection: bool) -> None:
        """Close the SDK client (from a task of its own: this may run in its feed task)."""
        if self._closing is None:
            self._closing = asyncio.get_running_loop().create_task(
                self._close(close_connection), name=f"gateway-close-{self.player}"
            )
            self.gateway.track(self._closing)

    async def _close(self, close_connection: bool) -> None:
        with contextlib.suppress(Exception):
            await self.client.close()
        if close_connection:
            await self.conn.close()


async def _next_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next line, with its ``\\n``; ``b""`` once the client has closed (a last line without
    its ``\\n`` first); None for a line longer than the reader's limit, which is read to its
    end and dropped whole, so that no part of it is taken for a line of its own."""
    too_long = False
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            # drop what the reader holds of the line (never its end) and read on
            await reader.readexactly(exc.consumed)
            too_long = True
            continue
        except asyncio.IncompleteReadError as exc:
            return b"" if too_long else exc.partial
        return None if too_long else line


def _line_error(exc: CardroomError) -> tuple[LineErrorCode, str]:
    if exc.code == ErrorCode.ILLEGAL_MOVE:
        return LineErrorCode.ILLEGAL_MOVE, exc.message
    if exc.code in (ErrorCode.BAD_REQUEST, ErrorCode.UNKNOWN_COMMAND):
        return LineErrorCode.BAD_MESSAGE, exc.message
    if exc.code in STALE_CODES:
        return LineErrorCode.OUT_OF_ORDER, exc.message
    return LineErrorCode.UNAVAILABLE, "cardroom did not take the response; send it again"


class Gateway(Service):
    """``cardroom serve gateway``: the TCP listener (see the module's docstring)."""

    name = "gateway"

    settings_override: ClassVar[GatewaySettings | None] = None
    """Tests may set settings here instead of the environment."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.settings = self.settings_override or GatewaySettings.from_env()
        take5 = self.settings.take5_config()  # refuses a bad configuration at start
        self.admission = self.settings.admission()
        bulls = take5.bull_values()
        self.deck = frozenset((face, bulls[face]) for face in range(1, take5.deck_size + 1))
        """Every card of this gateway's tables, as (face, bull)."""
        self.server: asyncio.Server | None = None
        self.waiting: list[Connection] = []
        self.connections: set[Connection] = set()
        self.tables = 0
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def port(self) -> int | None:
        """The port actually bound (the configured one, or the one chosen for port 0); None
        when the listener is off."""
        if self.server is None or not self.server.sockets:
            return None
        return int(self.server.sockets[0].getsockname()[1])

    def in_deck(self, card: dict[str, Any]) -> bool:
        return (card["face"], card["bull"]) in self.deck

    def track(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def start(self) -> None:
        try:
            self.server = await asyncio.start_server(
                self._serve,
                self.settings.host,
                self.settings.port,
                limit=self.settings.line_limit,
            )
        except OSError as exc:
            # Not fatal: `cardroom serve all` (and every in-process test stack) runs the
            # gateway beside the other services, which must not fail because the port is
            # taken (another cardroom on this machine); the TCP edge is off, loudly.
            log.error(
                "gateway: cannot listen on %s:%s (%s); the take5 TCP edge is OFF "
                "(set CARDROOM_GATEWAY_PORT, 0 picks a free port)",
                self.settings.host,
                self.settings.port,
                exc,
            )
            return
        log.info(
            "gateway: take5 over TCP on %s:%s, %d players a table",
            self.settings.host,
            self.port,
            self.settings.players,
        )

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        for conn in list(self.connections):
            if conn.seat is not None:
                conn.seat.close_later(close_connection=False)
            await conn.close()
        tasks = list(self._tasks)
        closing = [t for t in tasks if t.get_name().startswith("gateway-close-")]
        await cancel_and_wait(t for t in tasks if t not in closing)
        for task in closing:  # a seat's close, let run to its end (bounded)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 10)
        if self.server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 5)

    # -- one connection -------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Connection(reader, writer, self.settings.write_timeout)
        if len(self.connections) >= self.settings.max_connections:
            # hostile or not, a flood of connections must not exhaust the service
            await conn.send_quietly(
                error_line(
                    LineErrorCode.TOO_MANY_CONNECTIONS,
                    f"the gateway holds {self.settings.max_connections} connections already",
                )
            )
            await conn.close()
            return
        peer = writer.get_extra_info("peername")
        wait = self.admission.admit(str(peer[0]) if isinstance(peer, tuple) else "")
        if wait > 0:
            # each connection is a new player: a script must not mint them without bound
            await conn.send_quietly(
                error_line(
                    LineErrorCode.TOO_MANY_NEW_CONNECTIONS,
                    f"too many new connections from your address; try again in {math.ceil(wait)} s",
                )
            )
            await conn.close()
            return
        self.connections.add(conn)
        task = asyncio.current_task()
        if task is not None:
            self.track(task)
        try:
            await self._read(conn)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.connections.discard(conn)
            await self._lost(conn)

    async def _read(self, conn: Connection) -> None:
        registering = asyncio.get_running_loop().time() + self.settings.register_timeout
        while not conn.closed.is_set():
            try:
                if conn.registered:
                    raw = await _next_line(conn.reader)
                else:  # a connection that never registers must not hold a socket for ever
                    async with asyncio.timeout_at(registering):
                        raw = await _next_line(conn.reader)
            except TimeoutError:
                await conn.send_quietly(
                    error_line(
                        LineErrorCode.REGISTER_TIMEOUT,
                        f"send register_request within {self.settings.register_timeout:g} s",
                    )
                )
                return
            if raw is None:
                await self._refuse(
                    conn,
                    LineErrorCode.LINE_TOO_LONG,
                    f"a line may hold at most {self.settings.line_limit} bytes",
                )
                continue
            if not raw:
                return  # the client closed its side
            if blank(raw):
                continue  # blank lines are not messages
            await self._on_line(conn, raw)

    async def _on_line(self, conn: Connection, raw: bytes) -> None:
        seat = conn.seat
        try:
            incoming = parse(raw)
        except LineError as exc:
            await self._refuse(conn, exc.code, exc.message)
            return
        if incoming.type == REGISTER_REQUEST:
            if conn.registered:
                message = "this connection has registered already"
                await self._refuse(conn, LineErrorCode.OUT_OF_ORDER, message)
                return
            conn.registered = True
            self._register(conn)
            return
        if not conn.registered:
            await conn.send_quietly(
                error_line(LineErrorCode.NOT_REGISTERED, "send register_request first")
            )
            return
        if seat is None:
            await conn.send_quietly(
                error_line(LineErrorCode.OUT_OF_ORDER, "the table has not started yet")
            )
            return
        await seat.respond(incoming)

    async def _refuse(self, conn: Connection, code: LineErrorCode, message: str) -> None:
        """An error line; at a table, the open request again."""
        if conn.seat is not None:
            await conn.seat.refuse(code, message)
        else:
            await conn.send_quietly(error_line(code, message))

    async def _lost(self, conn: Connection) -> None:
        conn.closed.set()
        if conn in self.waiting:
            self.waiting.remove(conn)
        seat = conn.seat
        if seat is not None and not seat.seated:
            return  # the table being set up hands this seat to the house once it is
        # once over, the seat's Client closes after it acknowledged GameOver (after_ack)
        if seat is not None and not seat.over:
            log.info("gateway: %s left table %s; the house plays for it", seat.player, seat.game)
            seat.pending = None
            seat.close_later(close_connection=True)
        else:
            await conn.close()

    # -- tables ---------------------------------------------------------------------------
    def _register(self, conn: Connection) -> None:
        self.waiting.append(conn)
        players = self.settings.players
        while len(self.waiting) >= players:
            group, self.waiting = self.waiting[:players], self.waiting[players:]
            task = asyncio.get_running_loop().create_task(self._open_table(group))
            self.track(task)

    async def _player(self, conn: Connection) -> Client:
        """A new cardroom player for one connection: registered with the lobby like anyone
        (a fresh id and its token, which NATS authorization checks when deployed)."""
        url, root = self.rt.nats_url, self.rt.subjects.root
        name = f"cardroom-gateway-{conn.number}"
        try:
            return await Client.register(url, subject_root=root, timeout=10, name=name)
        except CardroomError as exc:
            if exc.code != ErrorCode.BAD_REQUEST:
                raise
        # a lobby without the register verb: a player id of our own (no authorization)
        player = "gw" + secrets.token_hex(8)
        return await Client.connect(url, player, subject_root=root, timeout=10, name=name)

    async def _open_table(self, group: list[Connection]) -> None:
        seats: list[Seat] = []
        try:
            for conn in group:
                client = await self._player(conn)
                seat = Seat(self, conn, client)
                client.on_notification(seat.on_notification, after_ack=seat.after_ack)
                seats.append(seat)
                conn.seat = seat
            game = await seats[0].client.create(
                GAME_TYPE, self.settings.table_config(), seats=len(group)
            )
            for seat in seats:
                seat.game = game
            for seat in seats[1:]:
                await seat.client.join(game)  # the last join starts the table
        except Exception as exc:
            log.exception("gateway: a table could not be set up")
            message = str(exc) if isinstance(exc, CardroomError) else "cardroom is unavailable"
            for seat in seats:
                seat.close_later(close_connection=False)
            for conn in group:
                await conn.send_quietly(error_line(LineErrorCode.TABLE_FAILED, message))
                await conn.close()
            return
        self.tables += 1
        log.info("gateway: table %s with %s", game, ", ".join(s.player for s in seats))
        # a connection lost while the table was being set up: its seat goes to the house
        for seat in seats:
            seat.seated = True
            if seat.conn.closed.is_set():
                seat.close_later(close_connection=True)
