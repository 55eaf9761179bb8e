"""The decisions a gamemaster takes around a game's rules, given what it read from the store.

The gamemaster reads what only the store knows (whether the gate is open, who still owes an
ack, the transitions' signatures) and persists what comes back; which events follow from
that is decided here, pure like the rest of the engine, so it is tested without a store:

- :func:`outsider`: a player none of whose commands can ever be accepted at this table;
- :func:`decide_command`: a player's command, which takes the seat back first when the
  player was away (one batch: back, then what the command caused);
- :func:`next_moves`: what happens once the gate is open: the game's follow-up, else the
  house's moves for the away players who must act;
- :func:`mark_late_away`: everyone late with a gating ack marked away (the ack timeout).
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass

from .game import Command, Event, Rejection
from .table import Table, TableState

#: Events and who the house made them for (None: nobody's move, e.g. a follow-up).
Move = tuple[str | None, list[Event]]


def outsider(state: TableState, player: str) -> bool:
    """No command of ``player`` can ever be accepted at this table: it has started and the
    player has no seat (seats are fixed once it starts). True even of a copy another
    gamemaster has moved on since; a copy still in the lobby may not be (the table may have
    started since), so a command to it is judged on the game as it is."""
    return state.status != "lobby" and player not in state.seats


@dataclass(frozen=True)
class Decided:
    """A command decided: the seat taken back (``table.back``, when the player was away),
    then what the command caused, or why it was refused. ``back`` is appended even when the
    command is refused: the player who sent it is present."""

    back: list[Event]
    events: list[Event]
    rejection: Rejection | None = None


def decide_command(
    table: Table,
    state: TableState,
    player: str,
    command: Command,
    rng: random.Random,
    *,
    gate_open: bool,
) -> Decided:
    """``player``'s command on ``state``, after taking the seat back if they were away."""
    back = table.mark_back(state, player)
    before = state
    for event in back:
        before = table.evolve(before, event)
    try:
        events = table.decide(before, player, command, rng, gate_open=gate_open)
    except Rejection as exc:
        return Decided(back, [], exc)
    return Decided(back, events)


def next_moves(table: Table, state: TableState, rng: random.Random) -> list[Move]:
    """What happens by itself once the gate is open: the game's follow-up (one move of
    nobody's), else one house move for each away player who must act (seat order, each on
    the state the previous left). Empty: the game waits for a present player."""
    follow_up = table.follow_up(state, rng)
    if follow_up:
        return [(None, follow_up)]
    away = [p for p in table.movers(state) if p in state.away]
    return table.house_moves(state, away, rng)


def mark_late_away(table: Table, state: TableState, late: Collection[str]) -> list[Event]:
    """Mark away every seated player in ``late`` who is not away already, in seat order."""
    events: list[Event] = []
    for player in state.seats:
        if player in late:
            for event in table.mark_away(state, player):
                events.append(event)
                state = table.evolve(state, event)
    return events


__all__ = ["Decided", "Move", "decide_command", "mark_late_away", "next_moves", "outsider"]
