"""The independent model of what each 66 player may know, and the random games that check
every message and view against it (used by test_sixtysix_leaks.py; kept out of the test
module so that pytest's assertion rewriting does not slow the thousands of games)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from cardroom_engine import Table
from cardroom_engine.simulate import new_game
from cardroom_games.sixtysix import GAME, SixtySixState

NO_CARD_FIELDS = frozenset(
    {
        "type",
        "deckSize",
        "handSizes",
        "playerIndex",
        "activePlayerIndex",
        "stopCounter",
        "turn",
        "round",
        "cardIndex",
        "cardIndexes",
        "anotherPlayerIndex",
        "anotherPlayerCardIndex",
        "fromDeck",
        "scores",
        "totalScores",
        "isGameFinished",
        "turnCount",
        "roundCount",
        "nextPlayerIndex",
        "actions",
        # the engine's own messages (GameStarted, GameOver)
        "game",
        "game_type",
        "seats",
        "config",
        "outcome",
    }
)


class Entitlement:
    """What each seat may know, from the rules, fed with the true events (not the game's
    own bookkeeping)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.hands: list[list[int]] = []
        self.may: list[list[list[bool]]] = []  # may[p][q][i]: p may know card i of q
        self.discard: int | None = None
        self.drawn: int | None = None
        self.active: int | None = None
        self.revealed = False

    def apply(self, event: Mapping[str, Any]) -> None:
        kind = event["type"]
        a = self.active
        if kind == "sixtysix.round_dealt":
            self.hands = [list(h) for h in event["hands"]]
            self.may = [[[False] * len(h) for h in self.hands] for _ in range(self.n)]
            self.discard = event["discard"]
            self.drawn = None
            self.active = event["starter"]
            self.revealed = False
        elif kind == "sixtysix.first_cards_shown":
            for p in range(self.n):
                self.may[p][p][0] = self.may[p][p][1] = True
        elif kind == "sixtysix.turn_started":
            self.active = event["player"]
        elif kind == "sixtysix.deck_card_taken":
            self.drawn = event["value"]
        elif kind == "sixtysix.cards_replaced":
            assert a is not None
            indexes = sorted(event["cardIndexes"])
            if event["source"] == "discard":
                assert event["value"] == self.discard  # the public discard top moved
                who = set(range(self.n))
            elif event.get("blind"):
                who = set()
            else:
                assert event["value"] == self.drawn
                who = {a}
            for row, fresh in [(self.hands[a], event["value"])] + [
                (self.may[p][a], p in who) for p in range(self.n)
            ]:
                row[indexes[0]] = fresh
                for i in reversed(indexes[1:]):
                    del row[i]
            self.discard = event["discardedValue"]
            self.drawn = None
        elif kind == "sixtysix.cards_shown":
            assert a is not None
            for p in range(self.n):
                if p != a:
                    for i in event["cardIndexes"]:
                        self.may[p][a][i] = True
        elif kind == "sixtysix.card_discarded":
            assert event["value"] == self.drawn
            self.discard = event["value"]
            self.drawn = None
        elif kind == "sixtysix.own_card_peeked":
            assert a is not None
            self.may[a][a][event["cardIndex"]] = True
        elif kind == "sixtysix.anothers_card_peeked":
            assert a is not None
            assert event["target"] != a
            self.may[a][event["target"]][event["cardIndex"]] = True
        elif kind == "sixtysix.cards_exchanged":
            assert a is not None
            i, t, j = event["cardIndex"], event["target"], event["targetCardIndex"]
            for row_a, row_t in [(self.hands[a], self.hands[t])] + [
                (self.may[p][a], self.may[p][t]) for p in range(self.n)
            ]:
                row_a[i], row_t[j] = row_t[j], row_a[i]
        elif kind == "sixtysix.round_finished":
            self.revealed = True

    def may_know(self, p: int, q: int, i: int) -> bool:
        return self.revealed or self.may[p][q][i]

    # -- checks ---------------------------------------------------------------------------
    def slot(self, p: int, q: int, i: int, value: Any, where: str) -> None:
        assert self.may_know(p, q, i), f"{where}: seat {p} may not know card {i} of seat {q}"
        assert value == self.hands[q][i], f"{where}: wrong value for card {i} of seat {q}"

    def message(self, p: int, m: Mapping[str, Any]) -> None:
        kind = m["type"]
        where = f"{kind} to seat {p}"
        for key, value in m.items():
            if key in NO_CARD_FIELDS:
                continue
            if key == "discardedValue":
                assert value == self.discard, where
            elif key == "deckCard":
                assert value is None or (p == self.active and value == self.drawn), where
            elif key in ("value1", "value2") and kind == "FirstTwoCards":
                self.slot(p, p, 0 if key == "value1" else 1, value, where)
            elif key == "value" and kind == "TookDeckCard":
                assert p == self.active, where
                assert value == self.drawn, where
            elif key == "value" and kind == "OwnCard":
                self.slot(p, p, m["cardIndex"], value, where)
            elif key == "value" and kind == "AnothersCard":
                self.slot(p, m["anotherPlayerIndex"], m["cardIndex"], value, where)
            elif key == "value" and kind == "IdenticalCardsShown":
                for i in m["cardIndexes"]:
                    self.slot(p, m["playerIndex"], i, value, where)
            elif key == "values" and kind == "DifferentCardsShown":
                for i, v in zip(m["cardIndexes"], value, strict=True):
                    self.slot(p, m["playerIndex"], i, v, where)
            elif key == "cards" and kind == "CardsRevealed":
                for info in value:
                    if info["values"] is not None:
                        for i, v in zip(info["cardIndexes"], info["values"], strict=True):
                            self.slot(p, info["targetPlayerIndex"], i, v, where)
            elif key == "cards" and kind == "RoundFinished":
                assert self.revealed, where
                assert value == self.hands, where
            else:
                raise AssertionError(f"{where}: field {key!r} is not known to carry no card")

    def view(self, p: int | None, v: Mapping[str, Any]) -> None:
        where = f"view of seat {p}"
        assert v["discardedValue"] == self.discard, where
        if v["deckCard"] is not None:
            assert p == self.active, where
            assert v["deckCard"] == self.drawn, where
        elif p is not None and p == self.active and self.drawn is not None:
            raise AssertionError(f"{where}: the drawer's view lost the deck card")
        for q, hand in enumerate(v["hands"]):
            assert len(hand) == len(self.hands[q]), where
            for i, shown in enumerate(hand):
                if p is None:
                    allowed = all(self.may_know(x, q, i) for x in range(self.n))
                else:
                    allowed = self.may_know(p, q, i)
                if shown is not None:
                    assert allowed, f"{where}: shows card {i} of seat {q}"
                    assert shown == self.hands[q][i], where
                else:
                    assert not allowed, f"{where}: hides card {i} of seat {q} it may know"


def chooser(
    state: SixtySixState, actions: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any]:
    """Random legal moves, but claims that succeed (found with the true cards) are played
    half the time, so successful claims are common enough to be tested."""
    claims = [a for a in actions if a["type"] == "ShowCards"]
    if claims and rng.random() < 0.5:
        hand = state.hands[state.active]
        good = [a for a in claims if len({hand[i] for i in a["cardIndexes"]}) == 1]
        if good:
            return rng.choice(good)
    return rng.choice(actions)


def check_game(
    seed: int,
    protocol: str,
    n: int,
    views: bool,
    seen: Counter[tuple[str, str, str]],
    max_rounds: int = 2,
) -> None:
    """One random game straight on the rules object (the table around it only adds its own
    GameStarted/GameOver, checked by the whole-game test below), checked at every event."""
    rng = random.Random(seed)
    seats = [f"p{i}" for i in range(n)]
    model = Entitlement(n)
    state = GAME.setup(GAME.config_model.model_validate({"protocol": protocol}), seats)

    def apply(events: list[dict[str, Any]]) -> None:
        nonlocal state
        for event in events:
            before, state = state, GAME.evolve(state, event)
            model.apply(event)
            seen[protocol, "event", event["type"]] += 1
            for player, message in GAME.notify(before, event, state).items():
                model.message(seats.index(player), message)
                seen[protocol, "message", message["type"]] += 1
            assert [list(h) for h in state.hands] == model.hands
            if views:
                for p in range(n):
                    model.view(p, GAME.view(state, seats[p]))
                model.view(None, GAME.view(state, None))

    def settle() -> None:
        while events := GAME.follow_up(state, rng):
            apply(events)

    apply(GAME.start(state, rng))
    settle()
    while not state.finished and state.round <= max_rounds:
        mover = state.mover()
        assert mover is not None
        player = seats[mover]
        assert all(GAME.actions(state, p) == [] for p in seats if p != player)
        command = chooser(state, GAME.actions(state, player), rng)
        apply(GAME.decide(state, player, command, rng))
        settle()


def check_table_game(seed: int, protocol: str, n: int, seen: Counter[tuple[str, str, str]]) -> None:
    """A whole game through the engine's table (JSON round trips, GameStarted, GameOver)."""
    rng = random.Random(seed)
    seats = [f"p{i}" for i in range(n)]
    local = new_game(GAME, seats, rng, {"protocol": protocol})
    table: Table = local.table
    model = Entitlement(n)
    checked = 0

    def check_new_steps() -> None:
        nonlocal checked
        for step in local.steps[checked:]:
            if not step.event["type"].startswith("table."):
                model.apply(step.event)
            for player, message in step.notifications.items():
                model.message(seats.index(player), message)
                seen[protocol, "message", message["type"]] += 1
        checked = len(local.steps)
        state = local.state.game
        for p in range(n):
            model.view(p, GAME.view(state, seats[p]))
        model.view(None, GAME.view(state, None))

    check_new_steps()
    while local.state.status == "playing":
        movers = [(p, a) for p in seats if (a := table.actions(local.state, p))]
        assert len(movers) == 1
        player, actions = movers[0]
        command = chooser(local.state.game, actions, rng)
        local.apply(table.decide(local.state, player, command, rng, gate_open=True))
        local.settle(rng)
        check_new_steps()
