"""The analytics fold, in memory: exactly-once decisions, counters, ratings."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from analytics_support import records_of, simulate, tournament_records
from cardroom_analytics import BadRecord, Ledger, Record, kind_of, ordinal
from cardroom_engine import registry

TAKE5 = "take5"


def _records(raw: list[dict[str, Any]]) -> list[Record]:
    return [Record.parse(r) for r in raw]


def test_kind_of_players_named_after_their_bot() -> None:
    assert kind_of("heuristic-1") == "heuristic"
    assert kind_of("random-12") == "random"
    assert kind_of("alice") is None
    assert kind_of("bot0x1") is None
    assert kind_of("-1") is None


def test_a_record_is_validated() -> None:
    good = records_of(simulate(registry.get("highcard"), ["a", "b"], 1), "g1")[0]
    assert Record.parse(good).game == "g1"
    for broken in (
        {**good, "version": 0},
        {**good, "version": "1"},
        {**good, "game": ""},
        {**good, "data": []},
        {**good, "recorded_at": "yesterday"},
        {**good, "recorded_at": "2026-01-01T00:00:00"},  # no time zone
        [good],
    ):
        with pytest.raises(BadRecord):
            Record.parse(broken)
    with pytest.raises(BadRecord):
        Record.decode(b"{not json")


def test_each_event_counts_once_whatever_is_delivered_twice_or_early() -> None:
    game = registry.get("highcard")
    raw = records_of(simulate(game, ["a", "b"], 3, config={"rounds": 2}), "g1")
    records = _records(raw)
    ledger = Ledger()
    # the third event arrives first: it must wait for the first two
    assert ledger.apply(records[2]) == "gap"
    assert [ledger.apply(r) for r in records] == ["apply"] * len(records)
    # everything again (a redelivery, a duplicate on the stream): no effect at all
    before = json.dumps(
        [ledger.games["g1"].__dict__, [r.__dict__ for r in ledger.results]], default=str
    )
    assert {ledger.apply(r) for r in records} == {"duplicate"}
    after = json.dumps(
        [ledger.games["g1"].__dict__, [r.__dict__ for r in ledger.results]], default=str
    )
    assert before == after
    row = ledger.games["g1"]
    assert row.version == row.events == len(records)
    assert row.status == "finished"
    assert row.seats == ["a", "b"]
    assert row.outcome == raw[-1]["data"]["outcome"]
    assert row.duration_s is not None
    assert row.duration_s > 0
    stats = ledger.types["highcard"]
    assert (stats.created, stats.started, stats.finished) == (1, 1, 1)
    assert stats.events == len(records)
    assert len(ledger.results) == 2
    assert ledger.ratings[("highcard", "a")].games == 1


def test_a_move_is_one_players_command_whoever_else_names_the_same_id() -> None:
    """Command ids are each player's own: the events of one move share its player and id,
    and two seats' moves under the same id are two moves."""
    raw = records_of(simulate(registry.get("highcard"), ["a", "b"], 3), "g1")
    bets = [r for r in raw if r["type"].endswith("bet_placed")]
    assert len(bets) >= 2
    for i, record in enumerate(bets):
        record["metadata"] = {"actor": "ab"[i % 2], "command_id": "c1"}
    ledger = Ledger()
    assert {ledger.apply(r) for r in _records(raw)} == {"apply"}
    assert ledger.games["g1"].moves == len(bets)


def test_plan_matches_apply() -> None:
    raw = records_of(simulate(registry.get("highcard"), ["a", "b"], 4), "g1")
    records = _records(raw)
    shuffled = [records[1], records[0], records[0], *records[1:]]
    ledger = Ledger()
    planned = ledger.plan(shuffled)
    assert planned == [ledger.apply(r) for r in shuffled]
    assert planned[:3] == ["gap", "apply", "duplicate"]


def test_the_stronger_bot_ends_above_the_weaker() -> None:
    """take5, heuristic against random, seats alternating: ratings move the right way."""
    records = _records(tournament_records(registry.get(TAKE5), ["heuristic-1", "random-1"], 12))
    ledger = Ledger()
    for record in records:
        assert ledger.apply(record) == "apply"
    h = ledger.ratings[(TAKE5, "heuristic-1")]
    r = ledger.ratings[(TAKE5, "random-1")]
    assert h.games == r.games == 12
    assert h.wins > r.wins
    assert ordinal(h.mu, h.sigma) > ordinal(r.mu, r.sigma)
    assert h.mu > 25 > r.mu  # both started at the default 25
    assert h.kind == "heuristic"
    assert r.kind == "random"
    # every result row remembers the rating before and after its game, in order
    mine = [x for x in ledger.results if x.player_id == "heuristic-1"]
    assert mine[0].mu_before == 25
    assert all(a.mu_after == b.mu_before for a, b in itertools.pairwise(mine))
    assert (mine[-1].mu_after, mine[-1].sigma_after) == (h.mu, h.sigma)


def test_a_game_that_ranks_everyone_together_has_no_winner() -> None:
    """A ranking of one place (a draw: Macaua's turn limit) counts a game for every seat and
    a win for none; a ranking of two places with a tie at the top, a win for each."""
    raw = records_of(simulate(registry.get("highcard"), ["a", "b", "c"], 3), "g1")
    finished = raw[-1]
    assert finished["type"] == "table.finished"
    for ranking, winners in (([["a", "b", "c"]], set()), ([["a", "b"], ["c"]], {"a", "b"})):
        outcome = {**finished["data"]["outcome"], "ranking": ranking}
        edited = [*raw[:-1], {**finished, "data": {**finished["data"], "outcome": outcome}}]
        ledger = Ledger()
        for record in _records(edited):
            assert ledger.apply(record) == "apply"
        assert {r.player_id for r in ledger.results if r.won} == winners
        assert [ledger.ratings[("highcard", p)].games for p in "abc"] == [1, 1, 1]
        assert sum(ledger.ratings[("highcard", p)].wins for p in "abc") == len(winners)
