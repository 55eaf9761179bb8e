"""Gamemaster: lobby and commands -> table aggregate -> events."""
