"""JSON text of the values the event store writes (event data and metadata, command replies,
read models): compact and UTF-8, cast to ``jsonb`` by the statements."""

from __future__ import annotations

import json
from typing import Any

import orjson


def json_text(value: Any) -> str:
    """orjson, several times faster than the standard library; what orjson refuses
    (integers beyond 64 bits) through the standard library."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
