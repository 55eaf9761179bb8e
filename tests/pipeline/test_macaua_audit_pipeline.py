"""Macaua's end on real NATS and PostgreSQL: a loser whose program keeps its audit keys cannot
hold the table open or take the win away. Three bots in the services' bot players, each
holding its own keys; one of them acknowledges everything but never sends its audit. The
timers service fires the audit deadline, and the game ends with the winner keeping its win
and the withholder last. The bots' choices (proofs: CPU work) and the opening of the decks
when the deadline fires run in worker threads, off the services' event loop."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import cardroom_games.macaua.flow as macaua_flow
import pytest
from cardroom_bots.players import BotPlayer
from cardroom_client import Client
from cardroom_engine import Table, registry
from cardroom_games.macaua import HeuristicBot
from cardroom_mentalpoker import MACAUA_CARDS
from cardroom_wire import Notification
from games.macaua.macaua_support import rigged
from support.stack import Stack, as_event

AUDIT_TIMEOUT = 3.0
CONFIG = {"shuffle_rounds": 2, "hand_size": 1, "audit_timeout": AUDIT_TIMEOUT}
# every shuffle keeps the order (real keys, proofs and masks all the same), so the deal is
# known: e0 holds the red Joker, e1 the black one, e2 the King of Clubs; the Queen of Clubs
# is turned up, and e0 empties its hand with its first play
WINNER = "e0"


class Recording(HeuristicBot):
    """The heuristic bot, noting the threads its choices ran in."""

    def __init__(self, player: str) -> None:
        super().__init__(player)
        self.threads: set[int] = set()

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        self.threads.add(threading.get_ident())
        return super().choose(view, actions, rng)


class Withholder(BotPlayer):
    """A bot player that acknowledges every update but never sends its audit."""

    asked: asyncio.Event

    async def _act(self, note: Notification) -> None:
        if any(action.get("kind") == "audit" for action in note.actions):
            self.asked.set()
            return
        await super()._act(note)


async def test_a_withheld_audit_ends_the_game_and_the_winner_keeps_it(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened_in: list[int] = []
    audit_decks = macaua_flow.audit_decks

    def recording(*args: Any, **kwargs: Any) -> Any:
        opened_in.append(threading.get_ident())
        return audit_decks(*args, **kwargs)

    monkeypatch.setattr(macaua_flow, "audit_decks", recording)
    seats = ["e0", "e1", "e2"]
    clients = [await Client.connect(stack.nats_url, p, subject_root=stack.root) for p in seats]
    withholder = Withholder(clients[2])
    withholder.asked = asyncio.Event()
    bots = [BotPlayer(clients[0]), BotPlayer(clients[1]), withholder]
    programs = [Recording(p) for p in seats]
    try:
        with rigged(MACAUA_CARDS):
            game = await bots[0].client.create(
                "macaua", CONFIG, seats=len(seats), key=programs[0].verify_key
            )
            for bot, program in zip(bots, programs, strict=True):
                bot.watch(game, "macaua", program)  # (its verifier checks every transition)
            for bot, program in zip(bots[1:], programs[1:], strict=True):
                await bot.client.join(game, key=program.verify_key)
            async with asyncio.timeout(120):
                await asyncio.gather(*(b.finished[game].wait() for b in bots))
        outcome = bots[0].outcomes[game]
        assert withholder.asked.is_set()  # it was asked for its keys and kept them
    finally:
        await asyncio.gather(*(b.close() for b in bots), return_exceptions=True)

    loop = threading.get_ident()
    for program in programs:
        assert program.threads, "the bot never chose"
        assert loop not in program.threads, "a heavy choice ran on the event loop"
    assert opened_in, "the decks were never opened"
    assert loop not in opened_in, "the audit deadline opened the decks on the event loop"

    assert outcome["details"]["result"] == "forfeited"
    assert outcome["details"]["winner"] == WINNER
    assert outcome["details"]["withheld"] == ["e2"]
    assert outcome["ranking"] == [["e0"], ["e1"], ["e2"]]
    assert outcome["scores"] == {"e0": 1.0, "e1": 0.0, "e2": -1.0}
    audit = outcome["details"]["audit"]
    assert audit["revealed"] == ["e0", "e1"]
    assert audit["withheld"] == audit["at_fault"] == ["e2"]
    assert audit["tampered"] is False

    records = await stack.store.read_stream(game)
    events = [as_event(r) for r in records]
    final = Table(registry.get("macaua")).replay(events)
    assert final.status == "finished"
    assert final.outcome == outcome
    (won,) = [r for r in records if r.type == "macaua.played"]
    assert won.data["player"] == WINNER
    assert [c for _d, _i, c, _k in won.data["cards"]] == ["RJ"]
    assert sorted(e["player"] for e in events if e["type"] == "macaua.audit") == ["e0", "e1"]
    assert [e["type"] for e in events[-2:]] == ["macaua.audit_withheld", "table.finished"]
    # the timers service ended it, no sooner than the deadline after the winning play
    withheld = records[-2]
    assert withheld.metadata.get("timeout") == "game:audit"
    assert (withheld.recorded_at - won.recorded_at).total_seconds() >= AUDIT_TIMEOUT
