"""Gamemaster: lobby and commands -> table aggregate -> events (+ pending acks), replies."""

from .service import Gamemaster

__all__ = ["Gamemaster"]
