"""Analytics: an outside subscriber of the event stream: results, ratings, statistics.

It reads only the documented event records of ``<root>.events.>`` (docs/events.md) and keeps
its own tables; see :mod:`cardroom_analytics.service`.
"""

from .fold import Ledger, ordinal
from .rebuild import RebuildReport, read_events, rebuild
from .records import BadRecord, Record, kind_of
from .service import Analytics, durable_name, query_subject

__all__ = [
    "Analytics",
    "BadRecord",
    "Ledger",
    "RebuildReport",
    "Record",
    "durable_name",
    "kind_of",
    "ordinal",
    "query_subject",
    "read_events",
    "rebuild",
]
