"""The page's own logic under node (tests/web/page_logic.mjs runs web/src's modules): the
log lines it writes, the names it gives seats, and the Macaua seats a tab keeps.

The 66 game's lines are those of whole games played by the game's own rules and bots (every
message each seat is sent, with that seat's view), in both protocol generations.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cardroom_engine import JOINED
from cardroom_engine.simulate import bots_chooser, new_game, play
from cardroom_games.macaua import GAME as MACAUA
from cardroom_games.macaua import MacauaConfig, flow
from cardroom_games.papas import GAME as PAPAS
from cardroom_games.sixtysix import GAME as SIXTYSIX
from support.macaua_js import ensure_packages, node

SCRIPT = Path(__file__).with_name("page_logic.mjs")


def page(op: str, **fields: Any) -> Any:
    ensure_packages()
    done = subprocess.run(
        [*node(), str(SCRIPT)],
        input=json.dumps({"op": op, **fields}),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# -- Macaua: a halt -----------------------------------------------------------------------------
ME, BOB = "pa000000000000001", "pb000000000000002"
LABELS = {BOB: "Teal Otter"}


def halt(player: str, code: str) -> dict[str, Any]:
    rejected = {"player": player, "version": 7, "blame": player, "code": code, "reason": "?"}
    return {"type": "MacauaUpdate", "event": "rejected", "player": player, "rejected": rejected}


def halt_line(message: dict[str, Any], rejected: dict[str, Any] | None = None) -> str:
    line: str = page(
        "describe",
        game="macaua",
        message=message,
        me=ME,
        view=None,
        seats=[ME, BOB],
        labels=LABELS,
        rejected=rejected,
    )
    return line


def test_a_macaua_halt_says_who_halted_the_table_and_that_that_seat_ranks_last() -> None:
    """Another seat's halt names it by the page's name for it, its code, and that it ranks
    last; this seat's own, "you"."""
    assert halt_line(halt(BOB, "altered_record")) == (
        "The table halted: Teal Otter rejected a transition (altered_record), "
        "so Teal Otter ranks last."
    )
    assert halt_line(halt(BOB, "bad_signature")) == (
        "The table halted: Teal Otter did not sign a transition validly (bad_signature), "
        "so Teal Otter ranks last."
    )
    refused = {"code": "altered_record", "blame": "server", "reason": "?", "version": 5}
    assert halt_line(halt(ME, "altered_record"), refused) == (
        "The table halted: this page rejected a transition (altered_record), so you rank last."
    )


def test_a_halt_in_this_seats_name_that_its_page_refused_blames_the_server() -> None:
    """The halt names this seat, which signed every transition (its copy refused the halt,
    ``false_halt``): the line says the server halted the table in this player's name."""
    refused = {"code": "false_halt", "blame": "server", "reason": "?", "version": 8}
    line = halt_line(halt(ME, "bad_signature"), refused)
    assert line == (
        "The server halted the table in your name (bad_signature), though this page signed "
        "every transition: the server is at fault. It ranks you last."
    )


# -- names ------------------------------------------------------------------------------------
GUESTS = [f"p{random.Random(n).getrandbits(64):016x}" for n in range(400)]


def test_seats_are_named_you_their_bot_kind_or_a_short_label_the_same_everywhere() -> None:
    """The page's own seat is "you", a bot it seated is its kind (numbered at its table),
    another seat a short label made from its id: not the id's start, the same on every call,
    and no two seats of a table alike."""
    bots = page("withBots", known={}, players=["pbot1", "pbot2"], kind="heuristic", game="g1")
    bots = page("withBots", known=bots, players=["pbot3"], kind="random", game="g1")
    bots = page("withBots", known=bots, players=["pbot4"], kind="heuristic", game="g2")
    seats = [ME, "pbot1", "pbot2", "pbot3", "pbot4", "alice", GUESTS[0]]
    names = page("names", players=seats, me=ME, myName="Ann", bots=bots, seats=seats)
    assert names[:6] == [
        "Ann (you)",
        "heuristic bot",
        "heuristic bot 2",
        "random bot",
        "heuristic bot",
        "alice",  # an id a program chose reads as a name already
    ]
    assert re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", names[6]), names[6]
    assert GUESTS[0][1:6] not in names[6]
    # the same seat reads alike wherever it is shown; a table's seats never read alike
    again = page("names", players=[GUESTS[0]], me=None, myName=None, bots={}, seats=[])
    assert again == [names[6]]
    for start in range(0, len(GUESTS), 8):
        table = GUESTS[start : start + 8]
        shown = page("names", players=table, me=None, myName=None, bots={}, seats=table)
        assert len(set(shown)) == len(table), shown


def _macaua_outcome(**over: Any) -> dict[str, Any]:
    """The outcome the rules make of a Macaua game over as ``over`` says (seats ME, BOB)."""
    state = MACAUA.setup(MacauaConfig(), [ME, BOB])._replace(phase="over", **over)
    outcome = flow.outcome(state)
    assert outcome is not None
    return json.loads(json.dumps(outcome.to_json()))


def test_the_final_ranking_says_why_a_macaua_game_ended_so() -> None:
    def note(outcome: dict[str, Any], rejected: dict[str, Any] | None = None) -> str:
        line: str = page(
            "outcomeNote", game="macaua", outcome=outcome, me=ME, labels=LABELS, rejected=rejected
        )
        return line

    halted = {"player": BOB, "blame": BOB, "code": "card_mismatch", "version": 7, "reason": "x"}
    assert note(_macaua_outcome(result="rejected", rejected=halted)) == (
        "The table halted: Teal Otter rejected a transition (card_mismatch), so Teal Otter"
        " ranks last."
    )
    framed = {**halted, "player": ME, "blame": ME}
    assert note(_macaua_outcome(result="rejected", rejected=framed), {"code": "false_halt"}) == (
        "The server halted the table in your name (card_mismatch), though this page signed"
        " every transition: the server is at fault. It ranks you last."
    )
    assert note(_macaua_outcome(result="won", winner=BOB)) == (
        "Teal Otter emptied their hand first."
    )
    assert note(_macaua_outcome(result="forfeited", winner=ME, withheld=(BOB,))) == (
        "Teal Otter did not publish the keys the audit needs, so Teal Otter ranks last."
    )
    assert note(_macaua_outcome(result="aborted", stalled=ME)) == (
        "You did not move in time: the game was stopped, and you rank last."
    )


# -- Macaua seats a tab keeps -----------------------------------------------------------------
def test_a_tab_forgets_seats_of_finished_or_gone_tables_and_keeps_a_bounded_number() -> None:
    """A seat whose table the page learns is finished or gone is forgotten, unless it is in
    play in this tab; beyond the cap the oldest seat goes first, never one in play here."""
    answer = page(
        "seats",
        root="r",
        player=ME,
        steps=[
            ["take", "g0"],  # in play here: its table page stays open throughout
            ["take", "g1"],
            ["leave", "g1"],
            ["gone", "g1"],  # the lobby says g1 is finished
            ["gone", "g0"],  # in play here: kept
            *[step for n in range(2, 12) for step in (["take", f"g{n}"], ["leave", f"g{n}"])],
            ["open", "g5"],  # opened again: the most recent, and in play here
            ["take", "g12"],
        ],
    )
    cap = answer["cap"]
    after = answer["after"]
    assert after[3] == ["g0"]
    assert after[4] == ["g0"]
    last = after[-1]
    assert len(last) == cap
    assert "g0" in last  # the oldest, but in play in this tab
    # g0 and g5 are in play here; the rest are the most recent seats taken
    assert last == ["g0", *[f"g{n}" for n in range(12 - cap + 3, 12)], "g5", "g12"]
    seat_keys = [k for k in answer["stored"] if k.startswith(f"cardroom.macaua.r.{ME}.")]
    assert len(seat_keys) == cap


def test_a_full_storage_stops_no_seat_from_checking_and_says_a_reload_would_lose_it() -> None:
    """A seat whose save the tab's storage refuses still gives its verdict (an exception
    there would leave the notification unacknowledged, the seat marked away and ranked
    last), and says it is kept in memory only until a save succeeds again."""
    answer = page("fullStorage", root="r", player=ME, game="g1")
    assert answer["thrown"] is None
    assert answer["fields"]["reject"]["code"] == "no_transition"
    assert answer["full"] is True
    assert answer["later"] is False


# -- the 66 game's log ------------------------------------------------------------------------
SEATS = ["pa000000000000001", "pb000000000000002", "pc000000000000003"]
SEAT_LABELS = {SEATS[0]: "Sand Lark", SEATS[1]: "Teal Otter", SEATS[2]: "Rose Heron"}
KINDS = {
    "v2": {
        "BoardInitialized",
        "BoardUpdated",
        "CardExchanged",
        "CardsReplaced",
        "CardsRevealed",
        "RoundFinished",
    },
    "v1": {
        "AnothersCard",
        "AnothersCardPeeked",
        "CardDiscarded",
        "CardReplacedByDiscarded",
        "CardReplacedFromDeck",
        "CardsExchanged",
        "CardsReplacedByDiscarded",
        "CardsReplacedFromDeck",
        "DifferentCardsShown",
        "DiscardedCard",
        "ExchangedCards",
        "ExchangingCards",
        "FirstTwoCards",
        "GameFinished",
        "GameState",
        "IdenticalCardsShown",
        "InitiatedStop",
        "NextTurn",
        "OwnCard",
        "OwnCardPeeked",
        "PeekingAnothersCard",
        "PeekingOwnCard",
        "ReplacedCardByDiscarded",
        "ReplacedCardFromDeck",
        "ReplacedCardsByDiscarded",
        "ReplacedCardsFromDeck",
        "RoundFinished",
        "ShowedDifferentCards",
        "ShowedIdenticalCards",
        "StopInitiated",
        "TookDeckCard",
        "YourTurn",
    },
}
TABLE_MESSAGES = {"GameStarted", "GameOver"}  # the page's own lines, not the game's


def sixtysix_messages(protocol: str, seeds: range) -> list[tuple[str, dict[str, Any], Any]]:
    """Every message each seat is sent in whole games, with that seat's view after it."""
    found = []
    bots = {SEATS[0]: "heuristic", SEATS[1]: "random", SEATS[2]: "heuristic"}
    for seed in seeds:
        local = play(
            SIXTYSIX,
            SEATS,
            random.Random(seed),
            {"protocol": protocol},
            choose=bots_chooser(SIXTYSIX, bots),
        )
        table = local.table
        first = next(i for i, s in enumerate(local.steps) if s.event["type"] == JOINED)
        state = table.replay([s.event for s in local.steps[:first]])
        for step in local.steps[first:]:
            state = table.evolve(state, step.event)
            for player, message in step.notifications.items():
                if message["type"] not in TABLE_MESSAGES:
                    found.append((player, message, table.view(state, player)))
    return found


PHRASES = {"YourTurn", "OwnCard"}  # names that spelt out are plain English too


def raw_names(protocol: str) -> list[str]:
    """The message names as the page's ``words`` would spell them, and as they are."""
    spelt = [re.sub(r"([a-z])([A-Z])", r"\1 \2", k).lower() for k in KINDS[protocol] - PHRASES]
    return spelt + sorted(KINDS[protocol])


# a message's own fields listed in brackets: "(card 3, value 5)"
FIELDS = re.compile(r"\((?:card|cards|value|values|discarded|another|player|next|turn count)\b")


@pytest.mark.parametrize("protocol", ["v2", "v1"])
def test_sixtysix_log_lines_are_plain_english_naming_who_did_what(protocol: str) -> None:
    """Every kind of message of the generation, as each seat reads it: a sentence (no event
    name, no field name, no "(s)", nothing undefined), naming the seat a message is about by
    the page's name for it, "you" for the reader."""
    messages = sixtysix_messages(protocol, range(4))
    assert {m["type"] for _, m, _ in messages} == KINDS[protocol]
    cases = [
        {
            "game": "sixtysix",
            "message": message,
            "me": player,
            "view": view,
            "seats": SEATS,
            "labels": SEAT_LABELS,
        }
        for player, message, view in messages
    ]
    lines = page("describeMany", cases=cases)
    raw = raw_names(protocol)
    bad = []
    for case, line in zip(cases, lines, strict=True):
        message, me = case["message"], case["me"]
        problems = []
        if not line or not re.fullmatch(r"[A-Z].*[.!]", line):
            problems.append("not a sentence")
        else:
            lowered = line.lower()
            problems += [f"says {w!r}" for w in raw if w.lower() in lowered]
            for token in ("undefined", "null", "nan", "[object", "(s)", "index"):
                if token in lowered:
                    problems.append(f"says {token!r}")
            if re.search(r"\b[a-z]+[A-Z]\w*", line) or FIELDS.search(lowered):
                problems.append("a field name")
            for key in ("playerIndex", "anotherPlayerIndex", "activePlayerIndex"):
                seat = message.get(key)
                if seat is None:
                    continue
                name = "you" if SEATS[seat] == me else SEAT_LABELS[SEATS[seat]]
                named = re.search(r"\byou", lowered) if name == "you" else name in line
                if not named:
                    problems.append(f"does not name {name}")
        if problems:
            bad.append((message, SEATS.index(me), line, problems))
    assert not bad, bad[:8]


def sixtysix_line(message: dict[str, Any], me: int, **state: Any) -> str:
    view = {"state": {"players": SEATS, "playerIndex": me, **state}}
    line: str = page(
        "describe",
        game="sixtysix",
        message=message,
        me=SEATS[me],
        view=view,
        seats=SEATS,
        labels=SEAT_LABELS,
    )
    return line


def test_sixtysix_lines_read_as_written() -> None:
    """A few lines, word for word: who did what, to whose cards."""
    reveal = {
        "type": "CardsRevealed",
        "cards": [
            {
                "lookingPlayerIndexes": [1],
                "targetPlayerIndex": 2,
                "cardIndexes": [3],
                "values": None,
            }
        ],
    }
    assert sixtysix_line(reveal, 0) == "Teal Otter peeks at Rose Heron's card 4."
    claim = {
        "type": "CardsRevealed",
        "cards": [
            {
                "lookingPlayerIndexes": [1, 2],
                "targetPlayerIndex": 0,
                "cardIndexes": [0, 2],
                "values": None,
            }
        ],
    }
    assert sixtysix_line(claim, 0) == "You show your cards 1 and 3 to Teal Otter and Rose Heron."
    turn = {"type": "BoardUpdated", "activePlayerIndex": 0, "turn": 5, "stopCounter": None}
    assert sixtysix_line(turn, 0) == "Turn 5: your turn."
    stop = {"type": "BoardUpdated", "stopCounter": 2}
    assert sixtysix_line(stop, 0, activePlayerIndex=2) == (
        "Rose Heron calls stop: everyone else has one more turn."
    )
    swap = {
        "type": "CardsExchanged",
        "playerIndex": 1,
        "cardIndex": 0,
        "anotherPlayerIndex": 0,
        "anotherPlayerCardIndex": 3,
    }
    assert sixtysix_line(swap, 0) == "Teal Otter swaps their card 1 with your card 4."
    replaced = {
        "type": "CardsReplacedFromDeck",
        "playerIndex": 2,
        "cardIndexes": [1, 2],
        "discardedValue": 6,
    }
    assert sixtysix_line(replaced, 0) == (
        "Rose Heron replaces their cards 2 and 3 with a card from the deck; "
        "the discard pile now shows 6."
    )


# -- clocks a sync sets ----------------------------------------------------------------------------
def _papas_reaction_view() -> dict[str, Any]:
    """A papas seat's view as the server makes it while a reaction window is open."""
    rng = random.Random(4)
    for _ in range(200):
        local = new_game(PAPAS, ["a", "b", "c"], rng)
        table = local.table
        while local.state.status == "playing":
            view = table.view(local.state, "b")
            if view["state"].get("reaction"):
                return json.loads(json.dumps(view))
            movers = [(p, a) for p in local.state.seats if (a := table.actions(local.state, p))]
            player, actions = rng.choice(movers)
            local.apply(table.decide(local.state, player, rng.choice(actions), rng, gate_open=True))
            local.settle(rng)
    raise AssertionError("no reaction window in 200 games")


def test_a_sync_sets_papas_reaction_countdown_to_the_time_the_server_says_is_left() -> None:
    """Reloaded in a reaction window, the page counts down what the server says is left
    (``turn_due_in_ms``), not the window's full length again."""
    view = _papas_reaction_view()
    window = view["state"]["reaction"]["window"]
    reply = {"view": view, "turn_due_in_ms": 4_200}
    assert page("syncedClocks", type="papas", reply=reply, received=1_000) == [
        [f"papas-{window}", 5_200]
    ]
    # no clock told, or no clock of its own in the view: nothing set
    assert (
        page("syncedClocks", type="papas", reply={**reply, "turn_due_in_ms": None}, received=0)
        == []
    )
    take5 = {"view": {"state": {}}, "turn_due_in_ms": 4_200}
    assert page("syncedClocks", type="take5", reply=take5, received=0) == []
