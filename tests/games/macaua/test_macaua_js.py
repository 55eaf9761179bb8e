"""A whole Macaua game with seats played by the page's code (web/src/macaua, under node).

Every move of a page seat (keys, the shuffle with its argument, the mask, the card keys for
the deal and the draws, plays, draws, the audit) is built and signed in node, with keys that
never leave it, and goes through this game's own ``decide`` at a table with Python bots; the
page's state goes through JSON between any two moves (a reload keeps the seat). The game
reaches its end past a reshuffle with a clean audit, and each page seat's signature of every
transition it was sent checks against its seat key.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cardroom_games.macaua.bots import HeuristicBot
from cardroom_mentalpoker import check_transition
from macaua_support import Harness
from support.macaua_js import JsSeat, MacauaJs


@pytest.fixture(scope="module")
def js() -> Iterator[MacauaJs]:
    with MacauaJs() as node:
        yield node


def test_page_seats_play_a_whole_game_with_a_python_bot(js: MacauaJs) -> None:
    seats: dict[str, JsSeat] = {}

    def page_seat(player: str) -> JsSeat:
        seats[player] = JsSeat(js, player)
        return seats[player]

    # six hands of eight leave five fresh cards: the discards are reshuffled, over and over
    config = {"max_turns": 400, "hand_size": 8}
    h = Harness(6, config, seed=5, bot=[page_seat, HeuristicBot])
    assert h.game.config.shuffle_proof == "argument"
    h.to_play()
    # each page seat opened its own hand privately: the cards its keys alone unmask
    for player, seat in seats.items():
        assert len(seat.hand(h.gview(player))) == h.game.config.hand_size
    h.finish()
    state = h.game
    assert state.phase == "over"
    assert state.winner is not None, state.result
    assert len(state.decks) >= 2  # a reshuffle: the page seats' keys for a later deck too
    assert state.audit is not None
    assert state.audit["ok"] is True, state.audit
    moved = [step.event for step in h.local.steps if step.event.get("player") in seats]
    assert {e["player"] for e in moved} == set(seats)
    kinds = {e["signed"]["move"]["kind"] for e in moved if "signed" in e}
    assert {"keys", "shuffle", "mask", "reveal", "play", "audit"} <= kinds, kinds
    for player, seat in seats.items():
        notes = [
            (step.version, step.notifications[player]["transition"])
            for step in h.local.steps
            if "transition" in step.notifications.get(player, {})
        ]
        assert notes
        for version, transition in notes:
            signature = seat.sign(state.binding, version, transition)
            check_transition(signature, seat.verify_key, state.binding, version, transition)
