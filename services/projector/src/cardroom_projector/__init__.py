"""Projector: events -> per-player views and notifications on private subjects."""

from .service import Entry, Projection, Projector, project_events, project_log

__all__ = ["Entry", "Projection", "Projector", "project_events", "project_log"]
