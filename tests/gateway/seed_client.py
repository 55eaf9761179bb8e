"""A take5 client written only from the take5 line protocol: asyncio streams and json.

No cardroom import on purpose: this is what an outside client, knowing nothing but the
protocol's grammar, sees. Framing: one JSON value per line each way (the gateway's transport).

:class:`SeedClient` is the raw connection (send, receive, with timeouts); :class:`SeedPlayer`
plays whole games and checks every line it receives against the protocol's grammar and order
(:class:`GrammarChecker`), raising :class:`ProtocolViolation` on the first deviation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

STACK_IDS = ("A", "B", "C", "D")
REQUEST_TYPES = ("play_request", "choose_request")
CONFG_KEYS = {"turn_count", "stack_size", "win_score", "deck_size", "bull_range"}


class ProtocolViolation(AssertionError):
    """The server sent something the protocol's grammar does not allow here."""


class ConnectionClosed(Exception):
    """The server closed the connection."""


class SeedClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.received: list[dict[str, Any]] = []

    @classmethod
    async def connect(cls, host: str, port: int) -> SeedClient:
        reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
        return cls(reader, writer)

    async def send(self, message: Any) -> None:
        await self.send_raw(json.dumps(message).encode() + b"\n")

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def recv(self, timeout: float = 30.0) -> dict[str, Any]:
        """The next line as a JSON object (every seed message is one)."""
        async with asyncio.timeout(timeout):
            raw = await self.reader.readline()
        if not raw:
            raise ConnectionClosed("the server closed the connection")
        if not raw.endswith(b"\n"):
            raise ProtocolViolation(f"a line without its newline: {raw!r}")
        message = json.loads(raw)
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise ProtocolViolation(f"not a message: {raw!r}")
        self.received.append(message)
        return message

    async def recv_type(self, kind: str, timeout: float = 30.0) -> dict[str, Any]:
        message = await self.recv(timeout)
        if message["type"] != kind:
            raise ProtocolViolation(f"expected {kind}, got {message}")
        return message

    async def rest(self, timeout: float = 30.0) -> bytes:
        """Everything the server sends until it closes the connection."""
        async with asyncio.timeout(timeout):
            return await self.reader.read()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
            await self.writer.wait_closed()

    def abort(self) -> None:
        """Drop the connection abruptly (RST, nothing said)."""
        transport = self.writer.transport
        transport.abort()


# -- the grammar ---------------------------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_card(card: Any, config: dict[str, Any]) -> None:
    if not isinstance(card, dict) or set(card) != {"face", "bull"}:
        raise ProtocolViolation(f"not a CARD: {card!r}")
    if not (_number(card["face"]) and _number(card["bull"])):
        raise ProtocolViolation(f"not a CARD: {card!r}")
    low, high = config["bull_range"]
    if not (1 <= card["face"] <= config["deck_size"] and low <= card["bull"] <= high):
        raise ProtocolViolation(f"a CARD outside the configuration: {card!r}")


def check_board(board: Any, config: dict[str, Any]) -> None:
    if not isinstance(board, dict) or set(board) != set(STACK_IDS):
        raise ProtocolViolation(f"not a BOARD: {board!r}")
    for stack in board.values():
        if not isinstance(stack, list) or not 1 <= len(stack) <= config["stack_size"]:
            raise ProtocolViolation(f"not a STACK of at most stack_size cards: {stack!r}")
        for card in stack:
            check_card(card, config)


@dataclass
class GrammarChecker:
    """Follows the protocol's loop, line by line, for one player: register; per round a deal,
    then per turn play_request, played and the takens; finally game_over."""

    players: int
    me: int | None = None
    config: dict[str, Any] | None = None
    state: str = "register"  # register, dealt, requested, played, choosing, over
    turns: int = 0  # turns played in this round
    rounds: int = 0
    scores: dict[int, int] = field(default_factory=dict)
    chooser_pending: bool = False
    last_request: dict[str, Any] | None = None
    after_error: bool = False

    def feed(self, message: dict[str, Any]) -> None:
        kind, data = message["type"], message.get("data")
        if set(message) != {"type", "data"}:
            raise ProtocolViolation(f"a message is {{type, data}}: {message}")
        if kind == "error":
            # the gateway's addition, outside the game's order; the open request follows it
            self.after_error = True
            return
        if self.after_error and kind in REQUEST_TYPES and message == self.last_request:
            self.after_error = False
            return  # the request again, after an error
        self.after_error = False
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            raise ProtocolViolation(f"unknown message type {kind!r}")
        handler(data)
        if kind in REQUEST_TYPES:
            self.last_request = message

    def _expect(self, *states: str, kind: str) -> None:
        if self.state not in states:
            raise ProtocolViolation(f"{kind} in state {self.state}")

    def _on_register_response(self, data: Any) -> None:
        self._expect("register", kind="register_response")
        if not isinstance(data, dict) or set(data) != {"id", "player_count", "confg"}:
            raise ProtocolViolation(f"register_response data: {data!r}")
        if data["player_count"] != self.players or not _number(data["id"]):
            raise ProtocolViolation(f"register_response data: {data!r}")
        confg = data["confg"]
        if not isinstance(confg, dict) or set(confg) != CONFG_KEYS:
            raise ProtocolViolation(f"confg: {confg!r}")
        if not (isinstance(confg["bull_range"], list) and len(confg["bull_range"]) == 2):
            raise ProtocolViolation(f"confg.bull_range: {confg!r}")
        self.me, self.config, self.state = data["id"], confg, "dealt-wait"

    def _on_deal(self, data: Any) -> None:
        self._expect("dealt-wait", "played", kind="deal")
        if self.state == "played" and self.turns != self.config_value("turn_count"):
            raise ProtocolViolation("deal before the round's last turn")
        if not isinstance(data, list) or len(data) != self.config_value("turn_count"):
            raise ProtocolViolation(f"deal of {len(data) if isinstance(data, list) else data}")
        for card in data:
            check_card(card, self.config or {})
        self.rounds += 1
        self.turns = 0
        self.state = "dealt"

    def _on_play_request(self, data: Any) -> None:
        self._expect("dealt", "played", kind="play_request")
        if self.state == "played" and self.turns >= self.config_value("turn_count"):
            raise ProtocolViolation("a play_request after the round's last turn")
        check_board(data, self.config or {})
        self.state = "requested"

    def _on_played(self, data: Any) -> None:
        self._expect("requested", kind="played")
        if not isinstance(data, list) or len(data) != self.players:
            raise ProtocolViolation(f"played: {data!r}")
        ids = set()
        for entry in data:
            if not isinstance(entry, dict) or set(entry) != {"id", "card"}:
                raise ProtocolViolation(f"played entry: {entry!r}")
            check_card(entry["card"], self.config or {})
            ids.add(entry["id"])
        if ids != set(range(self.players)):
            raise ProtocolViolation(f"played: not one card per player: {data!r}")
        faces = [entry["card"]["face"] for entry in data]
        if faces != sorted(faces):
            raise ProtocolViolation(f"played: not in ascending face order: {faces}")
        self.turns += 1
        self.state = "played"

    def _on_choose_request(self, data: Any) -> None:
        self._expect("played", kind="choose_request")
        if self.chooser_pending:
            raise ProtocolViolation("a second choose_request before taken")
        check_board(data, self.config or {})
        self.chooser_pending = True

    def _on_taken(self, data: Any) -> None:
        self._expect("played", kind="taken")
        if not isinstance(data, dict) or set(data) != {"id", "stack"}:
            raise ProtocolViolation(f"taken: {data!r}")
        if not isinstance(data["stack"], list) or not data["stack"]:
            raise ProtocolViolation(f"taken: {data!r}")
        for card in data["stack"]:
            check_card(card, self.config or {})
        if self.chooser_pending and data["id"] != self.me:
            raise ProtocolViolation("taken by someone else while I was choosing")
        self.chooser_pending = False
        self.scores[data["id"]] = self.scores.get(data["id"], 0) + sum(
            card["bull"] for card in data["stack"]
        )

    def _on_game_over(self, data: Any) -> None:
        self._expect("played", kind="game_over")
        if self.turns != self.config_value("turn_count"):
            raise ProtocolViolation("game_over before the round's last turn")
        if not isinstance(data, list) or len(data) != self.players:
            raise ProtocolViolation(f"game_over: {data!r}")
        for entry in data:
            if not isinstance(entry, dict) or set(entry) != {"player", "score"}:
                raise ProtocolViolation(f"game_over entry: {entry!r}")
        final = {entry["player"]: entry["score"] for entry in data}
        if set(final) != set(range(self.players)):
            raise ProtocolViolation(f"game_over: not one score per player: {data!r}")
        taken = {player: self.scores.get(player, 0) for player in final}
        if final != taken:
            raise ProtocolViolation(f"game_over {final} differs from the taken stacks {taken}")
        # the protocol's loop: it ends when someone reached win_score and nobody ties the lowest
        low = sorted(final.values())
        if max(low) < self.config_value("win_score") or low[0] == low[1]:
            raise ProtocolViolation(f"game_over although the game goes on: {final}")
        self.state = "over"

    def config_value(self, key: str) -> int:
        if self.config is None:
            raise ProtocolViolation(f"{key} needed before register_response")
        return int(self.config[key])


# -- a player ------------------------------------------------------------------------------


def row_cost(stack: list[dict[str, Any]]) -> int:
    return sum(card["bull"] for card in stack)


@dataclass
class SeedPlayer:
    """Plays whole games from the protocol's lines: the lowest card; the cheapest row."""

    client: SeedClient
    players: int
    silent_requests: int = 0
    """How many play/choose requests to leave unanswered at first (the house plays)."""
    checker: GrammarChecker = field(init=False)
    hand: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    house_played: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    my_play: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.checker = GrammarChecker(self.players)

    @property
    def me(self) -> int | None:
        return self.checker.me

    async def register(self) -> None:
        await self.client.send({"type": "register_request", "data": None})

    async def next(self, timeout: float = 30.0) -> dict[str, Any]:
        """The next line, checked against the grammar but not acted upon."""
        message = await self.client.recv(timeout)
        self.checker.feed(message)
        return message

    async def next_of(self, kind: str, timeout: float = 30.0) -> dict[str, Any]:
        """Act on every line until one of type ``kind``, which is returned, not acted upon."""
        while True:
            message = await self.next(timeout)
            if message["type"] == kind:
                return message
            if await self.handle(message) is not None:
                raise ProtocolViolation(f"the game ended before a {kind}")

    async def play(self, timeout: float = 90.0) -> list[dict[str, Any]]:
        """Play until game_over; returns its data."""
        async with asyncio.timeout(timeout):
            while True:
                result = await self.handle(await self.next(timeout))
                if result is not None:
                    return result

    async def handle(self, message: dict[str, Any]) -> list[dict[str, Any]] | None:
        kind, data = message["type"], message["data"]
        if kind == "error":
            self.errors.append(data)
        elif kind == "deal":
            self.hand = sorted(data, key=lambda card: card["face"])
        elif kind == "play_request":
            self.requests += 1
            self.my_play = None
            if self.requests > self.silent_requests:
                card = self.hand[0]
                self.my_play = card
                await self._answer({"type": "play_response", "data": card})
        elif kind == "played":
            for entry in data:
                if entry["id"] == self.me:
                    if entry["card"] not in self.hand:
                        raise ProtocolViolation(f"played a card I never held: {entry}")
                    if entry["card"] != self.my_play:
                        self.house_played.append(entry["card"])
                    self.hand.remove(entry["card"])
        elif kind == "choose_request":
            self.requests += 1
            if self.requests > self.silent_requests:
                best = min(STACK_IDS, key=lambda name: (row_cost(data[name]), name))
                await self._answer({"type": "choose_response", "data": best})
        elif kind == "game_over":
            return list(data)
        return None

    async def _answer(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        await self.client.send(message)
