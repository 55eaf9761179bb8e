"""Projector: events -> per-player views and notifications."""
