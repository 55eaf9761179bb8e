"""Relay: event store -> JetStream in commit order."""
