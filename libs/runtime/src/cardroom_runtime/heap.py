"""The garbage collector of a long-running service process.

CPython's cyclic collector runs a young-generation pass every 700 net allocations of
container objects and, now and then, a full pass over every object the process holds. A
service allocates a dict or two per message and holds everything it imported and built at
start (SQLAlchemy, pydantic and FastStream are tens of thousands of objects), plus its cache
of games, so under load the collector's full passes over start-up objects that live for
ever are a large share of the service's CPU (bench/README.md, "the collector").

:func:`settle` is called once a service is up: it moves everything alive then to the
collector's permanent generation (``gc.freeze``: never scanned again) and lets the young
generation grow to ``CARDROOM_GC_GEN0`` (default 50,000) allocations between passes. Almost
all of a service's garbage is freed by reference counting the moment it is dropped; the
collector is only needed for reference cycles, which wait a little longer.
"""

from __future__ import annotations

import gc
import os

GEN0 = 50_000


def settle() -> None:
    """Freeze what the process holds now; collect the young generation less often."""
    raw = os.environ.get("CARDROOM_GC_GEN0", "").strip()
    gen0 = int(raw) if raw else GEN0
    gc.collect()  # start-up garbage goes now, not into the permanent generation
    gc.freeze()
    if gen0 > 0:
        _, gen1, gen2 = gc.get_threshold()
        gc.set_threshold(gen0, gen1, gen2)
