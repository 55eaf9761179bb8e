"""The lobby listing (``tables``) of a game in play, as the live projector keeps it, is what
``cardroom rebuild`` makes of the game's events: the summary as of the table's last change
in the listing (seats, status or the seats away), however JetStream batched the events."""

from __future__ import annotations

from cardroom_wire import Notification
from support.stack import Stack, projected, wait_until

from cardroom.projector_rebuild import rebuild_shards

MOVES = 4


async def test_a_game_in_play_rebuilds_to_its_live_listing(stack: Stack) -> None:
    alice, bob = await stack.client("alice"), await stack.client("bob")
    seen: list[Notification] = []

    async def handle(note: Notification) -> None:
        seen.append(note)

    alice.on_notification(handle)
    bob.on_notification(handle)
    clients = {"alice": alice, "bob": bob}
    game = await alice.create("highcard", {"rounds": 3}, seats=2)
    await bob.join(game)
    answered: set[tuple[str, int]] = set()

    def prompt() -> Notification | None:
        """The latest notification with actions not yet answered."""
        return next(
            (n for n in reversed(seen) if n.actions and (n.player, n.version) not in answered),
            None,
        )

    for _ in range(MOVES):  # the game deals and prompts by itself; each prompt is answered
        await wait_until(lambda: prompt() is not None, timeout=30)
        note = prompt()
        assert note is not None
        answered.add((note.player, note.version))
        await clients[note.player].send(game, {"type": "bet", "amount": 1})
    await wait_until(lambda: prompt() is not None, timeout=30)  # the game went on after them
    await projected(stack.store, game)

    reports = await rebuild_shards([stack.database_url], workers=0)
    for _, report in reports:
        assert report.games == 1
        assert report.equal, report.differences

    # the lobby lists the table as it was last changed there (it started, both seated); a
    # `get` answers the version now
    listed = {t["game"]: t for t in await alice.tables()}[game]
    now = await alice.table(game)
    assert (listed["status"], listed["seats"]) == ("playing", now["seats"])
    assert listed["away"] == now["away"] == []
    assert listed["version"] < now["version"]
    assert {k: v for k, v in listed.items() if k != "version"} == {
        k: v for k, v in now.items() if k != "version"
    }
