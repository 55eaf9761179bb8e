"""Helpers of the attack tests (test_deploy_attacks.py): players, markers, bots, a flooder.

The attacks run against the real nats-server with the deploy configuration (``secure_nats``)
and the real services in one :class:`~cardroom_runtime.host.Host` (its ``edge.counts`` say what
the service edge refused). A hostile player is a registered player: its token comes from the
lobby, its connection has its own inbox prefix and nothing more.

Run as a script, this module is the flooder of the flood attack (:func:`flood`): a process of
its own, as a hostile client would be, so that its publishing does not take the event loop of
the services it attacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
from cardroom_bots.players import BotPlayer
from cardroom_client import CardroomError, Client
from cardroom_eventstore import RecordedEvent
from cardroom_runtime.host import Host
from cardroom_wire import Subjects
from deploy_support import Player, SecureNats
from nats.aio.client import Client as NatsClient
from sqlalchemy import text

GAME = "highcard"

TESTS = str(Path(__file__).resolve().parents[1])  # the tests folder (``support``)


# -- what was tried, and what came of it -----------------------------------------------------
@dataclass(frozen=True)
class Attempt:
    family: str
    what: str
    outcome: str
    refused: bool


@dataclass
class AttackLog:
    """Every attack tried in the module: printed as it happens (``-s``), counted per family."""

    attempts: list[Attempt] = field(default_factory=list)

    def record(self, family: str, what: str, outcome: str, *, refused: bool) -> Attempt:
        attempt = Attempt(family, what, outcome, refused)
        self.attempts.append(attempt)
        verdict = "refused" if refused else "GOT THROUGH"
        print(f"attack [{family}] {what} -> {outcome} [{verdict}]", flush=True)
        return attempt

    def of(self, family: str) -> list[Attempt]:
        return [a for a in self.attempts if a.family == family]

    def through(self, family: str) -> list[str]:
        """What got through, one line each (empty when every attempt was refused)."""
        return [f"{a.what}: {a.outcome}" for a in self.of(family) if not a.refused]

    def summary(self) -> list[str]:
        families = list(dict.fromkeys(a.family for a in self.attempts))
        lines = []
        for family in families:
            tried = self.of(family)
            through = len(self.through(family))
            lines.append(f"{family}: {len(tried)} tried, {through} got through")
        return lines


# -- waiting on conditions -------------------------------------------------------------------
async def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def wait_until(
    predicate: Callable[[], Awaitable[bool]], what: str, timeout: float = 10.0
) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


# -- replies ---------------------------------------------------------------------------------
def decode(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def code_of(reply: Any) -> str:
    """``ok`` for an accepted request, else the error code of the refusal."""
    if not isinstance(reply, dict):
        return "not a reply"
    if reply.get("ok") is True:
        return "ok"
    error = reply.get("error")
    return str(error.get("code")) if isinstance(error, dict) else "not a reply"


def is_service_reply(data: bytes) -> bool:
    """Every answer of a service (accepted or refused) is a JSON object with ``ok``;
    notifications, public updates, events and the services' own messages have none."""
    payload = decode(data)
    return isinstance(payload, dict) and "ok" in payload


# -- players ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Identity:
    """A registered player: its id and the token the lobby gave it."""

    player: str
    token: str


async def register(secure: SecureNats) -> Identity:
    """A newcomer registers with the lobby, as ``Client.register`` does; only the credentials
    are kept (the tests connect with them as they need)."""
    client = await Client.register(secure.url, subject_root=secure.root, allow_reconnect=False)
    try:
        assert client.token is not None
        return Identity(client.player, client.token)
    finally:
        await client.close()


async def connect_raw(secure: SecureNats, who: Identity, *subscriptions: str) -> Player:
    """``who`` on a bare nats-py connection (its token, its inbox prefix), recording what
    arrives on ``subscriptions`` and every error the server reports."""
    player = await secure.connect(token=who.token, inbox_prefix=secure.subjects.inbox(who.player))
    for subject in subscriptions:
        await player.nc.subscribe(subject, cb=player.on_message)
    await player.nc.flush()
    return player


async def close(*players: Player) -> None:
    """Close the connections a test opened: a subscription left open (a spectator's, say)
    would take its share of every later test's traffic."""
    for player in players:
        with contextlib.suppress(Exception):
            await player.nc.close()


async def ask(player: Player, subject: str, body: dict[str, Any]) -> dict[str, Any]:
    """A request on ``player``'s own connection; the decoded answer."""
    msg = await player.nc.request(subject, json.dumps(body).encode(), timeout=10)
    reply = decode(msg.data)
    assert isinstance(reply, dict), msg.data
    return reply


class CountingClient(Client):
    """The client SDK, counting the acks it sent and every refusal it was answered."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.acks = 0
        self.refused_acks: list[str] = []
        self.refusals: Counter[str] = Counter()

    async def request(
        self, subject: str, payload: dict[str, Any] | bytes, *args: Any, **kwargs: Any
    ) -> dict[str, Any]:
        try:
            return await super().request(subject, payload, *args, **kwargs)
        except CardroomError as exc:
            self.refusals[exc.code] += 1
            raise

    async def ack(self, game: str, version: int, **fields: Any) -> None:
        try:
            await super().ack(game, version, **fields)
        except CardroomError as exc:
            self.refused_acks.append(f"{self.player} {game}@{version}: {exc}")
            raise
        self.acks += 1


async def counting_client(secure: SecureNats) -> CountingClient:
    client = await CountingClient.register(
        secure.url, subject_root=secure.root, allow_reconnect=False
    )
    assert isinstance(client, CountingClient)
    return client


# -- the room: the services and what they stored ----------------------------------------------
@dataclass
class Room:
    """The deploy server, the services' host, and a service-user connection to look with."""

    secure: SecureNats
    host: Host
    service: Player

    @property
    def subjects(self) -> Subjects:
        return self.secure.subjects

    @property
    def services_nc(self) -> NatsClient:
        """The connection the services publish their answers on."""
        connection: NatsClient = self.host.broker.connection
        return connection

    def queued(self) -> int:
        """Requests that reached the services' subscriptions and wait there for the edge to
        look at them (the pending messages of each subscription of the host)."""
        return sum(int(sub.pending_msgs) for sub in self.host._served.subscriptions)

    async def events(self, game: str) -> list[RecordedEvent]:
        return await self.host.store.read_stream(game)

    async def event_count(self) -> int:
        async with self.host.store.engine.connect() as conn:
            return int(await conn.scalar(text("SELECT count(*) FROM events")) or 0)

    async def stream_messages(self) -> int:
        """Messages in the JetStream stream of ``<root>.events.>`` (raises if it is gone)."""
        js = self.service.nc.jetstream(timeout=5)
        info = await js.stream_info(self.subjects.events_stream)
        return int(info.state.messages)

    async def settled_stream(self) -> int:
        """Wait until the relay has copied every stored event into the stream; its count."""
        counts: list[int] = []

        async def caught_up() -> bool:
            counts[:] = [await self.stream_messages()]
            return counts[0] == await self.event_count()

        await wait_until(caught_up, "the relay to copy every event into the stream")
        return counts[0]

    async def markers_reach(self, *receivers: tuple[Player, str]) -> None:
        """Publish a marker to each ``(receiver, subject)`` on the services' own connection
        and wait until each receiver has it: whatever that connection published before (an
        answer sent where it should not go) has reached them by then."""
        payload = f"marker-{secrets.token_hex(6)}".encode()
        for _, subject in receivers:
            await self.services_nc.publish(subject, payload)
        await self.services_nc.flush()
        for receiver, subject in receivers:

            def arrived(r: Player = receiver) -> bool:
                return any(m.data == payload for m in r.received)

            await wait_for(arrived, f"the marker on {subject}")


def is_marker(data: bytes) -> bool:
    return data.startswith(b"marker-")


# -- bot tables --------------------------------------------------------------------------------
@dataclass
class Tables:
    """Tables of bots (highcard), each bot a registered player on its own connection."""

    seated: list[list[BotPlayer]]
    games: list[str] = field(default_factory=list)

    @classmethod
    async def seat(cls, secure: SecureNats, tables: int, seats: int = 2) -> Tables:
        seated = []
        for _ in range(tables):
            seated.append([BotPlayer(await counting_client(secure)) for _ in range(seats)])
        return cls(seated)

    @property
    def bots(self) -> list[BotPlayer]:
        return [bot for table in self.seated for bot in table]

    @property
    def clients(self) -> list[CountingClient]:
        clients = []
        for bot in self.bots:
            assert isinstance(bot.client, CountingClient)
            clients.append(bot.client)
        return clients

    async def create(self, config: dict[str, Any]) -> list[str]:
        """A new game at every table (its first bot creates it); returns their ids."""
        self.games = []
        for table in self.seated:
            game = await table[0].client.create(GAME, config, seats=len(table))
            for bot in table:
                bot.watch(game, GAME)
            self.games.append(game)
        return self.games

    async def play(self, timeout: float = 60.0) -> None:
        """The others join (a full table starts at once); wait until every game is over."""
        await asyncio.gather(
            *(bot.client.join(game) for table, game in self.live() for bot in table[1:])
        )
        await self.finished(timeout)

    async def finished(self, timeout: float = 60.0) -> None:
        async with asyncio.timeout(timeout):
            await asyncio.gather(
                *(bot.finished[game].wait() for table, game in self.live() for bot in table)
            )

    def live(self) -> list[tuple[list[BotPlayer], str]]:
        """The tables that have a game (all of them once :meth:`create` has returned)."""
        return list(zip(self.seated, self.games, strict=False))

    def done(self) -> bool:
        live = self.live()
        return len(live) == len(self.seated) and all(
            bot.finished[game].is_set() for table, game in live for bot in table
        )

    def acks(self) -> int:
        return sum(c.acks for c in self.clients)

    def refused_acks(self) -> list[str]:
        return [line for c in self.clients for line in c.refused_acks]

    async def close(self) -> None:
        await asyncio.gather(*(bot.close() for bot in self.bots), return_exceptions=True)


async def finished_normally(room: Room, tables: Tables) -> list[str]:
    """What is wrong with how the tables' games ended (empty: each ended with its outcome,
    nobody was marked away, both bots of a table saw the same outcome)."""
    problems = []
    for table, game in tables.live():
        events = await room.events(game)
        types = [e.type for e in events]
        if not types or types[-1] != "table.finished":
            problems.append(f"{game}: did not finish ({types[-3:]})")
        if "table.away" in types:
            problems.append(f"{game}: a player was marked away")
        outcomes = [bot.outcomes.get(game) for bot in table]
        if any(o != outcomes[0] for o in outcomes) or outcomes[0] is None:
            problems.append(f"{game}: the bots saw different outcomes {outcomes}")
    return problems


# -- a bare NATS protocol connection, to see each of the server's answers ----------------------
class RawNats:
    """Just enough of the NATS client protocol over TCP to see every ``-ERR`` the server sends
    and every message it delivers, in order (nats-py closes the connection on most errors)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, url: str, options: dict[str, Any]) -> tuple[RawNats, str]:
        """Connect and send CONNECT with ``options``; the server's answer (``PONG`` when
        admitted)."""
        host, port = url.removeprefix("nats://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        raw = cls(reader, writer)
        assert (await raw.line()).startswith("INFO "), "no INFO from the server"
        connect = {"verbose": False, "pedantic": False, "protocol": 1, **options}
        raw.send(f"CONNECT {json.dumps(connect)}\r\nPING\r\n")
        return raw, await raw.line()

    def send(self, data: str | bytes) -> None:
        self.writer.write(data if isinstance(data, bytes) else data.encode())

    async def line(self) -> str:
        raw = await asyncio.wait_for(self.reader.readline(), 10)
        if not raw:
            raise ConnectionError("the server closed the connection")
        return raw.decode().rstrip("\r\n")

    async def until(
        self, done: Callable[[str, list[tuple[str, bytes]]], bool]
    ) -> tuple[list[str], list[tuple[str, bytes]]]:
        """Read what the server sends until ``done(line, messages)``: the ``-ERR`` lines and
        the messages (subject, payload) seen on the way."""
        errors: list[str] = []
        messages: list[tuple[str, bytes]] = []
        while True:
            line = await self.line()
            if line.startswith("-ERR"):
                errors.append(line)
            elif line.startswith("MSG "):
                parts = line.split()
                payload = await asyncio.wait_for(self.reader.readexactly(int(parts[-1]) + 2), 10)
                messages.append((parts[1], payload[:-2]))
            elif line == "PING":
                self.send("PONG\r\n")
            if done(line, messages):
                return errors, messages

    async def round_trip(self) -> tuple[list[str], list[tuple[str, bytes]]]:
        """PING, and everything the server sent before its PONG."""
        self.send("PING\r\n")
        await self.writer.drain()
        return await self.until(lambda line, _: line == "PONG")

    def close(self) -> None:
        self.writer.close()


# -- the flooder -------------------------------------------------------------------------------
@dataclass
class Flood:
    """The flooder process (this module run as a script) and how to steer it: connected, it
    waits for the games to flood on its standard input, floods them, and stops at the end of
    its input (or at its bounds, or when thrown out), printing what it sent and the answers it
    got."""

    proc: asyncio.subprocess.Process

    @classmethod
    async def start(cls, settings: dict[str, Any]) -> Flood:
        # the script imports this folder's modules and, through them, the tests' ``support``
        path = os.pathsep.join(p for p in (TESTS, os.environ.get("PYTHONPATH")) if p)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            json.dumps(settings),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": path},
        )
        flood = cls(proc)
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
        except BaseException:
            await flood.kill()
            raise
        if line != b"ready\n":
            await flood.kill()
            assert proc.stderr is not None
            error = (await proc.stderr.read())[-2000:].decode(errors="replace")
            raise AssertionError(f"the flooder did not start: {line!r}\n{error}")
        return flood

    async def target(self, games: Sequence[str]) -> None:
        """Flood ``games`` (from now on, if it was flooding others)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(("games " + " ".join(games) + "\n").encode())
            await self.proc.stdin.drain()
        except ConnectionError:
            raise AssertionError(f"the flooder is gone: {await self.failure()}") from None

    async def failure(self) -> str:
        """Why the flooder ended (its exit status and the end of its error output)."""
        assert self.proc.stderr is not None
        err = await asyncio.wait_for(self.proc.stderr.read(), 30)
        await self.proc.wait()
        return f"exit status {self.proc.returncode}: {err.decode(errors='replace')[-2000:]}"

    async def stop(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        out, err = await asyncio.wait_for(self.proc.communicate(), 60)
        if self.proc.returncode != 0:
            raise AssertionError(f"the flooder failed: {err.decode(errors='replace')[-2000:]}")
        result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
        return result

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


async def _quiet(_exc: Exception) -> None:
    """The flooder expects nothing of the server but answers."""


async def _refused_again(settings: dict[str, Any], inbox: str) -> bool:
    """Whether the server now refuses the player's connection (the guard's ban)."""
    try:
        nc = await nats.connect(
            settings["url"],
            token=settings["token"],
            inbox_prefix=inbox,
            allow_reconnect=False,
            connect_timeout=2,
            error_cb=_quiet,
        )
    except Exception:
        return True
    await nc.close()
    return False


async def flood(settings: dict[str, Any]) -> dict[str, Any]:
    """Publish the player's acks, commands, lobby requests and syncs as fast as the connection
    takes them, each with a reply address of its own inbox, until told to stop or a bound is
    reached; count the answers by code."""
    s = Subjects(settings["root"])
    me = settings["player"]
    inbox = s.inbox(me)
    nc = await nats.connect(
        settings["url"],
        token=settings["token"],
        inbox_prefix=inbox,
        allow_reconnect=False,
        error_cb=_quiet,
    )
    kinds = ("ack", "cmd", "lobby list", "lobby get", "sync")
    answers: dict[str, Counter[str]] = {kind: Counter() for kind in kinds}

    async def on_reply(msg: Any) -> None:
        kind = kinds[int(msg.subject.split(".")[-2])]  # <inbox>.flood.<kind>.<n>
        answers[kind][code_of(decode(msg.data))] += 1

    await nc.subscribe(f"{inbox}.flood.>", cb=on_reply)
    games: list[str] = []
    targeted = asyncio.Event()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def steer() -> None:
        while line := await reader.readline():
            words = line.decode().split()
            if words[:1] == ["games"] and len(words) > 1:
                games[:] = words[1:]
                targeted.set()
        stop.set()
        targeted.set()

    steering = asyncio.create_task(steer())
    ack = json.dumps({"type": "ack", "version": 1}).encode()
    sync = json.dumps({"type": "sync"}).encode()
    sent = 0
    print("ready", flush=True)
    await targeted.wait()
    started = time.monotonic()
    deadline = started + float(settings["seconds"])
    kicked = False
    while not stop.is_set() and sent < settings["count"] and time.monotonic() < deadline:
        if not nc.is_connected:  # thrown out by the server
            kicked = True
            break
        game = games[sent % len(games)]
        bet = json.dumps({"type": "bet", "amount": 1, "id": f"c{sent}"}).encode()
        requests = (
            s.ack(game, me),
            s.cmd(game, me),
            s.lobby("list", me),
            s.lobby("get", me),
            s.sync(game, me),
        )
        bodies = (ack, bet, b"{}", json.dumps({"game": game}).encode(), sync)
        try:
            for number, (subject, body) in enumerate(zip(requests, bodies, strict=True)):
                await nc.publish(subject, body, reply=f"{inbox}.flood.{number}.{sent}")
                sent += 1
        except (nats.errors.ConnectionClosedError, OSError):
            kicked = True
            break
        await asyncio.sleep(0)  # a turn for the steering task and the answers
    seconds = time.monotonic() - started
    if kicked or not nc.is_connected:
        steering.cancel()
        return {
            "sent": sent,
            "seconds": round(seconds, 3),
            "kicked": True,
            "refused_after": await _refused_again(settings, inbox),
            "answers": {kind: dict(codes) for kind, codes in answers.items()},
        }
    await nc.flush(timeout=30)
    # one request more: the edge answers a route's requests in order, so the refusals it sent
    # before this answer on the lobby route have come by then
    with contextlib.suppress(Exception):
        last = await nc.request(s.lobby("list", me), b"{}", timeout=2)
        answers["lobby list"][code_of(decode(last.data))] += 1
    await nc.close()
    steering.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await steering
    return {
        "sent": sent,
        "seconds": round(seconds, 3),
        "kicked": False,
        "answers": {kind: dict(codes) for kind, codes in answers.items()},
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(flood(json.loads(sys.argv[1])))), flush=True)
