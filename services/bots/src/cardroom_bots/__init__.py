"""Bots: player programs that play any game through the client SDK."""

from .players import BotPlayer, play_table, seat_key

__all__ = ["BotPlayer", "play_table", "seat_key"]
