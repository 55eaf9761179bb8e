"""The analytics queries' typed handler through FastStream's test broker: what a query parses
to, and what is refused before any SQL runs (no database, no NATS server; the answers from
real tables are tests/analytics/test_analytics_consumer.py's)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import orjson
import pytest
from cardroom_analytics import Analytics, query_subject
from cardroom_analytics import service as analytics_service
from cardroom_analytics.queries import AnyQuery, GamesQuery, LeaderboardQuery, StatsQuery
from cardroom_eventstore import EventStore
from cardroom_runtime.host import Runtime
from cardroom_wire import MAX_MESSAGE_BYTES, Subjects
from faststream.nats import NatsBroker, TestNatsBroker
from sqlalchemy.ext.asyncio import AsyncEngine

S = Subjects("unit")


class Queries:
    def __init__(self, broker: Any, asked: list[tuple[str, AnyQuery]]) -> None:
        self.broker = broker
        self.asked = asked  # what reached the query functions

    async def ask(self, verb: str, body: bytes) -> dict[str, Any]:
        reply = await self.broker.request(body, query_subject(S, verb))
        answer: dict[str, Any] = orjson.loads(reply.body)
        return answer


@pytest.fixture
async def queries(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Queries]:
    asked: list[tuple[str, AnyQuery]] = []
    real = analytics_service.answer

    async def answer(engine: AsyncEngine, verb: str, query: AnyQuery) -> dict[str, Any]:
        if query.type == verb:  # (the real one refuses the others, before any SQL)
            asked.append((verb, query))
            return {"ok": True}
        return await real(engine, verb, query)

    monkeypatch.setattr(analytics_service, "answer", answer)
    broker = NatsBroker()
    analytics = Analytics(Runtime(S, broker, cast(EventStore, None), "nats://unused", ""))
    analytics._engine = cast(AsyncEngine, object())  # never used: no SQL runs here
    analytics.register()
    async with TestNatsBroker(broker) as test_broker:
        yield Queries(test_broker, asked)


async def test_a_query_is_its_verbs_model_and_a_blank_body_is_an_empty_one(
    queries: Queries,
) -> None:
    assert await queries.ask("stats", b"") == {"ok": True}
    assert await queries.ask("leaderboard", b'{"game_type": "take5", "limit": 3}') == {"ok": True}
    assert await queries.ask("games", b'{"type": "games", "status": "finished"}') == {"ok": True}
    assert queries.asked == [
        ("stats", StatsQuery()),
        ("leaderboard", LeaderboardQuery(game_type="take5", limit=3)),
        ("games", GamesQuery(status="finished")),
    ]


@pytest.mark.parametrize(
    ("verb", "body", "code"),
    [
        ("stats", b"[1, 2", "bad_json"),
        ("stats", b'{"pad": "' + b"x" * MAX_MESSAGE_BYTES + b'"}', "too_large"),
        ("nope", b"{}", "bad_request"),
        ("stats", b'{"extra": 1}', "bad_request"),
        ("stats", b'{"type": "game", "game": "g1"}', "bad_request"),
        ("leaderboard", b"{}", "bad_request"),
        ("leaderboard", b'{"game_type": "take5", "limit": 0}', "bad_request"),
        ("leaderboard", b'{"game_type": "take5", "limit": true}', "bad_request"),
        ("leaderboard", b'{"game_type": "take5", "players": "x"}', "bad_request"),
        ("games", b'{"status": "sleeping"}', "bad_request"),
        ("player", b'{"player": ""}', "bad_request"),
    ],
)
async def test_a_bad_query_is_refused_before_any_sql(
    queries: Queries, verb: str, body: bytes, code: str
) -> None:
    answer = await queries.ask(verb, body)
    assert answer["ok"] is False
    assert answer["error"]["code"] == code
    assert queries.asked == []
