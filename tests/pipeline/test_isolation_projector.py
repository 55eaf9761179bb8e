"""The projector's batches: one that fails is projected again event by event, so only a bad
event stays unacknowledged (JetStream delivers it again) while the others are acknowledged;
when the database is unreachable every event would fail alike, and none is retried."""

from __future__ import annotations

from typing import Any, cast

import asyncpg
from cardroom_projector import Projector


class Message:
    def __init__(self, name: str) -> None:
        self.subject = name
        self.acked = False

    async def ack(self) -> None:
        self.acked = True


class Scripted(Projector):
    """A projector whose projection fails for the records named in ``fail``."""

    def __init__(self, fail: dict[str, Exception]) -> None:
        super().__init__(cast(Any, None))  # no runtime: nothing here reaches it
        self.fail = fail
        self.calls: list[list[str]] = []

    async def handle_many(self, records: list[dict[str, Any]]) -> None:
        names = [r["game"] for r in records]
        self.calls.append(names)
        for name in names:
            if name in self.fail:
                raise self.fail[name]


async def project(projector: Scripted, names: list[str]) -> dict[str, bool]:
    messages = [Message(n) for n in names]
    batch = [({"game": n, "version": 1}, m) for n, m in zip(names, messages, strict=True)]
    await projector._project_batch(batch)  # type: ignore[arg-type]
    return {m.subject: m.acked for m in messages}


async def test_a_bad_event_stays_unacknowledged_alone() -> None:
    projector = Scripted({"bad": ValueError("cannot project")})
    acked = await project(projector, ["a", "bad", "c"])
    assert acked == {"a": True, "bad": False, "c": True}
    assert projector.calls == [["a", "bad", "c"], ["a"], ["bad"], ["c"]]


async def test_an_unreachable_database_retries_nothing_and_acknowledges_nothing() -> None:
    projector = Scripted({"b": ConnectionRefusedError("no database")})
    acked = await project(projector, ["a", "b", "c"])
    assert acked == {"a": False, "b": False, "c": False}
    assert projector.calls == [["a", "b", "c"]]


async def test_events_after_one_that_met_an_unreachable_database_are_not_tried() -> None:
    down = asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed")
    projector = Scripted({"bad": ValueError("cannot project"), "d": down})
    acked = await project(projector, ["a", "bad", "d", "e"])
    assert acked == {"a": True, "bad": False, "d": False, "e": False}
    assert projector.calls == [["a", "bad", "d", "e"], ["a"], ["bad"], ["d"]]
