"""Bots for the 66 game.

``HeuristicBot`` remembers what its player was told (it reads the notifications of either
protocol generation, never the state), keeps low cards, uses its powers to learn its own
unknown cards and to swap its worst card away, claims sets of equal cards it knows, and
stops the round when its known sum is low.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from cardroom_engine import BotFactory, RandomBot

UNKNOWN_ESTIMATE = 6.5
"""The mean card of the deck (338 / 52): what an unseen card is worth on average."""


def own_seat(started: Mapping[str, Any], player: str) -> int | None:
    """``player``'s seat index in a ``GameStarted`` message (None: not seated)."""
    seats = list(started.get("seats", []))
    return seats.index(player) if player in seats else None


class Memory:
    """What one player knows, rebuilt from the messages it received, in order."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.me: int | None = None
        self.hands: list[list[int | None]] = []
        self.discard: int | None = None
        self.drawn: int | None = None
        self.stopped = False

    # the updates shared by both protocols -------------------------------------------------
    def _deal(self, sizes: Sequence[int], discard: int | None) -> None:
        self.hands = [[None] * size for size in sizes]
        self.discard = discard
        self.drawn = None
        self.stopped = False

    def _replace(self, player: int, indexes: Sequence[int], value: int | None) -> None:
        first = min(indexes)
        hand = self.hands[player]
        hand[first] = value
        for i in sorted(set(indexes) - {first}, reverse=True):
            del hand[i]

    def _swap(self, player: int, index: int, other: int, other_index: int) -> None:
        a, b = self.hands[player], self.hands[other]
        a[index], b[other_index] = b[other_index], a[index]

    def _set(self, player: int, index: int, value: int | None) -> None:
        if value is not None:
            self.hands[player][index] = value

    def observe(self, message: Mapping[str, Any]) -> None:
        kind = message.get("type")
        me = self.me if self.me is not None else -1
        if kind == "GameStarted":
            self.me = own_seat(message, self.player)
        # -- v2 --
        elif kind == "BoardInitialized":
            self._deal(message["handSizes"], message["discardedValue"])
        elif kind == "CardsRevealed":
            for info in message["cards"]:
                if info["values"] is not None:
                    for index, value in zip(info["cardIndexes"], info["values"], strict=True):
                        self._set(info["targetPlayerIndex"], index, value)
        elif kind == "BoardUpdated":
            if "discardedValue" in message:
                self.discard = message["discardedValue"]
            if "deckCard" in message:
                self.drawn = message["deckCard"]
            if message.get("stopCounter") is not None:
                self.stopped = True
        elif kind == "CardsReplaced":
            player = message["playerIndex"]
            mine = self.drawn if player == me else None
            value = mine if message["fromDeck"] else self.discard
            self._replace(player, message["cardIndexes"], value)
            self.discard = message["discardedValue"]
            self.drawn = None
        elif kind == "CardExchanged":
            self._swap(
                message["playerIndex"],
                message["cardIndex"],
                message["anotherPlayerIndex"],
                message["anotherPlayerCardIndex"],
            )
        elif kind == "RoundFinished" and "cards" in message:
            self.hands = [list(hand) for hand in message["cards"]]
        # -- v1 --
        elif kind == "GameState":
            self.me = message["playerIndex"]
            self._deal(message["handSizes"], message["discardedValue"])
        elif kind == "FirstTwoCards":
            self._set(me, 0, message["value1"])
            self._set(me, 1, message["value2"])
        elif kind == "TookDeckCard":
            self.drawn = message["value"]
        elif kind in ("CardReplacedByDiscarded", "ReplacedCardByDiscarded"):
            player = message.get("playerIndex", me)
            self._replace(player, [message["cardIndex"]], self.discard)
            self.discard = message["discardedValue"]
        elif kind in ("CardReplacedFromDeck", "ReplacedCardFromDeck"):
            player = message.get("playerIndex", me)
            self._replace(player, [message["cardIndex"]], self.drawn if player == me else None)
            self.discard = message["discardedValue"]
            self.drawn = None
        elif kind == "IdenticalCardsShown":
            for index in message["cardIndexes"]:
                self._set(message["playerIndex"], index, message["value"])
        elif kind == "DifferentCardsShown":
            for index, value in zip(message["cardIndexes"], message["values"], strict=True):
                self._set(message["playerIndex"], index, value)
        elif kind in ("CardsReplacedFromDeck", "ReplacedCardsFromDeck"):
            self._replace(message.get("playerIndex", me), message["cardIndexes"], None)
            self.discard = message["discardedValue"]
        elif kind in ("CardsReplacedByDiscarded", "ReplacedCardsByDiscarded"):
            self._replace(message.get("playerIndex", me), message["cardIndexes"], self.discard)
            self.discard = message["discardedValue"]
        elif kind in ("StopInitiated", "InitiatedStop"):
            self.stopped = True
        elif kind in (
            "CardDiscarded",
            "DiscardedCard",
            "PeekingOwnCard",
            "PeekingAnothersCard",
            "ExchangingCards",
        ):
            self.discard = message["discardedValue"]
            self.drawn = None
        elif kind == "OwnCard":
            self._set(me, message["cardIndex"], message["value"])
        elif kind == "AnothersCard":
            self._set(message["anotherPlayerIndex"], message["cardIndex"], message["value"])
        elif kind in ("CardsExchanged", "ExchangedCards"):
            self._swap(
                message.get("playerIndex", me),
                message["cardIndex"],
                message["anotherPlayerIndex"],
                message["anotherPlayerCardIndex"],
            )
        elif kind in ("RoundFinished", "GameFinished"):
            self.hands = []

    @property
    def own(self) -> list[int | None]:
        if self.me is None or self.me >= len(self.hands):
            return []
        return self.hands[self.me]


def _estimate(value: int | None) -> float:
    return UNKNOWN_ESTIMATE if value is None else float(value)


class HeuristicBot:
    """Remembers what it saw, keeps low cards, stops when its known sum is low."""

    stop_at = 9.0
    """Stop the round when the estimated sum of the hand is at most this (at most one
    unknown card)."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.memory = Memory(player)
        self.swap_from: int | None = None

    def observe(self, message: Mapping[str, Any]) -> None:
        self.memory.observe(message)
        if message.get("type") in ("BoardUpdated", "NextTurn", "YourTurn") and (
            message.get("type") != "BoardUpdated" or "activePlayerIndex" in message
        ):
            self.swap_from = None  # a new turn

    # helpers ----------------------------------------------------------------------------------
    def _worst(self) -> tuple[int, float]:
        own = self.memory.own
        estimates = [_estimate(v) for v in own]
        index = max(range(len(own)), key=lambda i: (estimates[i], own[i] is None))
        return index, estimates[index]

    def _known_set(self) -> list[int]:
        """The positions of the largest-valued group of two or more known equal cards."""
        groups: dict[int, list[int]] = {}
        for i, value in enumerate(self.memory.own):
            if value is not None:
                groups.setdefault(value, []).append(i)
        best: list[int] = []
        best_value = -1
        for value, indexes in groups.items():
            if len(indexes) >= 2 and value * len(indexes) > best_value:
                best, best_value = indexes, value * len(indexes)
        return best

    def _should_stop(self) -> bool:
        own = self.memory.own
        unknown = sum(v is None for v in own)
        return unknown <= 1 and sum(_estimate(v) for v in own) <= self.stop_at

    def _other_cards(self, me: int) -> list[tuple[int, int, int | None]]:
        return [
            (p, j, value)
            for p, hand in enumerate(self.memory.hands)
            if p != me
            for j, value in enumerate(hand)
        ]

    def _swap_target(self, own_value: float, rng: random.Random) -> tuple[int, int]:
        me = self.memory.me if self.memory.me is not None else -1
        cards = self._other_cards(me)
        known = [(v, p, j) for p, j, v in cards if v is not None and v < own_value]
        if known:
            _, p, j = min(known)
            return p, j
        unknown = [(p, j) for p, j, v in cards if v is None]
        p, j, _ = rng.choice(cards) if not unknown else (*rng.choice(unknown), None)
        return p, j

    # choosing -------------------------------------------------------------------------------
    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        choice = self._choose(actions, rng)
        if choice is not None and choice in actions:
            return choice
        return rng.choice(list(actions))

    def _choose(
        self, actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> dict[str, Any] | None:
        types = {a["type"] for a in actions}
        mem = self.memory
        if "StartNextRound" in types:
            return {"type": "StartNextRound"}
        if not mem.own:
            return None
        worst_index, worst = self._worst()
        claim = self._known_set()

        if "TakeCardFromDeck" in types:  # the start of a turn (both protocols)
            if "StopRound" in types and self._should_stop():
                return {"type": "StopRound"}
            if "ShowCards" in types and claim and mem.own[claim[0]] is not None:
                value = mem.own[claim[0]]
                assert value is not None
                if value * len(claim) >= 6:
                    return {"type": "ShowCards", "cardIndexes": claim}
            low_discard = mem.discard is not None and mem.discard + 3 <= worst
            if low_discard and "TakeDiscardedCard" in types:
                return {"type": "TakeDiscardedCard"}
            if low_discard and "ReplaceCardByDiscarded" in types:
                return {"type": "ReplaceCardByDiscarded", "cardIndex": worst_index}
            return {"type": "TakeCardFromDeck"}

        if "ReplaceCardsFromDeck" in types or "ReplaceCardsByDiscarded" in types:  # v1 claim
            if mem.discard is not None and mem.discard < UNKNOWN_ESTIMATE:
                return {"type": "ReplaceCardsByDiscarded"}
            return {"type": "ReplaceCardsFromDeck"}

        if "Discard" in types or ("PickOwnCard" in types and "ShowCards" in types):
            # v2 holding a deck card or the discard top; v1 holding a deck card
            held = _estimate(mem.drawn if mem.drawn is not None else mem.discard)
            if "ShowCards" in types and claim:
                shown = mem.own[claim[0]]
                assert shown is not None
                if shown * len(claim) - held >= 4:
                    return {"type": "ShowCards", "cardIndexes": claim}
            if "Discard" not in types or held + 2 <= worst:
                name = "PickOwnCard" if "PickOwnCard" in types else "ReplaceCardFromDeck"
                return {"type": name, "cardIndex": worst_index}
            return {"type": "Discard"}

        if "PeekOwnCard" in types or ("PickOwnCard" in types and self.swap_from is None):
            unknown = [i for i, v in enumerate(mem.own) if v is None]
            name = "PeekOwnCard" if "PeekOwnCard" in types else "PickOwnCard"
            # 7/8: look at an unknown card; (v2) 11/12: pick the worst card to give away.
            if any(a.get("cardIndex") == worst_index for a in actions) and self._swapping(actions):
                self.swap_from = worst_index
                return {"type": name, "cardIndex": worst_index}
            index = unknown[0] if unknown else worst_index
            return {"type": name, "cardIndex": index}

        if "PickAnothersCard" in types or "PeekAnothersCard" in types:
            me = mem.me if mem.me is not None else -1
            if self.swap_from is not None and "PickAnothersCard" in types:  # v2 swap, step 2
                own_value = _estimate(mem.own[self.swap_from])
                self.swap_from = None
                p, j = self._swap_target(own_value, rng)
                return {"type": "PickAnothersCard", "playerIndex": p, "cardIndex": j}
            unknown_cards = [(p, j) for p, j, v in self._other_cards(me) if v is None]
            if not unknown_cards:
                return None
            p, j = rng.choice(unknown_cards)
            if "PickAnothersCard" in types:
                return {"type": "PickAnothersCard", "playerIndex": p, "cardIndex": j}
            return {"type": "PeekAnothersCard", "anotherPlayerIndex": p, "cardIndex": j}

        if "ExchangeCards" in types:
            p, j = self._swap_target(worst, rng)
            return {
                "type": "ExchangeCards",
                "cardIndex": worst_index,
                "anotherPlayerIndex": p,
                "anotherPlayerCardIndex": j,
            }
        return None

    def _swapping(self, actions: Sequence[Mapping[str, Any]]) -> bool:
        """(v2) PickOwnCard alone is either the 7/8 peek or the first step of an 11/12 swap;
        the discard top (the power card just discarded) tells which."""
        discard = self.memory.discard
        return discard in (11, 12) and all(a["type"] == "PickOwnCard" for a in actions)


def _search_bot(player: str) -> Any:
    """The information-set search bot (``.search``, which imports the game, which imports
    these bots)."""
    from .search import search_bot

    return search_bot(player)


BOTS: dict[str, BotFactory] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
    "search": _search_bot,
}
