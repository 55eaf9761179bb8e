"""bench/history.py: the benchmarks' figures over time, read from their JSON results."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def history() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_history", BENCH / "history.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
        " (rounds 0.350, 0.400, 0.450)  [PASS]",
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
            "target": 20.0,  # a bare number: no verdict of the whole run
            "results": [
                {"deal": "game", "players": 2, "ratio": 48.64, "verdict": "MISS"},
                {"deal": "argument", "players": 2, "ratio": 12.1, "verdict": "PASS"},
            ],
        },
    )
    assert history.history(tmp_path) == [
        "== macaua",
        "2026-11-26T12:00  dddddddd   game 2p 48.6x, argument 2p 12.1x",
    ]


def test_a_file_it_cannot_read_is_listed_not_skipped(history: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "replay-broken.json").write_text('{"benchmark": "replay", "when"')
    _write(tmp_path, "replay-old.json", {"benchmark": "replay", "when": "x"})  # no figures
    assert history.history(tmp_path) == [
        "== (unreadable)",
        "replay-broken.json: JSONDecodeError",
        "replay-old.json: KeyError",
    ]


def test_the_command_prints_the_report(
    history: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert history.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"no results in {tmp_path}\n"
    _write(tmp_path, "pipeline-a.json", _pipeline("2026-11-25T10:00", "aaaaaaaaaaaa", 2.0))
    assert history.main([str(tmp_path), "--bench", "pipeline"]) == 0
    assert capsys.readouterr().out.startswith("== pipeline\n2026-11-25T10:00  aaaaaaaa ")
