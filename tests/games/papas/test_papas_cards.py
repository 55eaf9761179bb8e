"""The 103 cards, the deal, the thresholds, the config and every threesome."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from cardroom_engine import Rejection, Table
from cardroom_engine.simulate import new_game
from cardroom_games.papas import GAME
from cardroom_games.papas import cards as C
from cardroom_games.papas.cards import CARD_NAME, TYPES, threesome_reward
from cardroom_games.papas.commands import threesomes
from cardroom_games.papas.state import PLAYER_TURN, PapasConfig
from papas_testkit import Harness, Pool, make_state

# name: (kind, copies, value, alarm, target) -- the card list, row by row
EXPECTED = {
    "potato": ("potato", 16, 0, False, "none"),
    "duchesses_potatoes": ("potato", 12, 0, False, "none"),
    "french_fries": ("potato", 5, 0, False, "none"),
    "wildcard": ("wildcard", 3, 0, False, "none"),
    "no_dude": ("action", 10, 0, False, "none"),
    "i_told_you_no_dude": ("action", 3, 0, False, "none"),
    "get_off_the_pony": ("action", 5, 2, True, "opponent"),
    "lend_me_a_buck": ("action", 10, 1, False, "opponent"),
    "runaway_potatoes": ("action", 3, 3, False, "none"),
    "harry_potato": ("action", 10, 1, True, "none"),
    "pope_potato": ("action", 3, 3, False, "opponent"),
    "look_ahead": ("action", 3, 3, True, "opponent"),
    "potato_of_the_year": ("action", 5, 2, False, "none"),
    "potato_of_destiny": ("action", 3, 3, False, "opponent"),
    "potato_dawan": ("action", 3, 3, False, "opponent"),
    "jump_to_the_side": ("action", 3, 3, True, "none"),
    "papageddon": ("action", 3, 3, True, "next_player"),
    "spider_potato": ("action", 3, 3, False, "two_players"),
}


def test_the_deck_has_the_103_cards_of_the_rules() -> None:
    assert len(CARD_NAME) == C.DECK_SIZE == 103
    assert Counter(CARD_NAME) == {name: row[1] for name, row in EXPECTED.items()}
    assert len(C.NAMES) == 18
    for name, (kind, copies, value, alarm, target) in EXPECTED.items():
        t = TYPES[name]
        assert (t.kind, t.copies, t.value, t.alarm, t.target) == (
            kind,
            copies,
            value,
            alarm,
            target,
        )
    kinds = Counter(TYPES[n].kind for n in CARD_NAME)
    assert kinds == {"potato": 33, "wildcard": 3, "action": 67}
    assert {TYPES[n].reward for n in ("potato", "duchesses_potatoes", "french_fries")} == {1, 2, 3}
    assert C.card_values((0, 0, 0)) == tuple(TYPES[n].value for n in CARD_NAME)


def test_only_actions_a3_to_a14_may_be_played_alone() -> None:
    assert frozenset(EXPECTED) - C.PLAYABLE == {
        "potato",
        "duchesses_potatoes",
        "french_fries",
        "wildcard",
        "no_dude",
        "i_told_you_no_dude",
    }


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_the_deal_gives_five_cards_each_and_the_rest_is_the_deck(players: int) -> None:
    seats = [f"p{i}" for i in range(players)]
    local = new_game(GAME, seats, random.Random(players))
    state = local.state.game
    assert [len(h) for h in state.hands] == [5] * players
    assert len(state.deck) == 103 - 5 * players
    assert state.discard == ()
    assert sorted(state.deck + sum(state.hands, ())) == list(range(103))
    assert state.phase == PLAYER_TURN
    assert state.active == 0
    assert state.potatoes == (0,) * players
    deal = next(s for s in local.steps if s.event["type"] == "papas.dealt")
    assert sorted(deal.event["deck"]) == list(range(103))  # the permutation is in the event
    for seat, player in enumerate(seats):
        message = deal.notifications[player]
        assert sorted(c["id"] for c in message["hand"]) == sorted(state.hands[seat])
        assert message["hand_counts"] == dict.fromkeys(seats, 5)
        assert message["state"] == "PlayerTurn"
        assert message["active"] == "p0"


@pytest.mark.parametrize(("players", "threshold"), [(2, 8), (3, 8), (4, 6), (5, 6), (6, 5)])
def test_golden_potatoes_needed_depend_on_the_player_count(players: int, threshold: int) -> None:
    seats = [f"p{i}" for i in range(players)]
    assert GAME.setup(PapasConfig(), seats).threshold == threshold
    assert GAME.setup(PapasConfig(win_threshold=3), seats).threshold == 3


def test_config_defaults_and_refusals() -> None:
    config = PapasConfig()
    assert config.reaction_seconds == 7.0
    assert config.wildcard_values == (0, 0, 0)
    assert config.win_threshold is None
    table = Table(GAME)
    created = table.create("g", "a", {"wildcard_values": [3, 0, 2], "reaction_seconds": 2.5})
    assert created[0]["config"]["wildcard_values"] == [3, 0, 2]
    for bad in (
        {"wildcard_values": [4, 0, 0]},
        {"wildcard_values": [0, 0]},
        {"reaction_seconds": 0},
        {"win_threshold": 0},
        {"unknown": 1},
    ):
        with pytest.raises(Rejection) as info:
            table.create("g", "a", bad)
        assert info.value.code == "bad_config"
    with pytest.raises(Rejection):
        table.create("g", "a", {}, seats=7)
    with pytest.raises(Rejection):
        table.create("g", "a", {}, seats=1)


VALUES = C.card_values((0, 0, 0))
WILD_3 = C.card_values((3, 0, 0))  # the first wildcard (id 33) has value 3


@pytest.mark.parametrize(
    ("names", "values", "reward"),
    [
        (["potato"] * 3, VALUES, 1),
        (["duchesses_potatoes"] * 3, VALUES, 2),
        (["french_fries"] * 3, VALUES, 3),
        (["potato", "potato", "wildcard"], VALUES, 1),
        (["potato", "wildcard", "wildcard"], VALUES, 1),
        (["duchesses_potatoes", "duchesses_potatoes", "wildcard"], VALUES, 2),
        (["duchesses_potatoes", "wildcard", "wildcard"], VALUES, 2),
        (["french_fries", "french_fries", "wildcard"], VALUES, 3),
        (["french_fries", "wildcard", "wildcard"], VALUES, 3),
        (["wildcard"] * 3, VALUES, 3),  # three wildcards are french fries
        (["spider_potato", "papageddon", "potato_dawan"], VALUES, 1),  # value 3 each
        (["runaway_potatoes", "runaway_potatoes", "look_ahead"], VALUES, 1),
        (["wildcard", "pope_potato", "potato_of_destiny"], WILD_3, 1),  # config: value 3
        # not threesomes
        (["wildcard", "pope_potato", "potato_of_destiny"], VALUES, 0),  # wildcards are 0
        (["potato", "potato", "duchesses_potatoes"], VALUES, 0),
        (["potato", "duchesses_potatoes", "wildcard"], VALUES, 0),
        (["potato", "potato", "no_dude"], VALUES, 0),
        (["potato_of_the_year"] * 3, VALUES, 0),  # value 2
        (["harry_potato", "lend_me_a_buck", "harry_potato"], VALUES, 0),
        (["no_dude"] * 3, VALUES, 0),
        (["papageddon", "papageddon", "potato"], VALUES, 0),
    ],
)
def test_every_kind_of_threesome(names: list[str], values: tuple[int, ...], reward: int) -> None:
    pool = Pool()
    cards = [pool.take(n) for n in names]
    assert threesome_reward(cards, values) == reward
    assert threesome_reward(cards[:2], values) == 0
    listed = threesomes(cards, values)
    assert bool(listed) == bool(reward)


@pytest.mark.parametrize(
    ("names", "reward"),
    [
        (["potato"] * 3, 1),
        (["duchesses_potatoes"] * 3, 2),
        (["french_fries"] * 3, 3),
        (["potato", "wildcard", "wildcard"], 1),
        (["duchesses_potatoes", "duchesses_potatoes", "wildcard"], 2),
        (["wildcard"] * 3, 3),
        (["spider_potato", "papageddon", "look_ahead"], 1),
    ],
)
def test_a_threesome_scores_when_nobody_interrupts(names: list[str], reward: int) -> None:
    h = Harness(make_state({"a": [*names, "potato_of_the_year"], "b": ["no_dude"], "c": []}))
    cards = [c for c in h.hand("a") if CARD_NAME[c] != "potato_of_the_year"]
    assert {"type": "PlayThreesome", "cards": cards} in GAME.actions(h.state, "a")
    events = h.do("a", {"type": "PlayThreesome", "cards": cards})
    assert h.types(events) == ["papas.threesome_played"]
    assert h.state.phase == "ReactionPhase"
    assert set(cards) <= set(h.state.discard)  # discarded before the reactions
    assert h.potatoes("a") == 0
    # "No dude" cannot cancel a threesome: b is only offered to pass
    assert GAME.actions(h.state, "b") == [{"type": "SkipReaction", "window": 1}]
    assert h.types(h.skip_all()) == [
        "papas.reaction_skipped",
        "papas.reaction_skipped",
        "papas.not_interrupted",
    ]
    assert h.potatoes("a") == reward
    assert h.state.phase == "PlayerTurn"
    assert h.state.active == 0
    assert h.messages("papas.not_interrupted")["b"]["awarded"] == reward


def test_illegal_threesomes_are_refused() -> None:
    h = Harness(make_state({"a": ["potato", "potato", "duchesses_potatoes", "wildcard"], "b": []}))
    hand = list(h.hand("a"))
    h.refuse("a", {"type": "PlayThreesome", "cards": hand[:3]}, "invalid_threesome")
    listed = [a["cards"] for a in GAME.actions(h.state, "a") if a["type"] == "PlayThreesome"]
    assert [sorted(CARD_NAME[c] for c in t) for t in listed] == [["potato", "potato", "wildcard"]]


def test_threesome_actions_are_legal_and_distinct_by_face() -> None:
    rng = random.Random(5)
    for _ in range(300):
        hand = rng.sample(range(103), rng.randint(0, 12))
        values = C.card_values(tuple(rng.choice((0, 3)) for _ in range(3)))
        found = threesomes(hand, values)
        faces = [tuple(sorted((CARD_NAME[c], values[c]) for c in t)) for t in found]
        assert len(faces) == len(set(faces))
        for t in found:
            assert len(set(t)) == 3
            assert set(t) <= set(hand)
            assert threesome_reward(t, values) > 0
        # every legal triple of the hand has its face combination listed
        for i, x in enumerate(hand):
            for j in range(i + 1, len(hand)):
                for y in hand[j + 1 :]:
                    triple = (x, hand[j], y)
                    if threesome_reward(triple, values):
                        face = tuple(sorted((CARD_NAME[c], values[c]) for c in triple))
                        assert face in faces


def test_the_game_object() -> None:
    from cardroom_engine import Registry

    registry = Registry()
    registry.register(GAME)
    assert registry.get("papas") is GAME
    assert (GAME.name, GAME.min_players, GAME.max_players) == ("papas", 2, 6)
    assert GAME.config_model is PapasConfig
