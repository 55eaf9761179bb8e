"""Analytics' consumer loop at a stop (no servers: a stand-in subscription)."""

from __future__ import annotations

import logging
from typing import Any, cast

import pytest
from cardroom_analytics import Analytics
from cardroom_eventstore import EventStore
from cardroom_runtime.host import Runtime
from cardroom_wire import Subjects
from faststream.nats import NatsBroker
from nats.errors import ConnectionClosedError


class ClosedUnderTheFetch:
    """A fetch during which the stop closes the connection (its cancellation lost)."""

    def __init__(self, analytics: Analytics) -> None:
        self.analytics = analytics
        self.fetches = 0

    async def fetch(self, batch: int, timeout: float) -> list[Any]:
        self.fetches += 1
        self.analytics._stopping = True
        raise ConnectionClosedError


async def test_a_fetch_that_the_stop_cut_short_ends_the_loop_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    analytics = Analytics(Runtime(Subjects("unit"), NatsBroker(), cast(EventStore, None), "", ""))
    analytics._lead = cast(Any, object())  # leading: no database asked
    sub = ClosedUnderTheFetch(analytics)
    with caplog.at_level(logging.WARNING, logger="cardroom.analytics"):
        await analytics._run(cast(Any, sub))
    assert sub.fetches == 1
    assert [r.getMessage() for r in caplog.records if r.name == "cardroom.analytics"] == []
