"""Logs: one event a line, with what it concerns, readable at a console or as JSON.

``configure`` sets the process's logging once (``cardroom serve`` and the other commands call
it): ``CARDROOM_LOG_FORMAT=console`` (the default, for ``make run``: time, level, logger,
message, then ``key=value`` context) or ``json`` (docker-compose: one JSON object a line:
``ts``, ``level``, ``logger``, ``msg`` and the context). The context is what the record
concerns, set by the runtime for the request being handled (:func:`bind`): ``service``,
``route``, ``game``, ``player``, and the gamemaster's ``command`` (the command's id); a
record carries the fields that are set. While the process
traces (:mod:`.tracing`), a record logged inside a span carries its ``trace_id`` too, so a
line leads to its trace and a trace to its lines. A record with an exception carries it in
the same line (JSON: ``exc``), so an event stays one line.

What a service logs is about requests and the machinery, never a game's contents: no event
data, no notification or view, so that no log line carries what a player may not see (a
test scans the logs of played Macaua games for every card).
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import time
from typing import Any, Final

from . import tracing

ENV_FORMAT: Final = "CARDROOM_LOG_FORMAT"
FIELDS: Final = ("service", "route", "game", "player", "command", "trace_id")

_EMPTY: Final[dict[str, str]] = {}  # never changed: bind makes a new dict
_context: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("cardroom_log_context")


def bind(**fields: str | None) -> contextvars.Token[dict[str, str]]:
    """Add ``fields`` to the context of the records logged from here on (this task and the
    ones it starts); :func:`unbind` with the token restores the previous context."""
    merged = {**_context.get(_EMPTY), **{k: v for k, v in fields.items() if v}}
    return _context.set(merged)


def unbind(token: contextvars.Token[dict[str, str]]) -> None:
    _context.reset(token)


class ContextFilter(logging.Filter):
    """Puts the bound context on every record (as ``record.context``), and the current
    span's trace id while the process traces."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _context.get(_EMPTY)
        if tracing.enabled() and (trace_id := tracing.trace_id()) is not None:
            context = {**context, "trace_id": trace_id}
        record.context = context
        return True


class ConsoleFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        context: dict[str, str] = getattr(record, "context", {})
        if context:
            line += "  " + " ".join(f"{k}={context[k]}" for k in FIELDS if k in context)
        return line.replace("\n", " | ") if record.exc_info is None else line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        out.update(getattr(record, "context", {}))
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


READY: Final = "cardroom: ready"
"""What a service prints on standard output once it serves (supervisors and tests wait for
it)."""


def json_lines() -> bool:
    """Whether this process logs one JSON object a line (``configure`` chose json)."""
    return any(isinstance(h.formatter, JsonFormatter) for h in logging.getLogger().handlers)


def announce_ready() -> None:
    """Print :data:`READY` on standard output: as a JSON log line when the logs are JSON, so
    that a log shipper that reads a container's output meets nothing else."""
    if json_lines():
        record = logging.LogRecord("cardroom", logging.INFO, __file__, 0, READY, None, None)
        print(JsonFormatter().format(record), flush=True)
    else:
        print(READY, flush=True)


def configure(*, verbose: bool = False, fmt: str | None = None) -> str:
    """Set the root logger's one handler (see the module docs); returns the format used."""
    chosen = (fmt or os.environ.get(ENV_FORMAT, "") or "console").strip().lower()
    if chosen not in ("console", "json"):
        raise ValueError(f"{ENV_FORMAT} must be console or json, not {chosen!r}")
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if chosen == "json" else ConsoleFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    return chosen
