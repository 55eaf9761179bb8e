"""``cardroom_runtime.heap.settle``: start-up objects frozen, the young generation larger."""

from __future__ import annotations

import subprocess
import sys

# in a process of its own: freezing changes the collector of the whole process
_PROBE = """
import gc, os
from cardroom_runtime import heap
assert gc.get_freeze_count() == 0
before = gc.get_threshold()
heap.settle()
print(gc.get_freeze_count() > 1000, gc.get_threshold()[0], gc.get_threshold()[1:] == before[1:])
"""


def _probe(env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, env=env
    )
    return out.stdout.strip()


def test_settle_freezes_what_the_process_holds_and_widens_the_young_generation() -> None:
    assert _probe({"PATH": ""}) == "True 50000 True"


def test_the_young_generation_is_a_setting() -> None:
    assert _probe({"CARDROOM_GC_GEN0": "20000"}) == "True 20000 True"
    assert _probe({"CARDROOM_GC_GEN0": "0"}) == "True 700 True"  # 0: the default kept
