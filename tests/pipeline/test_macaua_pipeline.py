"""Macaua end to end on real NATS and PostgreSQL: 2, 3 and 6 bots (each holding its own keys,
in the services' bot players) finish games; nothing any player or a spectator received, and
nothing in the event store, shows a card hidden from them at that moment (the independent
entitlement model of tests/games/macaua/macaua_leakmodel.py); and tampering sent through
the services is refused with its stable code and appends nothing. The gamemaster checks the
proofs in a worker thread, never on its event loop."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import threading
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import cardroom_games.macaua.commands as macaua_commands
import nats
import pytest
from cardroom_bots.players import BotPlayer
from cardroom_client import CardroomError, Client
from cardroom_engine import Table, registry
from cardroom_games.macaua import HeuristicBot, MacauaBot, game_view
from cardroom_mentalpoker import MACAUA_CARDS, random_scalar, sign_move
from cardroom_wire import Notification, Subjects
from games.macaua.macaua_leakmodel import LeakModel, all_keys, truth
from support.stack import Stack, as_event, wait_until

CASES = [
    # players, config: a new table's shuffle argument; the cut-and-choose proof at its
    # default 64 rounds, the fewest a new table may have (sent in parts); a turn limit bounds
    # the time (a game that reaches it ends undecided, audited)
    (2, {"max_turns": 150}),
    (2, {"shuffle_proof": "rounds", "max_turns": 150}),
    (3, {"shuffle_proof": "rounds", "max_turns": 150}),
    (6, {"max_turns": 150}),
]


async def _play(
    stack: Stack, seats: list[str], config: dict[str, Any]
) -> tuple[str, dict[str, Any], dict[str, list[Notification]], list[dict[str, Any]]]:
    kinds = ["heuristic", "random"]
    notes: dict[str, list[Notification]] = defaultdict(list)
    bots: list[BotPlayer] = []
    for i, player in enumerate(seats):
        bot = BotPlayer(
            await Client.connect(stack.nats_url, player, subject_root=stack.root),
            kind=kinds[i % 2],
        )
        observe, act = bot._observe, bot._act

        async def record(note: Notification, player: str = player, observe: Any = observe) -> None:
            notes[player].append(note)
            await observe(note)

        bot.client.on_notification(record, after_ack=act)
        bots.append(bot)
    spectator = await nats.connect(stack.nats_url)
    public: list[dict[str, Any]] = []
    try:
        game = await bots[0].create("macaua", config, seats=len(seats))  # with its seat's key

        async def on_public(msg: Any) -> None:
            public.append(json.loads(msg.data))

        await spectator.subscribe(Subjects(stack.root).public(game), cb=on_public)
        await spectator.flush()
        for bot in bots[1:]:
            await bot.join(game, "macaua")
        async with asyncio.timeout(240):
            await asyncio.gather(*(b.finished[game].wait() for b in bots))
        await spectator.flush()
        return game, bots[0].outcomes[game], notes, public
    finally:
        await spectator.close()
        await asyncio.gather(*(b.close() for b in bots), return_exceptions=True)


@pytest.mark.parametrize(("players", "config"), CASES)
async def test_macaua_bots_finish_and_nothing_hidden_leaks(
    stack: Stack, players: int, config: dict[str, Any]
) -> None:
    seats = [f"m{i}" for i in range(players)]
    game, outcome, notes, public = await _play(stack, seats, config)
    records = await stack.store.read_stream(game)
    events = [as_event(r) for r in records]
    assert [r.version for r in records] == list(range(1, len(records) + 1))
    table = Table(registry.get("macaua"))
    final = table.replay(events)
    assert final.status == "finished"
    assert final.outcome == outcome
    assert outcome["details"]["audit"]["ok"] is True
    assert outcome["details"]["result"] in ("won", "turn_limit")
    assert sorted(p for group in outcome["ranking"] for p in group) == seats
    for player in seats:
        assert [n.seq for n in notes[player]][:1] == [1]
        assert notes[player][-1].message["type"] == "GameOver"

    # every transition was signed by every player, each signature by its seat key over the
    # transition as recorded
    kept = await stack.store.signatures_since(game, 0, records[-1].version)
    transitions = [(r.version, e) for r, e in zip(records, events, strict=True)]
    transitions = [(v, e) for v, e in transitions if e["type"].startswith("macaua.")]
    rules = table.game
    for version, event in transitions:
        for player in seats:
            signed = kept.get((version, player))
            assert signed is not None, f"{player} did not sign v{version} {event['type']}"
            assert signed.rejection is None
            assert signed.signature is not None
            assert rules.signature_holds(final.game, player, version, event, signed.signature)
    assert len(kept) == len(transitions) * len(seats)
    # and a signature of one player, or of another version, does not pass for another's
    version, event = transitions[-1]
    other = kept[(version, seats[0])].signature
    assert other is not None
    assert not rules.signature_holds(final.game, seats[1], version, event, other)
    assert not rules.signature_holds(final.game, seats[0], version - 1, event, other)

    # the entitlement model, version by version
    game_events = [e for e in events if e["type"].startswith("macaua.")]
    model = LeakModel(seats, truth(game_events, seats), final.game.config.hand_size)
    keys = all_keys(game_events)
    by_version: dict[int, list[tuple[str | None, Any]]] = defaultdict(list)
    for player, received in notes.items():
        for note in received:
            by_version[note.version].append((player, note.model_dump(mode="json")))
    for update in public:
        by_version[int(update["version"])].append((None, update))
    assert public, "the spectator received nothing"
    for record, event in zip(records, events, strict=True):
        first = model.hides(event)
        if not first and event["type"].startswith("macaua."):
            model.apply(event)
        where = f"v{record.version} {event['type']}"
        model.scan(f"store {where}", None, event)
        model.check_keys(where, event, keys)
        for observer, message in by_version.get(record.version, []):
            model.scan(f"received {where}", observer, message)
        if first:
            model.apply(event)
    assert model.audited
    assert model.problems == []


class _Seat:
    """A player whose every move is made by hand in the test (its bot builds them)."""

    def __init__(self, client: Client, bot: MacauaBot) -> None:
        self.client = client
        self.bot = bot
        self.latest: Notification | None = None
        self.done = 0  # the version of the notification last acted on
        client.on_notification(self._note)

    async def _note(self, note: Notification) -> None:
        self.latest = note

    def due(self) -> bool:
        note = self.latest
        return note is not None and bool(note.actions) and note.version > self.done

    def view(self) -> Mapping[str, Any]:
        assert self.latest is not None
        assert self.latest.view is not None
        return game_view(self.latest.view)

    def move(self) -> dict[str, Any]:
        assert self.latest is not None
        return dict(self.bot.choose(self.view(), self.latest.actions, random.Random(0)))

    def acted(self) -> None:
        assert self.latest is not None
        self.done = self.latest.version


async def _send(stack: Stack, seat: _Seat, game: str, command: dict[str, Any]) -> str | None:
    """Send once the gate is open; None when accepted, else the refusal's code."""
    outcome: list[str | None] = []

    async def attempt() -> bool:
        try:
            await seat.client.send(game, command)
        except CardroomError as exc:
            if exc.code == "awaiting_acks":
                return False
            outcome.append(exc.code)
            return True
        outcome.append(None)
        return True

    await wait_until(attempt, timeout=30)
    return outcome[0]


async def test_no_log_line_names_a_card(stack: Stack, caplog: pytest.LogCaptureFixture) -> None:
    """Every line every service logged while a game was played, down to DEBUG, scanned for
    every card's code: services log requests and machinery, never a game's contents."""
    caplog.set_level(logging.DEBUG)
    _, outcome, _, _ = await _play(stack, ["l0", "l1"], {"max_turns": 60})
    assert outcome["details"]["result"] in ("won", "turn_limit")
    card = re.compile(r"\b(" + "|".join(re.escape(c) for c in MACAUA_CARDS) + r")\b")
    lines = [
        f"{r.name}: {r.getMessage()} {r.exc_text or ''}"
        for r in caplog.records
        if not r.name.startswith(("nats", "asyncio", "faststream"))
    ]
    assert len(lines) > 10, "nothing was logged: the scan would prove nothing"
    named = [line[:200] for line in lines if card.search(line)]
    assert named == []


async def test_tampering_is_refused_over_the_wire_and_changes_nothing(stack: Stack) -> None:
    seats = {p: _Seat(await stack.client(p), HeuristicBot(p)) for p in ("t0", "t1")}
    t0, t1 = seats["t0"], seats["t1"]
    game = await t0.client.create("macaua", {"shuffle_rounds": 2}, seats=2, key=t0.bot.verify_key)
    await t1.client.join(game, key=t1.bot.verify_key)
    for seat in seats.values():  # each checks and signs every transition
        seat.client.verify(game, seat.bot.verifier(game))
    await wait_until(t0.due)

    async def version() -> int:
        return len(await stack.store.read_stream(game))

    async def advance(until: str) -> None:
        """Both bots make their moves until the game reaches phase ``until``."""
        while True:
            await wait_until(lambda: any(s.due() for s in seats.values()))
            mover = next(s for s in seats.values() if s.due())
            if mover.view()["phase"] == until:
                return
            command = mover.move()
            mover.acted()
            assert await _send(stack, mover, game, command) is None

    # a forged signature: t0's first move signed by t1's key
    honest = t0.move()
    before = await version()
    forged = sign_move(
        t1.bot.signing_key, honest["game_id"], honest["seq"], honest["prev_hash"], honest["move"]
    )
    assert await _send(stack, t0, game, {"type": "move", **forged.to_json()}) == "bad_signature"
    assert await version() == before
    # the genuine move, then the same move again (a new command id): a replay
    t0.acted()
    assert await _send(stack, t0, game, honest) is None
    assert await _send(stack, t0, game, honest) == "replayed_move"
    # a shuffle whose argument was changed after it was made (a new table argues)
    await advance("shuffle")
    mover = next(s for s in seats.values() if s.due())
    move = mover.move()["move"]
    assert "argument" in move
    tampered = {**move, "argument": {**move["argument"], "challenge": random_scalar().hex()}}
    before = await version()
    forged_argument = mover.bot.sign(mover.view(), tampered)
    assert await _send(stack, mover, game, forged_argument) == "bad_proof"
    assert await version() == before
    # a published key that does not match its commitment (the deal)
    await advance("deal")
    mover = next(s for s in seats.values() if s.due())
    move = mover.move()
    bad = [dict(k) for k in move["move"]["keys"]]
    bad[0]["key"] = random_scalar().hex()
    view = mover.view()
    before = await version()
    forged_key = mover.bot.sign(view, {**move["move"], "keys": bad})
    assert await _send(stack, mover, game, forged_key) == "bad_key"
    assert await version() == before
    # playing a card of the other hand
    await advance("play")
    mover = next(s for s in seats.values() if s.due())
    other = next(s for s in seats.values() if s is not mover)
    view = mover.view()
    final = Table(registry.get("macaua")).replay(
        [as_event(r) for r in await stack.store.read_stream(game)]
    )
    theirs = final.game.hands[other.client.player][0]
    steal = {"kind": "play", "cards": [{**mover.bot.key_item(*theirs), "card": "AS"}], "suit": "S"}
    before = await version()
    assert await _send(stack, mover, game, mover.bot.sign(view, steal)) == "not_your_card"
    assert await version() == before


async def test_proofs_are_checked_off_the_event_loop(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Macaua's rules say ``heavy``: the gamemaster (in this process, on this test's event
    loop) decides its commands in a worker thread, and the game still plays to the end."""
    loop_thread = threading.get_ident()
    threads: list[tuple[str, int]] = []

    def recording(name: str, check: Any) -> Any:
        def checked(*args: Any, **kwargs: Any) -> Any:
            threads.append((name, threading.get_ident()))
            return check(*args, **kwargs)

        return checked

    for name in ("check_shuffle_step", "check_mask_step"):
        monkeypatch.setattr(macaua_commands, name, recording(name, getattr(macaua_commands, name)))
    assert getattr(registry.get("macaua"), "heavy", False) is True
    game, outcome, _notes, _public = await _play(stack, ["o0", "o1"], {"max_turns": 60})
    assert outcome["details"]["result"] in ("won", "turn_limit")
    assert outcome["details"]["audit"]["ok"] is True
    names = [name for name, _ in threads]
    assert names.count("check_shuffle_step") >= 2  # the deal's, and any reshuffle's
    assert names.count("check_mask_step") >= 2
    assert all(thread != loop_thread for _, thread in threads)
    final = Table(registry.get("macaua")).replay(
        [as_event(r) for r in await stack.store.read_stream(game)]
    )
    assert final.status == "finished"
