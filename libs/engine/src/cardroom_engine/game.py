"""The game-rules protocol: what a game must define to be hosted by cardroom.

A game is one object (usually a subclass of :class:`GameRules`) with pure functions over
its own immutable state. The engine wraps it in a table (lobby, gate, outcome) and the
services do all I/O, so a new game touches nothing in services/.

The contract, in the order the engine calls it:

- ``setup(config, seats)``: the state before anything happened (no randomness).
- ``start(state, rng)``: the deal, as events. All randomness is drawn from ``rng`` here or in
  ``decide``/``follow_up`` and its outcome written into the events, so replay never re-rolls.
- ``decide(state, actor, command, rng)``: validate one player's command and return the
  events it causes, or raise :class:`Rejection`. Never mutates. Any JSON value may stand in
  any field: read them with :mod:`cardroom_engine.inputs` (or a strict pydantic model and
  :func:`parse_command`), so that nothing but a Rejection comes out.
- ``evolve(state, event)``: pure and total; the only way state changes.
- ``notify(before, event, after)``: ``{player: message}`` for this event, in the game's own
  protocol shape. The keys are exactly the players who must acknowledge it (the gate).
- ``follow_up(state, rng)``: what the game does by itself once every addressee has
  acknowledged (next turn, reveal, next round); empty when it waits for a player.
- ``view(state, player)``: everything that player may see (``None``: a spectator).
- ``actions(state, player)``: the complete legal commands for that player now.
- ``deadline(state)`` / ``on_timeout``: a moment at which the game moves by itself.
- ``outcome(state)``: ``None`` while running, else the result.

Events returned by one call are appended together and form one gate: the next player
command or follow-up waits until every addressee of every one of them has acknowledged.
A game whose protocol needs "the others first, then the active player" returns the first
event and produces the second in ``follow_up``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from cardroom_wire import ErrorCode, WireError
from cardroom_wire.messages import describe_validation
from pydantic import BaseModel, ValidationError

Event = dict[str, Any]
"""A JSON object with a ``type`` field. Types starting with ``table.`` are the engine's."""

Message = dict[str, Any]
"""A JSON object with a ``type`` field, in the shape of the game's protocol."""

Command = Mapping[str, Any]
"""A player's command: ``type`` plus the move's fields (the command id is not included)."""

S = TypeVar("S")
C = TypeVar("C", bound=BaseModel)


class Rejection(WireError):
    """A refused command: a stable machine-readable ``code`` and a human ``message``.

    The message must not reveal hidden information (it is sent to the player and may be
    logged), e.g. "that card is not in your hand" is fine, "player B holds it" is not.
    """


def rejection_of(
    exc: ValidationError, code: str | ErrorCode, prefix: str = "", default: str = ""
) -> Rejection:
    """The first error pydantic found, as a rejection: ``location: message``."""
    return Rejection(code, describe_validation(exc, most=1, prefix=prefix, default=default))


@dataclass(frozen=True)
class Outcome:
    """The result of a finished game. ``ranking`` lists groups of tied players, best first."""

    scores: dict[str, float]
    ranking: list[list[str]]
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"scores": self.scores, "ranking": self.ranking, "details": self.details}

    @staticmethod
    def from_scores(scores: Mapping[str, float], *, lower_is_better: bool) -> Outcome:
        """Rank players by score, grouping ties."""
        ordered = sorted(set(scores.values()), reverse=not lower_is_better)
        ranking = [sorted(p for p, s in scores.items() if s == value) for value in ordered]
        return Outcome(scores=dict(scores), ranking=ranking)


@dataclass(frozen=True)
class Deadline:
    """Something happens by itself ``seconds`` after the event that set this deadline.

    ``key`` names what the deadline is for; the engine sends the game a timeout for that key
    (``on_timeout``) unless the state has moved on in the meantime.
    """

    seconds: float
    key: str = "timeout"


class NoMove(Exception):
    """Raised by a bot's ``choose`` that will not move on what it was given (a Macaua
    player whose own check of the game asks nothing of it): the bot services send nothing,
    and the game's deadlines go on as for any player that does not move."""


class Bot(Protocol):
    """A player program. It sees only what its player sees.

    ``observe`` gets each notification's message, in order. ``choose`` gets the table's view
    of its player (``Table.view``: the table's summary, with ``seats``, ``config``,
    ``status`` and ``version``, and the game's own ``view(state, player)`` under
    ``"state"``) and the legal ``actions`` now, and returns one command (an action, filled
    in where it is a template). A search's ``Determinizer.sample`` gets the same view.

    A bot whose ``choose`` is heavy CPU work (cryptography) sets a class attribute
    ``heavy_choices = True``: the bot services then call ``choose`` in a worker thread
    (``asyncio.to_thread``) instead of on their event loop, so it must be thread-safe.
    ``choose`` may raise :class:`NoMove` to make no move."""

    def observe(self, message: Message) -> None: ...

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]: ...


class RandomBot:
    """Picks uniformly among the legal actions; remembers nothing."""

    def __init__(self, player: str) -> None:
        self.player = player

    def observe(self, message: Message) -> None:
        return None

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        return rng.choice(list(actions))


BotFactory = Callable[[str], Bot]


class Completer(Protocol):
    """A bot of a game whose actions are templates (``GameRules.action_templates``)."""

    def completions(
        self, view: Mapping[str, Any], action: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Every command its player may send now for the listed ``action``, filled in with
        what only the player holds (empty when it holds nothing that fits: no legal card)."""
        ...


class Game(Protocol[S]):
    """The structural protocol every hosted game satisfies (see the module docs)."""

    # read-only, so that class attributes (GameRules' ClassVars) satisfy the protocol
    @property
    def name(self) -> str: ...
    @property
    def min_players(self) -> int: ...
    @property
    def max_players(self) -> int: ...
    @property
    def config_model(self) -> type[BaseModel]: ...
    @property
    def bots(self) -> Mapping[str, BotFactory]: ...
    @property
    def heavy(self) -> bool: ...
    @property
    def seat_keys(self) -> bool: ...
    @property
    def signed_transitions(self) -> bool: ...
    @property
    def private_events(self) -> frozenset[str]: ...
    @property
    def action_templates(self) -> bool: ...

    def setup(self, config: Any, seats: Sequence[str]) -> S: ...
    def start(self, state: S, rng: random.Random) -> list[Event]: ...
    def decide(self, state: S, actor: str, command: Command, rng: random.Random) -> list[Event]: ...
    def evolve(self, state: S, event: Event) -> S: ...
    def notify(self, before: S, event: Event, after: S) -> dict[str, Message]: ...
    def follow_up(self, state: S, rng: random.Random) -> list[Event]: ...
    def view(self, state: S, player: str | None) -> dict[str, Any]: ...
    def actions(self, state: S, player: str) -> list[dict[str, Any]]: ...
    def deadline(self, state: S) -> Deadline | None: ...
    def on_timeout(self, state: S, key: str, rng: random.Random) -> list[Event]: ...
    def house_action(self, state: S, player: str, rng: random.Random) -> dict[str, Any] | None: ...
    def outcome(self, state: S) -> Outcome | None: ...

    # the optional hooks: GameRules has each one's default and says what it is for
    def audience(self, state: S, event: Event) -> Collection[str] | None: ...
    def check_start(self, config: Any, seats: Sequence[str]) -> None: ...
    def bind_table(self, state: S, game_id: str) -> S: ...
    def bind_keys(self, state: S, keys: Mapping[str, str]) -> S: ...
    def settle(self, state: S) -> None: ...


NEW_TABLE = "new_table"
"""A key of the pydantic validation context, true when a config is parsed for a table being
created (``Table.create``) and absent when a stored config is read back: a game may give a
field added later one default for new tables and another for configs stored without it."""


class GameRules(Generic[S]):
    """A convenient base with the optional parts filled in. Subclasses set the class
    attributes and implement setup, start, decide, evolve, notify, view, actions, outcome.

    A game whose ``decide`` is heavy CPU work (checking proofs: Macaua) sets the class
    attribute ``heavy = True``: the gamemaster then calls ``decide`` in a worker thread
    (``asyncio.to_thread``), still under the game's lock, so it must be thread-safe and pure
    (it is: it reads the state it is given). Like the bots' ``heavy_choices``."""

    name: ClassVar[str]
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    config_model: ClassVar[type[BaseModel]]
    bots: ClassVar[Mapping[str, BotFactory]] = {"random": RandomBot}
    heavy: ClassVar[bool] = False
    """``decide`` is CPU work: a service runs it off its event loop."""
    seat_keys: ClassVar[bool] = False
    """Every seat is bound to its player's Ed25519 verify key when it is taken: a create or
    join without a ``key`` is refused ``key_required`` (the table reads this attribute). For
    games whose moves are signed (Macaua): the rules get the keys through ``bind_keys`` and
    check every move against its seat's key, so the key a player joined with is the only
    one that can sign for it (not trusted on first use: neither the server nor another
    player can swap it later). Off by default; a join may still name a key, which is then
    recorded and handed to ``bind_keys`` all the same."""

    signed_transitions: ClassVar[bool] = False
    """Every player signs each transition it is sent (or rejects it) in its acknowledgement,
    and the gamemaster checks the signatures before the game's next step (Macaua)."""

    action_templates: ClassVar[bool] = False
    r"""The listed ``actions`` are templates that only the player's client can fill in (with
    its keys, its proofs, the card it plays), since the server never holds them (Macaua):
    ``decide`` accepts the filled-in command, not the template, and the game's bots are
    :class:`Completer`\ s, so that a check of the listed actions can fill them as the
    player would."""

    private_events: ClassVar[frozenset[str]] = frozenset()
    """The event types this game may address to some seats only (their ``notify`` leaves
    the others out). For these the table asks :meth:`audience`, and the seats left out do
    not see the version move: a player must not be able to count what it is not told (a
    private pass in papas). The conformance suite checks that every event addressed to some
    seats changes nothing the others observe."""

    def audience(self, state: S, event: Event) -> Collection[str] | None:
        """For an event of a type in :attr:`private_events`, folded onto ``state``: the
        players it is for (a superset of its addressees), or None when it is for every seat.
        Decided from the event and the state before it, as ``notify`` decides its keys."""
        return None

    def check_start(self, config: Any, seats: Sequence[str]) -> None:
        """Raise a Rejection (``bad_config``) if the game cannot start with these seats."""
        return None

    def bind_table(self, state: S, game_id: str) -> S:
        """The state just set up, told the id of its table (optional: the table calls it when
        a game has it). For games whose moves are signed over the game's id (macaua)."""
        return state

    def bind_keys(self, state: S, keys: Mapping[str, str]) -> S:
        """The state just set up (and bound to its table), told the verify keys its seats
        joined with: ``{player: 64 lowercase hex characters}``, only the seats that named one
        (optional: the table calls it when a game has it, and only when at least one seat
        has a key, so a table whose joins named none folds exactly as before keys existed).
        The keys are also in the table's summary (``keys``), for every client to check."""
        return state

    def settle(self, state: S) -> None:
        """Compute now what ``state`` computes when first read (optional): a table calls it on
        a state that is to be kept for a while, a gamemaster's cache entry loaded by a
        replay, so that it does not keep the events it would be computed from. The state is
        the same before and after (equal); folds stay lazy, since most of a replay's states
        are never read."""
        return None

    def follow_up(self, state: S, rng: random.Random) -> list[Event]:
        return []

    def deadline(self, state: S) -> Deadline | None:
        return None

    def on_timeout(self, state: S, key: str, rng: random.Random) -> list[Event]:
        return []

    def house_action(self, state: S, player: str, rng: random.Random) -> dict[str, Any] | None:
        """The move the house bot makes for an away or silent player: random by default."""
        actions = self.actions(state, player)  # type: ignore[attr-defined]
        return rng.choice(actions) if actions else None


def parse_command(model: type[C], command: Command) -> C:
    """Validate a command's fields against a pydantic model, as a ``bad_request`` Rejection.
    Declare the model strict (``ConfigDict(strict=True)``), so that ``true`` is no 1 and
    ``"1"`` no number, and bound every field; or read the fields with
    :mod:`cardroom_engine.inputs`."""
    try:
        return model.model_validate(dict(command))
    except ValidationError as exc:
        raise rejection_of(exc, ErrorCode.BAD_REQUEST, default="command") from None
