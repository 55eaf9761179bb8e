"""The service pipeline end to end, on real NATS (JetStream) and PostgreSQL."""

from __future__ import annotations

import asyncio
import json

import pytest
from cardroom_bots import BotPlayer, play_table
from cardroom_client import CardroomError
from cardroom_engine import Table, registry
from cardroom_wire import Notification
from support.stack import Recorder, Stack, as_event, contiguous, projected, wait_until

from cardroom.replay_cli import read_game, seen_by


async def _replayed(stack: Stack, game: str) -> Table:
    records = await stack.store.read_stream(game)
    versions = [r.version for r in records]
    assert versions == list(range(1, len(records) + 1))
    return Table(registry.get(records[0].stream_type))


async def test_bots_finish_50_concurrent_games(stack: Stack) -> None:
    tables = [
        play_table(
            stack.nats_url,
            "highcard",
            [f"t{i}a", f"t{i}b", f"t{i}c"][: 2 + i % 2],
            subject_root=stack.root,
            config={"rounds": 2},
            timeout=240,
        )
        for i in range(50)
    ]
    results = await asyncio.gather(*tables)
    assert len({game for game, _ in results}) == 50
    for game, outcome in results:
        records = await stack.store.read_stream(game)
        assert [r.version for r in records] == list(range(1, len(records) + 1))
        table = Table(registry.get("highcard"))
        final = table.replay([as_event(r) for r in records])
        assert final.status == "finished"
        assert final.outcome == outcome  # what the players were told is what the log says


async def _two_player_game(
    stack: Stack, *, bob_stops_at: int = 0
) -> tuple[str, BotPlayer, BotPlayer, Recorder, Recorder]:
    """Two bots play highcard; with ``bob_stops_at``, bob's handler never returns from that
    notification (it is neither recorded nor acknowledged: the game waits for bob)."""
    a, b = await stack.client("alice"), await stack.client("bob")
    bots = [BotPlayer(a), BotPlayer(b)]
    recorders = [Recorder(), Recorder()]
    for bot, rec in zip(bots, recorders, strict=True):
        observe = bot._observe
        stop_at = bob_stops_at if bot is bots[1] else 0
        got = [0]

        async def handler(
            note: Notification,
            rec: Recorder = rec,
            observe=observe,
            stop_at: int = stop_at,
            got: list[int] = got,
        ) -> None:
            got[0] += 1
            if got[0] == stop_at:
                await asyncio.Event().wait()
            await rec(note)
            await observe(note)

        bot.client.on_notification(handler, after_ack=bot._act)
    # card values far above any chip count, so a value found in a text is really that card
    game = await a.create("highcard", {"rounds": 2, "max_value": 1_000_000}, seats=2)
    for bot in bots:
        bot.watch(game, "highcard")
    await b.join(game)
    return game, bots[0], bots[1], recorders[0], recorders[1]


async def test_a_game_plays_through_and_everyone_saw_everything_in_order(stack: Stack) -> None:
    game, a, b, ra, rb = await _two_player_game(stack)
    async with asyncio.timeout(60):
        await asyncio.gather(a.finished[game].wait(), b.finished[game].wait())
    for rec, player in ((ra, "alice"), (rb, "bob")):
        assert contiguous(rec.seqs(game))
        # the last notification is acknowledged right after its handler returned
        await wait_until(lambda p=player: _no_pending(stack, game, p))
        assert rec.seen[game][-1].message["type"] == "GameOver"


async def _no_pending(stack: Stack, game: str, player: str) -> bool:
    return await stack.store.pending_for_player(game, player) == []


async def test_what_players_were_sent_is_what_the_projector_computes(stack: Stack) -> None:
    """The gamemaster sends notifications as events commit; the projector computes its own
    from the events (stored for syncs and resends while owed). They must be the same
    documents, and the projector's views count the same ``seq``."""
    game, a, b, ra, rb = await _two_player_game(stack)
    async with asyncio.timeout(60):
        await asyncio.gather(a.finished[game].wait(), b.finished[game].wait())
    await projected(stack.store, game)
    records = await read_game(stack.store, game)
    for rec, player in ((ra, "alice"), (rb, "bob")):
        sent = [note.model_dump(mode="json") for note in rec.seen[game]]
        assert len(sent) > 10
        assert seen_by(records, player)[0] == sent
        assert await stack.store.last_seq(game, player) == len(sent)


async def test_what_a_player_owes_is_stored_as_it_was_sent(stack: Stack) -> None:
    """A notification not acknowledged yet is stored by the projector, the very document the
    player got; once acknowledged it is gone (the event log keeps the history)."""
    alice, bob = await stack.client("alice"), await stack.client("bob")
    got: list[Notification] = []
    held = asyncio.Event()

    async def hold(note: Notification) -> None:  # returns (and so acks) only when let go
        got.append(note)
        await held.wait()

    alice.on_notification(hold)
    bob.on_notification(lambda note: asyncio.sleep(0))
    game = await alice.create("highcard", {}, seats=2)
    await bob.join(game)
    await wait_until(lambda: len(got) >= 1)
    await projected(stack.store, game)
    versions = [note.version for note in got]
    stored = await stack.store.notifications_for_versions(game, "alice", versions)
    assert [n.payload for n in stored] == [note.model_dump(mode="json") for note in got]
    held.set()
    await wait_until(lambda: _no_pending(stack, game, "alice"))
    # deleted on the acktracker's sweep (or never stored, had the ack been first)
    await wait_until(lambda: _none_stored(stack, game, "alice", versions), timeout=30)


async def _none_stored(stack: Stack, game: str, player: str, versions: list[int]) -> bool:
    return await stack.store.notifications_for_versions(game, player, versions) == []


async def test_command_while_acks_are_missing_is_refused(stack: Stack) -> None:
    alice, bob = await stack.client("alice"), await stack.client("bob")
    got: list[Notification] = []

    async def hold(note: Notification) -> None:  # receives but does not return yet
        got.append(note)
        await asyncio.Event().wait()

    alice.on_notification(hold)
    bob.on_notification(hold)
    game = await alice.create("highcard", {}, seats=2)
    await bob.join(game)
    await wait_until(lambda: stack.store.stream_version(game), timeout=30)
    before = await stack.store.stream_version(game)
    await wait_until(lambda: len(got) >= 2)
    pending = await stack.store.pending(game)
    assert pending  # nobody has acknowledged the deal
    with pytest.raises(CardroomError) as exc:
        await alice.command(game, "bet", amount=1)
    assert exc.value.code == "awaiting_acks"
    assert await stack.store.stream_version(game) == before
    assert await stack.store.pending(game) == pending


async def test_duplicate_command_id_returns_the_first_answer(stack: Stack) -> None:
    alice, bob = await stack.client("alice"), await stack.client("bob")
    prompts: list[Notification] = []

    async def on_alice(note: Notification) -> None:
        if note.actions:
            prompts.append(note)

    async def nothing(note: Notification) -> None:
        pass

    # prompted once the prompt is acknowledged: before that, the gate is closed
    alice.on_notification(nothing, after_ack=on_alice)
    game = await alice.create("highcard", {}, seats=2)
    await bob.join(game)
    await wait_until(lambda: bool(prompts))
    first = await alice.command(game, "bet", amount=2, command_id="same-id")
    again = await alice.command(game, "bet", amount=2, command_id="same-id")
    assert again == first
    # (the game itself may have moved on meanwhile: its follow-ups run as the acks come)
    records = await stack.store.read_stream(game)
    assert sum(1 for r in records if r.metadata.get("command_id") == "same-id") == 1


async def test_client_drops_and_resyncs(stack: Stack) -> None:
    # let the game run a little, then cut bob off while he handles his 4th notification
    game, a, b, ra, rb = await _two_player_game(stack, bob_stops_at=4)
    await wait_until(lambda: len(rb.seen.get(game, [])) >= 3)
    await wait_until(lambda: stack.store.pending_for_player(game, "bob"))  # the game waits
    await b.client.close()
    dropped_at = rb.seqs(game)[-1]
    assert dropped_at == 3
    # bob comes back on a new connection and resyncs
    b2 = BotPlayer(await stack.client("bob"))
    observe = b2._observe

    async def handler(note: Notification) -> None:
        await rb(note)
        await observe(note)

    b2.client.on_notification(handler, after_ack=b2._act)
    b2.watch(game, "highcard")
    b2.client._feed(game).last_seq = dropped_at  # the app remembers what it handled
    await b2.client.follow(game)
    async with asyncio.timeout(60):
        await asyncio.gather(a.finished[game].wait(), b2.finished[game].wait())
    assert contiguous(rb.seqs(game))  # every notification, in order, none twice
    assert contiguous(ra.seqs(game))


async def test_leak_check_over_the_wire(stack: Stack) -> None:
    """Nothing a player receives (notifications, sync, errors) holds another's hidden card,
    unless that card was shown at a showdown where its owner had not folded."""
    game, a, b, ra, rb = await _two_player_game(stack)
    async with asyncio.timeout(60):
        await asyncio.gather(a.finished[game].wait(), b.finished[game].wait())
    records = [as_event(r) for r in await stack.store.read_stream(game)]
    for rec, me, client in ((ra, "alice", a.client), (rb, "bob", b.client)):
        sync = await client.sync(game)
        # an error reply for a bad command must not reveal anything either
        with pytest.raises(CardroomError) as exc:
            await client.command(game, "bet", amount=1)
        received = [n.model_dump() for n in rec.seen[game]]
        received += [sync.model_dump(), {"error": exc.value.code, "message": exc.value.message}]
        known: set[tuple[str, int]] = set()
        folded: set[str] = set()
        dealt: dict[str, int] = {}
        for event in records:
            if event["type"] == "highcard.dealt":
                dealt, folded = event["cards"], set()
                known.add((me, dealt[me]))
            elif event["type"] == "highcard.folded":
                folded.add(event["player"])
            elif event["type"] == "highcard.showdown":
                known |= {(p, v) for p, v in dealt.items() if p not in folded}
        secret = {
            (p, v)
            for event in records
            if event["type"] == "highcard.dealt"
            for p, v in event["cards"].items()
        } - known
        text = json.dumps(received)
        for player, value in secret:
            assert f'"{player}": {value}' not in text
            for n in rec.seen[game]:
                assert n.message.get("card") != value or n.message["type"] != "YourCard"
