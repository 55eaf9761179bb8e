"""A PostgreSQL that refuses a connection for want of room (too many connections) is storage
unavailable, as one that cannot be reached is: a request is answered ``unavailable``, which a
client retries, not ``internal`` (tests/runtime/test_typed_handlers.py: the reply). Shown with
a real server refusing a role's connections."""

from __future__ import annotations

import pytest
from cardroom_eventstore import Append, EventStore, NewEvent
from cardroom_runtime.host import storage_unavailable
from sqlalchemy import make_url


@pytest.fixture
def full_url(es_database_url: str, roomless_role: str) -> str:
    """The test database as a role the server refuses every connection (SQLSTATE 53300)."""
    url = make_url(es_database_url).set(username=roomless_role, password=None)
    return url.render_as_string(hide_password=False)


async def test_a_server_without_room_is_storage_unavailable(full_url: str) -> None:
    store = await EventStore.connect(full_url)
    try:
        refusals: list[Exception] = []
        try:  # an append: the store's own asyncpg pool
            await store.append(
                Append("g", "take5", 0, [NewEvent("dealt", {}, {}, frozenset({"amy"}))])
            )
        except Exception as exc:
            refusals.append(exc)
        try:  # a read: through SQLAlchemy, which wraps asyncpg's error in its own
            await store.read_stream("g")
        except Exception as exc:
            refusals.append(exc)
    finally:
        await store.close()
    assert len(refusals) == 2
    for refusal in refusals:
        assert "too many connections" in repr(refusal) or "too many connections" in repr(
            refusal.__cause__
        )
        assert storage_unavailable(refusal)  # so a handler answers it ``unavailable``
