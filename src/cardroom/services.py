"""The composition root: which service classes make up each `cardroom serve` choice.

This package is the only place that imports every service (services never import each
other); it is not a service itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cardroom_runtime.host import Service


class ServiceName(StrEnum):
    all = "all"
    gamemaster = "gamemaster"
    relay = "relay"
    projector = "projector"
    acktracker = "acktracker"
    timers = "timers"
    analytics = "analytics"
    gateway = "gateway"
    web = "web"
    auth = "auth"  # NATS auth callout responder (deploy/); not a Host service, not in "all"


# where each service class lives: imported when its choice is served, so that a process
# serving one service starts without importing the others (a restarted service is back
# sooner: the imports are most of a start)
_WHERE: dict[ServiceName, list[str]] = {
    ServiceName.gamemaster: ["cardroom_gamemaster:Gamemaster"],
    ServiceName.relay: ["cardroom_relay:Relay"],
    ServiceName.projector: ["cardroom_projector:Projector"],
    ServiceName.acktracker: ["cardroom_acktracker:AckTracker"],
    ServiceName.timers: ["cardroom_timers:Timers"],
    ServiceName.analytics: ["cardroom_analytics:Analytics"],
    ServiceName.gateway: ["cardroom_gateway:Gateway"],
    ServiceName.web: ["cardroom_gateway:Web"],
}
_WHERE[ServiceName.all] = [path for name in _WHERE for path in _WHERE[name]]


def _load(path: str) -> type[Service]:
    module, name = path.split(":")
    found: type[Service] = getattr(importlib.import_module(module), name)
    return found


class _Services(Mapping[ServiceName, list["type[Service]"]]):
    """The service classes of each choice, imported on first use."""

    def __getitem__(self, name: ServiceName) -> list[type[Service]]:
        return [_load(path) for path in _WHERE[name]]

    def __iter__(self) -> Iterator[ServiceName]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


SERVICES: Mapping[ServiceName, list[type[Service]]] = _Services()
"""Each ``cardroom serve`` choice: its service classes, in start order."""
