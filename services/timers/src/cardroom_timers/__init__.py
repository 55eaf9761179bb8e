"""Timers: durable deadlines."""
