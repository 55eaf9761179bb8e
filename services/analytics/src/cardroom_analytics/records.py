"""What analytics reads: the event record of the wire contract (``cardroom_wire.events``,
docs/events.md), published on ``<root>.events.<game type>.<game>``, and nothing else.
"""

from __future__ import annotations

import re

from cardroom_wire.events import BadRecord
from cardroom_wire.events import EventRecord as Record

__all__ = ["CREATED", "FINISHED", "JOINED", "STARTED", "BadRecord", "Record", "kind_of"]

# the engine's events (every game stream begins with created/joined and ends with finished)
CREATED = "table.created"
JOINED = "table.joined"
STARTED = "table.started"
FINISHED = "table.finished"

_KIND = re.compile(r"^([A-Za-z][A-Za-z_]*)-\d+$")


def kind_of(player: str) -> str | None:
    """The bot kind of a player named after it (``heuristic-1`` -> ``heuristic``), else None."""
    match = _KIND.match(player)
    return match.group(1) if match else None
