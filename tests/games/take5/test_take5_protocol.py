"""The protocol's messages: a scripted game message by message, and random games against the
protocol's grammar (message shapes and message loop)."""

from __future__ import annotations

import random
from typing import Any

from cardroom_engine.simulate import play
from cardroom_games.take5 import GAME, Take5Config, standard_bull
from take5_support import (
    check_message,
    check_sequence,
    command,
    game_messages,
    scripted_table,
)


def c(face: int, bull: int) -> dict[str, int]:
    return {"face": face, "bull": bull}


BOARD_1 = {"A": [c(10, 3)], "B": [c(20, 3)], "C": [c(30, 3)], "D": [c(40, 3)]}
BOARD_2 = {"A": [c(3, 1), c(12, 1)], "B": [c(20, 3)], "C": [c(30, 3)], "D": [c(40, 3)]}
PLAYED_1 = [{"id": 0, "card": c(3, 1)}, {"id": 1, "card": c(12, 1)}]
PLAYED_2 = [{"id": 0, "card": c(25, 2)}, {"id": 1, "card": c(26, 1)}]
TAKEN_1 = {"id": 0, "stack": [c(10, 3)]}
TAKEN_2 = {"id": 1, "stack": [c(20, 3), c(25, 2)]}
GAME_OVER = [{"player": 0, "score": 3}, {"player": 1, "score": 5}]


def test_a_scripted_game_sends_exactly_the_seeds_messages() -> None:
    """ann (id 0) and bob (id 1); rows of at most 2 cards, 2 turns, the game ends at 2."""
    rng = random.Random(0)
    config = {"turn_count": 2, "stack_size": 2, "win_score": 2}
    local = scripted_table(
        ["ann", "bob"], {"ann": [3, 25], "bob": [12, 26]}, [10, 20, 30, 40], config
    )
    # turn 1: bob plays first; nobody learns anything until ann has played too
    before = len(local.steps)
    command(local, "bob", {"type": "play_response", "data": c(12, 1)}, rng)
    assert [s.notifications for s in local.steps[before:]] == [{}]
    command(local, "ann", {"type": "play_response", "data": c(3, 1)}, rng)
    # 3 is below every row: ann chooses (the game waits for her)
    assert local.table.actions(local.state, "ann") == [
        {"type": "choose_response", "data": name} for name in "ABCD"
    ]
    command(local, "ann", {"type": "choose_response", "data": "A"}, rng)
    # turn 2: 25 joins B, 26 is the third card of B (stack_size 2): bob takes 20 and 25
    command(local, "ann", {"type": "play_response", "data": c(25, 2)}, rng)
    command(local, "bob", {"type": "play_response", "data": c(26, 1)}, rng)
    assert local.state.status == "finished"

    ann = game_messages(local.seen_by("ann"))
    bob = game_messages(local.seen_by("bob"))
    assert ann == [
        {"type": "deal", "data": [c(3, 1), c(25, 2)]},
        {"type": "play_request", "data": BOARD_1},
        {"type": "played", "data": PLAYED_1},
        {"type": "choose_request", "data": BOARD_1},
        {"type": "taken", "data": TAKEN_1},
        {"type": "play_request", "data": BOARD_2},
        {"type": "played", "data": PLAYED_2},
        {"type": "taken", "data": TAKEN_2},
        {"type": "game_over", "data": GAME_OVER},
    ]
    assert bob == [
        {"type": "deal", "data": [c(12, 1), c(26, 1)]},
        {"type": "play_request", "data": BOARD_1},
        {"type": "played", "data": PLAYED_1},
        {"type": "taken", "data": TAKEN_1},
        {"type": "play_request", "data": BOARD_2},
        {"type": "played", "data": PLAYED_2},
        {"type": "taken", "data": TAKEN_2},
        {"type": "game_over", "data": GAME_OVER},
    ]
    cfg = Take5Config.model_validate(config)
    for messages in (ann, bob):
        for message in messages:
            check_message(message, cfg, 2)
        assert check_sequence(messages, cfg) == 1
    outcome = local.outcome
    assert outcome is not None
    assert outcome.scores == {"ann": 3, "bob": 5}
    assert outcome.ranking == [["ann"], ["bob"]]
    # each notification batch is one event: the protocol's "send to each player" steps
    kinds = [s.event["type"] for s in local.steps if s.notifications]
    assert kinds == [
        "table.started",
        "take5.dealt",
        "take5.turn_started",
        "take5.plays_revealed",
        "take5.choice_requested",
        "take5.row_taken",
        "take5.turn_started",
        "take5.plays_revealed",
        "take5.row_taken",
        "take5.game_ended",
        "table.finished",
    ]


def test_played_lists_cards_in_ascending_face_order_whoever_played_first() -> None:
    rng = random.Random(0)
    hands = {"p0": [90], "p1": [15], "p2": [50], "p3": [33]}
    local = scripted_table(list(hands), hands, [10, 20, 30, 40], {"turn_count": 1})
    for player in ("p2", "p0", "p3", "p1"):
        face = hands[player][0]
        command(local, player, {"type": "play_response", "data": c(face, standard_bull(face))}, rng)
    played = next(s for s in local.steps if s.event["type"] == "take5.plays_revealed")
    assert [(e["id"], e["card"]["face"]) for e in played.notifications["p0"]["data"]] == [
        (1, 15),
        (3, 33),
        (2, 50),
        (0, 90),
    ]
    assert len({str(m) for m in played.notifications.values()}) == 1  # the same to all


def test_random_games_follow_the_seed_grammar() -> None:
    for seed in range(60):
        rng = random.Random(seed)
        players = rng.randint(2, 6)
        seats = [f"s{i}" for i in range(players)]
        config: dict[str, Any] = {
            "turn_count": rng.randint(1, 10),
            "stack_size": rng.randint(1, 6),
            "win_score": rng.choice([5, 10, 20]),
        }
        cfg = Take5Config.model_validate(config)
        local = play(GAME, seats, rng, config)
        rounds = set()
        for player in seats:
            messages = game_messages(local.seen_by(player))
            for message in messages:
                check_message(message, cfg, players)
            rounds.add(check_sequence(messages, cfg))
        assert rounds == {game_state_round(local)}


def game_state_round(local: Any) -> int:
    return int(local.state.game.round)
