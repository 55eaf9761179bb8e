"""Ack tracker: acks -> release of the gate."""
