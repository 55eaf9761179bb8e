"""No plaintext of a hidden card, anywhere: the event store (what the server holds), every
notification of every player, and every view (players and a spectator) after every event,
judged by the independent entitlement model of ``macaua_leakmodel``. The server never gets
the key that would open a hidden card either."""

from __future__ import annotations

from typing import Any

import pytest
from cardroom_engine import TableState
from cardroom_games.macaua import HeuristicBot, RandomMacauaBot
from macaua_leakmodel import LeakModel, all_keys, mentioned, truth
from macaua_support import SHORT_PILE_HANDS, Harness, rigged_game


def check_game(h: Harness) -> LeakModel:
    events = [s.event for s in h.local.steps]
    game_events = [e for e in events if e["type"].startswith("macaua.")]
    model = LeakModel(h.seats, truth(game_events, h.seats), h.game.config.hand_size)
    keys = all_keys(game_events)
    state: TableState | None = None
    for step in h.local.steps:
        state = h.table.evolve(state, step.event)
        event = step.event
        where = f"v{step.version} {event['type']}"
        first = model.hides(event)
        if not first and event["type"].startswith("macaua."):
            model.apply(event)
        model.scan(f"store {where}", None, event)
        model.check_keys(where, event, keys)
        for player, message in step.notifications.items():
            model.scan(f"note {where}", player, message)
        if first:
            model.apply(event)
        if state.status == "playing":
            for observer in [*h.seats, None]:
                view: dict[str, Any] = h.table.view(state, observer)
                model.scan(f"view {where}", observer, view)
                if observer is not None:
                    model.scan(f"actions {where}", observer, h.table.actions(state, observer))
    return model


@pytest.mark.parametrize(("players", "seed", "bot"), [(2, 1, "h"), (3, 2, "r"), (6, 3, "m")])
def test_nobody_sees_a_hidden_card(players: int, seed: int, bot: str) -> None:
    kinds = {"h": [HeuristicBot], "r": [RandomMacauaBot], "m": [HeuristicBot, RandomMacauaBot]}
    h = Harness(players, {"max_turns": 300}, seed=seed, bot=kinds[bot])  # bounded time
    h.finish()
    assert h.local.outcome is not None
    model = check_game(h)
    assert model.problems == []
    assert model.audited


def test_nobody_sees_a_hidden_card_across_reshuffles() -> None:
    """A deal whose fresh pile runs out at once: decks 1, 2, ... are re-shuffled discards."""
    hands = [list(hand) for hand in SHORT_PILE_HANDS]
    h = rigged_game(hands, "5S", config={"hand_size": 8, "max_turns": 40})  # 5 fresh cards
    h.play("p0", ["BJ", "RJ"])
    h.draw("p1")  # 10: the fresh pile, then a re-shuffle
    assert len(h.game.decks) == 2
    h.finish()
    model = check_game(h)
    assert model.problems == []


def test_the_scan_finds_a_planted_leak() -> None:
    """The model is not vacuous: a hand card's code or point in a message is caught."""
    h = Harness(2, seed=5)
    h.to_play()
    h.finish()
    events = [s.event for s in h.local.steps if s.event["type"].startswith("macaua.")]
    model = LeakModel(h.seats, truth(events, h.seats))
    for event in events:
        model.apply(event)
        if event["type"] == "macaua.reveal" and model.deal_reveals == len(h.seats):
            break
    p1_pos = next(
        pos for pos, owner in model.owner.items() if owner == "p1" and pos in model.hidden
    )
    secret = model.truth[p1_pos]
    model.scan("planted", "p0", {"type": "x", "card": secret})
    model.scan("planted", None, {"type": "x", "blob": f"zz{mentioned_point(secret)}zz"})
    model.scan("fine", "p1", {"type": "x", "card": secret})  # its owner may know it
    assert [p.split(":")[0] for p in model.problems] == ["planted", "planted"]
    # the owner's key of a hidden hand card reaching the server is caught too
    keys = all_keys(events)
    owner_key = keys[("p1", *p1_pos)]
    model.check_keys("planted-key", {"type": "macaua.reveal", "keys": [owner_key]}, keys)
    assert any(p.startswith("planted-key") for p in model.problems)


def mentioned_point(card: str) -> str:
    from cardroom_mentalpoker import card_point

    hexed = card_point(card).hex()
    assert mentioned({"x": hexed}) == {card}
    return hexed
