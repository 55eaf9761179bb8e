"""Relay: event store -> JetStream, in commit order, no gaps, no duplicates."""

from .service import Relay, event_payload

__all__ = ["Relay", "event_payload"]
