"""Papas's hook for the information-set search bot (``cardroom_engine.search``).

A player of papas sees its own hand, the discard pile (face up), everyone's hand size and
golden potatoes, the card or threesome in play, and, as the picking player, the tokens of a
blind pick (with the faces when the card shows them). It does not see the others' hands,
the deck's order, who has passed in an open reaction window, nor which card a blind token
stands for. A determinization deals the cards it cannot place at random: to each other
player as many as that player holds (the cards a pick showed stay in the target's hand),
the rest to the deck in a random order; everyone who has not been seen to pass may still
react; a blind token stands for a random card of the target's hand.

A playout runs about two turns of the table (``HORIZON`` events) or to the end; its value
for the player is where its golden potatoes gained rank among everyone's, and by how much,
with a win worth the most. The rollouts play as the heuristic bot would, each seat from its
own view of the sampled state.

The bot (:class:`PapasSearchBot`) is the engine's paired search with a heuristic bot of its
own as the prior: every action is played out in every determinization, on the same random
numbers, and the heuristic's choice stands unless another beats it clearly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from cardroom_engine import Message
from cardroom_engine.search import GuidedSearchBot

from .bots import HeuristicBot
from .cards import CARD_NAME, REVEALS_HAND
from .protocol import _faces_for
from .rules import Papas
from .state import CARD_SELECTION, GAME_END, REACTION_PHASE, PapasConfig, PapasState, Play

__all__ = ["PapasDeterminizer", "PapasSearchBot", "rollout", "search_bot"]

_RULES = Papas()
HORIZON = 60  # events of a playout at most (about two turns of a table of four)
ITERATIONS = 240
"""Playouts a decision (over all its actions): with the rollouts' cheap views, about the time
120 took with full views. In 30 seeded games (bench/arena.py) 120 won 14 to the heuristic's
16; 240 won 16 to 13 with a 2.0 margin and 19 to 10 with 1.0."""
CONFIDENCE = 1.0
"""Standard errors by which an action must beat the heuristic's choice (see ITERATIONS)."""


class PapasDeterminizer:
    """States consistent with what one player sees (it needs nothing but its view)."""

    def __init__(self, player: str) -> None:
        self.player = player

    def observe(self, message: Message) -> None:
        return None  # the view holds all a player may know now (the discard pile is public)

    def sample(self, view: Mapping[str, Any], player: str, rng: random.Random) -> PapasState:
        config = PapasConfig.model_validate(view.get("config") or {})
        g: Mapping[str, Any] = view["state"]
        seats = tuple(str(s) for s in g["seats"])
        base = _RULES.setup(config, seats)
        me = seats.index(player)
        n = len(seats)
        order = [str(p) for p in g.get("order") or seats]
        direction = 1 if n < 3 or order[1] == seats[1] else -1
        hand = [int(c["id"]) for c in g.get("hand") or ()]
        discard = [int(c["id"]) for c in g.get("discard") or ()]
        play_view = g.get("play")
        in_play = [int(c["id"]) for c in (play_view or {}).get("cards") or ()]
        selection_view = g.get("selection")
        shown: list[tuple[str, int | None]] = []  # the pick's tokens, with the face if shown
        if isinstance(selection_view, Mapping):
            for option in selection_view.get("options") or ():
                card = option.get("card")
                shown.append((str(option["token"]), int(card["id"]) if card else None))
        known = set(hand) | set(discard) | set(in_play) | {c for _, c in shown if c is not None}
        pool = [c for c in range(len(CARD_NAME)) if c not in known]
        rng.shuffle(pool)
        counts = {str(p): int(k) for p, k in (g.get("hand_counts") or {}).items()}
        target = None
        if isinstance(selection_view, Mapping):
            target = seats.index(str(selection_view["target"]))
        hands: list[tuple[int, ...]] = []
        for seat, name in enumerate(seats):
            if seat == me:
                hands.append(tuple(hand))
                continue
            cards = [c for _, c in shown if c is not None] if seat == target else []
            need = counts.get(name, 0) - len(cards)
            cards += pool[:need]
            pool = pool[need:]
            hands.append(tuple(cards))
        deck_count = int(g.get("deck_count", 0))
        deck, pool = tuple(pool[:deck_count]), pool[deck_count:]
        phase = str(g.get("state"))
        reaction = g.get("reaction")
        window = int(reaction["window"]) if isinstance(reaction, Mapping) else 0
        reactors: tuple[int, ...] = ()
        if phase == REACTION_PHASE and isinstance(reaction, Mapping):
            names = [str(p) for p in reaction.get("players") or ()]
            reactors = tuple(
                seats.index(p) for p in names if p != player or reaction.get("may_react", True)
            )
        selection: tuple[tuple[str, int], ...] = ()
        if phase == CARD_SELECTION and target is not None:
            count = int(selection_view["count"]) if isinstance(selection_view, Mapping) else 0
            cards = list(hands[target])
            rng.shuffle(cards)
            if shown:  # the picking player: its tokens, each with its face or a random card
                hidden = [c for c in cards if c not in {s for _, s in shown}]
                picks = []
                for token, card in shown:
                    picks.append((token, card if card is not None else hidden.pop()))
                selection = tuple(picks)
            else:
                selection = tuple((f"t{i}", c) for i, c in enumerate(cards[:count]))
        play = None
        if isinstance(play_view, Mapping):
            play = Play(
                kind=play_view["kind"],
                cards=tuple(in_play),
                name=str(play_view["name"]),
                reward=int(play_view.get("reward", 0)),
                targets=tuple(seats.index(str(t)) for t in play_view.get("targets") or ()),
            )
        potatoes = tuple(int((g.get("potatoes") or {}).get(p, 0)) for p in seats)
        turn = g.get("turn") or {}
        return base._replace(
            phase=phase,
            active=seats.index(str(g["active"])),
            direction=direction,
            deck=deck,
            discard=tuple(discard),
            hands=tuple(hands),
            potatoes=potatoes,
            turn_fresh=bool(turn.get("fresh", False)),
            skip_next=bool(turn.get("skip_next", False)),
            play=play,
            window=window,
            reactors=reactors,
            selection=selection,
            named=g.get("named"),
        )

    def done(self, start: PapasState, state: PapasState, steps: int) -> bool:
        return steps >= HORIZON or state.phase == GAME_END

    def value(self, start: PapasState, state: PapasState, player: str) -> float:
        me = state.seats.index(player)
        if state.winner is not None:
            return 1.0 if state.winner == me else 0.0
        gained = [b - a for a, b in zip(start.potatoes, state.potatoes, strict=True)]
        others = [x for i, x in enumerate(gained) if i != me]
        mine = gained[me]
        rank = sum(1.0 if x < mine else 0.5 if x == mine else 0.0 for x in others) / len(others)
        margin = 1.0 / (1.0 + math.exp(-(mine - sum(others) / len(others))))
        return 0.5 * rank + 0.5 * margin


_PLAYERS: dict[str, HeuristicBot] = {}


def rollout(
    state: PapasState, player: str, actions: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any]:
    """The playouts' policy: the heuristic bot's choice, from that seat's own view of the
    sampled state."""
    bot = _PLAYERS.get(player)
    if bot is None:
        bot = _PLAYERS[player] = HeuristicBot(player)
    return dict(bot.choose(rollout_view(state, player), actions, rng))


def rollout_view(state: PapasState, player: str) -> dict[str, Any]:
    """The part of ``player``'s view the heuristic bot reads, built cheaply for the rollouts
    (the full view copies every face of the discard pile: most of a playout's time); the
    same values as :func:`.protocol.view`'s fields of those names, the faces shared, not
    copied (the heuristic only reads them)."""
    table = _faces_for(state)
    seats = state.seats
    seat = seats.index(player)
    play = state.play
    out: dict[str, Any] = {
        "state": state.phase,
        "seats": seats,
        "potatoes": dict(zip(seats, state.potatoes, strict=True)),
        "hand_counts": {p: len(h) for p, h in zip(seats, state.hands, strict=True)},
        "threshold": state.threshold,
        "hand": [table[c] for c in state.hands[seat]],
        "play": None,
        "selection": None,
    }
    if play is not None:
        out["play"] = {
            "player": seats[state.active],
            "kind": play.kind,
            "name": play.name,
            "reward": play.reward,
            "targets": [seats[t] for t in play.targets],
        }
        if state.selection and seat == state.active:
            reveal = play.name in REVEALS_HAND
            out["selection"] = {
                "options": [
                    {"token": t, "card": table[c]} if reveal else {"token": t}
                    for t, c in state.selection
                ]
            }
    return out


class PapasSearchBot(GuidedSearchBot[PapasState]):
    """The engine's paired search with the heuristic bot's choice as its prior (a heuristic
    bot of its own, fed the same notifications)."""

    def __init__(self, player: str, iterations: int = ITERATIONS) -> None:
        super().__init__(
            player,
            _RULES,
            PapasDeterminizer(player),
            HeuristicBot(player),
            iterations=iterations,
            rollout=rollout,
            confidence=CONFIDENCE,
        )


def search_bot(player: str, iterations: int = ITERATIONS) -> PapasSearchBot:
    """The papas search bot for ``player`` (the registry's ``"search"`` kind)."""
    return PapasSearchBot(player, iterations=iterations)
