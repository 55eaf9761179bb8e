"""Timers: durable deadlines (reaction windows, ack and turn timeouts), fired once each."""

from .clock import Clock, ManualClock, SystemClock
from .service import Timers

__all__ = ["Clock", "ManualClock", "SystemClock", "Timers"]
