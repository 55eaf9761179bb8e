"""The benchmarks' figures over time: one line per run from the JSON files in bench/results/
(``make bench-history``), oldest first, each with its commit and its headline figures beside
their floor or peer and the target's verdict.

Run: ``uv run --frozen python bench/history.py [--last N] [--bench NAME] [DIR]``. A file this
does not understand (an older format, a broken write) is listed as such, not skipped
silently. Plain standard library: it reads files only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def _f(value: Any, spec: str = ".2f") -> str:
    return "-" if not isinstance(value, int | float) else format(value, spec)


def _pipeline(d: dict[str, Any]) -> str:
    lat, floor = d["latency_ms"], d["floor_ms"]
    line = (
        f"latency p50 {_f(lat['p50'])} ms p99 {_f(lat['p99'])} ms | floor {_f(floor['p50'])} ms"
        f" -> {_f(d['latency_over_floor_p50'], '.1f')}x"
    )
    if "latency_over_back_to_back_floor_p50" in d:
        line += f" (back to back {_f(d['latency_over_back_to_back_floor_p50'], '.1f')}x)"
    return line


def _throughput(d: dict[str, Any]) -> str:
    rounds = d.get("ours_over_peer_by_round") or []
    line = f"ours/peer {_f(d['ours_over_peer'])}x"
    if rounds:
        line += " (rounds " + ", ".join(_f(r) for r in rounds) + ")"
    ours, peer = d.get("ours"), d.get("peer")
    if isinstance(ours, dict) and isinstance(peer, dict):
        held = ours.get("events_per_second_held_against_target")
        line += (
            f" | median round: ours {_f(held, '.0f')} events/s,"
            f" peer {_f(peer.get('events_per_second'), '.0f')}"
        )
    return line


def _replay(d: dict[str, Any]) -> str:
    rebuild, scan = d["rebuild_empty"]["events_per_second"], d["scan"]["events_per_second"]
    line = (
        f"rebuild {_f(rebuild, '.0f')} events/s | scan {_f(scan, '.0f')}"
        f" -> {_f(d['rebuild_over_scan'], '.3f')}x"
    )
    rounds = d.get("rebuild_over_scan_by_round") or []
    if len(rounds) > 1:
        line += " (rounds " + ", ".join(_f(r, ".3f") for r in rounds) + ")"
    return line


def _engine(d: dict[str, Any]) -> str:
    return ", ".join(
        f"{name} {_f(g['events_per_second'], '.0f')}/s" for name, g in sorted(d["games"].items())
    )


def _memory(d: dict[str, Any]) -> str:
    return ", ".join(
        f"{name} {_f(r['tracemalloc_bytes_per_game'] / 1024, '.1f')} KiB"
        for name, r in sorted(d["results"].items())
    )


def _macaua(d: dict[str, Any]) -> str:
    """Each deal's ratio to its floor: ``game``/``argument`` and the players."""
    return ", ".join(
        f"{r.get('deal', '?')} {r.get('players', '?')}p {_f(r.get('ratio'), '.1f')}x"
        for r in d.get("results", ())
        if isinstance(r, dict)
    )


HEADLINES: dict[str, Callable[[dict[str, Any]], str]] = {
    "pipeline": _pipeline,
    "throughput": _throughput,
    "replay": _replay,
    "engine": _engine,
    "memory": _memory,
    "macaua": _macaua,
}


def line(d: dict[str, Any]) -> str:
    """One run: when, commit (``+`` when the tree was dirty), headline, verdict."""
    git = d.get("git") or {}
    commit = str(git.get("commit", "?"))[:8] + ("+" if git.get("dirty") else "")
    headline = HEADLINES.get(str(d.get("benchmark")))
    text = headline(d) if headline is not None else "(no headline for this benchmark)"
    target = d.get("target")
    verdict = target.get("verdict") if isinstance(target, dict) else None
    return f"{d.get('when', '?')}  {commit:9s}  {text}" + (f"  [{verdict}]" if verdict else "")


def history(folder: Path, *, last: int = 10, bench: str | None = None) -> list[str]:
    """The report's lines: per benchmark, its ``last`` runs, oldest first."""
    runs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path in sorted(folder.glob("*.json")):
        try:
            d = json.loads(path.read_text())
            name = str(d["benchmark"])
            if bench is not None and name != bench:
                continue
            text = line(d)
            runs[name].append((str(d.get("when", "")), text))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            if bench is None or path.name.startswith(f"{bench}-"):
                runs["(unreadable)"].append((path.name, f"{path.name}: {type(exc).__name__}"))
    out: list[str] = []
    for name in sorted(runs):
        out.append(f"== {name}")
        out += [text for _, text in sorted(runs[name])[-last:]]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=RESULTS)
    parser.add_argument("--last", type=int, default=10, help="runs per benchmark (default 10)")
    parser.add_argument("--bench", help="one benchmark: pipeline, throughput, replay, ...")
    args = parser.parse_args(argv)
    lines = history(args.folder, last=args.last, bench=args.bench)
    print("\n".join(lines) if lines else f"no results in {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
