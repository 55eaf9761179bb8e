"""The table aggregate: what every game needs around its rules.

A table is one event stream. Its first events are the lobby (created, joined, started);
then come the game's own events; the last is ``table.finished`` with the outcome. The table
refuses player commands while the gate is closed (``awaiting_acks``), for unseated players,
before the start and after the end; everything else is the game's business.

Everything here is pure: the gamemaster supplies ``gate_open`` (acks live in the store, not
in events) and an RNG, and persists what comes back.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from cardroom_wire import ErrorCode, check_id

from .game import Command, Event, Game, Message, Outcome, Rejection

TABLE_PREFIX = "table."
CREATED = "table.created"
JOINED = "table.joined"
STARTED = "table.started"
FINISHED = "table.finished"

Status = Literal["lobby", "playing", "finished"]


@dataclass(frozen=True)
class TableState:
    game_id: str
    game_type: str
    config: dict[str, Any]
    creator: str
    max_seats: int
    seats: tuple[str, ...] = ()
    status: Status = "lobby"
    version: int = 0
    game: Any = None
    outcome: dict[str, Any] | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "game_type": self.game_type,
            "status": self.status,
            "seats": list(self.seats),
            "max_seats": self.max_seats,
            "creator": self.creator,
            "version": self.version,
            "config": self.config,
            "outcome": self.outcome,
        }


class Table:
    """The rules of a table around one game. Stateless: every method takes the state."""

    def __init__(self, game: Game[Any]) -> None:
        self.game = game

    # -- lobby ---------------------------------------------------------------------------
    def create(
        self, game_id: str, creator: str, config: Mapping[str, Any], seats: int | None = None
    ) -> list[Event]:
        check_id(game_id, "game id")
        check_id(creator, "player id")
        parsed = self._parse_config(config)
        max_seats = self.game.max_players if seats is None else seats
        if not self.game.min_players <= max_seats <= self.game.max_players:
            raise Rejection(
                ErrorCode.BAD_CONFIG,
                f"{self.game.name} is for {self.game.min_players} to "
                f"{self.game.max_players} players",
            )
        return [
            {
                "type": CREATED,
                "game": game_id,
                "game_type": self.game.name,
                "creator": creator,
                "config": parsed,
                "max_seats": max_seats,
            },
            {"type": JOINED, "player": creator},
        ]

    def join(self, state: TableState, player: str, rng: random.Random) -> list[Event]:
        if state.status != "lobby":
            raise Rejection(ErrorCode.ALREADY_STARTED, "the game has already started")
        if player in state.seats:
            raise Rejection(ErrorCode.ALREADY_SEATED, "you are already seated at this table")
        if len(state.seats) >= state.max_seats:
            raise Rejection(ErrorCode.TABLE_FULL, "the table is full")
        events: list[Event] = [{"type": JOINED, "player": player}]
        if len(state.seats) + 1 == state.max_seats:  # full: start at once
            after = self.evolve(state, events[0])
            events += self._start(after, rng)
        return events

    def start(self, state: TableState, player: str, rng: random.Random) -> list[Event]:
        if state.status != "lobby":
            raise Rejection(ErrorCode.ALREADY_STARTED, "the game has already started")
        if player != state.creator:
            raise Rejection(ErrorCode.NOT_CREATOR, "only the table's creator may start it")
        if len(state.seats) < self.game.min_players:
            raise Rejection(
                ErrorCode.NOT_ENOUGH_PLAYERS,
                f"{self.game.name} needs at least {self.game.min_players} players",
            )
        return self._start(state, rng)

    def _start(self, state: TableState, rng: random.Random) -> list[Event]:
        check = getattr(self.game, "check_start", None)
        if check is not None:  # e.g. take5: enough cards for this many players
            check(self.game.config_model.model_validate(state.config), state.seats)
        started: Event = {"type": STARTED, "seats": list(state.seats)}
        after = self.evolve(state, started)
        return [started, *self._finish_if_over(after, self.game.start(after.game, rng))]

    # -- play ------------------------------------------------------------------------------
    def decide(
        self,
        state: TableState,
        actor: str,
        command: Command,
        rng: random.Random,
        *,
        gate_open: bool,
    ) -> list[Event]:
        if state.status == "lobby":
            raise Rejection(ErrorCode.NOT_STARTED, "the game has not started yet")
        if state.status == "finished":
            raise Rejection(ErrorCode.GAME_FINISHED, "the game is over")
        if actor not in state.seats:
            raise Rejection(ErrorCode.NOT_SEATED, "you are not seated at this table")
        if not gate_open:
            raise Rejection(
                ErrorCode.AWAITING_ACKS,
                "waiting for every player to acknowledge the last update",
            )
        return self._finish_if_over(state, self.game.decide(state.game, actor, command, rng))

    def follow_up(self, state: TableState, rng: random.Random) -> list[Event]:
        """What happens by itself once the gate opens (empty: wait for a player)."""
        if state.status != "playing":
            return []
        return self._finish_if_over(state, self.game.follow_up(state.game, rng))

    def timeout(self, state: TableState, key: str, rng: random.Random) -> list[Event]:
        if state.status != "playing":
            return []
        return self._finish_if_over(state, self.game.on_timeout(state.game, key, rng))

    def _finish_if_over(self, state: TableState, events: list[Event]) -> list[Event]:
        """Append ``table.finished`` once the game's events lead to an outcome."""
        for event in events:
            if str(event.get("type", "")).startswith(TABLE_PREFIX):
                raise ValueError(f"a game may not emit engine event {event['type']!r}")
        after = state
        for event in events:
            after = self.evolve(after, event)
        outcome = self.game.outcome(after.game) if after.status == "playing" else None
        if outcome is not None:
            return [*events, {"type": FINISHED, "outcome": outcome.to_json()}]
        return events

    # -- folding ---------------------------------------------------------------------------
    def evolve(self, state: TableState | None, event: Event) -> TableState:
        kind = event["type"]
        if state is None:
            if kind != CREATED:
                raise ValueError(f"a table starts with {CREATED}, not {kind!r}")
            return TableState(
                game_id=event["game"],
                game_type=event["game_type"],
                config=event["config"],
                creator=event["creator"],
                max_seats=event["max_seats"],
                version=1,
            )
        version = state.version + 1
        if kind == JOINED:
            return replace(state, seats=(*state.seats, event["player"]), version=version)
        if kind == STARTED:
            seats = tuple(event["seats"])
            config = self.game.config_model.model_validate(state.config)
            return replace(
                state,
                seats=seats,
                status="playing",
                game=self.game.setup(config, seats),
                version=version,
            )
        if kind == FINISHED:
            return replace(state, status="finished", outcome=event["outcome"], version=version)
        if kind.startswith(TABLE_PREFIX):
            raise ValueError(f"unknown table event {kind!r}")
        return replace(state, game=self.game.evolve(state.game, event), version=version)

    def replay(self, events: Sequence[Event]) -> TableState:
        state: TableState | None = None
        for event in events:
            state = self.evolve(state, event)
        if state is None:
            raise ValueError("no events")
        return state

    # -- outputs ---------------------------------------------------------------------------
    def notify(self, before: TableState, event: Event, after: TableState) -> dict[str, Message]:
        kind = event["type"]
        if kind in (CREATED, JOINED):
            return {}  # lobby traffic is answered by the lobby replies, it holds no gate
        if kind == STARTED:
            return {
                p: {
                    "type": "GameStarted",
                    "game": after.game_id,
                    "game_type": after.game_type,
                    "seats": list(after.seats),
                    "config": after.config,
                }
                for p in after.seats
            }
        if kind == FINISHED:
            return {p: {"type": "GameOver", "outcome": event["outcome"]} for p in after.seats}
        return self.game.notify(before.game, event, after.game)

    def view(self, state: TableState, player: str | None) -> dict[str, Any]:
        view = state.summary()
        if state.game is not None:
            seated = player if player in state.seats else None
            view["state"] = self.game.view(state.game, seated)
        return view

    def actions(self, state: TableState, player: str) -> list[dict[str, Any]]:
        if state.status != "playing" or player not in state.seats:
            return []
        return self.game.actions(state.game, player)

    def outcome(self, state: TableState) -> Outcome | None:
        if state.outcome is None:
            return None
        return Outcome(
            scores=state.outcome["scores"],
            ranking=state.outcome["ranking"],
            details=state.outcome.get("details", {}),
        )

    def _parse_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        from pydantic import ValidationError

        try:
            model = self.game.config_model.model_validate(dict(config))
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "config"
            raise Rejection(ErrorCode.BAD_CONFIG, f"{loc}: {first['msg']}") from None
        return model.model_dump(mode="json")
