"""docs/events.md says what the event stream carries: its examples and names are the games'
own (the event record's ``type``, the take5 events it lists, and the papas names it gives
for events published before their rename)."""

from __future__ import annotations

import json
import re
from typing import Any

from cardroom_games.papas.protocol import MESSAGES
from cardroom_games.take5.folds import FOLDS as TAKE5_FOLDS
from protocol_examples import ROOT

PAGE = (ROOT / "docs" / "events.md").read_text()


def _record() -> dict[str, Any]:
    for block in re.findall(r"```json\n(.*?)\n```", PAGE, flags=re.DOTALL):
        doc = json.loads(block)
        if "event_id" in doc:
            return dict(doc)
    raise AssertionError("no event record example")


def test_the_event_records_example_is_an_event_of_its_game() -> None:
    record = _record()
    assert record["game_type"] == "take5"
    assert record["type"] in TAKE5_FOLDS.types
    assert record["type"].startswith(f"{record['game_type']}.")


def test_the_take5_events_listed_are_take5s() -> None:
    section = PAGE.split("## The games' own events", 1)[1].split("**Older names.**", 1)[0]
    assert set(re.findall(r"`(take5\.[a-z_]+)`", section)) == set(TAKE5_FOLDS.types)


def test_the_older_papas_names_are_its_message_names() -> None:
    """Papas' events were named after the messages they cause, which kept their names."""
    rows = re.findall(
        r"^\| `(\w+)` +\| `(papas\.\w+)` +\| `(\w+)` +\| `(papas\.\w+)` +\|$", PAGE, re.M
    )
    pairs = {(old, new) for row in rows for old, new in (row[:2], row[2:])}
    assert pairs == {(message, event) for event, message in MESSAGES.items()}
