"""The examples of the per-game protocol pages (docs/games/<game>.md), taken from real games.

Each example in a page is a fenced JSON block right after a marker line::

    <!-- example: command play_response -->
    <!-- example: message TAKEN -->
    <!-- example: view -->

``collect`` plays a few seeded games of the game in memory (the table around the rules, as
the services run it; every seat a random bot) and keeps the first command of each type that
was accepted, the first notification message of each type a player was sent, and the view of
the first player asked to act. The test (``test_docs_protocol``) compares every block with
what ``collect`` finds, so the pages cannot drift from the code, and asks for an example of
every command and message type the games produced. Long strings and lists are abridged the
same way on both sides (Macaua's proofs run to kilobytes).

To rewrite the blocks after a change of protocol::

    .venv/bin/python tests/docs/protocol_examples.py write
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "games"
GAMES = ("take5", "sixtysix", "papas", "macaua")
MARKER = re.compile(r"^<!-- example: (command \S+|message \S+|view) -->$")
LONG_STRING = 72
LONG_LIST = 6

# seat counts and seeds played for each game's examples (enough to meet every message type)
PLAYS: dict[str, list[tuple[int, int, dict[str, Any]]]] = {
    "take5": [(2, 1, {}), (3, 2, {})],
    "sixtysix": [(2, 1, {}), (3, 2, {}), (2, 3, {"protocol": "v1"}), (3, 4, {"protocol": "v1"})],
    "papas": [(3, 1, {}), (4, 2, {}), (2, 3, {}), (5, 4, {})],
    "macaua": [(2, 1, {"max_turns": 60})],
}


def abridge(doc: Any) -> Any:
    """``doc`` with long strings and lists cut (marked), so that examples stay readable."""
    if isinstance(doc, Mapping):
        return {k: abridge(v) for k, v in doc.items()}
    if isinstance(doc, list):
        head = [abridge(v) for v in doc[:LONG_LIST]]
        if len(doc) > LONG_LIST:
            head.append(f"... {len(doc) - LONG_LIST} more")
        return head
    if isinstance(doc, str) and len(doc) > LONG_STRING:
        return doc[:24] + f"... ({len(doc)} characters)"
    return doc


def collect(name: str) -> dict[str, Any]:
    """``{"command <type>": ..., "message <type>": ..., "view": ...}`` from seeded games."""
    from cardroom_engine import registry
    from cardroom_engine.simulate import bots_chooser, play
    from cardroom_runtime.games import load_games

    load_games("")
    game = registry.get(name)
    found: dict[str, Any] = {}
    for players, seed, config in PLAYS[name]:
        seats = [f"p{i + 1}" for i in range(players)]
        bots = {p: game.bots["random"](p) for p in seats}
        held = {p: getattr(b, "verify_key", None) for p, b in bots.items()}
        keys = {p: k for p, k in held.items() if isinstance(k, str)}
        chosen: list[dict[str, Any]] = []
        choose = _recording(bots_chooser(game, dict.fromkeys(seats, "random"), bots), chosen, found)
        local = play(game, seats, random.Random(seed), config, choose, keys=keys or None)
        for command in chosen:
            found.setdefault(f"command {_kind(command, 'move', 'kind')}", command)
        for step in local.steps:
            for message in step.notifications.values():
                found.setdefault(f"message {_kind(message, 'event')}", message)
    return {key: abridge(json.loads(json.dumps(value))) for key, value in found.items()}


def _kind(doc: Mapping[str, Any], *keys: str) -> str:
    """``type``, and a finer kind where a game has one type of several kinds (Macaua's
    ``move`` commands by their ``move.kind``, its ``MacauaUpdate`` by its ``event``)."""
    inner: Any = doc
    for key in keys:
        inner = inner.get(key) if isinstance(inner, Mapping) else None
    return f"{doc['type']}.{inner}" if isinstance(inner, str) else str(doc["type"])


def _recording(inner: Any, chosen: list[dict[str, Any]], found: dict[str, Any]) -> Any:
    """A chooser that records the commands ``inner`` chooses, and the first chooser's view."""

    def choose(local: Any, player: str, actions: Any, rng: random.Random) -> Any:
        command = dict(inner(local, player, actions, rng))
        chosen.append(command)
        if "view" not in found:  # the first player asked to act
            found["view"] = local.table.view(local.state, player)
        return command

    return choose


def examples(page: str) -> dict[str, Any]:
    """The examples a page holds: ``{marker: the JSON block after it}``."""
    lines = page.splitlines()
    out: dict[str, Any] = {}
    for i, line in enumerate(lines):
        match = MARKER.match(line.strip())
        if match is None:
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```json":
            raise ValueError(f"no JSON block after {line!r}")
        end = lines.index("```", i + 2)
        out[match.group(1)] = json.loads("\n".join(lines[i + 2 : end]))
    return out


def pretty(value: Any, indent: int = 0) -> str:
    """JSON, one line for every part that fits in 88 columns: short enough to read."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(flat) + indent <= 88 or not isinstance(value, dict | list) or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {pretty(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [inner + pretty(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def write(name: str) -> None:
    """Rewrite the page's example blocks from ``collect`` (a marker without a block gets one)."""
    path = PAGES / f"{name}.md"
    found = collect(name)
    lines = path.read_text().splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        match = MARKER.match(line.strip())
        i += 1
        if match is None:
            continue
        if i < len(lines) and lines[i].strip() == "```json":
            i = lines.index("```", i + 1) + 1
        value = found.get(match.group(1))
        text = pretty(value)
        out += ["```json", *text.splitlines(), "```"]
    path.write_text("\n".join(out) + "\n")
    missing = sorted(set(found) - set(examples(path.read_text())))
    if missing:
        print(f"{name}: no marker for {missing}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    if sys.argv[1:2] == ["write"]:
        for game in sys.argv[2:] or GAMES:
            write(game)
    else:
        for game in sys.argv[1:] or GAMES:
            print(game, json.dumps(sorted(collect(game)), indent=1))
