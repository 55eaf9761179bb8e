"""The composition root: which service classes make up each `cardroom serve` choice.

This package is the only place that imports every service (services never import each
other); it is not a service itself.
"""

from __future__ import annotations

from enum import StrEnum

from cardroom_acktracker import AckTracker
from cardroom_analytics import Analytics
from cardroom_gamemaster import Gamemaster
from cardroom_gateway import Gateway, Web
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime.host import Service
from cardroom_timers import Timers


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


SERVICES: dict[ServiceName, list[type[Service]]] = {
    ServiceName.all: [Gamemaster, Relay, Projector, AckTracker, Timers, Analytics, Gateway, Web],
    ServiceName.gamemaster: [Gamemaster],
    ServiceName.relay: [Relay],
    ServiceName.projector: [Projector],
    ServiceName.acktracker: [AckTracker],
    ServiceName.timers: [Timers],
    ServiceName.analytics: [Analytics],
    ServiceName.gateway: [Gateway],
    ServiceName.web: [Web],
}
