"""The event record's readers: the model (``EventRecord.decode``, for any subscriber) and the
projector's cheap one (``EventRecord.read``), over what the relay publishes."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest
from cardroom_wire.events import BadRecord, EventRecord


def published(**changed: object) -> bytes:
    record = EventRecord.payload(
        event_id="e-1",
        position=7,
        game="g-1",
        game_type="take5",
        version=3,
        type="take5.played",
        data={"card": 42},
        metadata={"to": ["a", "b"]},
        recorded_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    return orjson.dumps({**record, **changed})


def test_both_readers_read_what_the_relay_publishes_alike() -> None:
    body = published()
    assert EventRecord.read(body) == orjson.loads(body)
    decoded = EventRecord.decode(body)
    assert decoded.model_dump(mode="json") == {
        **orjson.loads(body),
        "recorded_at": "2026-01-02T03:04:05Z",
    }


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[1, 2]",
        b'"g-1"',
        published(game=5),
        published(version="3"),
        published(version=True),
        orjson.dumps({"version": 3}),
    ],
)
def test_the_cheap_reader_refuses_what_a_follower_cannot_key(body: bytes) -> None:
    with pytest.raises(BadRecord):
        EventRecord.read(body)
