"""Seat keys: every Macaua seat is bound at its join to its player's verify key, so a move
signed with any other key (a key swapped in by the server or by another player) is refused,
and a seat cannot be taken without a key."""

from __future__ import annotations

import random

import pytest
from cardroom_engine import Rejection, Table
from cardroom_games.macaua import GAME, HeuristicBot
from cardroom_wire import ErrorCode
from macaua_support import Harness
from nacl.signing import SigningKey


def test_a_first_move_under_another_key_than_the_seats_is_refused() -> None:
    h = Harness(2)
    player = h.game.waiting[0]
    # the same player's program, holding a key of someone else's choosing: its `keys` move
    # publishes that key and is signed with it
    swapped = HeuristicBot(player, signing_key=SigningKey.generate())
    actions = h.table.actions(h.local.state, player)
    command = dict(swapped.choose(h.view(player), actions, h.rng))
    assert command["move"]["verify_key"] != h.bots[player].verify_key
    assert h.refused(player, command) == "bad_signature"
    # the seat's own key still moves
    h.send(player, h.bot_command(player))


def test_the_seats_keys_are_bound_before_any_move_and_public() -> None:
    h = Harness(3)
    keys = {p: b.verify_key for p, b in h.bots.items()}
    assert dict(h.game.verify_keys) == keys
    assert h.view(None)["keys"] == keys


def test_another_players_key_cannot_be_published_as_ones_own() -> None:
    h = Harness(2)
    player = h.game.waiting[0]
    other = next(p for p in h.bots if p != player)
    # the other seat's signing key: what a player (or the server) holding it would sign with
    thief = HeuristicBot(player, signing_key=h.bots[other].signing_key)
    actions = h.table.actions(h.local.state, player)
    command = dict(thief.choose(h.view(player), actions, h.rng))
    assert h.refused(player, command) == "bad_signature"


def test_a_seat_is_taken_only_with_a_key() -> None:
    table = Table(GAME)
    with pytest.raises(Rejection) as refused:
        table.create("g1", "a", {}, seats=2)
    assert refused.value.code == ErrorCode.KEY_REQUIRED
    state = table.replay(table.create("g1", "a", {}, seats=2, key="a" * 64))
    with pytest.raises(Rejection) as refused:
        table.join(state, "b", random.Random(1))
    assert refused.value.code == ErrorCode.KEY_REQUIRED
    with pytest.raises(Rejection) as refused:  # two seats cannot share one key
        table.join(state, "b", random.Random(1), key="a" * 64)
    assert refused.value.code == ErrorCode.BAD_REQUEST
