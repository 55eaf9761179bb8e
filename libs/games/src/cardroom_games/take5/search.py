"""take5's hook for the information-set search bot (``cardroom_engine.search``).

A player of take5 knows its own hand, the board, the scores, this turn's revealed plays, and
every card it has seen this round (its deal, the boards, the revealed plays, the rows
taken). What it does not know is which of the other cards the others hold, and the cards
already played but not yet revealed this turn. A determinization deals the cards it has not
seen at random, as many to each player as that player holds, and lets those who have
played this turn have played one of them.

A playout runs to the end of the round; its value for the player is where its bull heads
taken since the search started rank among everyone's, and by how much (so one bull head
taken is better than twenty). The rollouts play the lowest card that takes no row when
there is one, else a random card, and take the cheapest row when asked.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping
from typing import Any

from cardroom_engine import Message
from cardroom_engine.search import SearchBot

from . import protocol as p
from .config import ROWS, Take5Config
from .placement import cheapest_row, play_cost
from .rules import Take5
from .state import Phase, Take5State

__all__ = ["Take5Determinizer", "rollout", "search_bot"]

_RULES = Take5()


def _faces(value: Any) -> Iterator[int]:
    """Every card face in a message's data (cards are ``{"face": n, "bull": b}``)."""
    if isinstance(value, Mapping):
        face = value.get("face")
        if isinstance(face, int) and not isinstance(face, bool):
            yield face
        for item in value.values():
            yield from _faces(item)
    elif isinstance(value, list):
        for item in value:
            yield from _faces(item)


class Take5Determinizer:
    """The cards a player has seen this round, and states consistent with them."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.seen: set[int] = set()  # this round's cards this player has seen

    def observe(self, message: Message) -> None:
        if message.get("type") == p.DEAL:
            self.seen = set()
        self.seen.update(_faces(message.get("data")))

    def sample(self, view: Mapping[str, Any], player: str, rng: random.Random) -> Take5State:
        config = Take5Config.model_validate(view.get("config") or {})
        seats = tuple(str(s) for s in view["seats"])
        g: Mapping[str, Any] = view["state"]
        base = _RULES.setup(config, seats)
        me = seats.index(player)
        hand = sorted(int(c["face"]) for c in g.get("hand") or ())
        board = g.get("board") or {}
        rows = tuple(tuple(int(c["face"]) for c in board.get(name, ())) for name in ROWS)
        played = [(int(item["card"]["face"]), int(item["id"])) for item in g.get("played") or ()]
        my_play = g.get("my_play")
        known = set(hand) | self.seen | {f for row in rows for f in row}
        known |= {f for f, _ in played}
        if isinstance(my_play, Mapping):
            known.add(int(my_play["face"]))
        pool = [f for f in range(1, config.deck_size + 1) if f not in known]
        rng.shuffle(pool)
        phase: Phase = g.get("phase", "play")
        waiting = {int(i) for i in g.get("waiting_for") or ()}
        mine_played = isinstance(my_play, Mapping) or (phase == "play" and me not in waiting)
        # in a turn's play, everyone held as many cards as this player before it played;
        # who has played since holds one fewer, and its play is one of the unseen cards
        held = len(hand) + (1 if phase == "play" and mine_played else 0)
        hands: list[tuple[int, ...]] = []
        plays: list[int | None] = []
        for seat in range(len(seats)):
            if seat == me:
                hands.append(tuple(hand))
                plays.append(int(my_play["face"]) if isinstance(my_play, Mapping) else None)
                continue
            if phase != "play":
                cards, pool = pool[: len(hand)], pool[len(hand) :]
                plays.append(None)
            else:
                cards, pool = pool[:held], pool[held:]
                if seat not in waiting and cards:  # played, face down
                    plays.append(cards.pop())
                else:
                    plays.append(None)
            hands.append(tuple(sorted(cards)))
        scores = [0] * len(seats)
        for item in g.get("scores") or ():
            scores[int(item["player"])] = int(item["score"])
        to_place = g.get("to_place") or ()
        chooser = g.get("chooser")
        return base._replace(
            phase=phase,
            round=int(g.get("round", 1)),
            turn=int(g.get("turn", 1)),
            hands=tuple(hands),
            rows=rows,
            scores=tuple(scores),
            plays=tuple(plays) if phase == "play" else (None,) * len(seats),
            revealed=tuple(sorted(played)),
            placed=len(played) - len(to_place),
            chooser=int(chooser) if isinstance(chooser, int) else None,
        )

    def done(self, start: Take5State, state: Take5State, steps: int) -> bool:
        return state.round != start.round or state.phase == "over"

    def value(self, start: Take5State, state: Take5State, player: str) -> float:
        me = state.seats.index(player)
        gained = [b - a for a, b in zip(start.scores, state.scores, strict=True)]
        others = [g for i, g in enumerate(gained) if i != me]
        mine = gained[me]
        rank = sum(1.0 if g > mine else 0.5 if g == mine else 0.0 for g in others) / len(others)
        margin = 1.0 / (1.0 + math.exp((mine - sum(others) / len(others)) / 4.0))
        return 0.5 * rank + 0.5 * margin


def rollout(
    state: Take5State, player: str, actions: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any]:
    """The playouts' policy: a card that takes no row (the lowest), else any; the cheapest
    row when a choice is asked."""
    if state.phase == "choose":
        return p.choose_response(cheapest_row(state.rows, state.bulls))
    seat = state.seats.index(player)
    for face in state.hands[seat]:
        if play_cost(state.rows, face, state.config.stack_size, state.bulls) == 0:
            return p.play_response(face, state.bulls)
    return rng.choice(actions)


def search_bot(player: str, iterations: int = 200) -> SearchBot[Take5State]:
    """The take5 search bot for ``player`` (the registry's ``"search"`` kind)."""
    return SearchBot(
        player, _RULES, Take5Determinizer(player), iterations=iterations, rollout=rollout
    )
