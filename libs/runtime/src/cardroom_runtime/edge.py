"""The service edge: what every request from outside passes before a handler sees it.

NATS checks who may publish on a subject, so a request's subject names its asker truthfully
(``<root>.cmd.<game>.<player>``, ``<root>.lobby.<verb>.<player>``, ...). Two things NATS does
not check are checked here, once for every subscription of a process:

- **Replies go only to the asker.** A request names its reply address itself, and a service
  publishes its answer with the service's own rights. So a request whose reply address is not
  below the asker's inbox prefix (:meth:`cardroom_wire.Subjects.reply_prefix`) is dropped
  unhandled and counted: a player cannot make a service publish into another player's
  subjects, the event stream or a sync subject.
- **One player cannot crowd out the others.** Each asker has a token bucket per subscription
  (``CARDROOM_PLAYER_RATE`` requests a second, bursts of ``CARDROOM_PLAYER_BURST``); past it a
  request is answered ``rate_limited`` without being handled. The limit is per process, far
  above what a person or a bot sends, and cheap to refuse, so a flood costs the services little.
  Requests between services (below :attr:`~cardroom_wire.Subjects.service_inbox`) are not limited.

Failures are logged as one line, at most a few a second (:class:`FailureLog`): a hostile
client must not be able to buy pages of tracebacks with a few bytes.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from cardroom_wire import Subjects

from . import logs

log = logging.getLogger("cardroom.edge")

DEFAULT_RATE: Final = 200.0
DEFAULT_BURST: Final = 400.0
MAX_BUCKETS: Final = 100_000  # askers tracked per process before idle ones are forgotten


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    value = float(raw)
    if not value > 0:
        raise ValueError(f"{name} must be a positive number, not {raw!r}")
    return value


@dataclass
class EdgeCounts:
    """What the edge saw and refused, for operators and tests."""

    checked: int = 0  # requests checked, by each subscription that heard them
    bad_reply: int = 0  # dropped: the reply address was not the asker's
    no_asker: int = 0  # dropped: nobody may ask on that subject
    rate_limited: int = 0  # answered rate_limited, not handled


@dataclass
class Edge:
    """The checks of one process (see the module docstring)."""

    subjects: Subjects
    rate: float = field(default_factory=lambda: _env_float("CARDROOM_PLAYER_RATE", DEFAULT_RATE))
    burst: float = field(default_factory=lambda: _env_float("CARDROOM_PLAYER_BURST", DEFAULT_BURST))
    clock: Callable[[], float] = time.monotonic
    max_buckets: int = MAX_BUCKETS
    counts: EdgeCounts = field(default_factory=EdgeCounts)
    # subscription -> (service, route): what a dropped request's log line names
    names: dict[int, tuple[str, str]] = field(default_factory=dict)
    # (subscription, asker's inbox prefix) -> [tokens left, when last filled]
    _buckets: dict[tuple[int, str], list[float]] = field(default_factory=dict)

    def admit(self, route: int, subject: str, reply: str | None) -> str | None:
        """Whether a request on ``subject`` may be handled: None if so, else why not
        (``"drop"``: not at all, nothing is answered; ``"limit"``: answer rate_limited)."""
        self.counts.checked += 1
        prefix = self.subjects.reply_prefix(subject)
        if prefix is None:
            self.counts.no_asker += 1
            return "drop"
        if reply and not (reply.startswith(prefix) and reply[len(prefix) : len(prefix) + 1] == "."):
            self.counts.bad_reply += 1
            service, title = self.names.get(route, ("", ""))
            token = logs.bind(service=service, route=title)
            try:
                _DROPS.report("a reply address that is not the asker's on %s", subject)
            finally:
                logs.unbind(token)
            return "drop"
        if prefix == self.subjects.service_inbox:
            return None
        if not self._take((route, prefix)):
            self.counts.rate_limited += 1
            return "limit"
        return None

    def _take(self, key: tuple[int, str]) -> bool:
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_buckets:
                self._forget_idle(now)
            self._buckets[key] = [self.burst - 1.0, now]
            return True
        tokens = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
        bucket[1] = now
        if tokens < 1.0:
            bucket[0] = tokens
            return False
        bucket[0] = tokens - 1.0
        return True

    def _forget_idle(self, now: float) -> None:
        """Drop the buckets that have filled up again: forgetting them changes nothing."""
        full = [
            k
            for k, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
        if len(self._buckets) >= self.max_buckets:  # all busy: a flood of askers; start afresh
            self._buckets.clear()


class FailureLog:
    """One line per failure, at most ``per_second`` lines a second (the rest are counted and
    the count is told with the next line). The traceback goes to DEBUG only."""

    def __init__(
        self,
        logger: logging.Logger,
        per_second: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log = logger
        self.per_second = per_second
        self.clock = clock
        self._window = 0.0
        self._lines = 0
        self.suppressed = 0

    def _allowed(self) -> bool:
        now = self.clock()
        if now - self._window >= 1.0:
            self._window, self._lines = now, 0
        if self._lines >= self.per_second:
            self.suppressed += 1
            return False
        self._lines += 1
        return True

    def report(self, message: str, *args: object) -> None:
        """A warning line (rate-limited)."""
        if self._allowed():
            self._tell(logging.WARNING, message, args)

    def failure(self, what: str, exc: BaseException) -> str:
        """Log an unexpected exception as one ERROR line; returns the reference it carries,
        for the reply. Only the exception's type and where it was raised are logged: its
        message may hold any value (a statement's parameters, say)."""
        ref = secrets.token_hex(4)
        if self._allowed():
            self._tell(
                logging.ERROR,
                "internal error %s %s: %s at %s",
                (ref, what, type(exc).__name__, where(exc)),
            )
        self.log.debug("internal error %s", ref, exc_info=exc)
        return ref

    def _tell(self, level: int, message: str, args: tuple[object, ...]) -> None:
        if self.suppressed:
            message += " (%d more not logged)"
            args = (*args, self.suppressed)
            self.suppressed = 0
        self.log.log(level, message, *args)


def where(exc: BaseException) -> str:
    """``file:line in function`` of the innermost frame that raised ``exc``."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    last = frames[-1]
    return f"{os.path.basename(last.filename)}:{last.lineno} in {last.name}"


_DROPS = FailureLog(log)
FAILURES = FailureLog(logging.getLogger("cardroom"))
"""The process's log of unexpected failures (one line each, rate-limited)."""
