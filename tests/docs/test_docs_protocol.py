"""The protocol pages: every game has one, its examples are what the game really sends (taken
from games played in memory, see ``protocol_examples``), every command and message type the
game produced has an example, and every error code is documented."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest
from cardroom_wire import ErrorCode
from protocol_examples import GAMES, PAGES, ROOT, collect, examples

# Macaua's keys, signatures and proofs are new at every game: its examples are checked for
# their fields and the types of their values, the others for every value.
BY_SHAPE = {"macaua"}


@functools.cache
def produced(game: str) -> dict[str, Any]:
    return collect(game)


def shape(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: shape(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [shape(doc[0])] if doc and not isinstance(doc[0], str) else []
    return type(doc).__name__


def within(documented: Any, real: Any, where: str = "") -> list[str]:
    """Where the documented shape is not found in the real one (extra real fields allowed:
    Macaua's messages are gaining the fields of transition signing)."""
    if isinstance(documented, dict):
        if not isinstance(real, dict):
            return [f"{where}: not an object"]
        out = []
        for key, value in documented.items():
            if key not in real:
                out.append(f"{where}.{key}: no such field")
            else:
                out += within(value, real[key], f"{where}.{key}")
        return out
    if isinstance(documented, list):
        if documented and real and not within(documented[0], real[0]):
            return []
        return [] if not documented or not real else [f"{where}[0]: another shape"]
    if documented == real or "NoneType" in (documented, real):  # (a field that may be null)
        return []
    return [f"{where}: {documented} is {real}"]


@pytest.mark.parametrize("game", GAMES)
def test_the_examples_are_what_the_game_sends(game: str) -> None:
    page = (PAGES / f"{game}.md").read_text()
    documented = examples(page)
    real = produced(game)
    for key, value in documented.items():
        if game in BY_SHAPE:  # (its games differ from run to run: rare events may not come)
            if key in real:
                assert within(shape(value), shape(real[key])) == [], key
            continue
        assert key in real, f"{game}: {key} was not produced by the games played"
        assert value == real[key], f"{game}: {key} is not what the game sends"
    if game in BY_SHAPE:
        assert len(set(documented) & set(real)) >= len(documented) * 2 // 3


@pytest.mark.parametrize("game", GAMES)
def test_every_command_and_message_has_an_example(game: str) -> None:
    page = (PAGES / f"{game}.md").read_text()
    missing = set(produced(game)) - set(examples(page))
    if game in BY_SHAPE:  # a rare event is at least named on the page
        missing = {key for key in missing if f"`{key.rsplit('.', 1)[-1]}`" not in page}
    assert sorted(missing) == []


def _codes_of(game: str) -> set[str]:
    """Every refusal code the game's sources raise: ``Rejection(<code>, ...)`` with a
    constant of the game or of ``ErrorCode``."""
    import importlib

    package = ROOT / "libs" / "games" / "src" / "cardroom_games" / game
    codes: set[str] = set()
    for source in package.glob("*.py"):
        module = importlib.import_module(f"cardroom_games.{game}.{source.stem}")
        for name in re.findall(r"Rejection\(\s*([A-Za-z_.]+)", source.read_text()):
            if name.startswith("ErrorCode."):
                codes.add(str(ErrorCode[name.removeprefix("ErrorCode.")]))
            elif isinstance(value := getattr(module, name, None), str):
                codes.add(value)
    return codes


@pytest.mark.parametrize("game", GAMES)
def test_every_refusal_code_of_a_game_is_on_its_page(game: str) -> None:
    page = (PAGES / f"{game}.md").read_text()
    missing = sorted(c for c in _codes_of(game) if f"`{c}`" not in page)
    assert missing == []


def test_every_error_code_is_explained() -> None:
    page = (ROOT / "docs" / "errors.md").read_text()
    listed = set(re.findall(r"^\| `([a-z_]+)` \|", page, flags=re.MULTILINE))
    assert {str(c) for c in ErrorCode} <= listed
    for game in GAMES:
        assert _codes_of(game) <= listed | {str(c) for c in ErrorCode}, game


def _blocks(page: str) -> list[Any]:
    found = re.findall(r"```json\n(.*?)\n```", page, flags=re.DOTALL)
    out = []
    for block in found:
        try:
            out.append(json.loads(block))
        except ValueError:  # an illustration with "..." in it
            continue
    return out


def test_the_protocol_page_shows_the_summary_and_sync_reply_as_they_are() -> None:
    from cardroom_engine import Table
    from cardroom_games.take5 import GAME
    from cardroom_wire import SyncReply

    page = (ROOT / "docs" / "protocol.md").read_text()
    blocks = _blocks(page)
    table = Table(GAME)
    created = table.create("g1", "alice", {}, seats=4)
    summary = table.replay(created).summary()
    shown = next(b for b in blocks if isinstance(b, dict) and "max_seats" in b)
    assert set(shown) == set(summary)
    assert shown["config"] == summary["config"]
    assert set(SyncReply.model_fields) <= set(re.findall(r'"(\w+)":', page))
