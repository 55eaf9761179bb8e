"""Macaua's transition signing through the services (real NATS and PostgreSQL).

A transition counts once every player has signed it. When a player is sent a transition
that does not hold (here the server's relay to one player is altered on its way: the deck of
a shuffle reordered), its client rejects it, the ack carries the rejection with the
evidence, and the table halts: the outcome blames the player that halted it (the server
recorded only what its rules decided), with its claim against the server kept. A player whose
client acknowledges without signing halts the table too, and is blamed. And an ack can leave
a signature only for a transition owed to its sender.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable
from typing import Any

from cardroom_bots.players import BotPlayer
from cardroom_client import CardroomError
from cardroom_games.macaua import TransitionVerifier, Verdict
from cardroom_mentalpoker import state_hash
from cardroom_wire import Notification
from support.stack import Stack

CONFIG = {"max_turns": 40}


class TamperedRelay:
    """One player's verifier, sent by the server a shuffle whose deck is reordered: as if the
    relay to this player had been altered on its way."""

    def __init__(self, real: TransitionVerifier) -> None:
        self.real = real
        self.tampered_at: int | None = None

    def check(self, version: int, message: dict[str, Any]) -> Verdict:
        transition = message.get("transition") or {}
        if self.tampered_at is None and transition.get("type") == "macaua.shuffle":
            message = copy.deepcopy(message)
            cards = message["transition"]["signed"]["move"]["cards"]
            cards[0], cards[1] = cards[1], cards[0]
            self.tampered_at = version
        return self.real.check(version, message)


class Unsigned:
    """A verifier that checks nothing and signs nothing (the SDK then does not acknowledge:
    the test's client sends the bare ack itself)."""

    def check(self, version: int, message: dict[str, Any]) -> Verdict:
        return Verdict()


async def _answer(ack: Awaitable[None]) -> str:
    try:
        await ack
    except CardroomError as exc:
        return exc.code
    return "ok"


async def _seat(stack: Stack, players: list[str]) -> tuple[str, list[BotPlayer]]:
    bots = [BotPlayer(await stack.client(p), kind="heuristic") for p in players]
    game = await bots[0].create("macaua", CONFIG, seats=len(bots))
    return game, bots


async def _finish(game: str, bots: list[BotPlayer]) -> dict[str, Any]:
    async with asyncio.timeout(120):
        await asyncio.gather(*(b.finished[game].wait() for b in bots))
    return bots[0].outcomes[game]


async def test_an_altered_relay_is_rejected_and_the_table_halts_with_the_claim_recorded(
    stack: Stack,
) -> None:
    """The victim's program refuses what it was sent and blames the server; the table
    halts there. The server recorded what its rules decided, so its outcome blames the
    player that halted the game (else any player could halt one it is losing and name
    another seat); the victim's claim and evidence are in the record."""
    game, bots = await _seat(stack, ["s0", "s1"])
    victim = bots[1]
    finished = victim.watch(game, "macaua")
    bot = victim.bots[game]
    tampered = TamperedRelay(bot.verifier(game))  # type: ignore[attr-defined]
    victim.client.verify(game, tampered)
    await victim.client.join(game, key=bot.verify_key)  # type: ignore[attr-defined]
    outcome = await _finish(game, bots)
    assert finished.is_set()
    assert tampered.tampered_at is not None
    details = outcome["details"]
    assert details["result"] == "rejected"
    assert details["blame"] == "s1"
    assert details["rejected"]["claim"] == "server"
    assert details["rejected"]["player"] == "s1"
    assert details["rejected"]["version"] == tampered.tampered_at
    assert outcome["ranking"] == [["s0"], ["s1"]]
    # the evidence is recorded: the transition as the victim received it
    records = await stack.store.read_stream(game)
    halt = [r for r in records if r.type == "macaua.rejected"]
    assert len(halt) == 1
    evidence = halt[0].data["evidence"]
    assert evidence["type"] == "macaua.shuffle"
    # what the victim was sent is not what the server recorded: the hashes differ
    recorded = next(r for r in records if r.version == tampered.tampered_at)
    assert evidence["hash"] != state_hash({**recorded.data, "type": recorded.type})
    assert halt[0].data["code"] in ("bad_signature", "altered_record")
    # the honest player signed everything up to the halt; the victim up to the tampering
    kept = await stack.store.signatures_since(game, 0, halt[0].version)
    rejected = kept[(tampered.tampered_at, "s1")]
    assert rejected.signature is None
    assert rejected.rejection is not None
    assert rejected.rejection["blame"] == "server"


async def test_an_ack_without_a_signature_halts_the_table_blaming_its_player(
    stack: Stack,
) -> None:
    game, bots = await _seat(stack, ["u0", "u1"])
    lazy = bots[1]
    lazy.watch(game, "macaua")
    lazy.client.verify(game, Unsigned())  # (replaces the bot's verifier)
    observe = lazy._observe

    async def ack_bare(note: Notification) -> None:
        await observe(note)
        if "transition" in note.message:
            await lazy.client.ack(note.game, note.version)  # no signature

    lazy.client.on_notification(ack_bare, after_ack=lazy._act)
    await lazy.client.join(game, key=lazy.bots[game].verify_key)  # type: ignore[attr-defined]
    outcome = await _finish(game, bots)
    details = outcome["details"]
    assert details["result"] == "rejected"
    assert details["blame"] == "u1"
    assert details["rejected"]["code"] == "unsigned"
    assert outcome["ranking"][-1] == ["u1"]


async def test_an_ack_leaves_a_signature_only_for_a_transition_owed_to_it(stack: Stack) -> None:
    game, bots = await _seat(stack, ["o0", "o1"])
    await bots[1].join(game, "macaua")
    outcome = await _finish(game, bots)
    assert outcome["details"]["result"] in ("won", "turn_limit")
    stranger = await stack.client("o2")
    last = await stack.store.stream_version(game)
    before = await stack.store.signatures_since(game, 0, last)
    answers = [await _answer(stranger.ack(game, v, signature="ab" * 64)) for v in (1, last)]
    assert answers == ["not_addressee", "not_addressee"]
    assert await _answer(stranger.ack(game, last + 5, signature="ab" * 64)) == "not_addressee"
    # and a player of the table cannot add or replace one after its ack either
    again = await _answer(bots[0].client.ack(game, last, signature="cd" * 64))
    assert again in ("ok", "not_addressee")  # a duplicate, or never owed to it
    after = await stack.store.signatures_since(game, 0, last + 5)
    assert after == before
