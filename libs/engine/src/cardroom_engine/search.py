"""Information-set search: a bot that plays well while knowing only what its player knows.

A game of hidden information cannot be searched on its true state (that would read the other
players' cards). The search here determinizes instead: each iteration samples one full state
that is consistent with everything the bot's player has seen (the game's
:class:`Determinizer`: its own view, and what its own notifications told it), plays one of
its legal actions in that state, and plays the game on from there with a fast policy for
every seat (its rollouts) up to the determinizer's horizon; the action's value is the mean
of how those playouts ended for the bot's player. Which action an iteration tries is chosen
by UCB1 over the actions' statistics so far, so the budget goes to the promising ones. This
is information-set Monte Carlo search at the root (the tree is one level deep, over the
information set of the moment): every statistic is over states the player cannot tell
apart, never over one true state.

What the bot reads is its view and its notifications, nothing else: the determinizer gets
nothing more. Strength and speed are knobs: ``iterations`` per move, or a ``budget`` in
seconds. Searching is CPU work, so the bot says ``heavy_choices``: the bot services run its
``choose`` in a worker thread.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from .game import Command, Event, Game, Message, Rejection

__all__ = ["Determinizer", "SearchBot", "search_factory"]

S = TypeVar("S")

EXPLORATION = math.sqrt(2.0)
MAX_STEPS = 10_000  # events of one playout at most (a game that does not settle is a bug)


class Determinizer(Protocol[S]):
    """What a game provides for the search (its one extra hook)."""

    def observe(self, message: Message) -> None:
        """Remember what a notification told the player (cards seen, say)."""

    def sample(self, view: Mapping[str, Any], player: str, rng: random.Random) -> S:
        """A full game state consistent with the player's ``view`` and what it observed."""
        ...

    def done(self, start: S, state: S, steps: int) -> bool:
        """Whether a playout from ``start`` has gone far enough to judge (its horizon),
        after ``steps`` events."""
        ...

    def value(self, start: S, state: S, player: str) -> float:
        """How good ``state`` is for ``player``, in [0, 1] (1 best), judged from ``start``."""
        ...


Policy = Callable[[S, str, list[dict[str, Any]], random.Random], dict[str, Any]]


def random_policy(
    state: Any, player: str, actions: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any]:
    return rng.choice(actions)


class SearchBot(Generic[S]):
    """A player's program that searches its information set (see the module docs)."""

    heavy_choices = True

    def __init__(
        self,
        player: str,
        rules: Game[S],
        determinizer: Determinizer[S],
        *,
        iterations: int = 200,
        budget: float | None = None,
        rollout: Policy[S] | None = None,
    ) -> None:
        self.player = player
        self.rules = rules
        self.determinizer = determinizer
        self.iterations = iterations
        self.budget = budget
        self.rollout: Policy[S] = rollout if rollout is not None else random_policy
        self.searched = 0  # iterations of the last choice, for tests and reports

    def observe(self, message: Message) -> None:
        self.determinizer.observe(message)

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        if len(actions) <= 1:
            return actions[0]
        counts = [0] * len(actions)
        totals = [0.0] * len(actions)
        deadline = None if self.budget is None else time.perf_counter() + self.budget
        done = 0
        while True:
            if deadline is not None:
                if done and time.perf_counter() >= deadline:
                    break
            elif done >= self.iterations:
                break
            done += 1
            index = _ucb(counts, totals, done)
            start = self.determinizer.sample(view, self.player, rng)
            totals[index] += self._playout(start, dict(actions[index]), rng)
            counts[index] += 1
        self.searched = done
        best = max(range(len(actions)), key=lambda i: totals[i] / counts[i] if counts[i] else -1.0)
        return actions[best]

    def _playout(self, start: S, action: dict[str, Any], rng: random.Random) -> float:
        """Play ``action`` in ``start``, then the game on with the rollout policy; the value
        of where it stops for this bot's player."""
        rules = self.rules
        try:
            state = self._apply(start, rules.decide(start, self.player, action, rng))
        except Rejection:
            return 0.0  # (a determinization in which the action is illegal: never, if sound)
        steps = 0
        while steps < MAX_STEPS:
            if rules.outcome(state) is not None or self.determinizer.done(start, state, steps):
                break
            events = rules.follow_up(state, rng)
            if not events:
                events = self._moves(state, rng)
            if not events:  # nobody can move: what happens when time runs out (a window)
                due = rules.deadline(state)
                events = rules.on_timeout(state, due.key, rng) if due is not None else []
                if not events:
                    break  # nothing will happen: judge it here
            state = self._apply(state, events)
            steps += len(events)
        return self.determinizer.value(start, state, self.player)

    def _moves(self, state: S, rng: random.Random) -> list[Event]:
        rules = self.rules
        for seat in _seats(state):
            options = rules.actions(state, seat)
            if options:
                command: Command = self.rollout(state, seat, options, rng)
                events: list[Event] = rules.decide(state, seat, command, rng)
                return events
        return []

    def _apply(self, state: S, events: Sequence[Event]) -> S:
        for event in events:
            state = self.rules.evolve(state, event)
        return state


def _seats(state: Any) -> Sequence[str]:
    seats = getattr(state, "seats", ())
    return seats if isinstance(seats, Sequence) else ()


def _ucb(counts: list[int], totals: list[float], done: int) -> int:
    for i, n in enumerate(counts):
        if n == 0:
            return i
    log_n = math.log(done)
    return max(
        range(len(counts)),
        key=lambda i: totals[i] / counts[i] + EXPLORATION * math.sqrt(log_n / counts[i]),
    )


def search_factory(
    rules: Game[S],
    determinizer: Callable[[str], Determinizer[S]],
    *,
    rollout: Policy[S] | None = None,
    iterations: int = 200,
) -> Callable[[str], SearchBot[S]]:
    """A bot factory for a game's ``bots`` (``"search"``): a new searching bot per player."""

    def make(player: str) -> SearchBot[S]:
        return SearchBot(
            player, rules, determinizer(player), iterations=iterations, rollout=rollout
        )

    return make
