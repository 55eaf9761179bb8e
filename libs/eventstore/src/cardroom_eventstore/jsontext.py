"""The JSON the event store writes and reads back as text (event data and metadata, command
replies, read models): compact UTF-8, cast to ``jsonb`` by the statements.

Writing is the wire's encoder (:func:`cardroom_wire.dumps`), so a value is stored as it is
sent; :func:`json_value` reads the text back.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from cardroom_wire.messages import dumps


def json_text(value: Any) -> str:
    """``value`` as JSON text (see :func:`cardroom_wire.dumps`)."""
    return dumps(value).decode()


def json_value(text: str | bytes) -> Any:
    """A value the store wrote, from its JSON text: orjson (a third of the standard library's
    time, most of a rebuild's decoding); what orjson refuses (integers beyond 64 bits, which
    the encoder writes) through the standard library."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
