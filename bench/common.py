"""What every benchmark in bench/ shares: env knobs, fresh databases, the service processes,
verdicts against targets, and the JSON result file of a run.

Every figure is printed beside its floor or peer measured in the same run (absolute times
drift on a shared machine; ratios hold). A missed target is reported (``MISS``), never
raised: a benchmark exits non-zero only when it crashes.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
# one compact line per run, committed (bench/history.py); BENCH_HISTORY: another file, or
# "-" for none (a trial run that should leave no trace)
HISTORY = ROOT / "bench" / "history.jsonl"
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))  # support.highcard, support.stack

from cardroom_runtime.discovery import Services, discover  # noqa: E402
from cardroom_runtime.postgres import create_database, drop_database  # noqa: E402
from history import dumps, summary  # noqa: E402  (bench/, beside this file)


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    return float(raw) if raw else default


def env_list(name: str, default: Sequence[str]) -> list[str]:
    raw = os.environ.get(name, "").strip()
    return [x.strip() for x in raw.split(",") if x.strip()] if raw else list(default)


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median_round(ratios: Sequence[float]) -> int:
    """The index of the round whose ratio is the median (the lower one of an even count):
    the round that stands for a run of several."""
    return ratios.index(sorted(ratios)[(len(ratios) - 1) // 2])


def git_commit() -> dict[str, Any]:
    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(git("status", "--porcelain"))}


def verdict(ratio: float, target: float, *, at_most: bool = False) -> str:
    ok = ratio <= target if at_most else ratio >= target
    return "PASS" if ok else "MISS"


@dataclass
class Report:
    """The figures of one run of one benchmark; ``write`` puts them in bench/results/ and
    appends their summary to bench/history.jsonl. ``sizes``: the sizes and counts the run
    was asked for (games, seconds, rounds, players: its BENCH_* knobs); ``settings``:
    anything else that moves its figures (game type, config, threads, options)."""

    name: str
    started: float = field(default_factory=time.time)
    load_before: tuple[float, float, float] = field(default_factory=os.getloadavg)
    data: dict[str, Any] = field(default_factory=dict)
    sizes: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def line(self, text: str) -> None:
        print(text, flush=True)

    def write(self) -> Path:
        when = time.strftime("%Y-%m-%dT%H-%M-%S", time.localtime(self.started))
        result = {
            "benchmark": self.name,
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "seconds": round(time.time() - self.started, 3),
            "git": git_commit(),
            "machine": {
                "cpus": os.cpu_count(),
                "loadavg_before": self.load_before,
                "loadavg_after": os.getloadavg(),
                "python": sys.version.split()[0],
            },
            "sizes": self.sizes,
            "settings": self.settings,
            **self.data,
        }
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"{self.name}-{when}-{secrets.token_hex(2)}.json"
        path.write_text(json.dumps(result, indent=2, default=str))
        print(f"wrote {path.relative_to(ROOT)}", flush=True)
        append_history(result)
        return path


def append_history(result: dict[str, Any]) -> None:
    """One compact line (``history.summary``) for this run at the end of the kept file."""
    target = os.environ.get("BENCH_HISTORY", "").strip()
    if target == "-":
        return
    kept = Path(target) if target else HISTORY
    text = dumps(summary(json.loads(json.dumps(result, default=str))))
    with kept.open("a", encoding="utf-8") as f:
        f.write(text + "\n")
    print(f"appended its summary to {kept}", flush=True)


def unique_name(prefix: str) -> str:
    """A lower-case identifier of its own: a database name, a subject root."""
    return f"{prefix}{secrets.token_hex(4)}"


@asynccontextmanager
async def servers() -> AsyncIterator[Services]:
    """PostgreSQL and NATS, found (or started) as the tests find them."""
    services = await discover()
    try:
        yield services
    finally:
        await services.aclose()


@asynccontextmanager
async def fresh_database(
    services: Services, prefix: str, *, migrate: bool = True
) -> AsyncIterator[tuple[str, str]]:
    """A new database (``(name, sqlalchemy url)``), migrated unless told not to; dropped at
    the end whatever happens."""
    name = unique_name(f"{prefix}_")
    url = await create_database(services.database_admin_url, name)
    try:
        if migrate:
            from cardroom_runtime import migrate as migrations

            await migrations.upgrade_async(url)
        yield name, url
    finally:
        await drop_database(services.database_admin_url, name)


def service_env(services: Services, database_url: str, root: str, games: str) -> dict[str, str]:
    return {
        **os.environ,
        "CARDROOM_DATABASE_URL": database_url,
        "CARDROOM_NATS_URL": services.nats_url,
        "CARDROOM_SUBJECT_ROOT": root,
        "CARDROOM_GAMES": games,
        "PYTHONPATH": str(ROOT / "tests"),
    }


def cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU seconds a process (default: this one) has used so far."""
    path = f"/proc/{pid or 'self'}/stat"
    try:
        with open(path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Pipeline:
    pids: dict[str, int]

    def cpu(self) -> dict[str, float]:
        """CPU seconds per service process, and this process (the bots) as ``bench``."""
        return {
            **{name: cpu_seconds(pid) for name, pid in self.pids.items()},
            "bench": cpu_seconds(),
        }


@asynccontextmanager
async def pipeline(
    services: Services, database_url: str, root: str, games: str = "support.highcard:GAME"
) -> AsyncIterator[Pipeline]:
    """The pipeline's services as separate OS processes, as deployed."""
    from support.stack import ServiceProcess

    env = service_env(services, database_url, root, games)
    procs = [ServiceProcess(n, env) for n in ("gamemaster", "relay", "projector", "acktracker")]
    try:
        await asyncio.gather(*(p.start() for p in procs))
        yield Pipeline({p.name: p.proc.pid for p in procs if p.proc is not None})
    finally:
        for p in procs:
            p.stop()


async def watchdog(seconds: float) -> None:
    """Print what every task waits on if the run takes far too long (diagnosis only)."""
    await asyncio.sleep(seconds)
    print(f"still running after {seconds:.0f} s; pending tasks:", file=sys.stderr)
    for task in asyncio.all_tasks():
        task.print_stack(limit=4, file=sys.stderr)


def start_watchdog() -> None:
    asyncio.get_running_loop().create_task(watchdog(env_float("BENCH_WATCHDOG", 900)))


class DecisionClock:
    """Times a search bot's decisions: choices among two actions or more (a forced move
    costs nothing and would flatter the figure)."""

    def __init__(self) -> None:
        self.spent = 0.0
        self.count = 0

    def searcher(self, bot: Any) -> Any:
        """What searches in ``bot``: the bot itself, or (Macaua, whose moves are built around
        the search) its ``search``; ``None`` for a bot that does not search."""
        from cardroom_engine.search import SearchBot

        inner = getattr(bot, "search", None)
        found = inner if isinstance(inner, SearchBot) else bot
        return found if isinstance(found, SearchBot) else None

    def wrap(self, searcher: Any) -> None:
        """Time every decision ``searcher.choose`` makes from now on."""
        choose = searcher.choose

        def clocked(view: Any, actions: Any, rng: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return choose(view, actions, rng)
            finally:
                if len(actions) > 1:
                    self.spent += time.perf_counter() - t0
                    self.count += 1

        searcher.choose = clocked
