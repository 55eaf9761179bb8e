"""Macaua with seats played by the page's code (web/src/macaua, under node).

Every move of a page seat (keys, the shuffle with its argument, the mask, the card keys for
the deal and the draws, plays, draws, the audit) is built and signed in node, with keys that
never leave it, and goes through this game's own ``decide`` at a table with Python bots; the
page's state goes through JSON between any two moves and any two checks (a reload keeps the
seat). The game reaches its end past a reshuffle with a clean audit; each page seat's check
of every transition (its own copy of the rules) signs them all, its signatures check against
its seat key, and its copy ends on the server's hash. Told a cheating server's or a cheating
player's transition, the page rejects it as the Python verifier does: at the same version,
with the same code, blaming the same party.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from cardroom_games.macaua import GAME, MacauaConfig
from cardroom_games.macaua.bots import HeuristicBot
from cardroom_mentalpoker import check_transition
from macaua_support import Harness
from support.macaua_js import JsSeat, MacauaJs

Notes = list[tuple[int, dict[str, Any]]]


class Played:
    """A game played to its end, with its page seats."""

    def __init__(self, h: Harness, seats: dict[str, JsSeat]) -> None:
        self.h = h
        self.seats = seats
        self.game_id = h.game.binding.split("/")[0]

    def notes(self, player: str) -> Notes:
        return [
            (step.version, step.notifications[player])
            for step in self.h.local.steps
            if "transition" in step.notifications.get(player, {})
        ]


class PageSeats(dict[str, JsSeat]):
    """A table's seats played by the page, as the harness seats them (``seat``)."""

    def __init__(self, js: MacauaJs) -> None:
        super().__init__()
        self.js = js

    def seat(self, player: str) -> JsSeat:
        self[player] = JsSeat(self.js, player)
        return self[player]


def play(js: MacauaJs, players: int, config: dict[str, Any], seed: int) -> Played:
    """A game whose seats alternate: the page's, a HeuristicBot, the page's, ..."""
    seats = PageSeats(js)
    h = Harness(players, config, seed=seed, bot=[seats.seat, HeuristicBot])
    assert h.game.config.shuffle_proof == "argument"
    h.to_play()
    # each page seat opened its own hand privately: the cards its keys alone unmask
    for player, seat in seats.items():
        assert len(seat.hand(h.gview(player))) == h.game.config.hand_size
    h.finish()
    return Played(h, seats)


@pytest.fixture(scope="module")
def js() -> Iterator[MacauaJs]:
    with MacauaJs() as node:
        yield node


@pytest.fixture(scope="module")
def played(js: MacauaJs) -> Played:
    # six hands of eight leave five fresh cards: the discards are reshuffled, repeatedly
    return play(js, 6, {"max_turns": 400, "hand_size": 8}, seed=5)


@pytest.fixture(scope="module")
def small(js: MacauaJs) -> Played:
    """A three-seat game with a draw in it (the page's deal is the CSPRNG's: a game where
    every turn is a play is rare, and is played again)."""
    for seed in range(11, 16):
        game = play(js, 3, {"max_turns": 400}, seed=seed)
        if any(step.event["type"] == "macaua.draw_assigned" for step in game.h.local.steps):
            return game
    raise AssertionError("five games without a draw")


def test_page_seats_play_a_whole_game_and_sign_every_transition(played: Played) -> None:
    state = played.h.game
    assert state.phase == "over"
    assert state.winner is not None, state.result
    assert len(state.decks) >= 2  # a reshuffle: the page seats' keys for a later deck too
    assert state.audit is not None
    assert state.audit["ok"] is True, state.audit
    moved = [
        step.event for step in played.h.local.steps if step.event.get("player") in played.seats
    ]
    assert {e["player"] for e in moved} == set(played.seats)
    kinds = {e["signed"]["move"]["kind"] for e in moved if "signed" in e}
    assert {"keys", "shuffle", "mask", "reveal", "play", "audit"} <= kinds, kinds
    # the page seats play the longest legal play: several cards of one rank, some time
    assert any(len(e["cards"]) > 1 for e in moved if e["type"] == "macaua.played")
    # one page seat checks every transition (the others would do the same work)
    player, seat = next(iter(played.seats.items()))
    notes = played.notes(player)
    checked = seat.verify(played.game_id, notes)
    assert (checked["hash"], checked["phase"], checked["turns"]) == (
        state.hash,
        state.phase,
        state.turns,
    )
    for (version, message), verdict in zip(notes, checked["verdicts"], strict=True):
        assert "signature" in verdict, verdict
        check_transition(
            verdict["signature"], seat.verify_key, state.binding, version, message["transition"]
        )


def _tamper(played: Played, notes: Notes, tamper: str) -> int:
    """Alter one transition of ``notes`` as a cheating server would; its index."""
    kinds = [m["transition"]["type"] for _, m in notes]
    shuffles = [i for i, kind in enumerate(kinds) if kind == "macaua.shuffle"]
    if tamper == "altered relay":
        i = kinds.index("macaua.played")
        notes[i][1]["transition"]["cards"][0][2] = "XX"
    elif tamper == "swapped proof":
        i = shuffles[1]
        other = notes[shuffles[0]][1]["transition"]["signed"]["move"]["argument"]
        notes[i][1]["transition"]["signed"]["move"]["argument"] = copy.deepcopy(other)
    elif tamper == "reordered deck":
        i = shuffles[-1]
        cards = notes[i][1]["transition"]["signed"]["move"]["cards"]
        cards[0], cards[1] = cards[1], cards[0]
    elif tamper == "dropped key":
        i = kinds.index("macaua.keys")
        keys = notes[i][1]["transition"]["signed"]["move"]["keys"]
        keys["cards"] = keys["cards"][1:]
    elif tamper == "forged signature":
        i = kinds.index("macaua.draw")
        signed = notes[i][1]["transition"]["signed"]
        signed["signature"] = signed["signature"][:-2] + (
            "00" if signed["signature"][-2:] != "00" else "11"
        )
    elif tamper == "invented step":
        i = kinds.index("macaua.draw_assigned")
        notes[i][1]["transition"]["positions"][0] += 1
    else:  # the audit's result, as the server records it
        i = kinds.index("macaua.audited")
        notes[i][1]["transition"]["decks"][0]["ok"] = False
    return i


def _first_refusal(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    first = next(i for i, v in enumerate(verdicts) if "reject" in v)
    assert all("signature" in v for v in verdicts[:first])
    assert all(v.get("reject") == verdicts[first]["reject"] for v in verdicts[first:])
    refused: dict[str, Any] = verdicts[first]["reject"]
    return refused


@pytest.mark.parametrize(
    "tamper",
    [
        "altered relay",
        "swapped proof",
        "reordered deck",
        "dropped key",
        "forged signature",
        "invented step",
        "altered audit",
    ],
)
def test_the_page_rejects_a_cheating_server_as_python_does(small: Played, tamper: str) -> None:
    played = small
    page = next(iter(played.seats))
    python = next(p for p in played.h.seats if p not in played.seats)
    notes = copy.deepcopy(played.notes(page))
    i = _tamper(played, notes, tamper)
    del notes[i + 3 :]  # two more after it: refused with it, as the table halts there
    verifier = played.h.bots[python].verifier(played.game_id)  # type: ignore[attr-defined]
    theirs = [verifier.check(version, copy.deepcopy(m)).ack_fields() for version, m in notes]
    ours = played.seats[page].verify(played.game_id, notes)["verdicts"]
    mine, expected = _first_refusal(ours), _first_refusal(theirs)
    assert mine["version"] == notes[i][0] == expected["version"]
    assert (mine["code"], mine["blame"]) == (expected["code"], "server")
    assert mine["evidence"]["hash"] == expected["evidence"]["hash"]


def test_the_page_blames_a_cheating_player_relayed_by_a_lax_server(js: MacauaJs) -> None:
    """A move its player signed that the rules refuse (a card that is not what its keys
    open), recorded as if accepted: the page blames that player, as Python does."""
    seats = PageSeats(js)
    # p0 (a Python bot, first to play) cheats; p1 is the page's (no page seat elsewhere)
    h = Harness(2, {"max_turns": 40}, seed=3, bot=[HeuristicBot, seats.seat])
    h.to_play()
    cheat, honest = h.seats
    assert h.game.current == cheat
    bot = h.bots[cheat]
    v = h.gview(cheat)
    (pos, real), *_ = bot.open_hand(v)  # type: ignore[attr-defined]
    fake = "RJ" if real != "RJ" else "BJ"  # a Joker goes on anything: only the key can tell
    move = bot.play_move(v, [(pos, real)], None)  # type: ignore[attr-defined]
    move["cards"][0]["card"] = fake
    command = bot.sign(v, move)  # type: ignore[attr-defined]
    event = {
        "type": "macaua.played",
        "player": cheat,
        "signed": {k: val for k, val in command.items() if k != "type"},
        "cards": [[pos[0], pos[1], fake, move["cards"][0]["key"]]],
        "suit": None,
    }
    before = h.local.state
    after = h.table.evolve(before, event)
    notes = [
        (s.version, s.notifications[honest])
        for s in h.local.steps
        if "transition" in s.notifications.get(honest, {})
    ]
    notes.append((after.version, h.table.notify(before, event, after)[honest]))
    verdicts = seats[honest].verify(h.game.binding.split("/")[0], notes)["verdicts"]
    assert all("signature" in v for v in verdicts[:-1])
    refused = verdicts[-1]["reject"]
    assert refused["blame"] == cheat
    # the code an honest server refuses the move with
    assert refused["code"] == h.refused(cheat, command) == "card_mismatch"


SELF_MADE = ("keys", "shuffle", "mask", "reveal", "audit")


def test_the_page_makes_the_moves_its_own_copy_asks_for(small: Played) -> None:
    """The page builds its own moves (keys, shuffle, mask, card keys, the audit's) from what
    its checked copy asks (``askedOf``), never from the server's listing: after every
    transition, what it would make is what the rules ask of it there, and it never names the
    key of a card in its own hand."""
    for player, seat in small.seats.items():
        notes = small.notes(player)
        setup = notes[0][1]["setup"]
        state = GAME.setup(MacauaConfig.model_validate(setup["config"]), setup["seats"])
        state = GAME.bind_keys(GAME.bind_table(state, small.game_id), setup["keys"])
        made: set[str] = set()
        for n, (version, message) in enumerate(notes):
            seat.verify(small.game_id, [(version, message)], fresh=n == 0)
            state = GAME.evolve(state, message["transition"])
            asked = seat.asked()
            actions = [a for a in GAME.actions(state, player) if a["kind"] in SELF_MADE]
            if not actions:
                assert asked is None, (version, asked)
                continue
            expected = actions[0]
            assert asked is not None, (version, expected)
            assert (asked["kind"], asked["deck"]) == (expected["kind"], expected["deck"])
            if "positions" in expected:
                assert sorted(map(tuple, asked["positions"])) == sorted(
                    map(tuple, expected["positions"])
                )
                if asked["kind"] == "reveal":
                    own = {tuple(pos) for pos in state.hands.get(player, ())}
                    assert not own & set(map(tuple, asked["positions"]))
            made.add(asked["kind"])
        assert set(SELF_MADE) <= made, made


def test_the_page_refuses_a_table_with_a_weak_proof_as_python_does(js: MacauaJs) -> None:
    seats = PageSeats(js)
    h = Harness(2, {"shuffle_proof": "rounds", "shuffle_rounds": 2}, bot=[seats.seat, HeuristicBot])
    page = next(iter(seats))
    notes = [
        (s.version, s.notifications[page])
        for s in h.local.steps
        if "transition" in s.notifications.get(page, {})
    ][:1]
    refused = seats[page].verify(h.game.binding.split("/")[0], notes)["verdicts"][0]["reject"]
    assert (refused["code"], refused["blame"]) == ("weak_proof", "server")


def test_the_page_checks_a_halt_as_python_does(js: MacauaJs) -> None:
    """A halt naming the page's seat, when the page signed everything, is the server's
    frame: refused (``false_halt``). A halt naming another seat is signed; one that names no
    seat is refused by every page (``bad_halt``)."""
    seats = PageSeats(js)
    h = Harness(3, {"max_turns": 40}, seed=5, bot=[seats.seat, HeuristicBot])
    h.to_play()
    framed, _, other = h.seats
    assert set(seats) == {framed, other}
    game_id = h.game.binding.split("/")[0]
    before = h.local.state
    rejection = {"code": "card_mismatch", "reason": "x", "blame": "server"}
    (halt,) = GAME.halt(before.game, before.version, framed, rejection)
    for event, expected in (
        (halt, {framed: "false_halt", other: None}),
        ({**halt, "player": "nobody", "blame": "nobody"}, {framed: "bad_halt", other: "bad_halt"}),
    ):
        after = h.table.evolve(before, event)
        for player, code in expected.items():
            notes = [
                (s.version, s.notifications[player])
                for s in h.local.steps
                if "transition" in s.notifications.get(player, {})
            ]
            notes.append((after.version, h.table.notify(before, event, after)[player]))
            verdicts = seats[player].verify(game_id, notes)["verdicts"]
            assert all("signature" in v for v in verdicts[:-1])
            if code is None:
                assert "signature" in verdicts[-1], player
            else:
                assert (verdicts[-1]["reject"]["code"], verdicts[-1]["reject"]["blame"]) == (
                    code,
                    "server",
                ), player
