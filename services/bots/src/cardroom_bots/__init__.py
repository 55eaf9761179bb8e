"""Bots that play any game through the client SDK."""
