"""Bots: player programs that play any game through the client SDK."""

from .players import BotPlayer, play_table

__all__ = ["BotPlayer", "play_table"]
