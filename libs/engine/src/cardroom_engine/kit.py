"""The game-authoring kit: what every game needs besides its rules, written once.

- **State.** A game's state is an immutable ``NamedTuple`` decorated with :func:`state`.
  Updates read like the rules and name what changes::

      return state._replace(phase="play", turn=event["turn"])

  ``@state`` replaces the class's ``_replace`` with one generated for its fields, which
  builds the new tuple in one step: ``evolve`` runs for every event of every replay and
  rebuild, and the standard ``_replace`` costs about twice as much (it maps a dict over
  every field, then checks what is left). mypy knows ``_replace``'s field names and types
  for a ``NamedTuple``, so a misspelt field is a type error, not a silent new attribute.
  :func:`put` and :func:`without` change one item of a per-seat tuple.

- **Handlers.** Events and commands are dispatched on their ``type`` by a registry, each
  handler a plain function declared where it is written::

      FOLDS = Folds[State]("take5")

      @FOLDS.on(DEALT)
      def _dealt(state: State, event: Event) -> State: ...

  ``FOLDS.evolve`` is then the game's ``evolve`` (an unknown type is an error: a log holds
  only events the game wrote), and :class:`Commands` does the same for ``decide``, refusing
  an unknown command ``unknown_command``. The registries also list their types, which the
  conformance suite and the docs read.

- **Shared values.** :func:`interned` (:func:`interned_as` for unhashable ones) keeps one
  object for equal small immutable values (a position, a set of players, a config) across
  states and tables: a server holds thousands of tables, and a tuple each adds up.

- **Command fields** are read with :mod:`cardroom_engine.inputs`, which gives the standard
  ``bad_request`` refusals; the optional hooks are declared, with their defaults, on
  :class:`~cardroom_engine.game.GameRules`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from cardroom_wire import ErrorCode
from cardroom_wire.messages import cut

from .game import Command, Event, Rejection

T = TypeVar("T")
K = TypeVar("K")
S = TypeVar("S")
F = TypeVar("F", bound=Callable[..., Any])

_UNSET: Any = object()


def state(cls: type[T]) -> type[T]:
    """Give a ``NamedTuple`` class a ``_replace`` that builds the changed copy in one step
    (the same results as the standard one for keyword arguments, each a field)."""
    names: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    if not names or any(not n.isidentifier() or n.startswith("_") for n in names):
        raise TypeError(f"{cls.__name__}: a state's fields are plain names")
    # generated rather than looped: one unpacking and one tuple display, no per-field call
    # or dict. The parameters are not keyword-only, although a call must name them (mypy
    # checks it, as for any NamedTuple): defaults of keyword-only parameters are looked up
    # in a dict, a third of the cost for a state of twenty fields
    params = ", ".join(f"{n}=_UNSET" for n in names)
    current = ", ".join(f"_{i}" for i in range(len(names)))
    items = ", ".join(f"_{i} if {n} is _UNSET else {n}" for i, n in enumerate(names))
    head = f"def _replace(_self, {params}):\n    {current}, = _self\n"
    source = f"{head}    return _new(_cls, ({items},))\n"
    scope: dict[str, Any] = {"_UNSET": _UNSET, "_new": tuple.__new__, "_cls": cls}
    exec(source, scope)  # the text is made of the class's own field names
    replace = scope["_replace"]
    replace.__qualname__ = f"{cls.__qualname__}._replace"
    replace.__doc__ = f"A copy of this {cls.__name__} with the named fields changed."
    cls._replace = replace  # type: ignore[attr-defined]
    return cls


def put(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    """``items`` with the one at ``index`` replaced by ``value`` (a seat's hand, score)."""
    changed = list(items)
    changed[index] = value
    return tuple(changed)


def without(items: tuple[T, ...], item: T) -> tuple[T, ...]:
    """``items`` less ``item``, for items that are unique (cards, seats): one at most."""
    kept = list(items)
    try:
        kept.remove(item)
    except ValueError:
        return items
    return tuple(kept)


def interned(cache: dict[T, T], value: T, kept: int = 4096) -> T:
    """The one object ``cache`` holds equal to ``value`` (``value`` itself when it is the
    first): for the small immutable values a state repeats across positions and tables (a
    position, a set of players, a config), so that each is stored once. Bounded: emptied
    when it holds ``kept`` (the values shared already stay shared)."""
    return interned_as(cache, value, value, kept)


def interned_as(cache: dict[K, T], key: K, value: T, kept: int = 4096) -> T:
    """:func:`interned` for a value that is not hashable itself, or not cheaply: the one
    object ``cache`` holds under ``key`` (``value`` when it is the first); the value must
    never be changed in place."""
    found = cache.get(key)
    if found is None:
        if len(cache) >= kept:
            cache.clear()
        found = cache[key] = value
    return found


class Handlers(Generic[F]):
    """Functions by the ``type`` they handle, declared with :meth:`on`."""

    def __init__(self, game: str) -> None:
        self.game = game
        self._handlers: dict[str, F] = {}

    def on(self, *types: str) -> Callable[[F], F]:
        """Register the decorated function for these types (once each)."""

        def register(handler: F) -> F:
            for kind in types:
                if kind in self._handlers:
                    raise ValueError(f"{self.game}: {kind!r} has a handler already")
                self._handlers[kind] = handler
            return handler

        return register

    def get(self, kind: str) -> F | None:
        return self._handlers.get(kind)

    @property
    def types(self) -> tuple[str, ...]:
        """The types handled, in the order they were declared."""
        return tuple(self._handlers)

    def __iter__(self) -> Iterator[str]:
        return iter(self._handlers)

    def __contains__(self, kind: object) -> bool:
        return kind in self._handlers


class Folds(Handlers[Callable[[S, Event], S]]):
    """The game's folds: ``(state, event) -> state``, one per event type."""

    def __init__(self, game: str) -> None:
        super().__init__(game)
        folds = self._handlers

        # a closure over the dict, not a method: evolve runs for every event of a replay
        def evolve(state: S, event: Event) -> S:
            try:
                fold = folds[event["type"]]
            except KeyError:
                raise ValueError(f"unknown {game} event {cut(event['type'])!r}") from None
            return fold(state, event)

        self.evolve: Callable[[S, Event], S] = evolve
        """Fold one event into the state: the game's ``evolve``."""
        _FOLDS_OF[evolve] = folds


#: Each :class:`Folds`' ``evolve`` -> its folds by type (see :func:`folds_of`).
_FOLDS_OF: dict[Callable[..., Any], dict[str, Callable[..., Any]]] = {}


def folds_of(evolve: Callable[..., Any]) -> dict[str, Callable[..., Any]] | None:
    """The folds by type behind ``evolve`` when it is a :class:`Folds`' own (a game that
    declares ``evolve = staticmethod(FOLDS.evolve)``), else None: a fold of many events
    (``Table.evolve_many``) then calls each event's fold itself, one call fewer an event.
    To be read only."""
    return _FOLDS_OF.get(evolve)


Decision = Callable[[S, str, Command, random.Random], list[Event]]


class Commands(Handlers[Decision[S]]):
    """The game's commands: ``(state, actor, command, rng) -> events``, one per type.

    A command without a string ``type`` is refused ``bad_request``; one of a type with no
    handler ``unknown_command``, in the game's own words (``unknown``) or with the list of
    the commands there are."""

    def __init__(self, game: str, unknown: str | None = None) -> None:
        super().__init__(game)
        self.unknown = unknown

    def decide(self, state: S, actor: str, command: Command, rng: random.Random) -> list[Event]:
        kind = command.get("type")
        if type(kind) is not str:
            raise Rejection(ErrorCode.BAD_REQUEST, "a command needs a string 'type'")
        decide = self._handlers.get(kind)
        if decide is None:
            raise Rejection(
                ErrorCode.UNKNOWN_COMMAND,
                self.unknown or f"{self.game} knows the commands {', '.join(self._handlers)}",
            )
        return decide(state, actor, command, rng)
