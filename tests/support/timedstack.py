"""A cardroom for the timers and chaos tests: the test games, a timers service that looks
often, and a stack object that can reach its services."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from cardroom_runtime.host import Host, Service
from cardroom_timers import Timers
from support.stack import Stack

TESTS = Path(__file__).resolve().parents[1]
GAMES = "support.highcard:GAME,support.timedhighcard:GAME"


class QuickTimers(Timers):
    """Looks for lagging games every half second, after half a second of grace."""

    poll_seconds = 0.5
    recover_seconds = 0.5
    recover_grace = 0.5


@dataclass
class TimedStack(Stack):
    host: Host | None = None
    env: dict[str, str] = field(default_factory=dict)

    def service(self, kind: type[Service]) -> Service:
        assert self.host is not None
        return next(s for s in self.host.services if isinstance(s, kind))


MakeStack = Callable[..., Awaitable[TimedStack]]


def process_env(database_url: str, nats_url: str, root: str) -> dict[str, str]:
    """The environment of a `cardroom serve <name>` process of this stack."""
    return {
        **os.environ,
        "CARDROOM_DATABASE_URL": database_url,
        "CARDROOM_NATS_URL": nats_url,
        "CARDROOM_SUBJECT_ROOT": root,
        "CARDROOM_GAMES": GAMES,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
