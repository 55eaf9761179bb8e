"""Signed transitions: a game that signs them moves on only once every player signed.

In such a game (``GameRules.signed_transitions``: Macaua) every player checks each transition
it is sent and acknowledges it with its signature over it, or with a rejection; the
acktracker keeps either with the ack. Before the game's next step (a command, a follow-up)
the gamemaster looks at what was kept for the transitions since it last looked:

- a rejection halts the table (the game's ``halt`` event records it, with the evidence and
  whom it blames);
- a signature must verify under the player's seat key over the transition as recorded, else
  the table halts blaming that player;
- an acknowledgement without either (a player that did not check) halts it too, blaming
  that player;
- an acknowledgement still owed (an away player: its gate was excused) is not waited for;
  the player signs it when it comes back, and the record shows what was signed when.

What was checked is remembered per game in this process, for the ``KEPT`` games looked at
last (another instance, or this one for a game it forgot, checks again from the start of the
game, which reads the game's signatures once and comes to the same verdict).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from cardroom_engine import Event, TableState
from cardroom_eventstore import EventStore

KEPT = 10_000
"""Games whose checked version is remembered (as many as the gamemaster caches): a process
that signs games for months keeps a bounded number of marks."""


class TransitionSignatures:
    def __init__(self, store_of: Callable[[str], EventStore]) -> None:
        self.store_of = store_of  # the event store that holds a game
        self._checked: OrderedDict[str, int] = OrderedDict()  # game -> checked up to

    async def halt(self, rules: Any, state: TableState) -> list[Event]:
        """The events that halt the table (a rejection, a bad or missing signature since the
        last look), or none: every transition so far counts."""
        if not rules.signed_transitions or state.status != "playing":
            return []
        game = state.game_id
        after, upto = self._checked.get(game, 0), state.version
        if upto <= after:
            return []
        store = self.store_of(game)
        kept = await store.signatures_since(game, after, upto)
        owed = await store.pending(game)
        prefix = f"{rules.name}."
        inner = state.game
        for record in await store.read_stream(game, after + 1, upto):
            if not record.type.startswith(prefix):
                continue  # the table's own events are not the game's transitions
            transition = {**record.data, "type": record.type}
            for player in state.seats:
                signed = kept.get((record.version, player))
                if signed is not None and signed.rejection is not None:
                    return list(rules.halt(inner, record.version, player, signed.rejection))
                if signed is not None and signed.signature is not None:
                    if not rules.signature_holds(
                        inner, player, record.version, transition, signed.signature
                    ):
                        return list(rules.halt(inner, record.version, player, _bad(player)))
                elif player not in owed.get(record.version, ()):
                    return list(rules.halt(inner, record.version, player, _unsigned(player)))
        self._checked[game] = upto
        self._checked.move_to_end(game)
        if len(self._checked) > KEPT:
            self._checked.popitem(last=False)
        return []


def _bad(player: str) -> dict[str, Any]:
    return {
        "code": "bad_signature",
        "reason": "the acknowledgement's signature does not verify under the seat key",
        "blame": player,
    }


def _unsigned(player: str) -> dict[str, Any]:
    return {
        "code": "unsigned",
        "reason": "the transition was acknowledged without a signature",
        "blame": player,
    }
