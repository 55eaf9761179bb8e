"""Container health check: is this container connected to the servers it needs?

    python /app/deploy/healthcheck.py 4222          # an established connection to NATS

Exits 0 when, for every port given, the container has an established TCP connection to a
remote host on that port (read from /proc/net/tcp and tcp6, which list this container's
network namespace only), else 1. A cardroom service holds its NATS connection for its whole
life and reconnects when it drops, so "connected to NATS" is "up, and reachable by requests".
PostgreSQL is not checked this way: the connection pool opens connections on demand.
"""

from __future__ import annotations

import sys
from pathlib import Path

ESTABLISHED = "01"


def remote_ports() -> set[int]:
    ports: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == ESTABLISHED:
                ports.add(int(fields[2].rsplit(":", 1)[1], 16))
    return ports


def main(argv: list[str]) -> int:
    wanted = {int(arg) for arg in argv} or {4222}
    missing = wanted - remote_ports()
    if missing:
        print(f"not connected to port(s) {', '.join(map(str, sorted(missing)))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
