"""The leak property: over thousands of random games nobody sees another player's hand, an
undealt card or a play before ``played``, in a notification, a view or the legal actions.

Notifications are checked against the protocol's grammar exactly (so a card is the only place a
secret could hide) and every card in them against the recipient's hidden set. Views are
checked the same way and, more strongly, counterfactually: re-dealing everything a player
cannot see (the others' hands and unrevealed plays, the undealt cards) must not change that
player's view or actions by a single byte.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from cardroom_engine import Rejection
from cardroom_games.take5 import GAME, Take5Config, Take5State
from take5_support import check_message, faces_in

GAMES = 2000


def _config(rng: random.Random, players: int) -> dict[str, Any]:
    turn_count = rng.randint(1, 3)
    config: dict[str, Any] = {
        "turn_count": turn_count,
        "stack_size": rng.randint(1, 3),
        "win_score": rng.randint(2, 6),
    }
    if rng.random() < 0.5:  # a small deck, so every card matters
        config["deck_size"] = rng.randint(turn_count * players + 4, 40)
    if rng.random() < 0.2:
        config["bull_range"] = [2, 4]
        config["bulls"] = [rng.randint(2, 4) for _ in range(config.get("deck_size", 104))]
    return config


def _hidden(state: Take5State, undealt: frozenset[int], seat: int | None) -> set[int]:
    """Faces that ``seat`` (None: a spectator) may not see now."""
    hidden = set(undealt)
    for other, hand in enumerate(state.hands):
        if other != seat:
            hidden.update(hand)
            play = state.plays[other]
            if play is not None:
                hidden.add(play)
    return hidden


def _scramble(
    state: Take5State, undealt: frozenset[int], seat: int | None, rng: random.Random
) -> Take5State:
    """Re-deal what ``seat`` cannot see: the others' hands and plays, from the hidden pool."""
    pool = sorted(_hidden(state, undealt, seat))
    rng.shuffle(pool)
    hands = list(state.hands)
    plays = list(state.plays)
    for other in range(len(hands)):
        if other == seat:
            continue
        size = len(hands[other])
        hands[other], pool = tuple(sorted(pool[:size])), pool[size:]
        if plays[other] is not None:
            plays[other], pool = pool[0], pool[1:]
    return state._replace(hands=tuple(hands), plays=tuple(plays))


def _observers(state: Take5State) -> list[str | None]:
    return [*state.seats, None]


def _random_game(seed: int) -> Iterator[tuple[Take5State, dict[str, Any], Take5State]]:
    """Play one game with random moves (and some timeouts); yield every transition."""
    rng = random.Random(seed)
    players = rng.choice([2, 2, 3, 3, 4, 5, 6])
    config = Take5Config.model_validate(_config(rng, players))
    state = GAME.setup(config, [f"p{i}" for i in range(players)])
    pending = GAME.start(state, rng)
    while True:
        for event in pending:
            after = GAME.evolve(state, event)
            yield state, event, after
            state = after
        if state.phase == "over":
            return
        pending = GAME.follow_up(state, rng)
        if pending:
            continue
        deadline = GAME.deadline(state)
        assert deadline is not None  # the game waits for someone: there is a turn window
        if rng.random() < 0.03:
            pending = GAME.on_timeout(state, deadline.key, rng)
            continue
        movers = [(p, a) for p in state.seats if (a := GAME.actions(state, p))]
        player, actions = rng.choice(movers)
        pending = GAME.decide(state, player, rng.choice(actions), rng)


def _check_view(
    state: Take5State, undealt: frozenset[int], observer: str | None, rng: random.Random
) -> None:
    seat = None if observer is None else state.seat(observer)
    view = GAME.view(state, observer)
    json.dumps(view)  # a view is JSON
    hidden = _hidden(state, undealt, seat)
    assert not faces_in(view) & hidden, observer
    other = _scramble(state, undealt, seat, rng)
    assert GAME.view(other, observer) == view, observer
    if observer is not None:
        actions = GAME.actions(state, observer)
        assert not faces_in(actions) & hidden
        assert GAME.actions(other, observer) == actions


def _check_game(seed: int, views: float) -> int:
    """Check one game's notifications (all) and views (this share of its transitions)."""
    rng = random.Random(-seed)
    undealt: frozenset[int] = frozenset()
    events = 0
    for before, event, after in _random_game(seed):
        events += 1
        cfg = after.config
        if event["type"] == "take5.dealt":
            dealt = {f for hand in after.hands for f in hand} | {r[0] for r in after.rows}
            undealt = frozenset(range(1, cfg.deck_size + 1)) - dealt
        notes = GAME.notify(before, event, after)
        assert set(notes) <= set(after.seats)
        if event["type"] == "take5.card_played":
            assert notes == {}  # nobody hears of a secret play
        secret = _hidden(after, undealt, None)
        checked: list[tuple[dict[str, Any], set[int]]] = []
        for player, message in notes.items():
            # the same message to several players is checked against the grammar once
            faces = next((f for m, f in checked if m == message), None)
            if faces is None:
                faces = check_message(message, cfg, len(after.seats))
                checked.append((message, faces))
            seat = after.seat(player)
            own = set(after.hands[seat]) | {after.plays[seat]}
            leaked = (faces & secret) - own
            assert not leaked, (seed, event["type"], player, leaked)
        if views >= 1:
            for observer in _observers(after):
                _check_view(after, undealt, observer, rng)
        elif rng.random() < views:
            _check_view(after, undealt, rng.choice(after.seats), rng)
            _check_view(after, undealt, None, rng)
    return events


def test_nobody_sees_a_hidden_card_in_thousands_of_random_games() -> None:
    events = 0
    for seed in range(GAMES):
        # every view of every player after every event in the first games, samples later
        events += _check_game(seed, views=1.0 if seed < 20 else 0.01)
    assert events > GAMES * 10


@pytest.mark.parametrize("seed", range(3))
def test_refusals_are_the_same_whoever_holds_the_card(seed: int) -> None:
    rng = random.Random(seed)
    for before, _event, after in _random_game(seed):
        del before
        if after.phase != "play":
            continue
        for seat, player in enumerate(after.seats):
            if after.plays[seat] is not None:
                continue
            answers = set()
            for face in range(1, after.config.deck_size + 1):
                if face in after.hands[seat]:
                    continue
                command = {
                    "type": "play_response",
                    "data": {"face": face, "bull": after.bulls[face]},
                }
                with pytest.raises(Rejection) as refused:
                    GAME.decide(after, player, command, rng)
                answers.add((refused.value.code, refused.value.message))
            assert answers == {("illegal_move", "that card is not in your hand")}
