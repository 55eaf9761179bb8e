"""A player may keep only so many tables waiting for players (``CARDROOM_OPEN_TABLES``):
making table after table would bury everyone else's in the lobby's listing and fill the
store. Past the limit a create is refused ``too_many_tables`` with nothing appended; a table
that starts (or is left untouched for the window) makes room again, and other players are
not limited by anyone's tables."""

from __future__ import annotations

import pytest
from cardroom_client import CardroomError
from cardroom_gamemaster import Gamemaster
from cardroom_gamemaster.lobby import open_tables_limit
from sqlalchemy import text
from support.stack import Stack, projected

LIMIT = 3


async def _events(stack: Stack) -> int:
    async with stack.store.engine.connect() as conn:
        return int(await conn.scalar(text("SELECT count(*) FROM events")) or 0)


async def test_a_player_keeps_only_so_many_tables_waiting(stack: Stack) -> None:
    assert stack.host is not None
    gm = next(s for s in stack.host.services if isinstance(s, Gamemaster))
    gm.lobby.open_tables = LIMIT
    alice, bob = await stack.client("alice"), await stack.client("bob")
    waiting = [await alice.create("highcard", {}, seats=2) for _ in range(LIMIT)]
    for game in waiting:
        await projected(stack.store, game)
    before = await _events(stack)
    with pytest.raises(CardroomError) as refused:
        await alice.create("highcard", {}, seats=2)
    assert refused.value.code == "too_many_tables"
    assert await _events(stack) == before  # nothing appended
    # somebody else is not limited by alice's tables
    await bob.create("highcard", {}, seats=2)
    # a table that fills (and so starts) waits no more: room for one more
    await bob.join(waiting[0])
    await projected(stack.store, waiting[0])
    await alice.create("highcard", {}, seats=2)


def test_the_limit_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CARDROOM_OPEN_TABLES", raising=False)
    assert open_tables_limit() == 16
    monkeypatch.setenv("CARDROOM_OPEN_TABLES", "0")
    assert open_tables_limit() == 0
    monkeypatch.setenv("CARDROOM_OPEN_TABLES", "lots")
    with pytest.raises(ValueError, match="CARDROOM_OPEN_TABLES"):
        open_tables_limit()
