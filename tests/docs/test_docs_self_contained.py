"""The repository explains itself: no tracked file cites a document that is not in it.

Comments, docstrings and Markdown state a rule or a fact themselves rather than point at an
outside rule book or protocol write-up (``RULES.md``, "RULES 4.3", ``seeds/...``,
``../shared/...``), which someone with only a clone cannot read. Random seeds and key seeds
are ordinary words here and are not flagged.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().relative_to(ROOT).as_posix()

OUTSIDE = re.compile(
    r"\bRULES(?:\.md\b|\s*§|\s+[0-9])"  # the rule book, or a section of it: RULES 4.3
    r"|(?<![\w-])seeds/"  # the protocol write-ups folder (not ``random_seeds/`` and the like)
    r"|\.\./shared\b"  # the sibling folder they live in
    r"|\bshared/(?:DESIGN|RULES|seeds)\b"
    # the write-ups by their file names
    r"|\b(?:macaua-mental-poker|papas-state-machine|sixtysix-protocol-v[12]|take5-protocol)\.md\b"
)


def outside_references(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every line of ``text`` that cites an outside document."""
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if OUTSIDE.search(line)
    ]


def tracked_files() -> list[str]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"not a git checkout ({error})")
    return [name for name in listed.decode().split("\0") if name]


@pytest.mark.parametrize(
    "line",
    [
        "See RULES.md for the deal.",
        "the deal's layout (RULES 4.3 step 4)",
        "as RULES § 2 says",
        "written from seeds/take5-protocol.md alone",
        "see ../shared/DESIGN.md",
        "shared/RULES.md, section 3",
    ],
)
def test_the_pattern_finds_outside_references(line: str) -> None:
    assert outside_references(line) == [(1, line)]


@pytest.mark.parametrize(
    "line",
    [
        "rng = random.Random(seed)",
        "for seed in range(5):",
        "def play_games(seeds: Sequence[int]) -> None:",
        "the seed's public key (an nkey seed, SA...)",
        "the account seed the auth service signs with",
        "RULES = load_rules()",
        "random_seeds/0.json",
        "GAME_RULES.md",
        "a shared/ folder of our own",
    ],
)
def test_the_pattern_leaves_ordinary_words_alone(line: str) -> None:
    assert outside_references(line) == []


def test_no_tracked_file_cites_an_outside_document() -> None:
    found = []
    for name in tracked_files():
        if name == HERE:
            continue
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree, or a submodule
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary: not documentation
        found += [f"{name}:{number}: {line}" for number, line in outside_references(text)]
    assert not found, "state the rule or fact itself instead of citing:\n" + "\n".join(found)
