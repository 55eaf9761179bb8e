"""Helpers for the Macaua tests: tables driven by the real bots, rigged deals, commands.

A rigged deal goes through the real protocol: the first shuffler's permutation is chosen
(``cardroom_mentalpoker.protocol.random_permutation`` patched for that one call), every
later shuffler applies the identity, so the final order is known. Everything else (keys,
proofs, masks, reveals, signatures) is the bots' real cryptography.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import cardroom_mentalpoker.protocol as mp_protocol
import pytest
from cardroom_engine import Rejection, Table
from cardroom_engine.simulate import LocalGame, new_game
from cardroom_games.macaua import GAME, MacauaBot, MacauaState
from cardroom_games.macaua.bots import HeuristicBot
from cardroom_games.macaua.config import weak_proofs
from cardroom_mentalpoker import MACAUA_CARDS

FAST: dict[str, Any] = {"shuffle_rounds": 2}
CRYPTO_PHASES = ("keys", "shuffle", "mask", "deal", "draw")


class Harness:
    """One in-memory table with one bot per seat (the bots hold the keys)."""

    def __init__(
        self,
        players: int = 2,
        config: Mapping[str, Any] | None = None,
        seed: int = 7,
        bot: Callable[[str], MacauaBot] | Sequence[Callable[[str], MacauaBot]] = HeuristicBot,
    ) -> None:
        self.rng = random.Random(seed)
        self.seats = [f"p{i}" for i in range(players)]
        kinds = list(bot) if isinstance(bot, Sequence) else [bot]
        self.bots: dict[str, MacauaBot] = {
            p: kinds[i % len(kinds)](p) for i, p in enumerate(self.seats)
        }
        # every seat joins with its bot's verify key, as the lobby requires
        with weak_proofs():
            self.local: LocalGame = new_game(
                GAME,
                self.seats,
                self.rng,
                {**FAST, **(config or {})},
                keys={p: b.verify_key for p, b in self.bots.items()},
            )
        for b in self.bots.values():
            b.min_rounds = 0  # (a player's check accepts them too)

    @property
    def table(self) -> Table:
        return self.local.table

    @property
    def game(self) -> MacauaState:
        state: MacauaState = self.local.state.game
        return state

    def view(self, player: str | None) -> dict[str, Any]:
        return self.table.view(self.local.state, player)

    def gview(self, player: str | None) -> dict[str, Any]:
        inner: dict[str, Any] = self.view(player)["state"]
        return inner

    def send(self, player: str, command: Mapping[str, Any]) -> None:
        """Decide and apply a command (raises the Rejection if refused)."""
        events = self.table.decide(self.local.state, player, command, self.rng, gate_open=True)
        self.local.apply(events)
        self.local.settle(self.rng)

    def refused(self, player: str, command: Mapping[str, Any]) -> str:
        """The code of the refusal of ``command``; asserts nothing changed."""
        before = self.local.state
        steps = len(self.local.steps)
        try:
            self.table.decide(
                before, player, json.loads(json.dumps(command)), self.rng, gate_open=True
            )
        except Rejection as exc:
            assert self.local.state is before
            assert len(self.local.steps) == steps
            return exc.code
        raise AssertionError("the command was accepted")

    def bot_command(self, player: str) -> dict[str, Any]:
        actions = self.table.actions(self.local.state, player)
        return dict(self.bots[player].choose(self.view(player), actions, self.rng))

    def step(self) -> str:
        """The next waiting player's bot makes its move; returns who moved."""
        player = self.game.waiting[0]
        self.send(player, self.bot_command(player))
        return player

    def run(self, until: Callable[[MacauaState], bool], limit: int = 5000) -> None:
        for _ in range(limit):
            if until(self.game) or self.local.state.status != "playing":
                return
            self.step()
        raise AssertionError("did not get there")

    def to_play(self) -> None:
        """Let the bots do the cryptography until a player must play or draw."""
        self.run(lambda s: s.phase in ("play", "audit", "over"))

    def finish(self) -> None:
        """Play to the end (``max_turns`` bounds every game)."""
        self.run(lambda s: False, limit=1_000_000)

    # -- scripted plays ----------------------------------------------------------------------
    def position_of(self, player: str, card: str) -> tuple[int, int]:
        bot = self.bots[player]
        for pos, code in bot.open_hand(self.gview(player)):
            if code == card:
                return pos
        raise AssertionError(f"{player} does not hold {card}")

    def hand(self, player: str) -> list[str]:
        return sorted(code for _, code in self.bots[player].open_hand(self.gview(player)))

    def play_command(
        self, player: str, cards: Sequence[str], suit: str | None = None
    ) -> dict[str, Any]:
        bot = self.bots[player]
        v = self.gview(player)
        play = [(self.position_of(player, c), c) for c in cards]
        return bot.sign(v, bot.play_move(v, play, suit))

    def play(self, player: str, cards: Sequence[str], suit: str | None = None) -> None:
        self.send(player, self.play_command(player, cards, suit))
        self.to_play()

    def draw(self, player: str) -> None:
        bot = self.bots[player]
        self.send(player, bot.sign(self.gview(player), {"kind": "draw"}))
        self.to_play()


def rigged_order(
    hands: Sequence[Sequence[str]], top: str, fresh: Sequence[str] = (), hand_size: int = 5
) -> list[str]:
    """The deck order (position -> card) that deals ``hands``, ``top`` and then ``fresh``
    first (the deal's layout: hands from position 53 down, then the top, then the fresh pile
    from the highest position down); every other card fills the rest."""
    n = len(MACAUA_CARDS)
    order: list[str | None] = [None] * n
    for p, hand in enumerate(hands):
        assert len(hand) == hand_size
        for k, card in enumerate(hand):
            order[n - 1 - p * hand_size - k] = card
    top_pos = n - 1 - len(hands) * hand_size
    order[top_pos] = top
    for k, card in enumerate(fresh):
        order[top_pos - 1 - k] = card
    rest = [c for c in MACAUA_CARDS if c not in order]
    it = iter(rest)
    filled = [c if c is not None else next(it) for c in order]
    assert sorted(filled) == sorted(MACAUA_CARDS)
    return filled


@contextlib.contextmanager
def rigged(order: Sequence[str]) -> Iterator[None]:
    """The first shuffle puts the open deck in ``order``; later shuffles keep the order."""
    perm = tuple(order.index(card) for card in MACAUA_CARDS)  # out[perm[i]] = in[i]
    calls = {"n": 0}

    def fake(n: int, randbelow: Any = None) -> tuple[int, ...]:
        calls["n"] += 1
        return perm if calls["n"] == 1 else tuple(range(n))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mp_protocol, "random_permutation", fake)
        yield


def rigged_game(
    hands: Sequence[Sequence[str]],
    top: str,
    fresh: Sequence[str] = (),
    config: Mapping[str, Any] | None = None,
) -> Harness:
    """A game dealt as asked, at the first play."""
    h = Harness(len(hands), config)
    with rigged(rigged_order(hands, top, fresh, h.game.config.hand_size)):
        h.run(lambda s: s.phase == "mask")
    h.to_play()
    for p, hand in zip(h.seats, hands, strict=True):
        assert h.hand(p) == sorted(hand)
    assert h.game.discard == (top,)
    return h


SHORT_PILE_HANDS: tuple[tuple[str, ...], ...] = (
    ("BJ", "RJ", "KH", "KS", "KD", "KC", "QH", "QS"),
    ("2C", "3C", "6C", "7C", "8C", "9C", "10C", "JC"),
    ("2D", "3D", "6D", "7D", "8D", "9D", "10D", "JD"),
    ("2H", "3H", "6H", "7H", "8H", "9H", "10H", "JH"),
    ("2S", "3S", "6S", "7S", "8S", "9S", "10S", "JS"),
    ("AC", "AD", "AH", "AS", "QC", "QD", "4C", "4D"),
)
"""Six hands of eight that leave five fresh cards (with ``5S`` turned up): the pile runs
out at once, so play goes on with re-shuffled discards."""


def shuffle_move(cards: Any, honest: Any, **proof: Any) -> dict[str, Any]:
    """A deck-0 ``shuffle`` move: ``cards`` (JSON) with the keying of ``honest`` (a real
    step's proof, whose ``keyed`` and ``key_proofs`` it carries) and ``proof``'s fields."""
    return {
        "kind": "shuffle",
        "deck": 0,
        "cards": cards,
        "keyed": [p.hex() for p in honest.keyed],
        "key_proofs": [p.to_json() for p in honest.key_proofs],
        **proof,
    }
