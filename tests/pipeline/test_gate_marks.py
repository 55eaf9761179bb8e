"""A released gate with nothing to follow up is marked handled by the game's next append, or
after ``MARK_DELAY`` by a statement of its own (never left for the acktracker's sweep)."""

from __future__ import annotations

import asyncio

import pytest
from cardroom_runtime import gate as gates
from cardroom_wire import Notification
from sqlalchemy import text
from support.stack import Stack, wait_until


async def _handled(stack: Stack, game: str, version: int) -> bool:
    async with stack.store.engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT handled FROM gates WHERE stream_id = :g AND version = :v"),
                {"g": game, "v": version},
            )
        ).one()
    return bool(row[0])


async def _prompted(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, Notification, asyncio.Queue[tuple[str, int]]]:
    """A take5 game waiting for its players' cards: the prompt (told to every seat, its gate
    released, and that release handled by the gamemaster with nothing to follow up), and the
    queue of those releases. (A prompt told to its player only would hold no gate.)"""
    later: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
    original = gates.Follower.mark_later

    def spy(self: gates.Follower, gate: gates.GameGate, game: str, handled: set[int]) -> None:
        for version in handled:
            later.put_nowait((game, version))
        original(self, gate, game, handled)

    monkeypatch.setattr(gates.Follower, "mark_later", spy)
    alice, bob = await stack.client("alice"), await stack.client("bob")
    prompts: asyncio.Queue[Notification] = asyncio.Queue()

    async def after(note: Notification) -> None:
        if note.actions:
            prompts.put_nowait(note)

    for client in (alice, bob):
        client.on_notification(lambda note: asyncio.sleep(0), after_ack=after)
    game = await alice.create("take5", {}, seats=2)
    await bob.join(game)
    async with asyncio.timeout(30):
        prompt = await prompts.get()
        while (await later.get()) != (game, prompt.version):
            pass
    return game, prompt, later


async def test_the_next_command_marks_the_released_gate(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gates, "MARK_DELAY", 600.0)  # only the append can mark it now
    game, prompt, _ = await _prompted(stack, monkeypatch)
    assert not await _handled(stack, game, prompt.version)
    client = await stack.client(prompt.player)
    move = dict(prompt.actions[0])
    await client.command(game, move.pop("type"), **move)
    assert await _handled(stack, game, prompt.version)


async def test_a_game_that_waits_has_its_released_gate_marked_after_the_delay(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gates, "MARK_DELAY", 0.05)

    async def no_sweep(self: gates.Releases, grace: float = gates.RELEASE_GRACE) -> int:
        return 0

    # the acktracker's sweep, which would send the release again after RELEASE_GRACE and so
    # have it marked by another follow-up, is off: only the delayed statement can mark it
    monkeypatch.setattr(gates.Releases, "resend_unhandled", no_sweep)
    game, prompt, _ = await _prompted(stack, monkeypatch)
    # nobody moves: no append comes, so the delayed statement marks it
    await wait_until(lambda: _handled(stack, game, prompt.version), timeout=10)
