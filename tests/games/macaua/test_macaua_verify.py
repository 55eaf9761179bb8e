"""Every player checks and signs every Macaua transition (cardroom_games.macaua.verify).

An honest table: every player's verifier signs every transition, and each signature checks
against the player's seat key over the transition the server recorded. A cheating server (it
alters what it relays to a player: a move, a proof, the deck, a key, a step of its own) and a
cheating player (a move it signed that breaks the rules, relayed by a server that did not
refuse it) are rejected by every honest player, and the rejection blames the right party.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from cardroom_games.macaua import GAME, MacauaBot, TransitionVerifier
from cardroom_games.macaua.bots import RandomMacauaBot
from cardroom_games.macaua.verify import Unverifiable
from cardroom_mentalpoker import SignatureError, check_transition
from macaua_support import Harness

Transcript = list[tuple[int, dict[str, Any]]]  # (version, message) of one player, in order


def transcript(h: Harness, player: str) -> Transcript:
    """The Macaua notifications ``player`` was sent, with their versions."""
    return [
        (step.version, step.notifications[player])
        for step in h.local.steps
        if player in step.notifications and "transition" in step.notifications[player]
    ]


def verifiers(h: Harness) -> dict[str, TransitionVerifier]:
    return {p: bot.verifier("g1") for p, bot in h.bots.items()}


def check_all(v: TransitionVerifier, notes: Transcript) -> list[Any]:
    return [v.check(version, json.loads(json.dumps(message))) for version, message in notes]


@pytest.fixture(scope="module")
def played() -> Harness:
    h = Harness(3, {"max_turns": 60}, seed=11, bot=RandomMacauaBot)
    h.finish()
    return h


def test_every_player_signs_every_transition_of_an_honest_game(played: Harness) -> None:
    h = played
    state = h.game
    assert state.phase == "over"
    kinds = set()
    for player, v in verifiers(h).items():
        notes = transcript(h, player)
        verdicts = check_all(v, notes)
        failed = [x.rejection for x in verdicts if x.rejection is not None]
        assert not failed, failed[0]
        for (version, message), verdict in zip(notes, verdicts, strict=True):
            kinds.add(message["transition"]["type"])
            # what the server checks: the player's seat key over the transition it recorded
            check_transition(
                verdict.signature,
                h.bots[player].verify_key,
                state.binding,
                version,
                message["transition"],
            )
        # the copy each player built is the server's state
        assert v.state is not None
        assert v.state.hash == state.hash
        assert v.state.phase == state.phase
    assert {"macaua.started", "macaua.keys", "macaua.shuffle", "macaua.mask"} <= kinds
    assert {"macaua.reveal", "macaua.draw_assigned"} <= kinds


def test_a_signature_is_bound_to_its_transition_version_and_key(played: Harness) -> None:
    h = played
    player = h.seats[0]
    (version, message), *_ = transcript(h, player)
    signature = h.bots[player].verifier("g1").check(version, message).signature
    binding = h.game.binding
    key = h.bots[player].verify_key
    check_transition(signature, key, binding, version, message["transition"])
    with pytest.raises(SignatureError):
        check_transition(signature, key, binding, version + 1, message["transition"])
    with pytest.raises(SignatureError):
        check_transition(
            signature, h.bots[h.seats[1]].verify_key, binding, version, message["transition"]
        )
    with pytest.raises(SignatureError):
        check_transition(signature, key, binding, version, {**message["transition"], "x": 1})


# -- a cheating server: it alters what one player is sent --------------------------------------


def _first(
    notes: Transcript, kind: str, when: Callable[[dict[str, Any]], bool] = lambda t: True
) -> int:
    for i, (_, message) in enumerate(notes):
        t = message["transition"]
        if t["type"] == kind and when(t):
            return i
    raise AssertionError(f"no {kind}")


def _forge_signature(t: dict[str, Any]) -> None:
    sig = t["signed"]["signature"]
    t["signed"]["signature"] = sig[:-2] + ("00" if sig[-2:] != "00" else "11")


def _swap_proof(t: dict[str, Any], other: dict[str, Any]) -> None:
    t["signed"]["move"]["argument"] = copy.deepcopy(other["signed"]["move"]["argument"])


def _reorder_deck(t: dict[str, Any]) -> None:
    cards = t["signed"]["move"]["cards"]
    cards[0], cards[1] = cards[1], cards[0]


def _drop_key(t: dict[str, Any]) -> None:
    t["signed"]["move"]["keys"]["cards"] = t["signed"]["move"]["keys"]["cards"][1:]


def _rejection(h: Harness, player: str, notes: Transcript) -> dict[str, Any]:
    verdicts = check_all(h.bots[player].verifier("g1"), notes)
    refused = [v.rejection for v in verdicts if v.rejection is not None]
    assert refused, "the player signed everything"
    # everything after the first refusal is refused with it: the table halts there
    first = next(i for i, v in enumerate(verdicts) if v.rejection is not None)
    assert all(v.signature is None for v in verdicts[first:])
    assert all(v.signature is not None for v in verdicts[:first])
    return refused[0]


@pytest.mark.parametrize(
    "tamper",
    [
        "altered relay",
        "swapped proof",
        "reordered deck",
        "dropped key",
        "forged signature",
        "invented step",
        "swapped seat key",
    ],
)
def test_every_honest_player_rejects_a_cheating_server_and_blames_it(
    played: Harness, tamper: str
) -> None:
    h = played
    for player in h.seats:
        notes = copy.deepcopy(transcript(h, player))
        shuffles = [
            i for i, (_, m) in enumerate(notes) if m["transition"]["type"] == "macaua.shuffle"
        ]
        if tamper == "altered relay":
            i = _first(notes, "macaua.played")
            notes[i][1]["transition"]["cards"][0][2] = "XX"  # the card the server says it was
        elif tamper == "swapped proof":
            i = shuffles[1]
            _swap_proof(notes[i][1]["transition"], notes[shuffles[0]][1]["transition"])
        elif tamper == "reordered deck":
            i = shuffles[-1]
            _reorder_deck(notes[i][1]["transition"])
        elif tamper == "dropped key":
            i = _first(notes, "macaua.keys", lambda t, me=player: t["player"] != me)
            _drop_key(notes[i][1]["transition"])
        elif tamper == "forged signature":
            i = _first(notes, "macaua.draw")
            _forge_signature(notes[i][1]["transition"])
        elif tamper == "invented step":
            i = _first(notes, "macaua.draw_assigned")
            notes[i][1]["transition"]["positions"] = list(
                reversed(notes[i][1]["transition"]["positions"])
            )
            if (
                notes[i][1]["transition"]["positions"]
                == transcript(h, player)[i][1]["transition"]["positions"]
            ):
                notes[i][1]["transition"]["positions"][0] += 1
        else:  # the server tells the player that another key is bound to its own seat
            i = 0
            other = h.seats[0] if player != h.seats[0] else h.seats[1]
            notes[0][1]["setup"]["keys"][player] = h.bots[other].verify_key
        rejection = _rejection(h, player, notes)
        assert rejection["blame"] == "server", (tamper, rejection)
        assert rejection["version"] == notes[i][0]
        assert rejection["evidence"]  # the transition as received


def test_a_cheating_player_relayed_by_a_lax_server_is_rejected_and_blamed() -> None:
    """A move its player signed that the rules refuse (here: a card that is not what the
    player's keys open), relayed as if the server had accepted it: every other player
    rejects it, and the blame is that player's, whose signature is on it."""
    h = Harness(2, {"max_turns": 40}, seed=3, bot=RandomMacauaBot)
    h.to_play()
    cheat = h.game.current
    honest = next(p for p in h.seats if p != cheat)
    bot = h.bots[cheat]
    v = h.gview(cheat)
    (pos, real), *_ = bot.open_hand(v)
    fake = "RJ" if real != "RJ" else "BJ"  # a Joker goes on anything: only the key can tell
    move = bot.play_move(v, [(pos, real)], None)
    move["cards"][0]["card"] = fake
    command = bot.sign(v, move)
    # the lax server records the move as if valid: its event, as the server would write it
    event = {
        "type": "macaua.played",
        "player": cheat,
        "signed": {k: val for k, val in command.items() if k != "type"},
        "cards": [[pos[0], pos[1], fake, move["cards"][0]["key"]]],
        "suit": None,
    }
    before = h.local.state
    after = h.table.evolve(before, event)
    message = h.table.notify(before, event, after)[honest]
    verifier = h.bots[honest].verifier("g1")
    for version, note in transcript(h, honest):
        assert verifier.check(version, note).signature is not None
    verdict = verifier.check(after.version, message)
    assert verdict.rejection is not None
    assert verdict.rejection["blame"] == cheat
    assert verdict.rejection["code"] in ("card_mismatch", "bad_key", "bad_proof")
    # and an honest server refuses it outright
    assert h.refused(cheat, command) == verdict.rejection["code"]


def _relayed_by_a_lax_server(h: Harness, event: dict[str, Any], to: str) -> Any:
    """What ``to``'s verifier says of ``event``, recorded as if the server had accepted it."""
    before = h.local.state
    after = h.table.evolve(before, event)
    verifier = h.bots[to].verifier("g1")
    for version, note in transcript(h, to):
        assert verifier.check(version, note).signature is not None
    return verifier.check(after.version, h.table.notify(before, event, after)[to])


def test_a_key_with_a_broken_proof_signed_by_its_player_is_blamed_on_it() -> None:
    h = Harness(2, {"max_turns": 40}, seed=4, bot=RandomMacauaBot)
    cheat = h.game.waiting[0]
    honest = next(p for p in h.seats if p != cheat)
    bot = h.bots[cheat]
    v = h.gview(cheat)
    move = bot.keys_move(v, 0)
    proof = move["keys"]["shuffle_proof"]
    proof["z"] = proof["z"][:-2] + ("00" if proof["z"][-2:] != "00" else "01")
    command = bot.sign(v, move)
    signed = {k: val for k, val in command.items() if k != "type"}
    verdict = _relayed_by_a_lax_server(
        h, {"type": "macaua.keys", "player": cheat, "signed": signed}, honest
    )
    assert verdict.rejection is not None
    assert verdict.rejection["blame"] == cheat
    assert h.refused(cheat, command) == verdict.rejection["code"]


def test_a_move_out_of_turn_signed_by_its_player_is_blamed_on_it() -> None:
    h = Harness(3, {"max_turns": 40}, seed=6, bot=RandomMacauaBot)
    h.to_play()
    cheat = next(p for p in h.seats if p != h.game.current)
    honest = h.game.current
    bot = h.bots[cheat]
    command = bot.sign(h.gview(cheat), {"kind": "draw"})
    signed = {k: val for k, val in command.items() if k != "type"}
    verdict = _relayed_by_a_lax_server(
        h, {"type": "macaua.draw", "player": cheat, "signed": signed, "count": 1}, honest
    )
    assert verdict.rejection is not None
    assert verdict.rejection["blame"] == cheat
    assert verdict.rejection["code"] == "not_your_turn"
    assert h.refused(cheat, command) == "not_your_turn"


def test_a_verifier_needs_the_start_and_refuses_a_replay(played: Harness) -> None:
    h = played
    player = h.seats[1]
    notes = transcript(h, player)
    late = h.bots[player].verifier("g1")
    with pytest.raises(Unverifiable):  # no history: it cannot check, and blames nobody
        late.check(*notes[3])
    v = h.bots[player].verifier("g1")
    assert v.check(*notes[0]).signature is not None
    again = v.check(*notes[0])
    assert again.rejection is not None
    assert again.rejection["code"] == "replayed_transition"


def test_a_verifier_of_another_table_rejects_the_binding(played: Harness) -> None:
    h = played
    player = h.seats[0]
    version, message = transcript(h, player)[0]
    verdict = h.bots[player].verifier("another-table").check(version, message)
    assert verdict.rejection is not None
    assert verdict.rejection["code"] == "wrong_game"


def test_the_halt_blames_the_player_that_rejected_whatever_it_names() -> None:
    """The server recorded only what its own rules decided, so a rejection of it is the
    rejecter's doing: believed, it would let a player losing a game halt it with another
    seat ranked last, or nobody winning. Whom the rejecter named stays as its claim."""
    for claim in ("p2", "server", "zz", None):
        h = Harness(3, {"max_turns": 40}, seed=5, bot=RandomMacauaBot)
        h.to_play()
        state = h.local.state
        rejecter = h.seats[0]
        rejection = {"code": "card_mismatch", "reason": "x", "evidence": {"a": 1}}
        if claim is not None:
            rejection["blame"] = claim
        h.local.apply(GAME.halt(state.game, state.version, rejecter, rejection))
        h.local.settle(h.rng)
        outcome = h.table.outcome(h.local.state)
        assert outcome is not None
        assert outcome.ranking[-1] == [rejecter], claim
        assert outcome.details["blame"] == rejecter
        assert outcome.details["rejected"]["claim"] == claim
        assert outcome.details["rejected"]["code"] == "card_mismatch"


def _halted(halt: Callable[[Harness], dict[str, Any]]) -> Harness:
    """A game in play that the server halts with the event ``halt`` makes of it."""
    h = Harness(3, {"max_turns": 40}, seed=5, bot=RandomMacauaBot)
    h.to_play()
    h.local.apply([halt(h)])
    return h


def _halt_of(h: Harness, rejecter: str, **changed: Any) -> dict[str, Any]:
    state = h.local.state
    rejection = {"code": "card_mismatch", "reason": "x", "blame": "server"}
    (event,) = GAME.halt(state.game, state.version, rejecter, rejection)
    return {**event, **changed}


def test_the_player_a_halt_names_refuses_it_when_it_signed_everything() -> None:
    """Whether a player rejected or signed a transition only the server and that player know
    (an acknowledgement goes to the server alone). A server that halts the table naming an
    honest player, so that it ranks last, has the others' signatures on the halt, never the
    framed player's: its own copy signed every transition before, and refuses this one."""
    h = _halted(lambda h: _halt_of(h, h.seats[0]))
    framed = h.seats[0]
    for player in h.seats:
        verdicts = check_all(h.bots[player].verifier("g1"), transcript(h, player))
        assert all(v.signature is not None for v in verdicts[:-1])
        if player != framed:
            assert verdicts[-1].signature is not None, player
            continue
        refused = verdicts[-1].rejection
        assert refused is not None
        assert (refused["code"], refused["blame"]) == ("false_halt", "server")
        assert refused["evidence"]["type"] == "macaua.rejected"


@pytest.mark.parametrize(
    "malformed",
    [
        {"player": "nobody", "blame": "nobody"},
        {"blame": "server"},
        {"version": 0},
        {"version": "1"},
        {"version": True},
        {"later": 0},  # the halted version is the halt's own
    ],
)
def test_a_halt_of_no_seat_or_of_no_earlier_transition_is_refused_by_everyone(
    malformed: dict[str, Any],
) -> None:
    def halt(h: Harness) -> dict[str, Any]:
        changed = dict(malformed)
        if changed.pop("later", None) is not None:
            changed["version"] = h.local.state.version + 1
        return _halt_of(h, h.seats[0], **changed)

    h = _halted(halt)
    for player in h.seats[1:]:
        verdicts = check_all(h.bots[player].verifier("g1"), transcript(h, player))
        assert all(v.signature is not None for v in verdicts[:-1])
        refused = verdicts[-1].rejection
        assert refused is not None, (malformed, player)
        assert (refused["code"], refused["blame"]) == ("bad_halt", "server")


def test_bots_hand_out_verifiers_that_sign_with_their_seat_key() -> None:
    bot = MacauaBot("p0")
    v = bot.verifier("g9")
    assert v.player == "p0"
    assert v.game_id == "g9"
