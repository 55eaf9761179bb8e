"""The information-set search bot on take5 (cardroom_engine.search, take5's determinizer).

- Every determinization is consistent with what the player knows: the player's own view of
  the sampled state is exactly its view of the true state, while the others' hidden cards
  vary between samples.
- It reads nothing its player may not see: two true states that the player cannot tell
  apart (the same view, the same notifications) get the same choice.
- Its moves are legal, and whole games with it finish; it searches the iterations it is
  given. (Its strength is shown by the tournaments of ``make strength``.)
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from cardroom_engine import RandomBot, Table
from cardroom_engine.search import SearchBot
from cardroom_engine.simulate import LocalGame, bots_chooser, new_game, play
from cardroom_games.take5 import GAME, Take5State
from cardroom_games.take5.search import Take5Determinizer, search_bot

SEATS = ["a", "b", "c", "d"]


def _positions(seed: int, count: int) -> list[tuple[LocalGame, str]]:
    """Mid-game positions (a table, the player who must act) reached by random play."""
    rng = random.Random(seed)
    local = new_game(GAME, SEATS, rng, {"win_score": 30})
    table: Table = local.table
    found: list[tuple[LocalGame, str]] = []
    while local.state.status == "playing" and len(found) < count:
        movers = [(p, a) for p in SEATS if (a := table.actions(local.state, p))]
        player, actions = rng.choice(movers)
        if rng.random() < 0.3:
            found.append((LocalGame(table, local.state, list(local.steps)), player))
        local.apply(table.decide(local.state, player, rng.choice(actions), rng, gate_open=True))
        local.settle(rng)
    return found


def _determinizer(local: LocalGame, player: str) -> Take5Determinizer:
    d = Take5Determinizer(player)
    for message in local.seen_by(player):
        d.observe(message)
    return d


def test_every_sample_looks_to_the_player_exactly_as_the_truth() -> None:
    checked = 0
    for seed in range(6):
        for local, player in _positions(seed, 8):
            truth: Take5State = local.state.game
            view = local.table.view(local.state, player)
            d = _determinizer(local, player)
            hidden: set[tuple[Any, ...]] = set()
            for i in range(12):
                sample = d.sample(view, player, random.Random(i))
                assert GAME.view(sample, player) == GAME.view(truth, player)
                others = tuple(
                    h for s, h in zip(truth.seats, sample.hands, strict=True) if s != player
                )
                hidden.add((others, sample.plays))
                # the cards are a deal: nobody holds a card twice, nor one seen elsewhere
                held = [f for h in sample.hands for f in h] + [f for f in sample.plays if f]
                on_board = [f for row in sample.rows for f in row]
                assert len(set(held)) == len(held)
                assert not set(held) & set(on_board)
                assert not set(held) & (
                    d.seen - {f for h in sample.hands for f in h} - set(sample.plays)
                )
                assert [len(h) for h in sample.hands] == [len(h) for h in truth.hands]
            if any(
                len(h) > 1 for s, h in zip(truth.seats, truth.hands, strict=True) if s != player
            ):
                assert len(hidden) > 1, "the others' hidden cards never vary"
            checked += 1
    assert checked > 20


def test_the_choice_depends_only_on_what_the_player_knows() -> None:
    """The same position seen by the player, with the others' hands dealt differently."""
    local, player = next((lo, p) for lo, p in _positions(3, 30) if lo.state.game.phase == "play")
    truth: Take5State = local.state.game
    me = truth.seats.index(player)
    rng = random.Random(9)
    # deal the others' cards otherwise: same sizes, from the same unseen cards
    others = [i for i in range(len(truth.seats)) if i != me]
    pool = [f for i in others for f in truth.hands[i]]
    rng.shuffle(pool)
    hands = list(truth.hands)
    for i in others:
        hands[i], pool = tuple(sorted(pool[: len(truth.hands[i])])), pool[len(truth.hands[i]) :]
    other_truth = truth._replace(hands=tuple(hands))
    assert other_truth != truth
    assert GAME.view(other_truth, player) == GAME.view(truth, player)
    twin = dataclasses.replace(local.state, game=other_truth)
    choices = []
    for state in (local.state, twin):
        bot = search_bot(player, iterations=60)
        for message in local.seen_by(player):
            bot.observe(message)
        view = local.table.view(state, player)
        actions = local.table.actions(state, player)
        choices.append(bot.choose(view, actions, random.Random(4)))
    assert choices[0] == choices[1]


def test_search_bots_play_legal_whole_games() -> None:
    rng = random.Random(5)
    made: dict[str, Any] = {
        "a": search_bot("a", iterations=15),
        "b": search_bot("b", iterations=15),
        "c": RandomBot("c"),
    }
    local = play(
        GAME,
        ["a", "b", "c"],
        rng,
        {"win_score": 20},
        choose=bots_chooser(GAME, dict.fromkeys(made, "random"), made),
    )
    assert local.state.status == "finished"
    bot = made["a"]
    assert isinstance(bot, SearchBot)
    assert bot.searched == 15 or bot.searched == 0


def test_a_time_budget_bounds_the_search() -> None:
    local, player = next(
        (lo, p) for lo, p in _positions(1, 30) if len(lo.table.actions(lo.state, p)) > 1
    )
    bot = SearchBot(player, GAME, _determinizer(local, player), budget=0.05)
    choice = bot.choose(
        local.table.view(local.state, player),
        local.table.actions(local.state, player),
        random.Random(0),
    )
    assert choice in local.table.actions(local.state, player)
    assert bot.searched >= 1
