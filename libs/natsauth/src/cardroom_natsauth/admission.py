"""How many new guests one address may bring: a token bucket per address, in the auth callout.

A guest registers exactly one player (the lobby derives the id from its nonce), so every new
player begins as a new guest connection, and the auth callout sees each one with the
address it comes from. Without a limit there, a script could connect guest after guest and
fill the lobby with players, each with its tables waiting. Each address (an IPv6 address by
its /64, the network one subscriber is given) may bring ``burst`` guests at once, then
``rate`` a minute; past that the callout refuses the connection, with how long to wait in
the server's log (a client only learns that it was refused).

Trusted networks are not limited. By default these are loopback and the private ranges:
the development setup, the gateway's bot seats and clients on a local network. They are
also where the connections of a reverse proxy or of the gateway's WebSocket bridge come
from, and those carry every browser guest behind them: limiting one address would limit
all of them at once. A deployment that exposes NATS directly gets the limit for every
public address; one behind a proxy must limit new connections at the proxy.

The take5 TCP gateway, where every connection is a new player, admits its connections by
the same buckets (``CARDROOM_GATEWAY_NEW_*``).

Each auth service keeps its own buckets, so with ``n`` replicas one address may bring up to
``n`` times the limit. The buckets are bounded (:data:`MAX_ADDRESSES`): past that many
addresses, the ones unseen longest are forgotten, and a forgotten address starts full.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Final

DEFAULT_GUEST_RATE: Final = 30.0
"""New guests a minute from one address, once its burst is spent."""
DEFAULT_GUEST_BURST: Final = 30
"""New guests one address may bring at once: a household or a small club sitting down."""
DEFAULT_TRUSTED: Final = (
    "127.0.0.0/8",
    "::1/128",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "fc00::/7",
)
MAX_ADDRESSES: Final = 100_000

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_setting(raw: str | None) -> tuple[str, ...]:
    """The trusted networks a setting names: comma-separated; unset, the defaults; set but
    empty, none."""
    if raw is None:
        return DEFAULT_TRUSTED
    return tuple(text.strip() for text in raw.split(",") if text.strip())


def networks(texts: Iterable[str]) -> tuple[Network, ...]:
    """Networks from their texts (``10.0.0.0/8``, ``2001:db8::/32``, or one address)."""
    return tuple(ipaddress.ip_network(text.strip(), strict=False) for text in texts if text.strip())


class GuestAdmission:
    """The buckets of new guests per address (see the module). Pure and clock-driven."""

    def __init__(
        self,
        *,
        rate: float = DEFAULT_GUEST_RATE,
        burst: int = DEFAULT_GUEST_BURST,
        trusted: Iterable[str] = DEFAULT_TRUSTED,
        clock: Callable[[], float] = time.monotonic,
        max_addresses: int = MAX_ADDRESSES,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a guest rate must be above 0 and a burst at least 1")
        self.rate = rate / 60.0  # a second
        self.burst = float(burst)
        self.trusted = networks(trusted)
        self._clock = clock
        self._max = max_addresses
        # address -> (guests it may still bring, when that was counted); least recent first
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def admit(self, host: str) -> float:
        """Count a new guest from ``host``: 0.0 when admitted, else the seconds until the
        address may bring the next one. An address that cannot be read is one address of
        its own (the server always gives one)."""
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            key = host
        else:
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
                address = address.ipv4_mapped
            if any(address in network for network in self.trusted):
                return 0.0
            key = (
                str(ipaddress.IPv6Network((address, 64), strict=False))
                if isinstance(address, ipaddress.IPv6Address)
                else str(address)
            )
        now = self._clock()
        tokens, then = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)
        return wait

    def __len__(self) -> int:
        return len(self._buckets)


__all__ = [
    "DEFAULT_GUEST_BURST",
    "DEFAULT_GUEST_RATE",
    "DEFAULT_TRUSTED",
    "MAX_ADDRESSES",
    "GuestAdmission",
    "networks",
    "trusted_setting",
]
