"""A Macaua player's program acts only on what it checked, never on what the server says.

The server lists each player's actions and sends its view; a player that built its moves
from them would publish whatever card keys the server listed (a card in its own hand, the
next fresh card: the server then opens it) and shuffle or mask whatever cards the server
sent (exposing its keys on cards the server chose). Once a player has a verifier (as it
has whenever it plays through a server), its moves are built from the verifier's copy of the
game and the rules' actions there: a forged action or view changes nothing, and with
nothing checked to act on it makes no move at all. And a table whose shuffles are proved
by too few rounds (a shuffler could then stack the deck) is neither made nor played.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from cardroom_engine import Rejection, Table
from cardroom_games.macaua import GAME, MacauaBot, MacauaConfig, MacauaState, TransitionVerifier
from cardroom_games.macaua.config import MIN_SHUFFLE_ROUNDS
from cardroom_games.macaua.verify import Untrusted
from macaua_support import Harness


class Checked:
    """A harness whose every player checks each transition it is sent before it moves."""

    def __init__(self, players: int = 2, seed: int = 3) -> None:
        self.h = Harness(players, seed=seed)
        self.verifiers: dict[str, TransitionVerifier] = {
            p: bot.verifier("g1") for p, bot in self.h.bots.items()
        }
        self.seen = 0

    def check_new(self) -> None:
        for step in self.h.local.steps[self.seen :]:
            for player, message in step.notifications.items():
                if "transition" in message and player in self.verifiers:
                    verdict = self.verifiers[player].check(
                        step.version, json.loads(json.dumps(message))
                    )
                    assert verdict.rejection is None, verdict.rejection
        self.seen = len(self.h.local.steps)

    def run(self, until: Callable[[MacauaState], bool]) -> None:
        for _ in range(5000):
            self.check_new()
            if until(self.h.game):
                return
            player = self.h.game.waiting[0]
            self.h.send(player, self.h.bot_command(player))
        raise AssertionError("did not get there")


def _published(command: dict[str, Any]) -> set[tuple[int, int]]:
    move = command["move"]
    return {(int(k["deck"]), int(k["position"])) for k in move.get("keys", ()) if "deck" in k}


def test_a_listed_key_of_a_hidden_card_is_not_published() -> None:
    t = Checked()
    t.run(lambda s: s.phase == "play")
    h = t.h
    mover = h.game.waiting[0]
    other = next(p for p in h.seats if p != mover)
    own = [tuple(pos) for pos in h.game.hands[mover]]
    fresh = h.game.fresh[0]
    for kind in ("reveal", "audit"):
        forged = [{"type": "move", "deck": 0, "kind": kind, "positions": [*own, [0, fresh]]}]
        # the mover's checked game asks for a play or a draw: that is what it makes
        command = dict(h.bots[mover].choose(h.view(mover), forged, h.rng))
        assert command["move"]["kind"] in ("play", "draw")
        played = {(int(c["deck"]), int(c["position"])) for c in command["move"].get("cards", ())}
        assert (0, fresh) not in played
        # the other player's checked game asks nothing of it now: no move at all
        with pytest.raises(Untrusted):
            h.bots[other].choose(h.view(other), forged, h.rng)
    assert h.bots[mover].completions(h.view(mover), forged[0]) == []
    h.send(mover, dict(h.bots[mover].choose(h.view(mover), forged, h.rng)))  # a legal move


def test_a_forged_deck_to_mask_is_not_masked() -> None:
    t = Checked()
    t.run(lambda s: s.phase == "mask")
    h = t.h
    player = h.game.waiting[0]
    view = h.view(player)
    real = view["state"]["cards"]
    forged_cards = [real[0]] * len(real)  # the server's choice of cards to be masked
    forged = {**view, "state": {**view["state"], "cards": forged_cards}}
    command = dict(h.bots[player].choose(forged, h.table.actions(h.local.state, player), h.rng))
    assert command["move"]["kind"] == "mask"
    # the mask is of the checked deck (the table takes it, its proof against the real cards)
    h.send(player, command)
    t.check_new()
    assert h.game.phase != "mask" or h.game.waiting[0] != player


def test_nothing_is_made_from_a_copy_that_failed_or_never_started() -> None:
    t = Checked()
    t.run(lambda s: s.phase == "play")
    h = t.h
    mover = h.game.waiting[0]
    actions = h.table.actions(h.local.state, mover)
    fresh = Harness(2, seed=3)
    idle = fresh.bots[mover]
    idle.verifier("g1")  # has checked nothing: not even the start
    with pytest.raises(Untrusted):
        idle.choose(h.view(mover), actions, h.rng)
    verifier = t.verifiers[mover]
    verdict = verifier.check(10**6, {"transition": {"type": "macaua.played", "player": mover}})
    assert verdict.rejection is not None
    with pytest.raises(Untrusted):
        h.bots[mover].choose(h.view(mover), actions, h.rng)


def test_a_new_table_proves_its_shuffles_by_enough_rounds() -> None:
    """A cut-and-choose proof's challenge is a hash of the shuffler's own commitments: a
    shuffler that stacks the deck tries again offline until a proof passes, so a proof of
    r rounds costs about 2**r tries. A new table needs at least MIN_SHUFFLE_ROUNDS; one
    stored with fewer is read back as it was."""
    table = Table(GAME)
    weak = {"shuffle_proof": "rounds", "shuffle_rounds": MIN_SHUFFLE_ROUNDS - 1}
    with pytest.raises(Rejection) as refused:
        table.create("g-weak", "a", weak, seats=2, key="a" * 64)
    assert refused.value.code == "bad_config"
    assert "shuffle_rounds" in refused.value.message
    enough = {**weak, "shuffle_rounds": MIN_SHUFFLE_ROUNDS}
    assert table.create("g-ok", "a", enough, seats=2, key="a" * 64)
    stored = MacauaConfig.model_validate({**weak, "shuffle_rounds": 0})  # no context: stored
    assert stored.shuffle_rounds == 0


def test_a_players_check_refuses_a_table_with_a_weak_proof() -> None:
    """A server that made such a table anyway (or one stored with it) is refused at its
    start by every player's check: no move is made on it."""
    h = Harness(2, {"shuffle_proof": "rounds", "shuffle_rounds": 2}, seed=3)
    player = h.seats[0]
    verifier = MacauaBot(player, h.bots[player].signing_key).verifier("g1")
    first = h.local.steps[0]
    for step in h.local.steps:
        if "transition" in step.notifications.get(player, {}):
            first = step
            break
    verdict = verifier.check(first.version, json.loads(json.dumps(first.notifications[player])))
    assert verdict.rejection is not None
    assert verdict.rejection["code"] == "weak_proof"
    assert verdict.rejection["blame"] == "server"
