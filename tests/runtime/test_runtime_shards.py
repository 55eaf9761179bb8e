"""The event store's shards: the game -> shard rule, the list of URLs, and what the
gamemaster may name (cardroom_runtime.shards)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from cardroom_runtime.settings import Settings, SettingsError
from cardroom_runtime.shards import Shards, game_id, shard_index
from cardroom_wire import WireError, check_id

A = "postgresql+asyncpg://u:p@db1:5432/cardroom"
B = "postgresql+asyncpg://u:p@db2:5432/cardroom"


def _shards(n: int) -> Shards:
    # the rule needs only objects to hand out: each "store" is its index
    return Shards([cast(Any, f"store{i}") for i in range(n)])


@pytest.mark.parametrize(
    ("game", "shard"),
    [
        ("g0123456789abcdef", 0),  # a single database's ids, and every id made before shards
        ("table-7", 0),
        ("s1-g0123456789abcdef", 1),
        ("s12-x", 12),
        ("s0-x", 0),  # no shard 0 mark: an id like any other
        ("s01-x", 0),  # no leading zero
        ("s1x", 0),
        ("s-1-x", 0),
        ("S1-x", 0),
        ("seat-1", 0),
    ],
)
def test_the_shard_is_read_from_the_id(game: str, shard: int) -> None:
    assert shard_index(game) == shard


def test_new_ids_name_their_shard_and_are_subject_tokens() -> None:
    for shard in range(4):
        made = game_id(shard)
        check_id(made)
        assert shard_index(made) == shard
    assert game_id(0).startswith("g")  # shard 0's ids are those of a single database


def test_one_shard_holds_every_game_without_reading_the_id() -> None:
    shards = _shards(1)
    assert shards.of("s5-anything") == "store0"
    assert shards.of("g1") == "store0"


def test_several_shards_route_by_id_and_a_missing_shard_names_no_game() -> None:
    shards = _shards(2)
    assert shards.of("g1") == "store0"
    assert shards.of("s1-g1") == "store1"
    with pytest.raises(WireError) as caught:
        shards.of("s2-g1")
    assert caught.value.code == "unknown_game"


def test_new_games_take_every_shard_in_turn() -> None:
    shards = _shards(3)
    made = [shard_index(shards.new_game_id()) for _ in range(6)]
    assert made == [0, 1, 2, 0, 1, 2]


def test_a_creator_may_not_name_a_shard_that_is_not_there() -> None:
    one = _shards(1)
    one.check_new("my-table")
    with pytest.raises(WireError) as caught:
        one.check_new("s1-my-table")  # it would move once a second shard is added
    assert caught.value.code == "bad_id"
    _shards(2).check_new("s1-my-table")


def test_split_keeps_each_shards_items_in_order() -> None:
    shards = _shards(2)
    items = ["g1", "s1-a", "g2", "s1-b", "s7-c"]
    # an id naming a missing shard goes to shard 0, whose store finds nothing of it
    assert shards.split(items, str) == [["g1", "g2", "s7-c"], ["s1-a", "s1-b"]]


def test_the_database_url_lists_shards_each_normalised() -> None:
    settings = Settings.from_env(
        {
            "CARDROOM_DATABASE_URL": " postgres://u:p@db1:5432/cardroom , postgresql://u:p@db2/cardroom"
        }
    )
    assert settings.database_urls == [A, "postgresql+asyncpg://u:p@db2/cardroom"]
    assert settings.database_url == f"{A},postgresql+asyncpg://u:p@db2/cardroom"
    one = Settings.from_env({"CARDROOM_DATABASE_URL": A})
    assert one.database_urls == [A]
    assert Settings.from_env({}).database_urls == []
    assert Settings(database_url=f"{A},{B}").database_urls == [A, B]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (f"{A},,{B}", "empty URL"),
        (f"{A},", "empty URL"),
        (f"{A},{A}", "listed twice"),
        (f"{A},mysql://u:secret@db/x", "shard 2 of 2: not a PostgreSQL URL"),
    ],
)
def test_a_bad_list_of_shards_is_refused_without_its_passwords(value: str, says: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"CARDROOM_DATABASE_URL": value})
    assert says in str(caught.value)
    assert "secret" not in str(caught.value)
    assert ":p@" not in str(caught.value)


async def test_scatter_runs_each_shards_share_once_and_answers_in_order() -> None:
    shards = _shards(3)
    calls: list[tuple[str, list[str]]] = []

    async def run(store: Any, items: list[str]) -> list[str]:
        calls.append((store, items))
        return [f"{store}:{item}" for item in items]

    items = ["s2-a", "g1", "s2-b", "g2"]
    assert await shards.scatter(items, str, run) == [
        "store2:s2-a",
        "store0:g1",
        "store2:s2-b",
        "store0:g2",
    ]
    # shard 1 had nothing: not asked
    assert sorted(calls) == [("store0", ["g1", "g2"]), ("store2", ["s2-a", "s2-b"])]


async def test_every_shard_must_answer_before_anything_starts(
    database_url: str, tmp_path: Path
) -> None:
    from cardroom_runtime.discovery import DiscoveryError, discover
    from cardroom_runtime.embedded import free_port

    port = free_port()
    missing = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    settings = Settings(database_url=f"{database_url},{missing}", data_dir=tmp_path)
    with pytest.raises(DiscoveryError, match=rf"CARDROOM_DATABASE_URL=.*:{port}.*cannot be used"):
        await discover(settings, probe_timeout=1)


def test_the_status_of_several_shards_is_their_sum() -> None:
    from cardroom_eventstore.status import Snapshot, TableCount, combined

    one = Snapshot(
        tables=[TableCount("take5", "playing", 2, 8, 1)],
        gates_waiting=3,
        oldest_gate_seconds=1.5,
        relay_behind=4,
        projector_behind=5,
        events_last_minute=60,
    )
    two = Snapshot(
        tables=[TableCount("take5", "playing", 1, 4, 0), TableCount("papas", "open", 1, 1, 0)],
        gates_waiting=1,
        oldest_gate_seconds=7.0,
        relay_behind=0,
        projector_behind=2,
        events_last_minute=40,
    )
    assert combined([one]) is one
    assert combined([one, two]) == Snapshot(
        tables=[TableCount("papas", "open", 1, 1, 0), TableCount("take5", "playing", 3, 12, 1)],
        gates_waiting=4,
        oldest_gate_seconds=7.0,
        relay_behind=4,
        projector_behind=7,
        events_last_minute=100,
    )
