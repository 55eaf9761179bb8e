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
apart, never over one true state. With ``paired``, every iteration tries every action instead,
in the same determinization and with the same random numbers for each (common random
numbers), which tells close actions apart with fewer playouts when the playouts are noisy;
and a ``prior`` (the player's own heuristic choice, from the same view) is kept unless
another action beats it by ``confidence`` standard errors of their paired difference, so
the search departs from a sound default only where its playouts say so clearly.

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

from .game import Bot, Command, Event, Game, Message, Rejection

__all__ = ["Determinizer", "GuidedSearchBot", "SearchBot", "search_factory"]

S = TypeVar("S")

EXPLORATION = math.sqrt(2.0)
CONFIDENCE = 1.5  # standard errors by which an action must beat the prior's (paired search)
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


Prior = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], random.Random], Mapping[str, Any]]
"""The player's own default choice from its view (a heuristic bot's): with ``paired``, the
search leaves it only for an action whose playouts beat it clearly (``confidence``)."""


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
        paired: bool = False,
        prior: Prior | None = None,
        confidence: float = CONFIDENCE,
    ) -> None:
        self.player = player
        self.rules = rules
        self.determinizer = determinizer
        self.iterations = iterations
        self.budget = budget
        self.rollout: Policy[S] = rollout if rollout is not None else random_policy
        self.paired = paired
        self.prior = prior
        self.confidence = confidence
        self.searched = 0  # iterations (playouts) of the last choice, for tests and reports

    def observe(self, message: Message) -> None:
        self.determinizer.observe(message)

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        if len(actions) <= 1:
            return actions[0]
        if self.paired:
            return self._choose_paired(view, actions, rng)
        counts = [0] * len(actions)
        totals = [0.0] * len(actions)
        more = self._budget()
        done = 0
        while more(done, 1):
            done += 1
            index = _ucb(counts, totals, done)
            start = self.determinizer.sample(view, self.player, rng)
            totals[index] += self._playout(start, dict(actions[index]), rng)
            counts[index] += 1
        self.searched = done
        best = max(range(len(actions)), key=lambda i: totals[i] / counts[i] if counts[i] else -1.0)
        return actions[best]

    def _choose_paired(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        """Every action tried in every determinization, each playout from the same random
        numbers (common random numbers: the actions are compared on the same deals and the
        same luck, so far fewer playouts tell them apart than independent ones would)."""
        default = None
        if self.prior is not None:
            preferred = self.prior(view, actions, rng)
            default = next((i for i, a in enumerate(actions) if a == preferred), None)
        values: list[list[float]] = [[] for _ in actions]
        more = self._budget()
        done = 0
        while more(done, len(actions)):
            start = self.determinizer.sample(view, self.player, rng)
            seed = rng.getrandbits(64)
            for i, action in enumerate(actions):
                values[i].append(self._playout(start, dict(action), random.Random(seed)))
            done += len(actions)
        self.searched = done
        best = max(range(len(actions)), key=lambda i: sum(values[i]))
        if (
            default is not None
            and best != default
            and not _better(values[best], values[default], self.confidence)
        ):
            best = default
        return actions[best]

    def _budget(self) -> Callable[[int, int], bool]:
        """Whether to go on after ``done`` playouts with ``step`` more: within the time
        budget, else within the iterations (the first step always runs)."""
        if self.budget is not None:
            deadline = time.perf_counter() + self.budget
            return lambda done, step: not done or time.perf_counter() < deadline
        iterations = self.iterations
        return lambda done, step: not done or done + step <= iterations

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


class GuidedSearchBot(SearchBot[S]):
    """A paired search whose prior is a heuristic bot of the player's own, fed the same
    notifications (it reads nothing the search does not): the heuristic's choice stands
    unless the playouts clearly prefer another."""

    def __init__(
        self,
        player: str,
        rules: Game[S],
        determinizer: Determinizer[S],
        heuristic: Bot,
        *,
        iterations: int = 200,
        rollout: Policy[S] | None = None,
        confidence: float = CONFIDENCE,
    ) -> None:
        self.heuristic = heuristic
        super().__init__(
            player,
            rules,
            determinizer,
            iterations=iterations,
            rollout=rollout,
            paired=True,
            prior=heuristic.choose,
            confidence=confidence,
        )

    def observe(self, message: Message) -> None:
        super().observe(message)
        self.heuristic.observe(message)


def _better(a: list[float], b: list[float], confidence: float) -> bool:
    """Whether the paired values ``a`` beat ``b`` by more than ``confidence`` standard errors
    of their mean difference."""
    n = len(a)
    if n < 2:
        return False
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean > confidence * math.sqrt(var / n)


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
    paired: bool = False,
) -> Callable[[str], SearchBot[S]]:
    """A bot factory for a game's ``bots`` (``"search"``): a new searching bot per player."""

    def make(player: str) -> SearchBot[S]:
        return SearchBot(
            player,
            rules,
            determinizer(player),
            iterations=iterations,
            rollout=rollout,
            paired=paired,
        )

    return make
