"""Scripted 66 games for tests: chosen hands, chosen deck draws, every gate recorded.

A ``Script`` runs a real table (the engine's Table and LocalGame, with every event round-
tripped through JSON like the store does) but deals the hands the test asks for and lets
the test choose the value of every card drawn from the deck.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from typing import Any

from cardroom_engine import JOINED, STARTED, Rejection, Table
from cardroom_engine.simulate import LocalGame, Step
from cardroom_games.sixtysix import GAME, SixtySixState
from cardroom_games.sixtysix.cards import remaining_deck

PLAYERS = ("c1", "c2", "c3")  # the diagrams' Client 1, 2, 3 = seats 0, 1, 2


class Rigged(random.Random):
    """``randrange`` answers from a list (then 0): lets a test pick each drawn card."""

    def __init__(self, answers: Sequence[int] = ()) -> None:
        super().__init__(0)
        self.answers = list(answers)

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        size = start if stop is None else stop - start
        answer = self.answers.pop(0) if self.answers else 0
        assert 0 <= answer < size, (answer, size)
        return answer


def index_of(state: SixtySixState, value: int) -> int:
    """The ``randrange`` answer that draws ``value`` from this state's deck."""
    assert state.deck[value] > 0, f"no {value} left in the deck"
    return sum(state.deck[:value])


class Script:
    def __init__(
        self,
        hands: Sequence[Sequence[int]],
        *,
        protocol: str = "v2",
        starter: int = 1,
        discard: int | None = None,
        deck: Sequence[int] | None = None,
        totals: Sequence[int] | None = None,
        players: Sequence[str] | None = None,
    ) -> None:
        players = tuple(players or PLAYERS[: len(hands)])
        self.players = players
        self.table = Table(GAME)
        created = self.table.create("g1", players[0], {"protocol": protocol}, seats=len(players))
        self.local = LocalGame(self.table, self.table.replay(created))
        self.local.apply([{"type": JOINED, "player": p} for p in players[1:]])
        self.local.apply([{"type": STARTED, "seats": list(players)}])
        if totals is not None:
            game = self.state._replace(totals=tuple(totals))
            self.local.state = dataclasses.replace(self.local.state, game=game)
        self.mark = len(self.local.steps)
        dealt = {
            "type": "sixtysix.round_dealt",
            "round": self.state.round + 1,
            "starter": starter,
            "hands": [list(h) for h in hands],
            "discard": discard,
            "deck": list(deck) if deck is not None else remaining_deck(hands, discard),
        }
        self.local.apply([dealt])
        self.local.settle(Rigged())

    # -- state ----------------------------------------------------------------------------
    @property
    def state(self) -> SixtySixState:
        game = self.local.state.game
        assert isinstance(game, SixtySixState)
        return game

    def seat(self, player: str) -> int:
        return self.players.index(player)

    # -- moves ----------------------------------------------------------------------------
    def do(
        self,
        player: str,
        command: Mapping[str, Any],
        *,
        draw: int | None = None,
        settle: Sequence[int] = (),
    ) -> list[Step]:
        """Send one command (``draw``: the value the deck gives, if it draws); then run the
        follow-ups (``settle``: randrange answers for them, e.g. the next round's starter).
        Returns the steps (one per gate) this caused."""
        start = len(self.local.steps)
        answers = [] if draw is None else [index_of(self.state, draw)]
        events = self.table.decide(
            self.local.state, player, dict(command), Rigged(answers), gate_open=True
        )
        self.local.apply(events)
        self.local.settle(Rigged(settle))
        return self.local.steps[start:]

    def refuse(self, player: str, command: Mapping[str, Any]) -> Rejection:
        """The command must be refused and change nothing."""
        before = self.local.state
        try:
            self.table.decide(before, player, dict(command), random.Random(0), gate_open=True)
        except Rejection as exc:
            assert self.local.state == before
            return exc
        raise AssertionError(f"{command} was accepted")

    def since_mark(self) -> list[Step]:
        return self.local.steps[self.mark :]

    def set_mark(self) -> None:
        self.mark = len(self.local.steps)

    def actions(self, player: str) -> list[dict[str, Any]]:
        return self.table.actions(self.local.state, player)

    def view(self, player: str | None) -> dict[str, Any]:
        return GAME.view(self.state, player)


def gates(steps: Sequence[Step]) -> list[dict[str, dict[str, Any]]]:
    """The notifications of each gate, in order."""
    return [step.notifications for step in steps]


def addressees(steps: Sequence[Step]) -> list[set[str]]:
    return [set(step.notifications) for step in steps]


def names(gate: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    return {player: message["type"] for player, message in gate.items()}


def fields(message: Mapping[str, Any]) -> set[str]:
    return set(message) - {"type"}


def play_bots(
    kinds: Mapping[str, str],
    seed: int,
    protocol: str = "v2",
    on_choose: Any = None,
) -> tuple[Any, Any]:
    """One whole game through the engine's table, each seat played by one of the game's bots,
    each bot fed exactly the notifications its player receives, in order (like
    ``simulate.bots_chooser``, without re-scanning the history at every move).
    ``on_choose(player, bot, table_state)`` is called before each choice. Returns the
    outcome and the final table state."""
    rng = random.Random(seed)
    table = Table(GAME)
    seats = list(kinds)
    bots = {p: GAME.bots[kind](p) for p, kind in kinds.items()}
    state = table.replay(table.create("g1", seats[0], {"protocol": protocol}, seats=len(seats)))

    def apply(events: Sequence[dict[str, Any]]) -> None:
        nonlocal state
        for event in events:
            before, state = state, table.evolve(state, event)
            for player, message in table.notify(before, event, state).items():
                bots[player].observe(message)

    def settle() -> None:
        while events := table.follow_up(state, rng):
            apply(events)

    for player in seats[1:]:
        apply(table.join(state, player, rng))
    settle()
    while state.status == "playing":
        movers = [(p, a) for p in seats if (a := table.actions(state, p))]
        assert len(movers) == 1
        player, actions = movers[0]
        if on_choose is not None:
            on_choose(player, bots[player], state)
        command = bots[player].choose(table.view(state, player), actions, rng)
        apply(table.decide(state, player, dict(command), rng, gate_open=True))
        settle()
    return table.outcome(state), state
