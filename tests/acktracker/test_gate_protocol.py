"""The gate protocol's pieces without servers: its messages are the contract's objects, its
timing constants agree, the gamemaster's side asks the store only when it must, and the
acktracker's side counts each release and its wait once."""

from __future__ import annotations

from collections.abc import Collection
from types import SimpleNamespace
from typing import Any, cast

import pytest
from cardroom_runtime import gate
from cardroom_runtime.host import Runtime
from cardroom_runtime.metrics import Metrics
from cardroom_runtime.shards import Shards
from cardroom_wire import AckReply, Back, Release, ReleaseReply, WireError, parse


def test_the_replies_and_releases_are_the_contracts_objects() -> None:
    assert AckReply(version=3).body() == {"ok": True, "version": 3}
    assert AckReply(version=3, duplicate=True).body() == {
        "ok": True,
        "version": 3,
        "duplicate": True,
    }
    assert Release(game="g1", version=2).body() == {"game": "g1", "version": 2}
    assert Release(game="g1", version=2, open=True).body() == {
        "game": "g1",
        "version": 2,
        "open": True,
    }
    assert ReleaseReply(version=4).body() == {"ok": True, "handled": True, "version": 4}


@pytest.mark.parametrize(
    "body",
    [
        {"game": "g1"},
        {"game": "g1", "version": "2"},
        {"game": "g1", "version": True},
        {"game": "g1", "version": 0},
        {"game": "not an id", "version": 2},
        {"game": "g1", "version": 2, "open": False},
    ],
)
def test_a_malformed_release_is_refused(body: dict[str, Any]) -> None:
    with pytest.raises(WireError):
        parse(Release, body)


def test_a_back_names_a_player_by_a_valid_id() -> None:
    assert parse(Back, {"game": "g1", "player": "bob", "extra": 1}).player == "bob"
    with pytest.raises(WireError):
        parse(Back, {"game": "g1", "player": "bad id!"})


def test_a_handled_mark_comes_before_the_sweep_resends() -> None:
    assert 0 < gate.MARK_DELAY < gate.RELEASE_GRACE


class _Store:
    """The two gate reads the gamemaster's side makes, recorded."""

    def __init__(self, is_open: bool) -> None:
        self.is_open = is_open
        self.asked: list[tuple[str, list[int]]] = []

    async def gate_open(self, stream_id: str, *, handled: Collection[int] = ()) -> bool:
        self.asked.append((stream_id, sorted(handled)))
        return self.is_open


def _runtime(store: _Store) -> Runtime:
    return cast(Runtime, SimpleNamespace(shards=Shards([cast(Any, store)]), metrics=Metrics()))


async def test_a_gate_seen_open_is_not_asked_again_at_that_version() -> None:
    store = _Store(is_open=True)
    follower = gate.Follower(_runtime(store))
    seen = gate.GameGate()
    assert await follower.is_open(seen, "g1", 5, {4})
    assert seen.open_at == 5
    assert await follower.is_open(seen, "g1", 5)
    assert store.asked == [("g1", [4])]  # the second answer came from memory
    store.is_open = False
    assert not await follower.is_open(seen, "g1", 6)  # a newer version asks again
    assert store.asked == [("g1", [4]), ("g1", [])]


async def test_a_held_game_takes_the_released_gates_marks_with_its_answer() -> None:
    store = _Store(is_open=False)
    follower = gate.Follower(_runtime(store))
    handled = {3, 4}
    assert not await follower.is_open(gate.GameGate(), "g1", 5, handled)
    assert store.asked == [("g1", [3, 4])]
    assert handled == set()  # marked by that statement: nothing left for the caller


def test_the_next_append_marks_the_newest_unmarked_gate() -> None:
    seen = gate.GameGate()
    assert seen.piggyback() is None
    seen.unmarked.update({2, 7, 5})
    assert seen.piggyback() == 7


def test_each_release_is_counted_with_its_wait_by_game_type() -> None:
    metrics = Metrics()
    releases = gate.Releases(cast(Runtime, SimpleNamespace(metrics=metrics)))
    releases.count("take5", 0.25)
    releases.count("take5", 1.5)
    releases.count(None, None)  # a store that does not measure: counted, not timed
    value = metrics.registry.get_sample_value
    assert value("cardroom_gates_released_total") == 3
    assert value("cardroom_gate_wait_seconds_count", {"game_type": "take5"}) == 2
    assert value("cardroom_gate_wait_seconds_sum", {"game_type": "take5"}) == 1.75
    assert value("cardroom_gate_wait_seconds_bucket", {"game_type": "take5", "le": "0.25"}) == 1
