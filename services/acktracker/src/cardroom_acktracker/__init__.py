"""Ack tracker: acks -> release of the gate -> the gamemaster's follow-up."""

from .service import AckTracker

__all__ = ["AckTracker"]
