"""A command's log lines name it: the gamemaster binds the command's id to what is logged
while the command is handled, the host's own line of the request included."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import pytest
from cardroom_client import CardroomError, Client
from cardroom_gamemaster import Gamemaster
from cardroom_runtime import logs
from cardroom_runtime.host import Host


async def test_the_request_line_of_a_command_carries_its_id(
    nats_url: str, subject_root: str, fresh_database: Callable[..., Awaitable[str]]
) -> None:
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    keep = Keep(level=logging.DEBUG)
    keep.addFilter(logs.ContextFilter())
    runtime_log = logging.getLogger("cardroom")
    before = runtime_log.level
    runtime_log.setLevel(logging.DEBUG)
    runtime_log.addHandler(keep)
    host = Host(
        [Gamemaster],
        nats_url=nats_url,
        database_url=await fresh_database(migrated=True),
        subject_root=f"{subject_root}lctx",
    )
    await host.start()
    try:
        client = await Client.connect(nats_url, "p9", subject_root=host.subjects.root)
        try:
            with pytest.raises(CardroomError) as refused:
                await client.command("nosuchgame", "bet", command_id="c-the-one", amount=1)
            assert refused.value.code == "unknown_game"
        finally:
            await client.close()
    finally:
        await host.stop()
        runtime_log.removeHandler(keep)
        runtime_log.setLevel(before)
    lines = [r for r in seen if getattr(r, "context", {}).get("route") == "commands"]
    assert lines, [r.getMessage() for r in seen]
    assert all(r.context["command"] == "c-the-one" for r in lines)  # type: ignore[attr-defined]
    assert all(r.context["player"] == "p9" for r in lines)  # type: ignore[attr-defined]
