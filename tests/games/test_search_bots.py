"""The search bots of all four games, small and in memory: legal, and blind to what is hidden.

For take5, papas and the 66 game (whose search runs on their own rules):

- a few short games with two search bots at a small strength: every choice is one of the
  legal actions, and the games finish;
- the choice reads nothing its player may not see: at positions of random play, a second
  true state that the player cannot tell from the first (a determinization of its own view:
  the others' hidden cards dealt otherwise, asserted to look the same to the player) gets
  the same choice from a bot fed the same notifications.

For Macaua (whose search runs on a light model of the flow, on open cards):

- a few short games through the real rules and cryptography, search bots against the
  heuristic bot: every move is accepted by the rules, the search chose among the real plays;
- what the search is handed is exactly the public part of the player's view and the codes
  of the cards its own keys opened, nothing else; a model state and
  a twin with the others' cards dealt otherwise look the same to the player and get the same
  choice; every determinization agrees with what the player knows.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from cardroom_engine import Bot, RandomBot, registry
from cardroom_engine.search import SearchBot
from cardroom_engine.simulate import LocalGame, bots_chooser, new_game, play
from cardroom_games.macaua import GAME as MACAUA
from cardroom_games.macaua import HeuristicBot as MacauaHeuristic
from cardroom_games.macaua import legal_first
from cardroom_games.macaua.config import weak_proofs
from cardroom_games.macaua.search import (
    MODEL,
    MacauaDeterminizer,
    MacauaSearchBot,
    Plain,
    plain_of,
    plain_view,
)
from cardroom_games.papas import HeuristicBot as PapasHeuristic
from cardroom_games.papas.search import rollout_view
from cardroom_games.sixtysix.search import SixtySixDeterminizer
from cardroom_mentalpoker import MACAUA_CARDS
from cardroom_runtime.games import load_games

load_games()
OWN_RULES = ["take5", "papas", "sixtysix"]
SEATS = ["a", "b", "c"]
CONFIGS: dict[str, dict[str, Any]] = {
    "take5": {"win_score": 20},
    "papas": {"reaction_seconds": 1.0},
    "sixtysix": {},
}


def test_every_game_has_a_search_bot() -> None:
    assert {"take5", "papas", "sixtysix", "macaua"} <= {
        name for name in registry.names() if "search" in registry.get(name).bots
    }


def _small(game: str, player: str, iterations: int) -> Any:
    bot = registry.get(game).bots["search"](player)
    assert isinstance(bot, SearchBot)
    bot.iterations = iterations
    return bot


@pytest.mark.parametrize("game", OWN_RULES)
def test_short_games_with_search_bots_make_only_legal_moves(game: str) -> None:
    rules = registry.get(game)
    made: dict[str, Bot] = {p: _small(game, p, 12) for p in SEATS[:2]}
    made[SEATS[2]] = RandomBot(SEATS[2])
    inner = bots_chooser(rules, dict.fromkeys(SEATS, "random"), made)
    searched = 0

    def checked(
        local: LocalGame, player: str, actions: list[dict[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        nonlocal searched
        choice = inner(local, player, actions, rng)
        assert choice in actions, f"{game}: {choice} is not a legal action of {player}"
        searched += player in ("a", "b") and len(actions) > 1
        return choice

    local = play(rules, SEATS, random.Random(11), CONFIGS[game], choose=checked)
    assert local.state.status == "finished"
    assert searched > 5


def _positions(game: str, seed: int, count: int) -> list[tuple[LocalGame, str]]:
    """Positions of random play where a player must choose among several actions."""
    rules = registry.get(game)
    rng = random.Random(seed)
    local = new_game(rules, SEATS, rng, CONFIGS[game])
    table = local.table
    found: list[tuple[LocalGame, str]] = []
    for _ in range(2000):
        if local.state.status != "playing" or len(found) >= count:
            break
        movers = [(p, a) for p in SEATS if (a := table.actions(local.state, p))]
        if not movers:
            due = rules.deadline(local.state.game)
            assert due is not None
            local.apply(table.timeout(local.state, due.key, rng))
            local.settle(rng)
            continue
        player, actions = rng.choice(movers)
        if len(actions) > 1 and rng.random() < 0.4:
            found.append((LocalGame(table, local.state, list(local.steps)), player))
        local.apply(table.decide(local.state, player, rng.choice(actions), rng, gate_open=True))
        local.settle(rng)
    return found


@pytest.mark.parametrize("game", OWN_RULES)
def test_the_choice_is_the_same_in_true_states_the_player_cannot_tell_apart(game: str) -> None:
    rules = registry.get(game)
    compared = differed = 0
    for local, player in _positions(game, 5, 4):
        truth = local.state.game
        view = local.table.view(local.state, player)
        maker = _small(game, player, 24)
        for message in local.seen_by(player):
            maker.observe(message)
        # another true state: the hidden cards dealt otherwise, the same to this player
        twin_game = maker.determinizer.sample(view, player, random.Random(99))
        assert rules.view(twin_game, player) == rules.view(truth, player)
        twin = dataclasses.replace(local.state, game=twin_game)
        assert local.table.view(twin, player) == view
        differed += twin_game != truth
        choices = []
        for state in (local.state, twin):
            bot = _small(game, player, 24)
            for message in local.seen_by(player):
                bot.observe(message)
            actions = local.table.actions(state, player)
            choices.append(bot.choose(local.table.view(state, player), actions, random.Random(4)))
        assert choices[0] == choices[1]
        compared += 1
    assert compared >= 3
    assert differed >= 1, "the twins never differed from the truth"


def test_the_66_determinizer_counts_every_unseen_card_exactly() -> None:
    """The cards it deals are exactly the ones the player has not seen (its hand, the
    others' known cards, the discard top, the drawn card and the buried discards counted
    from the notifications): as many as the unknown hand positions and the deck."""
    rules = registry.get("sixtysix")
    checked = 0
    for protocol in ("v1", "v2"):
        CONFIGS["sixtysix"] = {"protocol": protocol}
        try:
            for seed in range(6):
                for local, player in _positions("sixtysix", seed, 6):
                    d = SixtySixDeterminizer(player)
                    for message in local.seen_by(player):
                        d.observe(message)
                    g = local.table.view(local.state, player)["state"]
                    need = sum(v is None for h in g["hands"] for v in h) + g["deckSize"]
                    assert len(d.unseen(g)) == need
                    assert d.phase(g) == local.state.game.phase
                    sample = d.sample(g, player, random.Random(seed))
                    assert rules.view(sample, player) == rules.view(local.state.game, player)
                    checked += 1
        finally:
            CONFIGS["sixtysix"] = {}
    assert checked >= 20


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_the_66_stop_counts_are_the_stops_the_others_made(protocol: str) -> None:
    """The rollouts play the others stopping as often as they were seen to: the counts come
    from the notifications and are the true stops of every other player."""
    rules = registry.get("sixtysix")
    kinds = {"a": "heuristic", "b": "random", "c": "heuristic"}
    local = play(
        rules, SEATS, random.Random(3), {"protocol": protocol}, choose=bots_chooser(rules, kinds)
    )
    d = SixtySixDeterminizer("a")
    for message in local.seen_by("a"):
        d.observe(message)
    stops = Counter(
        s.event["player"] for s in local.steps if s.event["type"] == "sixtysix.round_stopped"
    )
    assert sum(stops.values()) > 0
    assert d.stops == {seat: n for seat, n in stops.items() if seat != 0}
    assert all(d.turns.get(seat, 0) >= n for seat, n in d.stops.items())
    assert d.stop_rate(1) > d.stop_rate(2)  # the random player stops far more often


def test_papas_rollout_view_is_the_view_the_heuristic_reads() -> None:
    """The playouts' cheap view of a seat holds exactly the full view's values in every field
    it has, and the heuristic bot chooses the same from both."""
    rules = registry.get("papas")
    compared = 0
    for seed in range(4):
        for local, _ in _positions("papas", seed, 10):
            truth = local.state.game
            for player in SEATS:
                actions = rules.actions(truth, player)
                if not actions:
                    continue
                full = rules.view(truth, player)
                cheap = rollout_view(truth, player)
                for field, value in cheap.items():
                    if field == "seats":
                        assert list(value) == full[field]
                    elif field in ("play", "selection") and value is not None:
                        assert value.items() <= full[field].items()
                    else:
                        assert value == full[field], field
                bot = PapasHeuristic(player)
                choices = [bot.choose(v, actions, random.Random(seed)) for v in (full, cheap)]
                assert choices[0] == choices[1]
                compared += 1
    assert compared >= 20


# -- Macaua ---------------------------------------------------------------------------------

MACAUA_CONFIG = {"shuffle_proof": "rounds", "shuffle_rounds": 0, "hand_size": 4, "max_turns": 60}


class _Watched(MacauaSearchBot):
    """A search bot whose searches the test checks: what it was handed, what it chose."""

    def __init__(self, player: str) -> None:
        super().__init__(player, iterations=30)
        self.handed: list[tuple[dict[str, Any], dict[str, Any], list[str]]] = []

    def choose_play(self, v: Mapping[str, Any], plays: Any, rng: random.Random) -> dict[str, Any]:
        self.last_plain = None
        move = super().choose_play(v, plays, rng)
        if self.last_plain is not None:  # it searched (it has a play)
            codes = [code for _, code in self.open_hand(v)]
            self.handed.append((dict(v), dict(self.last_plain), codes))
        if move["kind"] == "play":
            chosen = [c["card"] for c in move["cards"]]
            assert chosen in [[code for _, code in play] for play in plays]
        return move


PLAIN_FIELDS = {
    "seats",
    "me",
    "hand",
    "discard",
    "declared",
    "challenge",
    "turn",
    "turns",
    "hand_counts",
    "fresh",
}


def _macaua_game(seed: int) -> int:
    """One short game (two search bots, one heuristic); the searches it checked."""
    seats = ["p0", "p1", "p2"]
    bots: dict[str, Any] = {"p0": _Watched("p0"), "p1": _Watched("p1")}
    bots["p2"] = MacauaHeuristic("p2")
    chooser = bots_chooser(MACAUA, dict.fromkeys(seats, "heuristic"), bots)
    searched = 0

    def checked(
        local: LocalGame, player: str, actions: list[dict[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        nonlocal searched
        bot = bots[player]
        before = len(getattr(bot, "handed", ()))
        move = chooser(local, player, actions, rng)
        if isinstance(bot, _Watched) and len(bot.handed) > before:
            _, plain, codes = bot.handed[-1]
            public = local.table.view(local.state, player)["state"]
            # what its keys opened: as many cards as it holds, none of them played
            assert len(codes) == public["hand_counts"][player]
            assert not set(codes) & set(public["discard"])
            # the search was handed the public view and those cards, nothing else
            assert set(plain) == PLAIN_FIELDS
            assert plain == plain_view(public, player, codes)
            searched += 1
        return move

    with weak_proofs():  # (unproved shuffles: the same play, far less cryptography)
        local = play(
            MACAUA,
            seats,
            random.Random(seed),
            MACAUA_CONFIG,
            choose=checked,
            keys={p: b.verify_key for p, b in bots.items()},
        )
    assert local.state.status == "finished"
    assert local.state.game.result in ("won", "turn_limit")
    return searched


def test_short_macaua_games_with_search_bots_are_legal_and_see_only_their_hands() -> None:
    assert _macaua_game(1) + _macaua_game(2) >= 4


def _model_position(seed: int) -> tuple[Plain, str]:
    rng = random.Random(seed)
    cards = list(MACAUA_CARDS)
    rng.shuffle(cards)
    seats = ("a", "b", "c")
    hands = (tuple(cards[0:5]), tuple(cards[5:9]), tuple(cards[9:15]))
    discard = tuple(cards[15:20])
    return Plain(seats, hands, tuple(cards[20:]), discard, turn=0), "a"


def test_macaua_determinizations_agree_with_what_the_player_knows() -> None:
    for seed in range(10):
        truth, player = _model_position(seed)
        known = plain_of(truth, player)
        d = MacauaDeterminizer(player)
        hidden = set()
        for k in range(6):
            sample = d.sample(known, player, random.Random(k))
            assert plain_of(sample, player) == known
            everything = [c for h in sample.hands for c in h] + list(sample.fresh)
            assert Counter(everything) + Counter(sample.discard) == Counter(MACAUA_CARDS)
            hidden.add(sample.hands[1:])
        assert len(hidden) > 1


def test_a_macaua_draw_says_the_drawer_held_nothing_it_could_play() -> None:
    """Read from the public moves: an opponent who drew on a 7 of hearts held no heart, no 7,
    no Ace and no Joker; the cards it kept from then (its count less what it was dealt
    since) are dealt from those that could not be played."""
    truth, player = _model_position(1)
    top = truth.discard[-1]
    d = MacauaDeterminizer(player)
    d.observe({"type": "MacauaUpdate", "event": "reveal", "top": top})
    d.observe({"type": "MacauaUpdate", "event": "draw", "player": "b", "count": 1})
    d.observe({"type": "MacauaUpdate", "event": "draw_assigned", "player": "b", "count": 1})
    known = plain_of(truth, player)
    for k in range(20):
        sample = d.sample(known, player, random.Random(k))
        assert plain_of(sample, player) == known
        unplayable = [c for c in sample.hands[1] if not legal_first(c, top, None, 0)]
        assert len(unplayable) >= len(truth.hands[1]) - 1
    # a player who has not drawn is dealt anything
    free = [d.sample(known, player, random.Random(k)).hands[2] for k in range(20)]
    assert any(legal_first(c, top, None, 0) for hand in free for c in hand)


def test_the_macaua_choice_is_the_same_in_model_states_the_player_cannot_tell_apart() -> None:
    for seed in range(4):
        truth, player = _model_position(seed)
        others = [c for h in truth.hands[1:] for c in h] + list(truth.fresh)
        random.Random(seed).shuffle(others)
        twin = truth._replace(
            hands=(truth.hands[0], tuple(others[:4]), tuple(others[4:10])),
            fresh=tuple(others[10:]),
        )
        assert twin != truth
        assert plain_of(twin, player) == plain_of(truth, player)
        choices = []
        for state in (truth, twin):
            bot = MacauaSearchBot(player, iterations=40)
            options = MODEL.actions(state, player)
            choices.append(bot.search.choose(plain_of(state, player), options, random.Random(3)))
        assert choices[0] == choices[1]
