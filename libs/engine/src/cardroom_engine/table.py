"""The table aggregate: what every game needs around its rules.

A table is one event stream. Its first events are the lobby (created, joined, started);
then come the game's own events; the last is ``table.finished`` with the outcome. The table
refuses player commands while the gate is closed (``awaiting_acks``), for unseated players,
before the start and after the end; everything else is the game's business.

Around the game the table also keeps time and presence:

- table options (:class:`TableOptions`, ``config["table"]`` at create): ``ack_timeout``, the
  seconds an addressee has to acknowledge before it is marked away (always finite), and
  ``turn_timeout``, the seconds after which the house plays for every player who must act
  (off by default);
- ``table.away`` / ``table.back`` mark a player away and back; every other seat is told
  (``PlayerAway`` / ``PlayerBack``). While a player is away the house bot plays for them
  (:meth:`Table.house_moves`, the game's ``house_action``);
- seat keys: a create or join may name the Ed25519 verify key the player binds to its seat
  (``key`` in its ``table.joined`` event, fixed for the game: a seated player cannot join
  again, no two seats share a key); a game that declares ``seat_keys`` refuses a seat without
  one (``key_required``). The game's rules get them once, when the game is set up
  (``bind_keys``), and every client in the summary (``keys``);
- :meth:`Table.deadlines` names what happens by itself and when: the game's own deadline
  (``game:<key>``) and the turn timeout (``turn:<version>``); :meth:`Table.fire` is what
  happens when one of them is due.

Everything here is pure: the gamemaster supplies ``gate_open`` (acks live in the store, not
in events) and an RNG, and persists what comes back; the timers service keeps the clock.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from cardroom_wire import ErrorCode, check_id, check_seat_key
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .game import NEW_TABLE, Command, Event, Game, Message, Outcome, Rejection, rejection_of
from .kit import folds_of, interned, interned_as

TABLE_PREFIX = "table."
CREATED = "table.created"
JOINED = "table.joined"
STARTED = "table.started"
FINISHED = "table.finished"
AWAY = "table.away"
BACK = "table.back"
PRESENCE = frozenset({AWAY, BACK})

OPTIONS_KEY = "table"
"""The key of a create request's ``config`` that holds the :class:`TableOptions`."""

GAME_DEADLINE = "game:"
TURN_DEADLINE = "turn:"

Status = Literal["lobby", "playing", "finished"]


ACK_TIMEOUT_MIN = 1.0
ACK_TIMEOUT_MAX = 3600.0
TURN_TIMEOUT_MIN = 0.1
TURN_TIMEOUT_MAX = 86_400.0


class TableOptions(BaseModel):
    """Options every table has, whatever its game (``config["table"]`` at create).

    The ack timeout is always finite: a table whose players all stop acknowledging still
    marks them away, the house plays their seats, and the game ends. Less than a second is
    refused (deadlines fire within about a second, and a player's own round trip takes some
    of it); an hour is plenty for a player to come back. A turn timeout may be short (tests
    and bot tables play fast) and as long as a day.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    ack_timeout: float = Field(
        30.0,
        ge=ACK_TIMEOUT_MIN,
        le=ACK_TIMEOUT_MAX,
        strict=True,
        allow_inf_nan=False,
        description="seconds an addressee has to acknowledge before it is marked away",
    )
    turn_timeout: float | None = Field(
        None,
        ge=TURN_TIMEOUT_MIN,
        le=TURN_TIMEOUT_MAX,
        strict=True,
        allow_inf_nan=False,
        description="seconds without a move after which the house plays for every player "
        "who must act (null: never)",
    )

    @field_validator("ack_timeout", mode="before")
    @classmethod
    def _no_never(cls, value: object) -> object:
        if value is None:
            raise ValueError(
                f"a number of seconds from {ACK_TIMEOUT_MIN:g} to {ACK_TIMEOUT_MAX:g} is "
                "required (there is no 'never')"
            )
        return value

    @classmethod
    def stored(cls, raw: Any) -> TableOptions:
        """The options a ``table.created`` event recorded. Folding must never fail on the
        log, and an event written under wider bounds may hold ``null`` (no ack timeout) or
        a value outside today's: each is brought to the nearest bound (``null``: the longest
        ack timeout), so that every table ends by its timeouts."""
        data = raw if isinstance(raw, Mapping) else {}
        ack = _seconds(data.get("ack_timeout", 30.0), ACK_TIMEOUT_MIN, ACK_TIMEOUT_MAX)
        turn = data.get("turn_timeout")
        options = cls.model_construct(
            ack_timeout=ACK_TIMEOUT_MAX if ack is None else ack,
            turn_timeout=_seconds(turn, TURN_TIMEOUT_MIN, TURN_TIMEOUT_MAX),
        )
        # one object for equal options, across tables (they are frozen; a model costs a
        # table about half a KiB, and most tables share a few options)
        return interned(_OPTIONS, options, kept=256)


_OPTIONS: dict[TableOptions, TableOptions] = {}


def _seconds(value: object, low: float, high: float) -> float | None:
    """``value`` within ``[low, high]`` if it is a number of seconds (NaN: ``high``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return high if value != value else min(max(float(value), low), high)


@dataclass(frozen=True)
class TableDeadline:
    """Something that happens by itself ``seconds`` after the event of version ``since``.

    ``key`` names it (``game:<the game's key>`` or ``turn:<version>``); a deadline whose key
    is still wanted after a later event keeps its first due time (so a reaction window does
    not grow with every pass). ``since`` is always an event every seat was told of (the
    table's ``moved_at``): were it one told to some seats only, the moment the deadline
    fires would tell the others when that event happened.
    """

    key: str
    seconds: float
    since: int


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
    options: TableOptions = field(default_factory=TableOptions)
    away: tuple[str, ...] = ()
    moved_at: int = 0  # the last event neither a presence change nor told to some seats only
    keys: Mapping[str, str] = field(default_factory=dict)
    """The verify keys the seats joined with (``{player: key}``; a seat that named none, as
    every seat of a table older than keys, is absent)."""
    private: int = 0
    """How many events so far were for some seats only (the game's ``audience``)."""
    hidden: Mapping[str, int] = field(default_factory=dict)
    """Per seat, how many of those it was not told of: they do not count in the versions
    it sees (:meth:`seen`), so that it cannot count them."""

    def seen(self, player: str | None, version: int | None = None) -> int:
        """The version ``player`` sees: the events it was not told of left out (a spectator,
        or anyone not seated, sees the version of the public events only). Every number a
        player is shown (its notifications' and views' ``version``, the version a command
        answers) is this one, and a player acknowledges a notification by it.

        ``version``: the one seen at that later version, when no event between changed the
        seats or was for some seats only (a fold that skips its game's ``evolve`` for a run
        of events still knows the versions they are acknowledged by)."""
        at = self.version if version is None else version
        if player is not None and player in self.seats:
            return at - self.hidden.get(player, 0)
        return at - self.private

    def left_out(self, before: TableState) -> bool:
        """Whether the one event from ``before`` to this state was told to some seats only,
        leaving a seat out (which then does not count it, :meth:`seen`).

        Such an event's acknowledgements hold no gate (the store's ``NewEvent.holds``): a seat
        left out would otherwise see the game held by what it was not told, its own commands
        refused ``awaiting_acks`` until the others acknowledged (in papas: that somebody
        passed). They are owed all the same: resent, listed by a sync, and timed with the
        next gate that holds (timed by themselves, a silent seat's away mark would date
        them), unless the game waits for their addressee (a prompt to the player whose turn
        it is: no gate comes while it is silent)."""
        return any(self.hidden.get(p, 0) > before.hidden.get(p, 0) for p in self.seats)

    def summary(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "game_type": self.game_type,
            "status": self.status,
            "seats": list(self.seats),
            "max_seats": self.max_seats,
            "creator": self.creator,
            "version": self.version - self.private,
            "config": self.config,
            "options": self.options.model_dump(mode="json"),
            "away": list(self.away),
            "outcome": self.outcome,
            "keys": dict(self.keys),
        }


def _joined(player: str, key: str | None) -> Event:
    """A ``table.joined`` event; ``key`` only when the player named one (so the events of a
    join without a key are exactly what they were before keys existed)."""
    if key is None:
        return {"type": JOINED, "player": player}
    return {"type": JOINED, "player": player, "key": key}


def _moved(state: TableState, game: Any, version: int) -> TableState:
    """``replace(state, game=game, version=version, moved_at=version)`` without its cost
    (``replace`` runs ``__init__`` over every field: most of folding a cheap event)."""
    fields = state.__dict__.copy()  # a copy clones the key table: cheaper than an update
    fields["game"] = game
    fields["version"] = fields["moved_at"] = version
    new = object.__new__(TableState)
    object.__setattr__(new, "__dict__", fields)  # frozen: past its __setattr__, once
    return new


class Table:
    """The rules of a table around one game. Stateless: every method takes the state."""

    def __init__(self, game: Game[Any]) -> None:
        self.game = game
        # event types the game may address to some seats only (see GameRules.audience):
        # their non-addressees do not see the version move
        self.private_events: frozenset[str] = frozenset(game.private_events)
        # the game's own folds that evolve_many may call directly (those evolve calls alone):
        # empty for a game whose evolve is not a kit Folds' (it wraps it, or has none)
        self._direct: dict[str, Callable[[Any, Event], Any]] = {
            kind: fold
            for kind, fold in (folds_of(game.evolve) or {}).items()
            if kind not in self.private_events and not kind.startswith(TABLE_PREFIX)
        }

    # -- lobby ---------------------------------------------------------------------------
    def create(
        self,
        game_id: str,
        creator: str,
        config: Mapping[str, Any],
        seats: int | None = None,
        *,
        key: str | None = None,
    ) -> list[Event]:
        """``key``: the verify key the creator binds to its seat (see :meth:`join`)."""
        check_id(game_id, "game id")
        check_id(creator, "player id")
        if not isinstance(config, Mapping):
            raise Rejection(ErrorCode.BAD_CONFIG, "config: must be an object")
        game_config = dict(config)
        options = self._parse_options(game_config.pop(OPTIONS_KEY, None))
        parsed = self._parse_config(game_config)
        max_seats = self.game.max_players if seats is None else seats
        if type(max_seats) is not int or not (
            self.game.min_players <= max_seats <= self.game.max_players
        ):
            raise Rejection(
                ErrorCode.BAD_CONFIG,
                f"{self.game.name} is for {self.game.min_players} to "
                f"{self.game.max_players} players",
            )
        self._check_key(key, taken=())
        return [
            {
                "type": CREATED,
                "game": game_id,
                "game_type": self.game.name,
                "creator": creator,
                "config": parsed,
                "max_seats": max_seats,
                "options": options.model_dump(mode="json"),
            },
            _joined(creator, key),
        ]

    def join(
        self, state: TableState, player: str, rng: random.Random, *, key: str | None = None
    ) -> list[Event]:
        """Seat ``player`` (the asker: services take it from the request's subject).
        ``key``, the Ed25519 verify key it binds to its seat, is recorded in the event and
        fixed for the game: a seated player's second join is refused ``already_seated``
        whatever key it names, and a key another seat holds is refused. A game that declares
        ``seat_keys`` refuses a join without one (``key_required``)."""
        # seated first: a join retried after a lost answer (that filled and started the
        # table) must read "you are seated", not "too late"
        if player in state.seats:
            raise Rejection(ErrorCode.ALREADY_SEATED, "you are already seated at this table")
        if state.status != "lobby":
            raise Rejection(ErrorCode.ALREADY_STARTED, "the game has already started")
        if len(state.seats) >= state.max_seats:
            raise Rejection(ErrorCode.TABLE_FULL, "the table is full")
        self._check_key(key, taken=state.keys.values())
        events: list[Event] = [_joined(player, key)]
        if len(state.seats) + 1 == state.max_seats:  # full: start at once
            after = self.evolve(state, events[0])
            events += self._start(after, rng)
        return events

    def _check_key(self, key: str | None, *, taken: Iterable[str]) -> None:
        if key is None:
            if self.game.seat_keys:
                raise Rejection(
                    ErrorCode.KEY_REQUIRED,
                    f"{self.game.name} binds every seat to its player's verify key: "
                    "join with a key",
                )
            return
        try:
            check_seat_key(key)
        except ValueError as exc:
            raise Rejection(ErrorCode.BAD_REQUEST, str(exc)) from None
        if key in taken:
            raise Rejection(ErrorCode.BAD_REQUEST, "key: another seat of this table holds it")

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
        # e.g. take5: enough cards for this many players
        self.game.check_start(self.game.config_model.model_validate(state.config), state.seats)
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
        """The game's own deadline ``key`` (as the game named it) is due."""
        if state.status != "playing":
            return []
        return self._finish_if_over(state, self.game.on_timeout(state.game, key, rng))

    # -- time ------------------------------------------------------------------------------
    def deadlines(self, state: TableState) -> list[TableDeadline]:
        """What happens by itself in this state, and when (see :class:`TableDeadline`)."""
        if state.status != "playing":
            return []
        found: list[TableDeadline] = []
        own = self.game.deadline(state.game)
        if own is not None:
            # from the last event that moved the game and every seat was told of (it is first
            # written a moment later, at whatever version then): a deadline a private event
            # began counts from the public one before it, and ends that much sooner
            found.append(TableDeadline(GAME_DEADLINE + own.key, own.seconds, state.moved_at))
        turn = state.options.turn_timeout
        if turn is not None and self.movers(state):
            found.append(TableDeadline(f"{TURN_DEADLINE}{state.moved_at}", turn, state.moved_at))
        return found

    def fire(
        self, state: TableState, key: str, rng: random.Random
    ) -> list[tuple[str | None, list[Event]]]:
        """The deadline ``key`` is due: what happens, as ``(house player or None, events)``.

        Empty when the key is not one of :meth:`deadlines` any more (the state moved on).
        ``game:`` keys run the game's ``on_timeout``; ``turn:`` keys let the house play for
        every player who must act.
        """
        if key not in {d.key for d in self.deadlines(state)}:
            return []
        if key.startswith(GAME_DEADLINE):
            events = self.timeout(state, key.removeprefix(GAME_DEADLINE), rng)
            return [(None, events)] if events else []
        return self.house_moves(state, self.movers(state), rng)

    def movers(self, state: TableState) -> list[str]:
        """The seated players who have legal actions now, in seat order."""
        if state.status != "playing":
            return []
        return [p for p in state.seats if self.game.actions(state.game, p)]

    # -- presence --------------------------------------------------------------------------
    def mark_away(self, state: TableState, player: str) -> list[Event]:
        """Mark a seated player away (empty if they are already, or the game is not on)."""
        if state.status != "playing" or player not in state.seats or player in state.away:
            return []
        return [{"type": AWAY, "player": player}]

    def mark_back(self, state: TableState, player: str) -> list[Event]:
        """Mark an away player back (empty if they are not away)."""
        if state.status != "playing" or player not in state.away:
            return []
        return [{"type": BACK, "player": player}]

    def house_move(self, state: TableState, player: str, rng: random.Random) -> list[Event]:
        """The house bot's move for ``player`` (the game's ``house_action``), decided like a
        command of theirs; empty when they have nothing to do."""
        if state.status != "playing" or player not in state.seats:
            return []
        choices: list[Mapping[str, Any]] = []
        preferred = self.game.house_action(state.game, player, rng)
        if preferred is not None:
            choices.append(preferred)
        choices += self.game.actions(state.game, player)
        for choice in choices:
            try:
                return self.decide(state, player, choice, rng, gate_open=True)
            except Rejection:
                continue  # a house_action the rules refuse: fall back to a legal action
        return []

    def house_moves(
        self, state: TableState, players: Sequence[str], rng: random.Random
    ) -> list[tuple[str | None, list[Event]]]:
        """One house move for each of ``players`` who can act, in seat order, each decided on
        the state the previous ones left; stops when the game ends."""
        moves: list[tuple[str | None, list[Event]]] = []
        for player in state.seats:
            if player not in players or state.status != "playing":
                continue
            if not self.game.actions(state.game, player):
                continue
            events = self.house_move(state, player, rng)
            if events:
                moves.append((player, events))
                for event in events:
                    state = self.evolve(state, event)
        return moves

    def _finish_if_over(self, state: TableState, events: list[Event]) -> list[Event]:
        """Append ``table.finished`` once the game's events lead to an outcome."""
        for event in events:
            if str(event.get("type", "")).startswith(TABLE_PREFIX):
                raise ValueError(f"a game may not emit engine event {event['type']!r}")
        if state.status != "playing":
            return events
        # only the game's state decides the outcome: fold it alone, without a copy of the
        # table's state per event (the caller folds the table's afterwards)
        game, evolve = state.game, self.game.evolve
        for event in events:
            game = evolve(game, event)
        outcome = self.game.outcome(game)
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
                config=_stored_config(event["config"]),
                creator=event["creator"],
                max_seats=event["max_seats"],
                version=1,
                options=TableOptions.stored(event.get("options")),
                moved_at=1,
            )
        version = state.version + 1
        if kind == AWAY:
            away = state.away if event["player"] in state.away else (*state.away, event["player"])
            return replace(state, away=away, version=version)
        if kind == BACK:
            away = tuple(p for p in state.away if p != event["player"])
            return replace(state, away=away, version=version)
        if not kind.startswith(TABLE_PREFIX):  # a game's event: the hot path of every fold
            if kind in self.private_events:
                return self._private(state, event, version)
            return _moved(state, self.game.evolve(state.game, event), version)
        state = replace(state, moved_at=version)
        if kind == JOINED:
            player = event["player"]
            key = event.get("key")
            if isinstance(key, str):
                keys = {**state.keys, player: key}
                return replace(state, seats=(*state.seats, player), keys=keys, version=version)
            return replace(state, seats=(*state.seats, player), version=version)
        if kind == STARTED:
            seats = tuple(event["seats"])
            config = _shared_config(self.game.config_model.model_validate(state.config))
            game = self.game.setup(config, seats)
            # a game that signs or hashes its moves binds them to this table
            game = self.game.bind_table(game, state.game_id)
            # the verify keys the seats joined with (only when there are some, so a table
            # whose joins named no key folds exactly as before keys existed); the table's
            # own mapping when it is exactly that, in seat order: shared, not copied, as
            # neither is ever changed in place
            bound = state.keys
            if tuple(bound) != seats:
                bound = {p: bound[p] for p in seats if p in bound}
            if bound:
                game = self.game.bind_keys(game, bound)
            return replace(state, seats=seats, status="playing", game=game, version=version)
        if kind == FINISHED:
            return replace(state, status="finished", outcome=event["outcome"], version=version)
        raise ValueError(f"unknown table event {kind!r}")

    def _private(self, state: TableState, event: Event, version: int) -> TableState:
        """A game event of a type the game may address to some seats only: the seats left
        out of its ``audience`` do not count it (see :meth:`TableState.seen`)."""
        audience = self.game.audience(state.game, event)
        moved = _moved(state, self.game.evolve(state.game, event), version)
        if audience is None:
            return moved
        hidden = dict(state.hidden)
        for player in state.seats:
            if player not in audience:
                hidden[player] = hidden.get(player, 0) + 1
        # a new object of _moved's own: set its fields without replace's cost
        fields = moved.__dict__
        fields["private"] = state.private + 1
        fields["hidden"] = hidden
        # nor does the turn clock restart (the house's moves would time it for the others)
        fields["moved_at"] = state.moved_at
        return moved

    def evolve_many(self, state: TableState, events: Iterable[Event]) -> TableState:
        """``evolve`` over ``events`` in order: the same state at the end. A run of the game's
        own events is folded into the game's state with one copy of the table state at the
        end of the run (most events of a replay are the game's, and the copy per event was a
        third of folding one)."""
        game, game_evolve = state.game, self.game.evolve
        run = 0  # game events folded into ``game`` but not yet into ``state``
        private, direct = self.private_events, self._direct
        for event in events:
            kind = event["type"]
            fold = direct.get(kind)
            if fold is not None:  # what game_evolve would call
                game = fold(game, event)
                run += 1
            elif kind in private or kind.startswith(TABLE_PREFIX):
                if run:
                    state, run = _moved(state, game, state.version + run), 0
                state = self.evolve(state, event)
                game = state.game
            else:
                game = game_evolve(game, event)
                run += 1
        return _moved(state, game, state.version + run) if run else state

    def settle(self, state: TableState) -> None:
        """Compute what the game's state computes when first read (``Game.settle``), for a
        state to be kept (a cache entry loaded by a replay)."""
        if state.game is not None:
            self.game.settle(state.game)

    def replay(self, events: Sequence[Event]) -> TableState:
        if not events:
            raise ValueError("no events")
        return self.evolve_many(self.evolve(None, events[0]), events[1:])

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
        if kind in PRESENCE:
            message = {"type": "PlayerAway" if kind == AWAY else "PlayerBack"}
            who = event["player"]
            return {p: {**message, "player": who} for p in after.seats if p != who}
        return self.game.notify(before.game, event, after.game)

    def notification(
        self, state: TableState, player: str, seq: int, message: Message
    ) -> dict[str, Any]:
        """What ``player`` receives for the event that led to ``state``: the document of
        ``cardroom_wire.Notification`` (built by hand: the gamemaster sends it and the
        projector stores it for every addressee of every event, so it is on the hot path),
        the player's actions, and the whole view when the player must act."""
        actions = self.actions(state, player)
        return {
            "type": "notification",
            "game": state.game_id,
            "player": player,
            "seq": seq,
            "version": state.seen(player),
            "message": message,
            "actions": actions,
            "view": self.view(state, player) if actions else None,
            "ack": True,
        }

    def view(self, state: TableState, player: str | None) -> dict[str, Any]:
        view = state.summary()
        view["version"] = state.seen(player)
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

    def _parse_options(self, raw: Any) -> TableOptions:
        if raw is None:
            return TableOptions()
        if not isinstance(raw, Mapping):
            raise Rejection(ErrorCode.BAD_CONFIG, f"{OPTIONS_KEY}: must be an object")
        try:
            return TableOptions.model_validate(dict(raw))
        except ValidationError as exc:
            raise rejection_of(exc, ErrorCode.BAD_CONFIG, prefix=OPTIONS_KEY) from None

    def _parse_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        try:
            # a new table: a game may default a field added later differently from the
            # configs stored without it (those are read back with no context)
            model = self.game.config_model.model_validate(config, context={NEW_TABLE: True})
        except ValidationError as exc:
            raise rejection_of(exc, ErrorCode.BAD_CONFIG, default="config") from None
        return model.model_dump(mode="json")


_CONFIGS: dict[BaseModel, BaseModel] = {}
_RAW_CONFIGS: dict[str, dict[str, Any]] = {}


def _stored_config(raw: dict[str, Any]) -> dict[str, Any]:
    """One dict for equal configs as a ``table.created`` event stored them, across tables,
    as :func:`_shared_config` for the parsed ones (never changed: a table's config is fixed
    at create). Keyed by its JSON text, so that a shared one keeps its keys' order."""
    try:
        key = json.dumps(raw, separators=(",", ":"))
    except (TypeError, ValueError):
        return raw
    return interned_as(_RAW_CONFIGS, key, raw, kept=1024)


def _shared_config(config: BaseModel) -> BaseModel:
    """One object for equal immutable configs, across tables: most tables of a game share a
    few configs, and a parsed model costs a table 1-2 KiB of a game's memory. A config that
    is not immutable (unhashable) is its own."""
    try:
        return interned(_CONFIGS, config, kept=1024)
    except TypeError:
        return config
