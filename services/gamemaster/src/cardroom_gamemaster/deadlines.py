"""The deadlines the gamemaster writes after each append for the timers service.

The table and its statements are the event store's (:mod:`cardroom_eventstore.deadlines`);
the gamemaster evaluates a game (``Table.deadlines``, plus the ack timeout of the oldest gate
still waiting for a gating acknowledgement, key :data:`ACKS`) and writes it through
:class:`DeadlineWriter` on the store's relaxed pool.
"""

from __future__ import annotations

from cardroom_eventstore.deadlines import ACKS, DeadlineWriter

__all__ = ["ACKS", "DeadlineWriter"]
