"""Logs: one event a line, with what it concerns (cardroom_runtime.logs).

The formats on their own, and a real host: a record logged while a request is handled
carries the service, route, game and player of that request, and nothing after it."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from cardroom_client import Client
from cardroom_runtime import logs
from cardroom_runtime.host import Asker, Host, Service
from cardroom_wire import Command, ok

log = logging.getLogger("cardroom.test_logs")


def _record(msg: str, *, exc: bool = False, **context: str) -> logging.LogRecord:
    token = logs.bind(**context)
    try:
        exc_info = None
        if exc:
            try:
                raise ValueError("bad\nvalue")
            except ValueError:
                exc_info = sys.exc_info()
        record = log.makeRecord(log.name, logging.WARNING, __file__, 1, msg, (), exc_info)
        logs.ContextFilter().filter(record)
        return record
    finally:
        logs.unbind(token)


def test_json_is_one_object_a_line_with_the_context() -> None:
    line = logs.JsonFormatter().format(_record("refused", service="gamemaster", game="g1"))
    assert "\n" not in line
    out = json.loads(line)
    assert out["msg"] == "refused"
    assert out["level"] == "warning"
    assert out["logger"] == "cardroom.test_logs"
    assert (out["service"], out["game"]) == ("gamemaster", "g1")
    assert "player" not in out  # only the fields that are set
    assert out["ts"].endswith("Z")


def test_an_exception_stays_in_its_line() -> None:
    line = logs.JsonFormatter().format(_record("failed", exc=True))
    assert "\n" not in line
    assert "ValueError" in json.loads(line)["exc"]


def test_the_console_puts_the_context_after_the_message() -> None:
    text = logs.ConsoleFormatter().format(_record("hello\nthere", player="p1", route="acks"))
    assert text.endswith("hello | there  route=acks player=p1")


def test_context_is_restored_after_unbind() -> None:
    outer = logs.bind(service="a")
    inner = logs.bind(game="g")
    logs.unbind(inner)
    record = _record("x")
    assert record.context == {"service": "a"}  # type: ignore[attr-defined]
    logs.unbind(outer)
    assert _record("y").context == {}  # type: ignore[attr-defined]


def test_configure_refuses_an_unknown_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(logs.ENV_FORMAT, "xml")
    root = logging.getLogger()
    before = list(root.handlers), root.level
    with pytest.raises(ValueError, match="console or json"):
        logs.configure()
    assert (list(root.handlers), root.level) == before


class Echo(Service):
    """A route that logs while it handles a request."""

    name = "echo"

    def register(self) -> None:
        self.serve(
            self.subjects.cmd_all,
            queue="echo",
            title="commands",
            model=Command,
            handler=self.on_cmd,
            max_workers=2,
        )

    async def on_cmd(self, command: Command, asker: Asker) -> dict[str, Any]:
        log.warning("handling")
        return ok()


async def test_a_request_binds_its_service_route_game_and_player(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> None:
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    keep = Keep()
    keep.addFilter(logs.ContextFilter())
    log.addHandler(keep)
    host = Host(
        [Echo],
        nats_url=nats_url,
        database_url=await fresh_database(migrated=True),
        subject_root=f"{subject_root}logs",
    )
    await host.start()
    try:
        client = await Client.connect(nats_url, "p7", subject_root=host.subjects.root)
        try:
            await client.request(host.subjects.cmd("g42", "p7"), {"type": "x", "id": "c1"})
        finally:
            await client.close()
        log.warning("after")
    finally:
        await host.stop()
        log.removeHandler(keep)
    handling, after = seen[0], seen[-1]
    assert handling.getMessage() == "handling"
    assert handling.context == {  # type: ignore[attr-defined]
        "service": "echo",
        "route": "commands",
        "game": "g42",
        "player": "p7",
    }
    assert after.context == {}  # type: ignore[attr-defined]
