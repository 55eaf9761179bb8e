"""Macaua's hook for the information-set search bot (``cardroom_engine.search``).

A Macaua player knows what its keys open and what is public: its own hand (the cards it
opened privately), the discard pile (every played card is opened in public), the top, the
declared suit, the pending challenge, everyone's hand size and the size of the fresh pile.
Every other card is in another player's hand or in the fresh pile, and nobody, the server
included, knows which.

The search does not run on the real rules: a real move carries keys and proofs and a
playout through them would cost seconds (and need every other player's secrets, which a
player does not have). It runs on a light model of the Macaua flow instead, for search only
(:class:`MacauaModel`, plain card codes, no cryptography): play cards of one rank on a
matching top (the same :func:`.cards.check_play`), a challenge of 2s, 3s and Jokers, draw one
card or the challenge (which ends the turn), the discard pile but its top reshuffled when the
fresh pile runs out, the first empty hand wins. The bot hands the model only its
:func:`plain_view`: the public fields of its view and the codes of the cards its own keys
opened (the determinizer sees nothing else); a determinization deals the cards that are in
neither its hand nor the discard pile at random, as many to each other player as it holds,
the rest to the fresh pile in a random order.

The search chooses among the legal plays of the bot's hand (a play of an Ace once for each
suit it may declare) and the draw; the move is then
made exactly as the heuristic bot makes its own (:meth:`.bots.MacauaBot.play_move`, signed,
with the keys of the chosen cards). The search is paired (every option in every
determinization, on the same random numbers) with the heuristic bot's choice as its prior:
it plays otherwise only where the playouts say so clearly. Every other move (keys,
shuffles, masks, reveals, the audit) is the heuristic bot's: there is no choice in it. A
playout runs ``HORIZON`` turns or to a win; its value is 1 for a win, 0 for a loss, else
where the player's hand size ranks among everyone's, and by how much. The rollouts play as
the heuristic bot: the biggest group, wild cards last, ending on the suit held most.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

from cardroom_engine import Command, Event, GameRules, Message, Outcome, Rejection
from cardroom_engine.search import SearchBot
from cardroom_mentalpoker import MACAUA_CARDS
from cardroom_wire import ErrorCode
from pydantic import BaseModel

from .bots import HeuristicBot, Pos, game_view, play_score
from .cards import SUITS, check_play, legal_first, play_challenge, rank, suit

__all__ = [
    "MacauaDeterminizer",
    "MacauaModel",
    "MacauaSearchBot",
    "Plain",
    "plain_view",
    "rollout",
    "search_bot",
]

HORIZON = 40
"""Turns of a playout at most (then it is judged by the hands' sizes)."""


class Plain(NamedTuple):
    """The model's state: open card codes, no keys."""

    seats: tuple[str, ...]
    hands: tuple[tuple[str, ...], ...]
    fresh: tuple[str, ...]
    discard: tuple[str, ...]
    turn: int = 0
    declared: str | None = None
    challenge: int = 0
    turns: int = 0
    winner: int | None = None


class _NoConfig(BaseModel):
    pass


def _declare(hand: Sequence[str], played: Sequence[str]) -> str | None:
    """The suit an Ace declares: the one the rest of the hand holds most of (as the
    heuristic bot declares)."""
    if rank(played[0]) != "A":
        return None
    left = Counter(hand)
    left.subtract(played)
    suits = Counter(s for c, k in left.items() if k > 0 and (s := suit(c)) for _ in range(k))
    return max(SUITS, key=lambda s: (suits[s], -SUITS.index(s)))


def plays_of(
    hand: Sequence[str], top: str, declared: str | None, challenge: int
) -> list[list[str]]:
    """Every legal play of ``hand``: a legal first card, then any subset of its rank (in hand
    order), as :meth:`.bots.MacauaBot.legal_plays` lists them."""
    plays: list[list[str]] = []
    for first in hand:
        if not legal_first(first, top, declared, challenge):
            continue
        same = [c for c in hand if c != first and rank(c) == rank(first)]
        for mask in range(1 << len(same)):
            plays.append([first, *(c for k, c in enumerate(same) if mask >> k & 1)])
    return plays


class MacauaModel(GameRules[Plain]):
    """The Macaua flow on open cards, for the search only (see the module docs): commands
    ``{"kind": "play", "cards": [codes], "suit": s}`` and ``{"kind": "draw"}``."""

    name: ClassVar[str] = "macaua-model"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    config_model: ClassVar[type[BaseModel]] = _NoConfig

    def setup(self, config: Any, seats: Sequence[str]) -> Plain:
        return Plain(tuple(seats), tuple(() for _ in seats), (), ())

    def start(self, state: Plain, rng: random.Random) -> list[Event]:
        return []

    def decide(self, state: Plain, actor: str, command: Command, rng: random.Random) -> list[Event]:
        seat = state.seats.index(actor)
        if state.winner is not None or seat != state.turn:
            raise Rejection(ErrorCode.NOT_YOUR_TURN, "not this player's turn")
        if command.get("kind") == "draw":
            return [self._draw(state, max(state.challenge, 1), rng)]
        cards = [str(c) for c in command.get("cards") or ()]
        new_suit = command.get("suit")
        held = Counter(state.hands[seat])
        held.subtract(cards)
        if any(k < 0 for k in held.values()):
            raise Rejection(ErrorCode.ILLEGAL_MOVE, "not in the hand")
        why = check_play(cards, state.discard[-1], state.declared, state.challenge, new_suit)
        if why is not None:
            raise Rejection(ErrorCode.ILLEGAL_MOVE, why)
        return [{"type": "played", "cards": cards, "suit": new_suit}]

    @staticmethod
    def _draw(state: Plain, count: int, rng: random.Random) -> Event:
        fresh, discard = list(state.fresh), list(state.discard)
        drawn: list[str] = []
        while len(drawn) < count:
            if not fresh:
                if len(discard) <= 1:
                    break  # nothing left anywhere: the draw ends short
                fresh = discard[:-1]
                rng.shuffle(fresh)
                discard = discard[-1:]
            drawn.append(fresh.pop(0))
        return {"type": "drew", "cards": drawn, "fresh": fresh, "discard": discard}

    def evolve(self, state: Plain, event: Event) -> Plain:
        seat = state.turn
        hands = list(state.hands)
        nxt = (seat + 1) % len(state.seats)
        if event["type"] == "drew":
            hands[seat] = hands[seat] + tuple(event["cards"])
            return state._replace(
                hands=tuple(hands),
                fresh=tuple(event["fresh"]),
                discard=tuple(event["discard"]),
                challenge=0,
                turn=nxt,
                turns=state.turns + 1,
            )
        cards: list[str] = event["cards"]
        left = list(hands[seat])
        for card in cards:
            left.remove(card)
        hands[seat] = tuple(left)
        return state._replace(
            hands=tuple(hands),
            discard=state.discard + tuple(cards),
            declared=event["suit"] if rank(cards[0]) == "A" else None,
            challenge=state.challenge + play_challenge(cards),
            turn=nxt,
            turns=state.turns + 1,
            winner=seat if not left else None,
        )

    def notify(self, before: Plain, event: Event, after: Plain) -> dict[str, Message]:
        return {}

    def view(self, state: Plain, player: str | None) -> dict[str, Any]:
        return plain_of(state, player)

    def actions(self, state: Plain, player: str) -> list[dict[str, Any]]:
        seat = state.seats.index(player)
        if state.winner is not None or seat != state.turn:
            return []
        hand = state.hands[seat]
        moves: list[dict[str, Any]] = [
            {"kind": "play", "cards": play, "suit": _declare(hand, play)}
            for play in plays_of(hand, state.discard[-1], state.declared, state.challenge)
        ]
        moves.append({"kind": "draw"})
        return moves

    def outcome(self, state: Plain) -> Outcome | None:
        if state.winner is None:
            return None
        scores = {p: 1.0 if i == state.winner else 0.0 for i, p in enumerate(state.seats)}
        return Outcome.from_scores(scores, lower_is_better=False)


MODEL = MacauaModel()


def plain_of(state: Plain, player: str | None) -> dict[str, Any]:
    """What ``player`` knows of a model state, in the shape of :func:`plain_view`."""
    seat = state.seats.index(player) if player in state.seats else None
    return {
        "seats": list(state.seats),
        "me": player,
        "hand": sorted(state.hands[seat]) if seat is not None else [],
        "discard": list(state.discard),
        "declared": state.declared,
        "challenge": state.challenge,
        "turn": state.seats[state.turn],
        "turns": state.turns,
        "hand_counts": {p: len(h) for p, h in zip(state.seats, state.hands, strict=True)},
        "fresh": len(state.fresh),
    }


def plain_view(v: Mapping[str, Any], player: str, hand: Sequence[str]) -> dict[str, Any]:
    """What the player knows, for the search: the public fields of its game view ``v`` and
    the codes of the cards its own keys opened (``hand``). Nothing else reaches the model."""
    return {
        "seats": [str(s) for s in v["seats"]],
        "me": player,
        "hand": sorted(hand),
        "discard": [str(c) for c in v.get("discard") or ()],
        "declared": v.get("declared"),
        "challenge": int(v.get("challenge") or 0),
        "turn": v.get("turn"),
        "turns": int(v.get("turns") or 0),
        "hand_counts": {str(p): int(k) for p, k in (v.get("hand_counts") or {}).items()},
        "fresh": int(v.get("fresh") or 0),
    }


class Lacking(NamedTuple):
    """What a player's draw said about its hand: it held no card to play on ``top`` (with
    ``declared`` and ``challenge``), and has been dealt ``since`` cards after it."""

    top: str
    declared: str | None
    challenge: int
    since: int = 0


class MacauaDeterminizer:
    """Model states consistent with a player's :func:`plain_view` and the public moves its
    notifications told it.

    A player who draws instead of playing is taken to have held nothing it could play (as
    the heuristic bot plays): of its cards, those it still holds from before that draw (at
    least its count less the cards dealt to it since) are dealt from the cards that could
    not be played then. This reads only the public moves (who drew, what was played, the
    top); it is a guess about how the others play, not a secret."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.top: str | None = None
        self.declared: str | None = None
        self.challenge = 0
        self.lacking: dict[str, Lacking] = {}

    def observe(self, message: Message) -> None:
        event = message.get("event")
        player = message.get("player")
        if event == "reveal" and "top" in message:
            self.top, self.declared, self.challenge = str(message["top"]), None, 0
        elif event == "played":
            cards = [str(c) for c in message.get("cards") or ()]
            if cards:
                self.top = cards[-1]
                self.declared = message.get("suit") if rank(cards[0]) == "A" else None
            self.challenge = int(message.get("challenge") or 0)
        elif event == "draw" and isinstance(player, str):
            if player != self.player and self.top is not None:
                self.lacking[player] = Lacking(self.top, self.declared, self.challenge)
            self.challenge = 0
        elif event == "draw_assigned" and isinstance(player, str) and player in self.lacking:
            was = self.lacking[player]
            self.lacking[player] = was._replace(since=was.since + int(message.get("count") or 0))

    def sample(self, view: Mapping[str, Any], player: str, rng: random.Random) -> Plain:
        seats = tuple(str(s) for s in view["seats"])
        hand = tuple(view["hand"])
        discard = tuple(view["discard"])
        unseen = Counter(MACAUA_CARDS)
        unseen.subtract(hand)
        unseen.subtract(discard)
        pool = [c for c, k in unseen.items() for _ in range(max(k, 0))]
        rng.shuffle(pool)
        counts = view["hand_counts"]
        hands: list[tuple[str, ...]] = []
        for p in seats:
            if p == player:
                hands.append(hand)
                continue
            need = int(counts.get(p, 0))
            dealt: list[str] = []
            lacking = self.lacking.get(p)
            if lacking is not None:  # its cards from before its draw could not be played
                old = max(need - lacking.since, 0)
                unplayable = [
                    c
                    for c in pool
                    if not legal_first(c, lacking.top, lacking.declared, lacking.challenge)
                ][:old]
                dealt += unplayable
                taken = Counter(unplayable)
                rest = []
                for c in pool:
                    if taken[c] > 0:
                        taken[c] -= 1
                    else:
                        rest.append(c)
                pool = rest
            more = need - len(dealt)
            hands.append(tuple(dealt + pool[:more]))
            pool = pool[more:]
        turn = view.get("turn")
        return Plain(
            seats=seats,
            hands=tuple(hands),
            fresh=tuple(pool[: int(view["fresh"])]),
            discard=discard,
            turn=seats.index(turn) if turn in seats else seats.index(player),
            declared=view.get("declared"),
            challenge=int(view.get("challenge") or 0),
            turns=int(view.get("turns") or 0),
        )

    def done(self, start: Plain, state: Plain, steps: int) -> bool:
        return state.winner is not None or state.turns - start.turns >= HORIZON

    def value(self, start: Plain, state: Plain, player: str) -> float:
        me = state.seats.index(player)
        if state.winner is not None:
            return 1.0 if state.winner == me else 0.0
        sizes = [len(h) for h in state.hands]
        mine = sizes[me]
        others = [k for i, k in enumerate(sizes) if i != me]
        rank_ = sum(1.0 if k > mine else 0.5 if k == mine else 0.0 for k in others) / len(others)
        margin = 1.0 / (1.0 + math.exp((mine - min(others)) / 2.0))
        return 0.1 + 0.4 * rank_ + 0.4 * margin


def heuristic(hand: Sequence[str], actions: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The heuristic bot's choice among model actions: the biggest group, keeping Aces and
    Jokers for later, ending on the suit held most; draw only when nothing plays."""
    suits = Counter(suit(c) for c in hand)

    def score(action: Mapping[str, Any]) -> tuple[int, int, int]:
        cards: list[str] = action.get("cards") or []
        return play_score(cards, suits) if cards else (-1, 0, 0)

    return max(actions, key=score)


def rollout(
    state: Plain, player: str, actions: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any]:
    """The playouts' policy: the heuristic bot's (:func:`heuristic`)."""
    if len(actions) == 1:
        return actions[0]
    return dict(heuristic(state.hands[state.seats.index(player)], actions))


def _prior(
    view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
) -> Mapping[str, Any]:
    return heuristic(view["hand"], actions)


class MacauaSearchBot(HeuristicBot):
    """Chooses its plays by the information-set search over the model (see the module
    docs); makes every move, and everything else, as the heuristic bot does."""

    def __init__(self, player: str, iterations: int = 300, budget: float | None = None) -> None:
        super().__init__(player)
        self.search: SearchBot[Plain] = SearchBot(
            player,
            MODEL,
            MacauaDeterminizer(player),
            iterations=iterations,
            budget=budget,
            rollout=rollout,
            paired=True,
            prior=_prior,
        )
        self.last_plain: dict[str, Any] | None = None  # what the last search was given

    def observe(self, message: Message) -> None:
        self.search.observe(message)

    def choose_play(
        self, v: Mapping[str, Any], plays: list[list[tuple[Pos, str]]], rng: random.Random
    ) -> dict[str, Any]:
        if not plays:
            return {"kind": "draw"}
        hand = self.open_hand(v)
        codes = [code for _, code in hand]
        plain = plain_view(game_view(v), self.player, codes)
        self.last_plain = plain
        # the root's actions: the real plays (the same in every determinization), and the draw
        options: list[dict[str, Any]] = []
        for play in plays:
            cards = [c for _, c in play]
            declared = _declare(codes, cards)
            # an Ace's suit is a choice too: the heuristic's first (the prior picks the first
            # of equal plays), then the others
            for suit_ in [declared, *(s for s in SUITS if s != declared)] if declared else [None]:
                options.append({"kind": "play", "cards": cards, "suit": suit_})
        options.append({"kind": "draw"})
        choice = self.search.choose(plain, options, rng)
        if choice.get("kind") == "draw":
            return {"kind": "draw"}
        chosen = list(choice["cards"])
        for play in plays:
            if [c for _, c in play] == chosen:
                return self.play_move(v, play, choice.get("suit"))
        return {"kind": "draw"}  # (never: the choice is one of the plays)


def search_bot(player: str, iterations: int = 300) -> MacauaSearchBot:
    """The Macaua search bot for ``player`` (the registry's ``"search"`` kind)."""
    return MacauaSearchBot(player, iterations=iterations)
