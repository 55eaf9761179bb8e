"""The gamemaster's command metrics: ``cardroom_commands`` (by game type, command type and
outcome) and ``cardroom_command_seconds`` (the time to handle one, by game type)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cardroom_runtime.metrics import Metrics
from cardroom_wire import WireError

from .session import Loaded


@dataclass
class CommandCount:
    kind: str  # the command's type as a label (see :func:`label`)
    outcome: str = "internal"  # ok, or the refusal's code


class CommandCounts:
    """``cardroom_commands`` and ``cardroom_command_seconds``: commands by game type,
    command type and outcome, and the time to handle them."""

    def __init__(self, metrics: Metrics, cached: Callable[[str], Loaded | None]) -> None:
        self._cached = cached  # the game's copy in this process: its game type
        self._commands = metrics.counter(
            "cardroom_commands",
            "Players' commands, by game type, command type and outcome (ok or the code)",
            ["game_type", "command", "outcome"],
        )
        self._seconds = metrics.histogram(
            "cardroom_command_seconds", "Time to handle a command", ["game_type"]
        )
        self._types: dict[str, set[str]] = {}

    @contextmanager
    def command(self, game: str, kind: str) -> Iterator[CommandCount]:
        """Count the command of type ``kind`` to ``game`` handled inside (``ok`` unless it
        raises a WireError). A body refused before its handler is counted by the runtime's
        route metrics, by its code."""
        t0 = time.perf_counter()
        count = CommandCount(label(kind))
        try:
            yield count
            count.outcome = "ok"
        except WireError as exc:
            count.outcome = exc.code
            raise
        finally:
            cached = self._cached(game)
            game_type = cached.state.game_type if cached is not None else "unknown"
            # a label's values must stay few whatever players send: a command type is named
            # once the game has accepted one of it, else it counts as "other"
            known = self._types.setdefault(game_type, set())
            if count.outcome == "ok" and len(known) < 64:
                known.add(count.kind)
            kind = count.kind if count.kind in known else "other"
            self._commands.labels(game_type, kind, count.outcome).inc()
            self._seconds.labels(game_type).observe(time.perf_counter() - t0)


def label(kind: str) -> str:
    """A command's ``type`` as a metrics label: a short printable word, else ``other``."""
    if 0 < len(kind) <= 24 and kind.isascii() and kind.isprintable():
        return kind
    return "other"
