"""``cardroom rebuild`` in a process that has no rules for a game type in the store (one
named in the services' ``CARDROOM_GAMES`` only): one line naming the type and what to do,
exit status 2, no traceback, and nothing written, not even the rows of the games it could
fold. Given the rules, the same rebuild runs."""

from __future__ import annotations

import asyncio
import os
import sys
from asyncio.subprocess import PIPE, STDOUT
from pathlib import Path

import sqlalchemy as sa
from support.stack import Stack, projected

TESTS = Path(__file__).resolve().parents[1]


async def _rebuild(env: dict[str, str], *args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cardroom", "rebuild", *args, env=env, stdout=PIPE, stderr=STDOUT
    )
    async with asyncio.timeout(120):
        out, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace")


async def _listed(stack: Stack) -> set[str]:
    async with stack.store.engine.connect() as conn:
        return {str(g) for g in await conn.scalars(sa.text("SELECT game_id FROM tables"))}


async def test_a_game_type_without_rules_here_refuses_the_rebuild_and_writes_nothing(
    stack: Stack, tmp_path: Path
) -> None:
    alice = await stack.client("alice")
    unknown = await alice.create("highcard", {}, seats=2)  # this test's game: no entry point
    known = await alice.create("take5", {}, seats=2)
    for game in (unknown, known):
        await projected(stack.store, game)
    # lost rows that a repair would write again
    async with stack.store.engine.begin() as conn:
        await conn.execute(sa.text("DELETE FROM tables"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARDROOM_", "PYTEST_"))}
    env |= {
        "CARDROOM_DATABASE_URL": stack.database_url,
        "CARDROOM_NATS_URL": stack.nats_url,
        "CARDROOM_SUBJECT_ROOT": stack.root,
        "CARDROOM_DATA_DIR": str(tmp_path / "data"),
        "CARDROOM_REBUILD_WORKERS": "2",
        "COLUMNS": "400",  # the error on one line, as a wide terminal shows it
    }

    code, out = await _rebuild(env, "--repair")
    assert code == 2, out
    assert "Traceback" not in out, out
    assert "no rules for game type 'highcard' here" in out, out
    assert "CARDROOM_GAMES" in out, out
    assert "nothing was rebuilt" in out, out
    assert len(out.strip().splitlines()) == 1, out
    assert await _listed(stack) == set()  # take5's row was not repaired either

    # with the game's rules, as the services have them, the same command rebuilds both
    env |= {
        "CARDROOM_GAMES": "support.highcard:GAME",
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    code, out = await _rebuild(env, "projector", "--repair")
    assert code == 1, out  # it found the rows missing, and wrote them
    assert "Traceback" not in out, out
    assert await _listed(stack) == {unknown, known}
