"""Bots for Dónde las papas queman. They see only their player's view and messages.

- ``random``: a uniformly random legal action (the engine's RandomBot).
- ``heuristic``: collects threesomes, plays the cards that gain or steal golden potatoes,
  aims its attacks at the leader, interrupts the plays that hurt it (or would let someone
  win) and otherwise keeps its interrupts, discards the least useful cards.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from cardroom_engine import BotFactory, Message, RandomBot

from . import cards as C

Action = Mapping[str, Any]

# How much a card is worth keeping in hand (before counting its set-mates).
_KEEP = {
    C.POTATO: 1.0,
    C.DUCHESSES: 1.5,
    C.FRENCH_FRIES: 2.0,
    C.WILDCARD: 4.0,
    C.NO_DUDE: 3.0,
    C.I_TOLD_YOU: 5.0,
    C.GET_OFF_THE_PONY: 3.5,
    C.LEND_ME_A_BUCK: 2.0,
    C.RUNAWAY_POTATOES: 1.5,
    C.HARRY_POTATO: 2.0,
    C.POPE_POTATO: 2.5,
    C.LOOK_AHEAD: 2.5,
    C.POTATO_OF_THE_YEAR: 4.5,
    C.POTATO_OF_DESTINY: 1.5,
    C.POTATO_DAWAN: 3.0,
    C.JUMP_TO_THE_SIDE: 1.5,
    C.PAPAGEDDON: 1.5,
    C.SPIDER_POTATO: 1.0,
}

# Cards that keep the turn going, best first, and alarm cards (they end it), best first.
_FREE_PLAYS = (
    C.POTATO_OF_THE_YEAR,
    C.POTATO_DAWAN,
    C.POPE_POTATO,
    C.LEND_ME_A_BUCK,
    C.RUNAWAY_POTATOES,
    C.POTATO_OF_DESTINY,
    C.SPIDER_POTATO,
)
_ALARM_PLAYS = (
    C.GET_OFF_THE_PONY,
    C.LOOK_AHEAD,
    C.HARRY_POTATO,
    C.JUMP_TO_THE_SIDE,
    C.PAPAGEDDON,
)
_POTATO_NAMES = (C.FRENCH_FRIES, C.DUCHESSES, C.POTATO)


def _names(hand: Sequence[Mapping[str, Any]]) -> Counter[str]:
    return Counter(str(card["name"]) for card in hand)


def _keep_value(card: Mapping[str, Any], names: Counter[str]) -> float:
    name = str(card["name"])
    value = _KEEP.get(name, 1.0)
    if card["kind"] == "potato":
        value += 1.5 * (names[name] - 1) + names[C.WILDCARD]
    elif card["value"] == 3 and card["kind"] == "action":
        value += 0.3 * sum(n for k, n in names.items() if C.TYPES[k].value == 3)
    return value


class HeuristicBot:
    """A simple, greedy player (see the module docs)."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.seen: dict[str, Counter[str]] = {}  # names seen in others' hands (Dawan)
        self.fallbacks = 0  # choices that fell back to random on an unexpected view

    # -- memory ------------------------------------------------------------------------------
    def observe(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "CardSelection" and message.get("options"):
            cards = [o["card"]["name"] for o in message["options"] if "card" in o]
            if cards:
                self.seen[str(message["target"])] = Counter(cards)
        elif kind in ("ActionResolved", "InterruptPlayed", "PlayCard", "PlayThreesome"):
            # Any move of cards out of a hand we remember makes the memory stale.
            involved = [message.get("player"), *(message.get("targets") or [])]
            for player in involved:
                self.seen.pop(str(player), None)

    # -- choice ------------------------------------------------------------------------------
    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Action], rng: random.Random
    ) -> Action:
        if isinstance(view.get("state"), Mapping):  # the table's view wraps the game's
            view = view["state"]
        by_type: dict[str, list[Action]] = {}
        for action in actions:
            by_type.setdefault(str(action["type"]), []).append(action)
        state = view.get("state")
        try:
            if "SkipReaction" in by_type:
                return self._react(view, by_type)
            if state == "PlayerTurn":
                return self._turn(view, by_type)
            if "SelectTargets" in by_type:
                return self._target(view, by_type["SelectTargets"])
            if "SelectCard" in by_type:
                return self._pick(view, by_type["SelectCard"], rng)
            if "SelectCardName" in by_type:
                return self._name(view, by_type["SelectCardName"])
            if "DiscardCard" in by_type:
                return self._discard(view, by_type["DiscardCard"])
        except (KeyError, TypeError, ValueError, IndexError):
            self.fallbacks += 1  # an unexpected view: fall back to a random legal action
        return rng.choice(list(actions))

    # -- helpers -----------------------------------------------------------------------------
    def _hand(self, view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return list(view.get("hand", []))

    def _card(self, view: Mapping[str, Any], card_id: int) -> Mapping[str, Any]:
        for card in self._hand(view):
            if card["id"] == card_id:
                return card
        raise KeyError(card_id)

    def _opponents(self, view: Mapping[str, Any]) -> list[str]:
        return [p for p in view["seats"] if p != self.player]

    def _leader(self, view: Mapping[str, Any]) -> str:
        pots, counts = view["potatoes"], view["hand_counts"]
        return max(self._opponents(view), key=lambda p: (pots[p], counts[p]))

    def _richest(self, view: Mapping[str, Any]) -> str:
        pots, counts = view["potatoes"], view["hand_counts"]
        return max(self._opponents(view), key=lambda p: (counts[p], pots[p]))

    # -- decisions ---------------------------------------------------------------------------
    def _turn(self, view: Mapping[str, Any], by_type: dict[str, list[Action]]) -> Action:
        hand = self._hand(view)
        names = _names(hand)
        mine = view["potatoes"][self.player]
        threshold = view["threshold"]
        threesomes = by_type.get("PlayThreesome", [])
        if threesomes:
            best = max(threesomes, key=lambda a: self._threesome_score(view, a))
            if self._threesome_score(view, best) > 0 or mine + 1 >= threshold:
                return best
        plays = {self._card(view, a["card"])["name"]: a for a in by_type.get("PlayCard", [])}
        pots = view["potatoes"]
        counts = view["hand_counts"]
        others = self._opponents(view)
        most_cards = max(counts[p] for p in others)
        for name in _FREE_PLAYS:
            if name not in plays:
                continue
            if name in (C.POTATO_DAWAN, C.LEND_ME_A_BUCK, C.POPE_POTATO) and most_cards == 0:
                continue
            if name == C.RUNAWAY_POTATOES and sum(counts[p] for p in others) < 2 * len(others):
                continue
            if name == C.POTATO_OF_DESTINY and counts[self._richest(view)] < 5:
                continue
            if name == C.SPIDER_POTATO and not self._spider_worth(view, hand):
                continue
            return plays[name]
        for name in _ALARM_PLAYS:
            if name not in plays:
                continue
            if name in (C.GET_OFF_THE_PONY, C.LOOK_AHEAD) and pots[self._leader(view)] == 0:
                continue
            if name in (C.HARRY_POTATO, C.JUMP_TO_THE_SIDE) and len(hand) >= 7:
                continue
            return plays[name]
        if "DiscardAndDraw" in by_type and not (names[C.NO_DUDE] or names[C.I_TOLD_YOU]):
            return by_type["DiscardAndDraw"][0]
        return by_type["EndTurn"][0]

    def _threesome_score(self, view: Mapping[str, Any], action: Action) -> float:
        cards = [self._card(view, c) for c in action["cards"]]
        kinds = {c["kind"] for c in cards}
        names = {c["name"] for c in cards}
        if "action" not in kinds:
            potato = next((n for n in names if n != C.WILDCARD), C.FRENCH_FRIES)
            wild = sum(1 for c in cards if c["name"] == C.WILDCARD)
            # 1, 2 or 3 golden potatoes; spending wildcards on plain potatoes is a waste
            return float(C.TYPES[potato].reward) - 0.6 * wild
        # A three-of-value-3 gives one golden potato for three strong action cards.
        return 1.0 if len(self._hand(view)) >= 6 else -1.0

    def _spider_worth(self, view: Mapping[str, Any], hand: Sequence[Mapping[str, Any]]) -> bool:
        counts = view["hand_counts"]
        return int(counts[self._richest(view)]) >= len(hand) + 3

    def _target(self, view: Mapping[str, Any], actions: list[Action]) -> Action:
        play = view.get("play") or {}
        name = play.get("name")
        if name == C.SPIDER_POTATO:
            richest = self._richest(view)
            for action in actions:
                if sorted(action["targets"]) == sorted([self.player, richest]):
                    return action
        if name in (C.GET_OFF_THE_PONY, C.LOOK_AHEAD):
            wanted = self._leader(view)
        elif name == C.POTATO_OF_DESTINY:
            wanted = (
                self._richest(view)
                if view["hand_counts"][self._richest(view)] > 5
                else (self._leader(view))
            )
        else:
            wanted = self._richest(view)
        for action in actions:
            if action["targets"] == [wanted]:
                return action
        return actions[0]

    def _react(self, view: Mapping[str, Any], by_type: dict[str, list[Action]]) -> Action:
        skip = by_type["SkipReaction"][0]
        interrupts = by_type.get("PlayInterrupt", [])
        if not interrupts:
            return skip
        play = view.get("play") or {}
        actor = play.get("player")
        pots = view["potatoes"]
        threshold = view["threshold"]
        me = self.player
        threat = 0.0
        if play.get("kind") == "threesome":
            reward = int(play.get("reward", 0))
            threat = 10.0 if pots[actor] + reward >= threshold else 1.5 * reward
            if actor == self._leader(view):
                threat += 1.0
        else:
            name = play.get("name")
            targets = play.get("targets", [])
            if name in (C.GET_OFF_THE_PONY, C.POTATO_OF_THE_YEAR) and pots[actor] + 1 >= threshold:
                threat = 10.0
            elif me in targets:
                threat = {
                    C.GET_OFF_THE_PONY: 4.0 if pots[me] else 0.0,
                    C.LOOK_AHEAD: 3.0 if pots[me] else 0.0,
                    C.POTATO_DAWAN: 3.0,
                    C.POPE_POTATO: 2.0,
                    C.LEND_ME_A_BUCK: 2.0,
                    C.POTATO_OF_DESTINY: 2.5 if view["hand_counts"][me] > 3 else 0.0,
                    C.PAPAGEDDON: 2.0,
                    C.SPIDER_POTATO: 3.0,
                }.get(str(name), 1.0)
            elif name == C.POTATO_OF_THE_YEAR and actor == self._leader(view):
                threat = 2.0
        spare = len(interrupts) > 1 or any(
            self._card(view, a["card"])["name"] == C.NO_DUDE for a in interrupts
        )
        if threat >= 3.0 or (threat >= 2.0 and spare):
            # the cheapest interrupt that works: "No dude" unless only the stronger one can
            cheap = [a for a in interrupts if self._card(view, a["card"])["name"] == C.NO_DUDE]
            return (cheap or interrupts)[0]
        return skip

    def _pick(self, view: Mapping[str, Any], actions: list[Action], rng: random.Random) -> Action:
        selection = view.get("selection") or {}
        options = selection.get("options") or []
        shown = {o["token"]: o["card"] for o in options if "card" in o}
        if not shown:
            return rng.choice(actions)  # a blind pick
        names = _names(self._hand(view))
        best = max(shown, key=lambda t: _keep_value(shown[t], names + Counter([shown[t]["name"]])))
        for action in actions:
            if action["token"] == best:
                return action
        return actions[0]

    def _name(self, view: Mapping[str, Any], actions: list[Action]) -> Action:
        names = _names(self._hand(view))
        play = view.get("play") or {}
        target = (play.get("targets") or [""])[0]
        seen = self.seen.get(target, Counter())
        wanted = None
        for potato in _POTATO_NAMES:  # complete a potato threesome first
            if names[potato] + names[C.WILDCARD] >= 2 and (seen[potato] or not seen):
                wanted = potato
                break
        if wanted is None and seen:
            wanted = max(seen, key=lambda n: _KEEP.get(n, 0.0))
        if wanted is None:
            wanted = max(_POTATO_NAMES, key=lambda n: (names[n], C.TYPES[n].copies))
        for action in actions:
            if action["name"] == wanted:
                return action
        return actions[0]

    def _discard(self, view: Mapping[str, Any], actions: list[Action]) -> Action:
        names = _names(self._hand(view))
        return min(actions, key=lambda a: _keep_value(self._card(view, a["card"]), names))


def _search_bot(player: str) -> Any:
    """The information-set search bot (``.search``, which imports the rules, which import
    these bots)."""
    from .search import search_bot

    return search_bot(player)


BOTS: dict[str, BotFactory] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
    "search": _search_bot,
}
