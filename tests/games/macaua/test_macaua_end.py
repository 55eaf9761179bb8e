"""The end of a Macaua game: the first player to empty its hand wins, and the audit that
follows (every player's remaining card keys) cannot take that win away. The audit has a
deadline (``audit_timeout``): who has not published its keys by then ranks last, the game
ends (``forfeited``), and a winner who published its own keys keeps its win and score."""

from __future__ import annotations

from typing import Any

import pytest
from cardroom_engine import Rejection, Table
from cardroom_games.macaua import GAME, MacauaConfig
from cardroom_games.macaua.state import genesis_hash
from cardroom_mentalpoker import (
    MACAUA_CARDS,
    MaskedCard,
    add_key,
    card_point,
    deck_from_json,
    deck_to_json,
    identity,
    prove_shuffle,
    remask,
    shuffle_step,
)
from cardroom_wire import ErrorCode
from macaua_support import Harness, rigged, rigged_game, shuffle_move

ONE_CARD = {"hand_size": 1}
# p0 holds KH and plays it on the 7H: the first hand to empty
HANDS = [["KH"], ["2C"], ["3D"]]


def _audit(h: Harness, player: str) -> None:
    command = h.bot_command(player)
    assert command["move"]["kind"] == "audit"
    h.send(player, command)


def _fire(h: Harness, key: str) -> list[dict[str, Any]]:
    """Fire the table's deadline ``key``; the events it appended."""
    fired = h.table.fire(h.local.state, key, h.rng)
    events = [event for _house, batch in fired for event in batch]
    h.local.apply(events)
    return events


def _won(players: int = 3, config: dict[str, Any] | None = None) -> Harness:
    h = rigged_game(HANDS[:players], "7H", config={**ONE_CARD, **(config or {})})
    h.play("p0", ["KH"])
    assert h.game.phase == "audit"
    assert h.game.winner == "p0"
    return h


def test_the_first_empty_hand_wins_and_the_game_ends_when_everyone_has_audited() -> None:
    h = _won()
    state = h.local.state
    assert state.status == "playing"
    assert h.local.outcome is None  # the keys are not all published yet
    # play is over: nobody may play or draw any more, only publish keys, in any order
    for player in h.seats:
        assert [a["kind"] for a in h.table.actions(state, player)] == ["audit"]
    drawn = h.bots["p1"].sign(h.gview("p1"), {"kind": "draw"})
    assert h.refused("p1", drawn) == ErrorCode.NOT_YOUR_TURN
    (deadline,) = h.table.deadlines(state)
    assert (deadline.key, deadline.seconds) == ("game:audit", 60.0)  # the default
    _audit(h, "p2")  # out of seat order
    assert h.game.waiting == ("p0", "p1")
    assert h.refused("p2", h.bots["p2"].sign(h.gview("p2"), {"kind": "audit", "keys": []})) == (
        ErrorCode.NOT_YOUR_TURN
    )
    # the deadline keeps its key while the audit goes on (so it keeps its first due time)
    assert [d.key for d in h.table.deadlines(h.local.state)] == ["game:audit"]
    _audit(h, "p0")
    _audit(h, "p1")
    assert h.local.state.status == "finished"
    assert h.table.deadlines(h.local.state) == []
    outcome = h.local.outcome
    assert outcome is not None
    assert outcome.details["result"] == "won"
    assert outcome.details["audit"]["ok"] is True
    assert outcome.ranking == [["p0"], ["p1", "p2"]]
    assert outcome.scores == {"p0": 1.0, "p1": 0.0, "p2": 0.0}


@pytest.mark.parametrize(
    "config",
    [
        {},
        # a move timeout used to abort the game here, and the silent loser erased the win
        {"move_timeout": 5},
        {"audit_timeout": 2.5},
    ],
)
def test_a_loser_who_withholds_its_keys_past_the_deadline_ranks_last(
    config: dict[str, Any],
) -> None:
    h = _won(config=config)
    _audit(h, "p0")
    _audit(h, "p2")
    (deadline,) = h.table.deadlines(h.local.state)
    assert deadline.key == "game:audit"
    assert deadline.seconds == config.get("audit_timeout", 60.0)
    assert _fire(h, "game:move:0:p1") == []  # not a live key: nothing happens
    events = _fire(h, deadline.key)
    assert [e["type"] for e in events] == ["macaua.audit_withheld", "table.finished"]
    assert h.local.state.status == "finished"
    outcome = h.local.outcome
    assert outcome is not None
    assert outcome.details["result"] == "forfeited"
    assert outcome.details["winner"] == "p0"
    assert outcome.details["withheld"] == ["p1"]
    assert outcome.ranking == [["p0"], ["p2"], ["p1"]]
    assert outcome.scores == {"p0": 1.0, "p1": -1.0, "p2": 0.0}
    audit = outcome.details["audit"]
    assert audit["withheld"] == audit["at_fault"] == ["p1"]
    assert audit["revealed"] == ["p0", "p2"]
    assert audit["ok"] is False  # not every position could be opened ...
    assert audit["tampered"] is False  # ... but nothing opened shows a cheat
    (deck,) = audit["decks"]
    # sealed by p1's key: its hand and the fresh pile; everything else opened
    assert deck["sealed"] == 1 + len(h.game.fresh)
    assert deck["unreadable"] == 0
    assert deck["extra"] == []
    assert "2C" in deck["missing"]  # p1's card
    assert len(deck["missing"]) == deck["sealed"]
    # the keys come too late: the game is over
    late = h.bots["p1"].sign(h.gview("p1"), {"kind": "audit", "keys": []})
    with pytest.raises(Rejection):
        h.table.decide(h.local.state, "p1", late, h.rng, gate_open=True)
    assert h.gview(None)["withheld"] == ["p1"]


def test_a_winner_who_withholds_its_keys_loses_the_win() -> None:
    h = _won(players=2)
    _audit(h, "p1")
    (deadline,) = h.table.deadlines(h.local.state)
    _fire(h, deadline.key)
    outcome = h.local.outcome
    assert outcome is not None
    assert outcome.details["result"] == "forfeited"
    assert "winner" not in outcome.details
    assert outcome.details["withheld"] == ["p0"]
    assert outcome.ranking == [["p1"], ["p0"]]


def _shuffle_to(h: Harness, player: str, order: list[str]) -> dict[str, Any]:
    """``player``'s shuffle that replaces the deck by fresh encryptions of ``order`` (with
    ``shuffle_rounds = 0`` of the cut-and-choose proof nothing on the way can tell)."""
    bot = h.bots[player]
    v = h.gview(player)
    deck = deck_from_json(v["cards"])
    context = bot.context(v, 0)
    secrets = bot.secrets[0]
    _, honest = shuffle_step(deck, secrets, context=context, rounds=0)
    keyed = tuple(add_key(c, secrets.shuffle_key) for c in deck)
    pk = keyed[0].pk
    out = tuple(remask(MaskedCard(identity(), card_point(c), pk)) for c in order)
    proof = prove_shuffle(
        keyed, out, tuple(range(len(out))), (), context=context + b"|shuffle", rounds=0
    )
    move = shuffle_move(deck_to_json(out), honest, digest=proof.digest.hex(), rounds=0, openings=[])
    return bot.sign(v, move)


def test_a_bad_deck_in_the_published_keys_still_voids_and_the_withholder_ranks_last() -> None:
    # p0 shuffles a deck with two Aces of Spades (no King): one in its own hand, one in
    # p1's; p0 wins with its Ace, p1 and p0 publish their keys, p2 keeps its own
    rest = [c for c in MACAUA_CARDS if c not in ("AS", "KS", "5C", "7S")]
    order = [*rest, "7S", "5C", "AS", "AS"]  # top 50, then the hands of p2, p1, p0
    h = Harness(3, {**ONE_CARD, "shuffle_proof": "rounds", "shuffle_rounds": 0})
    with rigged(list(MACAUA_CARDS)):  # every honest shuffle keeps the order
        h.run(lambda s: s.phase == "shuffle")
        h.send("p0", _shuffle_to(h, "p0", order))
        h.run(lambda s: s.phase == "mask")
    h.to_play()
    assert (h.hand("p0"), h.hand("p1")) == (["AS"], ["AS"])
    h.play("p0", ["AS"], "H")
    assert h.game.winner == "p0"
    _audit(h, "p1")
    _audit(h, "p0")
    _fire(h, "game:audit")
    outcome = h.local.outcome
    assert outcome is not None
    audit = outcome.details["audit"]
    assert audit["tampered"] is True
    assert audit["decks"][0]["extra"] == ["AS"]
    assert outcome.details["result"] == "void"
    assert "winner" not in outcome.details
    assert outcome.ranking == [["p0", "p1"], ["p2"]]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (0, "greater than or equal to 1"),
        (0.5, "greater than or equal to 1"),
        (3601, "less than or equal to 3600"),
        (None, "there is no 'never'"),
        ("30", "valid number"),
        (True, "valid number"),
    ],
)
def test_audit_timeout_is_bounded(value: Any, says: str) -> None:
    table = Table(GAME)
    with pytest.raises(Rejection) as refused:
        table.create("g-bounds", "a", {"audit_timeout": value}, seats=2)
    assert refused.value.code == ErrorCode.BAD_CONFIG
    assert refused.value.message.startswith("audit_timeout: ")
    assert says in refused.value.message


@pytest.mark.parametrize("value", [1, 2.5, 3600])
def test_audit_timeout_within_its_bounds_is_kept(value: float) -> None:
    table = Table(GAME)
    state = table.replay(table.create("g-ok", "a", {"audit_timeout": value}, seats=2, key=KEY))
    assert state.config["audit_timeout"] == value


BINDING = "g-1/" + "0" * 32
KEY = "a" * 64  # the seat's verify key: any 64 lowercase hex characters to the lobby


@pytest.mark.parametrize(
    ("seats", "config", "pinned"),
    [
        # as computed before audit_timeout existed: a game that does not set it hashes the same
        (
            ["a", "b"],
            MacauaConfig(),
            "102977090b2605bc9da2578b4db3d7640c9d45d9e87e5129a4eae877bbad99b9",
        ),
        (
            ["a", "b", "c"],
            MacauaConfig(shuffle_rounds=2, move_timeout=5.0, max_turns=150),
            "e5b15c2a309e51686a1a6dc623d0673b1af0138f8253cdca3810378c7af2b2b9",
        ),
    ],
)
def test_the_genesis_hash_without_audit_timeout_is_unchanged(
    seats: list[str], config: MacauaConfig, pinned: str
) -> None:
    assert genesis_hash(BINDING, seats, config) == pinned
    explicit = config.model_copy(update={"audit_timeout": 60.0})
    assert genesis_hash(BINDING, seats, explicit) == pinned  # the default, spelled out
    other = config.model_copy(update={"audit_timeout": 30.0})
    assert genesis_hash(BINDING, seats, other) != pinned


def test_a_stored_config_keeps_the_cut_and_choose_proof_and_its_genesis_hash() -> None:
    """A config stored before ``shuffle_proof`` existed reads as the cut-and-choose proof and
    hashes as it did; a table created now argues its shuffles, and says so in its hash."""
    stored = MacauaConfig().model_dump(mode="json", exclude={"shuffle_proof", "audit_timeout"})
    old = MacauaConfig.model_validate(stored)
    assert old.shuffle_proof == "rounds"
    assert genesis_hash(BINDING, ["a", "b"], old) == (
        "102977090b2605bc9da2578b4db3d7640c9d45d9e87e5129a4eae877bbad99b9"
    )
    created = Table(GAME).create("g-1", "a", {}, seats=2, key=KEY)[0]["config"]
    assert created["shuffle_proof"] == "argument"
    new = MacauaConfig.model_validate(created)  # as the table reads it back
    assert new.shuffle_proof == "argument"
    assert genesis_hash(BINDING, ["a", "b"], new) != genesis_hash(BINDING, ["a", "b"], old)
    kept = Table(GAME).create("g-2", "a", {"shuffle_proof": "rounds"}, seats=2, key=KEY)[0][
        "config"
    ]
    assert MacauaConfig.model_validate(kept) == old
    with pytest.raises(Rejection):
        Table(GAME).create("g-3", "a", {"shuffle_proof": "none"}, seats=2)
