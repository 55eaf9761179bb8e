"""Projector: events -> per-player views and notifications on private subjects."""

from .service import Projection, Projector, project_events

__all__ = ["Projection", "Projector", "project_events"]
