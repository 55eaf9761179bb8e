"""The benchmarks' figures over time (``make bench-history``): one line per run, oldest first,
each with its commit, its sizes, its headline figures beside their floor or peer and the
target's verdict.

Every run appends one compact JSON line to ``bench/history.jsonl`` (committed; ``summary``
makes it); the full result stays in ``bench/results/`` (ignored). This reads both, a run
found in both once. Run: ``uv run --frozen python bench/history.py [--last N] [--bench NAME]
[PATH ...]`` (a ``.jsonl`` file or a folder of results; default both of the above). A line
or file this does not understand (an older format, a broken write) is listed as such, not
skipped silently. Plain standard library: it reads files only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
HISTORY = BENCH / "history.jsonl"
KEYS = ("benchmark", "when", "commit", "dirty", "sizes", "settings", "figures", "floors")
# sizes an older result file (written before ``sizes``) carries at its top level
OLD_SIZES = ("games", "events", "rounds", "players", "budget_seconds")

Parts = tuple[dict[str, Any], dict[str, Any], str | None]  # figures, floors, verdict


def _n(value: Any) -> Any:
    """A number to 4 significant digits (the line stays short); anything else as it is."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, list):
        return [_n(v) for v in value]
    return value


def _d(d: Any, *keys: str) -> Any:
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    return d


def _map(d: dict[str, Any], key: str) -> dict[str, Any]:
    """``d[key]`` when it is a mapping, else an empty one (a field missing from an older run)."""
    value = d.get(key)
    return value if isinstance(value, dict) else {}


def _target(d: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The target's bound(s) and its verdict, from ``{"..._at_least": x, "verdict": v}``."""
    target = d.get("target")
    if not isinstance(target, dict):
        return {}, None
    bounds = {k: _n(v) for k, v in target.items() if k != "verdict"}
    return bounds, target.get("verdict")


def _pipeline_parts(d: dict[str, Any]) -> Parts:
    bounds, v = _target(d)
    figures = {
        "p50_ms": _d(d, "latency_ms", "p50"),
        "p99_ms": _d(d, "latency_ms", "p99"),
        # the floor sampled before each command (2026-11-27 on), else the old paced one
        "over_floor": d.get("latency_over_floor_p50") or _d(d, "latency_over_floor", "p50"),
    }
    if "latency_over_back_to_back_floor_p50" in d:
        figures["over_back_to_back"] = d["latency_over_back_to_back_floor_p50"]
    if "latency_over_old_floor_p50" in d:
        figures["over_old_floor"] = d["latency_over_old_floor_p50"]
        figures["p999_ms"] = _d(d, "latency_ms", "p999")
    floors = {"p50_ms": _d(d, "floor_ms", "p50"), **bounds}
    if "floor_back_to_back_ms" in d:
        floors["back_to_back_p50_ms"] = _d(d, "floor_back_to_back_ms", "p50")
    if "old_floor_ms" in d:
        floors["old_p50_ms"] = _d(d, "old_floor_ms", "p50")
    return figures, floors, v


def _throughput_parts(d: dict[str, Any]) -> Parts:
    bounds, v = _target(d)
    figures = {
        "over_peer": d.get("ours_over_peer"),
        "by_round": d.get("ours_over_peer_by_round"),
        "events_per_second": _d(d, "ours", "events_per_second_held_against_target"),
        "over_limit": d.get("ours_over_limit"),
        "over_peer_default": d.get("ours_over_peer_default"),
        "games_played": d.get("games_played"),
    }
    floors = {
        "peer_events_per_second": _d(d, "peer", "events_per_second"),
        "peer_fastest_events_per_second": _d(d, "peer", "fastest", "events_per_second"),
        "limit_events_per_second": _d(d, "limit", "events_per_second"),
        **bounds,
    }
    return figures, floors, v


def _replay_parts(d: dict[str, Any]) -> Parts:
    bounds, v = _target(d)
    figures = {
        "rebuild_events_per_second": _d(d, "rebuild_empty", "events_per_second"),
        "over_scan": d.get("rebuild_over_scan"),
        "by_round": d.get("rebuild_over_scan_by_round"),
    }
    peak = _d(d, "memory", "peak_pss_bytes")
    if isinstance(peak, int | float):
        figures["peak_mib"] = peak / 2**20
    floors = {"scan_events_per_second": _d(d, "scan", "events_per_second"), **bounds}
    return figures, floors, v


def _load_parts(d: dict[str, Any]) -> Parts:
    """Per phase (idle, then each share of the peak): p50 and p99 in ms, the floor's p99
    sampled in that phase, the ratio of the two p99s and the share of the peak the
    background tables carried; the floor: the peak's events per second."""
    bounds, v = _target(d)
    figures: dict[str, Any] = {}
    for name, ph in _map(d, "phases").items():
        if not isinstance(ph, dict) or "latency_ms" not in ph:
            continue
        figures[name] = {
            "p50_ms": _d(ph, "latency_ms", "p50"),
            "p99_ms": _d(ph, "latency_ms", "p99"),
            "floor_p99_ms": _d(ph, "floor_ms", "p99"),
            "p99_over_floor": ph.get("p99_over_floor"),
            "share": ph.get("share_of_peak"),
        }
    return figures, {"peak_events_per_second": d.get("peak_events_per_second"), **bounds}, v


def _engine_parts(d: dict[str, Any]) -> Parts:
    games = _map(d, "games")
    figures = {n: _d(g, "events_per_second") for n, g in sorted(games.items())}
    floors = {n: _d(g, "floor_state_copies_per_second") for n, g in sorted(games.items())}
    return figures, floors, None


def _memory_parts(d: dict[str, Any]) -> Parts:
    results = _map(d, "results")

    def kib(r: Any, key: str) -> Any:
        value = _d(r, key)
        return value / 1024 if isinstance(value, int | float) else None

    figures = {n: kib(r, "tracemalloc_bytes_per_game") for n, r in sorted(results.items())}
    floors = {n: kib(r, "log_json_bytes_per_game") for n, r in sorted(results.items())}
    return {"kib_per_game": figures}, {"log_kib_per_game": floors}, None


def _macaua_parts(d: dict[str, Any]) -> Parts:
    """Per deal (``game``/``rounds``/``library`` and players): its ratio to its floor, and the
    floor's seconds. The run's verdict is the game's own deals' (the target's subject), or
    all deals' without; a deal's own is its ratio against ``target_ratio_at_most``."""
    rows = [r for r in d.get("results") or () if isinstance(r, dict)]
    figures = {f"{r.get('deal', '?')} {r.get('players', '?')}p": r.get("ratio") for r in rows}
    floors = {f"{r.get('deal', '?')} {r.get('players', '?')}p": r.get("floor") for r in rows}
    if isinstance(d.get("target"), int | float):
        floors["target_ratio_at_most"] = d["target"]
    judged = [r for r in rows if r.get("deal") == "game"] or rows
    verdicts = [r.get("verdict") for r in judged]
    v = None if not verdicts else "PASS" if all(x == "PASS" for x in verdicts) else "MISS"
    return figures, floors, v


def _strength_parts(d: dict[str, Any]) -> Parts:
    """Per game and bot kind: its rating's mu and sigma; the verdict: every neighbouring
    pair of kinds separated (by more than twice their combined sigma)."""
    figures: dict[str, Any] = {}
    separated: list[bool] = []
    for r in d.get("results") or ():
        if not isinstance(r, dict):
            continue
        for kind, rating in (r.get("ratings") or {}).items():
            figures[f"{r.get('game')} {kind}"] = [rating.get("mu"), rating.get("sigma")]
        figures[f"{r.get('game')} move_ms"] = 1000 * float(r.get("search_move_s") or 0)
        separated += list(r.get("separated") or ())
    v = None if not separated else "PASS" if all(separated) else "MISS"
    return figures, {}, v


def _recovery_parts(d: dict[str, Any]) -> Parts:
    """Per service killed: the slowest game's seconds until it moved again; the floor: the
    same wait with nothing killed."""
    bounds, v = _target(d)
    worst = _map(d, "recovery_s")
    return {f"{n}_s": s for n, s in worst.items()}, {"floor_s": d.get("floor_s"), **bounds}, v


def _footprint_parts(d: dict[str, Any]) -> Parts:
    """Per service: KiB of resident memory a game in play; the floor: its idle MiB."""
    bounds, v = _target(d)
    per = _map(d, "kib_per_game")
    idle = _map(d, "rss_idle_bytes")
    floors = {f"{n}_idle_mib": b / 2**20 for n, b in idle.items() if isinstance(b, int | float)}
    return {f"{n}_kib": k for n, k in per.items()}, {**floors, **bounds}, v


PARTS: dict[str, Callable[[dict[str, Any]], Parts]] = {
    "pipeline": _pipeline_parts,
    "throughput": _throughput_parts,
    "replay": _replay_parts,
    "load": _load_parts,
    "engine": _engine_parts,
    "memory": _memory_parts,
    "macaua": _macaua_parts,
    "strength": _strength_parts,
    "recovery": _recovery_parts,
    "footprint": _footprint_parts,
}


def _compact(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _compact(v) for k, v in x.items() if v is not None}
    return _n(x)


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """The kept line of one run from its full result (``common.Report.write``'s dict)."""
    name = str(result["benchmark"])
    git = _map(result, "git")
    sizes = result.get("sizes")
    if not isinstance(sizes, dict):  # an older result: what it has at its top level
        sizes = {k: result[k] for k in OLD_SIZES if isinstance(result.get(k), int | float)}
    settings = dict(result.get("settings") or {})
    machine = _map(result, "machine")
    for key, value in (
        ("cpus", machine.get("cpus")),
        ("load_before", _d(machine, "loadavg_before") and machine["loadavg_before"][0]),
        ("load_after", _d(machine, "loadavg_after") and machine["loadavg_after"][0]),
        ("run_seconds", result.get("seconds")),
    ):
        if value is not None:
            settings[key] = value
    parts = PARTS.get(name)
    figures, floors, v = parts(result) if parts is not None else ({}, {}, None)
    return {
        "benchmark": name,
        "when": result.get("when"),
        "commit": git.get("commit"),
        "dirty": bool(git.get("dirty")),
        "sizes": _compact(sizes),
        "settings": _compact(settings),
        "figures": _compact(figures),
        "floors": _compact(floors),
        "verdict": v,
    }


def dumps(line: dict[str, Any]) -> str:
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False, default=str)


def _f(value: Any, spec: str = ".2f") -> str:
    return "-" if not isinstance(value, int | float) else format(value, spec)


def _rounds(values: Any, spec: str) -> str:
    if not isinstance(values, list) or len(values) < 2:
        return ""
    return " (rounds " + ", ".join(_f(r, spec) for r in values) + ")"


def _pipeline(f: dict[str, Any], fl: dict[str, Any]) -> str:
    line = (
        f"latency p50 {_f(f.get('p50_ms'))} ms p99 {_f(f.get('p99_ms'))} ms"
        f" | floor {_f(fl.get('p50_ms'))} ms -> {_f(f.get('over_floor'), '.1f')}x"
    )
    if "over_back_to_back" in f:
        line += f" (back to back {_f(f['over_back_to_back'], '.1f')}x)"
    if "over_old_floor" in f:
        line += f" (old floor {_f(f['over_old_floor'], '.1f')}x)"
    return line


def _throughput(f: dict[str, Any], fl: dict[str, Any]) -> str:
    return (
        f"ours/peer {_f(f.get('over_peer'))}x{_rounds(f.get('by_round'), '.2f')}"
        f" | median round: ours {_f(f.get('events_per_second'), '.0f')} events/s,"
        f" peer fastest {_f(fl.get('peer_fastest_events_per_second'), '.0f')},"
        f" default {_f(fl.get('peer_events_per_second'), '.0f')}"
    )


def _replay(f: dict[str, Any], fl: dict[str, Any]) -> str:
    line = (
        f"rebuild {_f(f.get('rebuild_events_per_second'), '.0f')} events/s"
        f" | scan {_f(fl.get('scan_events_per_second'), '.0f')}"
        f" -> {_f(f.get('over_scan'), '.3f')}x{_rounds(f.get('by_round'), '.3f')}"
    )
    if "peak_mib" in f:
        line += f"; peak {_f(f['peak_mib'], '.0f')} MiB"
    return line


def _load(f: dict[str, Any], fl: dict[str, Any]) -> str:
    """Each phase: its load, p99 (ms) and p99 over the floor's p99 in that phase."""
    phases = []
    for name, ph in f.items():
        if not isinstance(ph, dict):
            continue
        share = ph.get("share")
        try:
            load = f"{float(name):.0%}"
        except ValueError:
            load = name  # idle
        if isinstance(share, int | float):
            load += f" (held {share:.0%})"
        phases.append(
            f"{load}: p99 {_f(ph.get('p99_ms'))} ms {_f(ph.get('p99_over_floor'), '.1f')}x"
        )
    return f"{', '.join(phases)} (peak {_f(fl.get('peak_events_per_second'), '.0f')} events/s)"


def _engine(f: dict[str, Any], fl: dict[str, Any]) -> str:
    return ", ".join(f"{name} {_f(eps, '.0f')}/s" for name, eps in sorted(f.items()))


def _memory(f: dict[str, Any], fl: dict[str, Any]) -> str:
    kib = f.get("kib_per_game") or {}
    return ", ".join(f"{name} {_f(v, '.1f')} KiB" for name, v in sorted(kib.items()))


def _macaua(f: dict[str, Any], fl: dict[str, Any]) -> str:
    """Each deal's ratio to its floor: ``game``/``argument`` and the players."""
    return ", ".join(f"{deal} {_f(ratio, '.1f')}x" for deal, ratio in f.items())


def _strength(f: dict[str, Any], fl: dict[str, Any]) -> str:
    """Each game's kinds by rating (mu +- sigma) and the search bot's time a move."""
    return ", ".join(
        f"{k} {_f(v, '.0f')} ms"
        if k.endswith("move_ms")
        else f"{k} {_f(v[0], '.1f')}+-{_f(v[1], '.1f')}"
        for k, v in f.items()
    )


def _recovery(f: dict[str, Any], fl: dict[str, Any]) -> str:
    kills = ", ".join(f"{k.removesuffix('_s')} {_f(v, '.2f')} s" for k, v in f.items())
    return f"moved again after a kill: {kills} (floor {_f(fl.get('floor_s'), '.2f')} s)"


def _footprint(f: dict[str, Any], fl: dict[str, Any]) -> str:
    per = ", ".join(f"{k.removesuffix('_kib')} {_f(v, '.1f')}" for k, v in f.items())
    return f"KiB a game in play: {per}"


HEADLINES: dict[str, Callable[[dict[str, Any], dict[str, Any]], str]] = {
    "pipeline": _pipeline,
    "throughput": _throughput,
    "replay": _replay,
    "load": _load,
    "engine": _engine,
    "memory": _memory,
    "macaua": _macaua,
    "strength": _strength,
    "recovery": _recovery,
    "footprint": _footprint,
}


def _size(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def line(s: dict[str, Any]) -> str:
    """One run from its kept line: when, commit (``+`` when the tree was dirty), headline,
    verdict, then its sizes."""
    commit = str(s.get("commit") or "?")[:8] + ("+" if s.get("dirty") else "")
    headline = HEADLINES.get(str(s.get("benchmark")))
    figures, floors = s["figures"], s["floors"]
    if not isinstance(figures, dict) or not isinstance(floors, dict):
        raise TypeError("figures and floors must be objects")
    text = headline(figures, floors) if headline else "(no headline for this benchmark)"
    verdict = s.get("verdict")
    sizes = s.get("sizes") or {}
    if not isinstance(sizes, dict):
        raise TypeError("sizes must be an object")
    sized = " ".join(f"{k}={_size(v)}" for k, v in sizes.items())
    return (
        f"{s.get('when', '?')}  {commit:9s}  {text}"
        + (f"  [{verdict}]" if verdict else "")
        + (f"  {{{sized}}}" if sized else "")
    )


def _read(path: Path) -> Iterable[tuple[str, dict[str, Any] | Exception]]:
    """(where, kept line or the error reading it) for a .jsonl file or a folder of results."""
    if path.is_dir():
        for p in sorted(path.glob("*.json")):
            try:
                yield p.name, summary(json.loads(p.read_text()))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                yield p.name, exc
        return
    try:
        text = path.read_text()
    except FileNotFoundError:
        return
    except OSError as exc:
        yield path.name, exc
        return
    for i, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            s = json.loads(raw)
            if not isinstance(s, dict):
                raise TypeError(f"a {type(s).__name__}, not an object")
            missing = [k for k in KEYS if k not in s]
            if missing:
                raise KeyError(", ".join(missing))
            yield f"{path.name}:{i}", s
        except (ValueError, KeyError, TypeError) as exc:
            yield f"{path.name}:{i}", exc


def history(paths: Path | Sequence[Path], *, last: int = 10, bench: str | None = None) -> list[str]:
    """The report's lines: per benchmark, its ``last`` runs, oldest first. A run in more
    than one place (its kept line and its result file) is listed once."""
    runs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    seen: set[tuple[str, str, str]] = set()
    for path in [paths] if isinstance(paths, Path) else paths:
        for where, s in _read(path):
            if isinstance(s, Exception):
                if bench is None or where.startswith(f"{bench}-") or ".jsonl:" in where:
                    runs["(unreadable)"].append((where, f"{where}: {type(s).__name__} {s}"))
                continue
            name = str(s.get("benchmark"))
            if bench is not None and name != bench:
                continue
            key = (name, str(s.get("when")), str(s.get("commit")))
            if key in seen:
                continue
            try:
                text = line(s)
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                runs["(unreadable)"].append((where, f"{where}: {type(exc).__name__} {exc}"))
                continue
            seen.add(key)
            runs[name].append((str(s.get("when", "")), text))
    out: list[str] = []
    for name in sorted(runs):
        out.append(f"== {name}")
        out += [text for _, text in sorted(runs[name])[-last:]]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "paths", nargs="*", type=Path, default=[HISTORY, RESULTS], help="jsonl files, folders"
    )
    parser.add_argument("--last", type=int, default=10, help="runs per benchmark (default 10)")
    parser.add_argument("--bench", help="one benchmark: pipeline, throughput, replay, ...")
    args = parser.parse_args(argv)
    lines = history(args.paths, last=args.last, bench=args.bench)
    where = ", ".join(str(p) for p in args.paths)
    print("\n".join(lines) if lines else f"no results in {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
