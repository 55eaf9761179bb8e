"""bench/history.py: the benchmarks' figures over time, from the kept lines
(bench/history.jsonl) and the full JSON results."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str, file: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / file)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (a dataclass of the module looks its module up)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def history() -> ModuleType:
    return _load("bench_history", "history.py")


def _write(folder: Path, name: str, data: dict[str, Any]) -> None:
    (folder / name).write_text(json.dumps(data))


def _pipeline(when: str, commit: str, p50: float, *, dirty: bool = False) -> dict[str, Any]:
    return {
        "benchmark": "pipeline",
        "when": when,
        "git": {"commit": commit, "dirty": dirty},
        "floor_ms": {"p50": 1.0, "p99": 2.0},
        "latency_ms": {"p50": p50, "p99": 4.0},
        "latency_over_floor_p50": p50 / 1.0,
        "target": {"verdict": "PASS" if p50 <= 3 else "MISS"},
    }


# Full results as common.Report.write makes them, one per benchmark, at their default sizes
# (the shapes of each bench's ``report.data``; the figures are made up, only their shape
# and count matter here).
MACHINE = {"cpus": 2, "loadavg_before": [1.5, 1.2, 1.0], "loadavg_after": [2.0, 1.4, 1.1]}
GIT = {"commit": "f876c92" + "0" * 33, "dirty": True}
ROUND = {
    "ours_events_per_second_held_against_target": 1712.3456789,
    "ours_events_per_second_sustained": 1733.123456,
    "ours_events_per_second_wall": 1601.987654,
    "ours_cpu_seconds_by_process": {"gamemaster": 3.2, "relay": 2.1, "bench": 4.4},
    "followers_catch_up_seconds": 0.123456,
    "peer_events_per_second": 651.23456,
    "peer_cpu_seconds": 5.4321,
    "ours_over_peer": 2.629384756,
}
GAME = {
    "players": 2,
    "moves": "random legal",
    "games": 120,
    "commands": 12345,
    "events": 23456,
    "seconds": 3.0001234,
    "commands_per_second": 4114.987,
    "events_per_second": 7818.654321,
    "floor_state_copies_per_second": 91234.56789,
    "events_over_floor": 0.0856987,
}
MEMORY = {
    "games": 1000,
    "distinct_logs": 20,
    "players": 2,
    "events_per_game": 61.45,
    "tracemalloc_bytes_per_game": 12345.678,
    "rss_bytes_per_game": 23456.789,
    "log_json_bytes_per_game": 9876.54321,
    "lobby_table_bytes": 2345.6789,
    "state_over_log": 1.2499,
}


def _deal(players: int, deal: str, ratio: float) -> dict[str, Any]:
    phase = {"clients": 0.41234567, "server": 0.2345678}
    return {
        "players": players,
        "deal": deal,
        "phases": {p: phase for p in ("keys", "shuffle", "mask", "deal")},
        "total": 1.5123456789,
        "scalarmult_s": 0.000112345678,
        "scalarmult_samples": [0.0000745678, 0.000222345],
        "floor": 0.12345678,
        "ratio": ratio,
        "old_floor": 0.1012345,
        "old_ratio": ratio * 1.1,
        "verdict": "PASS" if ratio <= 20 else "MISS",
        "bare": 0.3456789,
    }


def _phase(p50: float, p99: float, floor_p99: float) -> dict[str, Any]:
    """One phase of bench_load: its latencies and the floor sampled in it."""
    return {
        "latency_ms": {"p50": p50, "p99": p99, "p999": p99 * 1.5, "n": 500},
        "floor_ms": {"p50": 1.0123, "p99": floor_p99, "p999": floor_p99 * 1.2, "n": 500},
        "p50_over_floor": p50 / 1.0123,
        "p99_over_floor": p99 / floor_p99,
        "commands_per_type": {"take5": 260, "sixtysix": 240},
        "p99_over_idle_floor": p99 / 3.123456,
    }


def _result(name: str, sizes: dict[str, Any], settings: dict[str, Any], **data: Any) -> Any:
    return {
        "benchmark": name,
        "when": "2026-11-26T23:59:01+0000",
        "seconds": 123.456789,
        "git": GIT,
        "machine": {**MACHINE, "python": "3.12.3"},
        "sizes": sizes,
        "settings": settings,
        **data,
    }


RESULTS: dict[str, dict[str, Any]] = {
    "footprint": _result(
        "footprint",
        {"games": 1000},
        {"mix": ["take5", "sixtysix", "papas"], "players": 2},
        games_in_play=1000,
        rss_idle_bytes={"gamemaster": 100_663_296, "relay": 99_614_720},
        kib_per_game={"gamemaster": 3.456789, "relay": 0.5123},
        target={"gamemaster_kib_per_game_at_most": 20.0, "verdict": "PASS"},
    ),
    "recovery": _result(
        "recovery",
        {"tables": 12, "rounds": 1},
        {"services": ["gamemaster", "relay"], "mix": ["take5", "sixtysix", "papas"]},
        recovery_s={"gamemaster": 1.87654321, "relay": 0.0123456},
        recovery_max_s=1.87654321,
        floor_s=0.13456789,
        kills={"gamemaster": [{"games": 12, "slowest_s": 1.87654321, "stalled": 0}]},
        target={"recovery_at_most_s": 2.0, "verdict": "PASS"},
    ),
    "pipeline": _result(
        "pipeline",
        {"latency_games": 30, "floor": 300},
        {"floor_pause_s": 0.002},
        where="postgresql://localhost:5432, nats://localhost:4222",
        floor_ms={"p50": 1.0123456, "p99": 2.3456789, "n": 300, "pause_s": 0.002},
        floor_back_to_back_ms={"p50": 0.87654321, "p99": 1.5, "n": 300},
        latency_over_back_to_back_floor_p50=2.19876543,
        latency_ms={"p50": 1.92345678, "p99": 4.56789012, "n": 180},
        latency_over_floor_p50=1.90123456,
        target={"latency_over_floor_p50_at_most": 3.0, "verdict": "PASS"},
    ),
    "throughput": _result(
        "throughput",
        {"games": 200, "rounds": 3, "seconds": 60.0, "events": 96000},
        {"game": "mix", "stack": "deployed", "peer_threads": 16, "limit_batch": 1000},
        game_type="mix",
        config={},
        games=200,
        games_played=812,
        events=96000,
        rounds=[ROUND, ROUND, ROUND],
        ours={
            "events_per_second_sustained": 1733.123456,
            "events_per_second_wall": 1601.987654,
            "followers_catch_up_seconds": 0.123456,
            "events_per_second_pipeline": 1800.5,
            "events_per_second_held_against_target": 1712.3456789,
            "seconds": 5.6789,
            "cpu_seconds_by_process": {"gamemaster": 3.2, "relay": 2.1, "bench": 4.4},
        },
        peer={
            "library": "eventsourcing",
            "threads": 16,
            "events_per_second": 651.23456,
            "fastest": {"events_per_second": 1302.4691, "seconds": 73.7},
        },
        ours_over_peer_default=2.62938,
        limit={"batch": 1000, "events_per_second": 45678.9012, "seconds": 0.2101},
        ours_over_peer=2.629384756,
        ours_over_peer_by_round=[2.591234567, 2.629384756, 2.781234567],
        ours_over_limit=0.037487654,
        target={"ours_over_peer_at_least": 2.0, "verdict": "PASS"},
    ),
    "load": _result(
        "load",
        {"commands": 500, "tables": 200, "peak_seconds": 20.0},
        {"levels": [0.5, 0.8], "nats": "own, sync_interval always", "bot_procs": 1},
        peak_events_per_second=1523.456789,
        phases={
            "idle": _phase(1.9876, 5.4321, 3.123456),
            "peak": {"events_per_second": 1523.456789, "events_per_command": 2.3456},
            "0.5": {**_phase(3.4567, 14.56789, 9.87654), "share_of_peak": 0.4876543},
            "0.8": {**_phase(9.8765, 40.12345, 20.5), "share_of_peak": 0.7654321},
        },
        target={"level": 0.5, "p99_over_floor_at_most": 4.0, "verdict": "PASS"},
    ),
    "replay": _result(
        "replay",
        {
            "games_per_type": 100,
            "macaua_games": 2,
            "players": 2,
            "rounds": 5,
            "target_events": 1000000,
            "games": 302,
            "events": 1081476,
        },
        {"profile": False, "workers": 2},
        games=302,
        game_types=["macaua", "papas", "sixtysix", "take5"],
        events=90123,
        rounds=5,
        rebuild_empty={"seconds": 0.4812345, "events_per_second": 187278.12345, "rows": 4567},
        rebuild_empty_seconds_by_round=[0.5, 0.48, 0.49, 0.47, 0.481],
        scan={"seconds": [0.15, 0.155, 0.16, 0.149, 0.152], "events_per_second": 581234.5678},
        rebuild_over_scan=0.3221234567,
        rebuild_over_scan_by_round=[0.310123456, 0.32212345, 0.3271234, 0.3151234, 0.3201234],
        split={"read_streams_seconds": 0.2, "project_seconds": 0.3},
        memory={"peak_pss_bytes": 512 * 2**20 + 12345, "peak_rss_bytes": 900 * 2**20},
        target={"rebuild_over_scan_at_least": 0.3, "verdict": "PASS"},
    ),
    "engine": _result(
        "engine",
        {"seconds": 3.0, "wall": 60.0, "players": 2, "games": ["macaua", "papas", "sixtysix"]},
        {},
        players=2,
        budget_seconds=3.0,
        games={n: GAME for n in ("macaua", "papas", "sixtysix", "take5")},
        skipped={},
    ),
    "memory": _result(
        "memory",
        {
            "games": 1000,
            "macaua_games": 100,
            "logs": 20,
            "players": 2,
            "gen_wall": 60.0,
            "types": ["macaua", "papas", "sixtysix", "take5"],
        },
        {},
        results={n: MEMORY for n in ("macaua", "papas", "sixtysix", "take5")},
        skipped={},
    ),
    "macaua": _result(
        "macaua",
        {"players": [2, 4, 6], "rounds": 64},
        {"cut_and_choose": True, "library": True},
        shuffle_proof="argument",
        rounds=64,
        target=20.0,
        old_scalarmult_s=0.0001123,
        results=[
            _deal(p, deal, ratio)
            for p in (2, 4, 6)
            for deal, ratio in (("game", 11.987654), ("rounds", 45.123456), ("library", 12.3456))
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_the_kept_line_of_each_benchmark_is_compact_and_complete(
    history: ModuleType, name: str
) -> None:
    result = RESULTS[name]
    kept = history.summary(result)
    text = history.dumps(kept)
    assert "\n" not in text
    assert len(text.encode()) < 1024, (len(text.encode()), text)
    assert list(kept) == [*history.KEYS, "verdict"]
    assert kept["benchmark"] == name
    assert kept["when"] == result["when"]
    assert (kept["commit"], kept["dirty"]) == (GIT["commit"], True)
    assert kept["sizes"] == result["sizes"]
    assert kept["settings"] == {
        **result["settings"],
        "cpus": 2,
        "load_before": 1.5,
        "load_after": 2.0,
        "run_seconds": 123.5,
    }
    assert kept["figures"]
    assert kept["floors"]
    assert kept["verdict"] == {"engine": None, "memory": None}.get(name, "PASS")
    # and what it reads back from the line is what it shows for the full result
    assert json.loads(text) == kept
    assert history.line(kept) == history.line(history.summary(json.loads(json.dumps(result))))


def test_the_kept_lines_figures_and_floors(history: ModuleType) -> None:
    footprint = history.summary(RESULTS["footprint"])
    assert footprint["figures"] == {"gamemaster_kib": 3.457, "relay_kib": 0.5123}
    assert footprint["floors"]["gamemaster_idle_mib"] == 96.0
    recovery = history.summary(RESULTS["recovery"])
    assert recovery["figures"] == {"gamemaster_s": 1.877, "relay_s": 0.01235}
    assert recovery["floors"] == {"floor_s": 0.1346, "recovery_at_most_s": 2.0}
    assert "gamemaster 1.88 s, relay 0.01 s (floor 0.13 s)" in history.line(recovery)
    pipeline = history.summary(RESULTS["pipeline"])
    assert pipeline["figures"] == {
        "p50_ms": 1.923,
        "p99_ms": 4.568,
        "over_floor": 1.901,
        "over_back_to_back": 2.199,
    }
    assert pipeline["floors"] == {
        "p50_ms": 1.012,
        "back_to_back_p50_ms": 0.8765,
        "latency_over_floor_p50_at_most": 3.0,
    }
    throughput = history.summary(RESULTS["throughput"])
    assert throughput["figures"]["by_round"] == [2.591, 2.629, 2.781]
    assert throughput["floors"]["peer_events_per_second"] == 651.2
    load = history.summary(RESULTS["load"])
    assert list(load["figures"]) == ["idle", "0.5", "0.8"]  # the peak phase has no latency
    assert load["figures"]["0.5"] == {
        "p50_ms": 3.457,
        "p99_ms": 14.57,
        "floor_p99_ms": 9.877,
        "p99_over_floor": 1.475,
        "share": 0.4877,
    }
    assert load["floors"] == {
        "peak_events_per_second": 1523.0,
        "level": 0.5,
        "p99_over_floor_at_most": 4.0,
    }
    assert history.line(load).split("  ")[2] == (
        "idle: p99 5.43 ms 1.7x, 50% (held 49%): p99 14.57 ms 1.5x,"
        " 80% (held 77%): p99 40.12 ms 2.0x (peak 1523 events/s)"
    )
    macaua = history.summary(RESULTS["macaua"])
    assert macaua["figures"]["rounds 4p"] == 45.12
    assert macaua["floors"]["rounds 4p"] == 0.1235
    assert macaua["floors"]["target_ratio_at_most"] == 20.0
    assert macaua["verdict"] == "PASS"  # the game's own deals: the target's subject


def test_a_bench_appends_its_line(
    history: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """common.append_history, as Report.write calls it, into BENCH_HISTORY's file."""
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setitem(sys.modules, "history", history)  # common's ``from history import``
    spec = importlib.util.spec_from_file_location("bench_common", BENCH / "common.py")
    assert spec is not None
    assert spec.loader is not None
    common = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_common", common)  # its dataclasses look it up
    spec.loader.exec_module(common)
    kept = tmp_path / "history.jsonl"
    monkeypatch.setenv("BENCH_HISTORY", str(kept))
    common.append_history(RESULTS["replay"])
    common.append_history(RESULTS["engine"])
    lines = kept.read_text().splitlines()
    assert [json.loads(x)["benchmark"] for x in lines] == ["replay", "engine"]
    assert json.loads(lines[0]) == history.summary(RESULTS["replay"])
    monkeypatch.setenv("BENCH_HISTORY", "-")
    common.append_history(RESULTS["replay"])
    assert len(kept.read_text().splitlines()) == 2


def test_history_shows_each_run_with_its_sizes(history: ModuleType, tmp_path: Path) -> None:
    kept = tmp_path / "history.jsonl"
    kept.write_text(
        "".join(history.dumps(history.summary(RESULTS[n])) + "\n" for n in sorted(RESULTS))
    )
    lines = history.history([kept])
    assert lines == [
        "== engine",
        "2026-11-26T23:59:01+0000  f876c920+  macaua 7819/s, papas 7819/s, sixtysix 7819/s,"
        " take5 7819/s  {seconds=3.0 wall=60.0 players=2 games=macaua,papas,sixtysix}",
        "== footprint",
        "2026-11-26T23:59:01+0000  f876c920+  KiB a game in play: gamemaster 3.5, relay 0.5"
        "  [PASS]  {games=1000}",
        "== load",
        "2026-11-26T23:59:01+0000  f876c920+  idle: p99 5.43 ms 1.7x, 50% (held 49%): p99 14.57"
        " ms 1.5x, 80% (held 77%): p99 40.12 ms 2.0x (peak 1523 events/s)  [PASS]"
        "  {commands=500 tables=200 peak_seconds=20.0}",
        "== macaua",
        "2026-11-26T23:59:01+0000  f876c920+  game 2p 12.0x, rounds 2p 45.1x, library 2p 12.3x,"
        " game 4p 12.0x, rounds 4p 45.1x, library 4p 12.3x, game 6p 12.0x, rounds 6p 45.1x,"
        " library 6p 12.3x  [PASS]  {players=2,4,6 rounds=64}",
        "== memory",
        "2026-11-26T23:59:01+0000  f876c920+  macaua 12.1 KiB, papas 12.1 KiB, sixtysix 12.1 KiB,"
        " take5 12.1 KiB  {games=1000 macaua_games=100 logs=20 players=2 gen_wall=60.0"
        " types=macaua,papas,sixtysix,take5}",
        "== pipeline",
        "2026-11-26T23:59:01+0000  f876c920+  latency p50 1.92 ms p99 4.57 ms | floor 1.01 ms"
        " -> 1.9x (back to back 2.2x)  [PASS]  {latency_games=30 floor=300}",
        "== recovery",
        "2026-11-26T23:59:01+0000  f876c920+  moved again after a kill: gamemaster 1.88 s,"
        " relay 0.01 s (floor 0.13 s)  [PASS]  {tables=12 rounds=1}",
        "== replay",
        "2026-11-26T23:59:01+0000  f876c920+  rebuild 187300 events/s | scan 581200 -> 0.322x"
        " (rounds 0.310, 0.322, 0.327, 0.315, 0.320); peak 512 MiB  [PASS]"
        "  {games_per_type=100 macaua_games=2 players=2 rounds=5 target_events=1000000"
        " games=302 events=1081476}",
        "== throughput",
        "2026-11-26T23:59:01+0000  f876c920+  ours/peer 2.63x (rounds 2.59, 2.63, 2.78)"
        " | median round: ours 1712 events/s, peer fastest 1302, default 651  [PASS]"
        "  {games=200 rounds=3 seconds=60.0 events=96000}",
    ]


def test_a_run_kept_and_in_results_is_listed_once(history: ModuleType, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    _write(results, "replay-a.json", RESULTS["replay"])
    _write(results, "pipeline-a.json", _pipeline("2026-11-25T10:00", "aaaaaaaaaaaa", 2.0))
    kept = tmp_path / "history.jsonl"
    kept.write_text(history.dumps(history.summary(RESULTS["replay"])) + "\n")
    lines = history.history([kept, results])
    assert [x[:8] for x in lines] == ["== pipel", "2026-11-", "== repla", "2026-11-"]


def test_runs_per_benchmark_oldest_first_with_commit_figures_and_verdict(
    history: ModuleType, tmp_path: Path
) -> None:
    _write(tmp_path, "pipeline-b.json", _pipeline("2026-11-26T10:00", "bbbbbbbbbbbb", 3.5))
    _write(tmp_path, "pipeline-a.json", _pipeline("2026-11-25T10:00", "aaaaaaaaaaaa", 2.0))
    _write(
        tmp_path,
        "replay-a.json",
        {
            "benchmark": "replay",
            "when": "2026-11-26T11:00",
            "git": {"commit": "cccccccccccc", "dirty": True},
            "games": 302,  # an older result: its sizes at the top level
            "events": 90123,
            "rounds": 3,
            "rebuild_empty": {"events_per_second": 200000.0},
            "scan": {"events_per_second": 500000.0},
            "rebuild_over_scan": 0.4,
            "rebuild_over_scan_by_round": [0.35, 0.4, 0.45],
            "target": {"verdict": "PASS"},
        },
    )
    lines = history.history(tmp_path)
    assert lines == [
        "== pipeline",
        "2026-11-25T10:00  aaaaaaaa   latency p50 2.00 ms p99 4.00 ms | floor 1.00 ms -> 2.0x"
        "  [PASS]",
        "2026-11-26T10:00  bbbbbbbb   latency p50 3.50 ms p99 4.00 ms | floor 1.00 ms -> 3.5x"
        "  [MISS]",
        "== replay",
        "2026-11-26T11:00  cccccccc+  rebuild 200000 events/s | scan 500000 -> 0.400x"
        " (rounds 0.350, 0.400, 0.450)  [PASS]  {games=302 events=90123 rounds=3}",
    ]
    assert history.history(tmp_path, last=1, bench="pipeline") == ["== pipeline", lines[2]]


def test_macaua_runs_show_each_deals_ratio(history: ModuleType, tmp_path: Path) -> None:
    _write(
        tmp_path,
        "macaua-a.json",
        {
            "benchmark": "macaua",
            "when": "2026-11-26T12:00",
            "git": {"commit": "dddddddddddd", "dirty": False},
            "target": 20.0,
            "results": [
                {"deal": "game", "players": 2, "ratio": 48.64, "verdict": "MISS"},
                {"deal": "argument", "players": 2, "ratio": 12.1, "verdict": "PASS"},
            ],
        },
    )
    assert history.history(tmp_path) == [
        "== macaua",
        "2026-11-26T12:00  dddddddd   game 2p 48.6x, argument 2p 12.1x  [MISS]",
    ]


def test_a_file_it_cannot_read_is_listed_not_skipped(history: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "replay-broken.json").write_text('{"benchmark": "replay", "when"')
    _write(tmp_path, "replay-old.json", {"when": "x"})  # no benchmark
    lines = history.history(tmp_path)
    assert [x.split(" ")[0] for x in lines] == [
        "==",
        "replay-broken.json:",
        "replay-old.json:",
    ]
    assert "JSONDecodeError" in lines[1]
    assert "KeyError" in lines[2]


def test_a_malformed_kept_line_is_listed_not_skipped(history: ModuleType, tmp_path: Path) -> None:
    good = history.summary(RESULTS["pipeline"])
    no_sizes = {k: v for k, v in good.items() if k != "sizes"}
    kept = tmp_path / "history.jsonl"
    kept.write_text(
        "\n".join(
            [
                history.dumps(good),
                '{"benchmark": "pipeline", "when": "2026-11-2',  # a write cut short
                history.dumps(no_sizes),
                "[1, 2]",
                history.dumps({**good, "when": "2026-11-27T00:00", "figures": [1.0]}),
                "",
            ]
        )
    )
    lines = history.history(kept)
    assert lines[0] == "== (unreadable)"
    unreadable = lines[1:5]
    assert [x.split(" ")[0] for x in unreadable] == [
        "history.jsonl:2:",
        "history.jsonl:3:",
        "history.jsonl:4:",
        "history.jsonl:5:",
    ]
    assert "JSONDecodeError" in unreadable[0]
    assert "KeyError 'sizes'" in unreadable[1]
    assert "TypeError" in unreadable[2]
    assert "TypeError" in unreadable[3]
    assert lines[5:] == ["== pipeline", history.line(good)]
    # asked for one benchmark, the kept file's bad lines still show (they may be its runs)
    assert history.history(kept, bench="pipeline")[0] == "== (unreadable)"


def test_the_command_prints_the_report(
    history: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert history.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"no results in {tmp_path}\n"
    _write(tmp_path, "pipeline-a.json", _pipeline("2026-11-25T10:00", "aaaaaaaaaaaa", 2.0))
    assert history.main([str(tmp_path), "--bench", "pipeline"]) == 0
    assert capsys.readouterr().out.startswith("== pipeline\n2026-11-25T10:00  aaaaaaaa ")
    kept = tmp_path / "history.jsonl"
    kept.write_text(history.dumps(history.summary(RESULTS["throughput"])) + "\n")
    assert history.main([str(kept), str(tmp_path), "--last", "1"]) == 0
    out = capsys.readouterr().out
    assert "== throughput\n" in out
    assert "{games=200 rounds=3 seconds=60.0 events=96000}" in out


def test_a_run_is_dirty_when_the_tree_differs_but_not_for_the_kept_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run appends to bench/history.jsonl: that alone does not make the next run's
    tree "dirty"; any other change does."""
    import subprocess

    monkeypatch.syspath_prepend(str(BENCH))  # (common imports history beside it)
    common = _load("bench_common", "common.py")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "history.jsonl").write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
    assert common.git_commit(tmp_path)["dirty"] is False
    with (tmp_path / "bench" / "history.jsonl").open("a") as kept:
        kept.write("{}\n")
    assert common.git_commit(tmp_path)["dirty"] is False
    (tmp_path / "code.py").write_text("x = 2\n")
    found = common.git_commit(tmp_path)
    assert found["dirty"] is True
    assert len(found["commit"]) == 40


def test_throughput_counts_until_the_first_moment_everything_was_relayed_and_projected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """bench_throughput's span ends at the first checkpoints read (from the bots' stop on)
    that cover every counted event, not when the stop returned."""
    monkeypatch.syspath_prepend(str(BENCH))
    throughput = _load("bench_throughput_module", "bench_throughput.py")
    watch = throughput.Checkpoints("postgresql://unused")
    versions = {"g1": 5, "g2": 3}
    watch.seen = [
        (1, {"relay": 9, "projector:g1": 5, "projector:g2": 3}),  # the relay is behind
        (2, {"relay": 10, "projector:g1": 5, "projector:g2": 2}),  # a game is behind
        (3, {"relay": 10, "projector:g1": 5, "projector:g2": 3}),
        (4, {"relay": 12, "projector:g1": 6, "projector:g2": 3}),
    ]
    assert watch.first_covering(10, versions) == 3
    assert watch.first_covering(13, versions) is None  # not yet: looked for afterwards
    assert not throughput.covers({"relay": 10}, 10, versions)  # a game never projected
