"""What the gamemaster remembers of signed games' checks is bounded: a process that serves
signed games for months keeps the marks of the ``KEPT`` games it looked at last, and checks a
game it forgot again from its start (as another instance would)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from cardroom_engine import TableState
from cardroom_eventstore import EventStore
from cardroom_gamemaster import signing


class Store:
    """Just what the check reads, with no signatures owed or kept: every look is from
    ``after``, recorded."""

    def __init__(self) -> None:
        self.looks: list[tuple[str, int, int]] = []

    async def signatures_since(self, game: str, after: int, upto: int) -> dict[Any, Any]:
        self.looks.append((game, after, upto))
        return {}

    async def pending(self, game: str) -> dict[int, set[str]]:
        return {}

    async def read_stream(self, game: str, first: int, last: int) -> list[Any]:
        return []


def state(game: str, version: int) -> TableState:
    return cast(
        TableState,
        SimpleNamespace(game_id=game, status="playing", version=version, seats=(), game=None),
    )


async def test_the_marks_of_checked_games_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signing, "KEPT", 3)
    store = Store()
    checks = signing.TransitionSignatures(lambda _: cast(EventStore, store))
    rules = SimpleNamespace(signed_transitions=True, name="signed")
    for game in ("g0", "g1", "g2", "g3"):
        assert await checks.halt(rules, state(game, 5)) == []
    assert len(checks._checked) == 3
    await checks.halt(rules, state("g1", 7))  # remembered: from where it was checked to
    await checks.halt(rules, state("g0", 7))  # forgotten: from the start again
    assert store.looks[-2:] == [("g1", 5, 7), ("g0", 0, 7)]
    assert list(checks._checked) == ["g3", "g1", "g0"]
