"""The leak property over thousands of random games.

An independent model says, from the full truth (the events and the states before and after
them), which cards each player may be shown at each moment: their own hand before and after
the event, the face-up discard pile before and after it, the cards discarded face up by the
event itself, and -- for a Potato Dawan's selection only -- the target's hand to the actor.
Every notification, every view (players and spectator) and every refusal is checked against
it: no card face outside that set, no blind-pick token to anyone but the picker, refusals
the same wherever a foreign card lies. Random play includes reaction deadlines
(``on_timeout``) and hostile probes.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from cardroom_engine import Event, Message, Rejection
from cardroom_games.papas import EVENT_TYPES, GAME
from cardroom_games.papas.cards import CARD_NAME
from cardroom_games.papas.protocol import MESSAGES
from cardroom_games.papas.state import PapasConfig, PapasState
from papas_testkit import CARD_ID, card_ids, mentions

GAMES = int(os.environ.get("PAPAS_LEAK_GAMES", "2000"))

WINDOW_OPENERS = ("papas.card_played", "papas.threesome_played", "papas.targets_selected")
FACE_KEYS = {"id", "name", "kind", "value", "alarm"}


def publicly_discarded(event: Event) -> set[int]:
    kind = event["type"]
    if kind in (
        "papas.card_played",
        "papas.interrupt_played",
        "papas.card_discarded",
        "papas.discarded_and_drawn",
    ):
        return {event["card"]}
    if kind == "papas.threesome_played":
        return set(event["cards"])
    if kind == "papas.action_resolved":
        return set(event.get("discarded", ()))
    return set()


def entitled(before: PapasState, event: Event, after: PapasState, seat: int) -> set[int]:
    """The cards player ``seat`` may be shown in the notification of ``event``."""
    return public_cards(before, event, after) | private_cards(before, event, after, seat)


def public_cards(before: PapasState, event: Event, after: PapasState) -> set[int]:
    """Face up for everyone: the discard pile before and after, and what the event discards."""
    return set(before.discard) | set(after.discard) | publicly_discarded(event)


def private_cards(before: PapasState, event: Event, after: PapasState, seat: int) -> set[int]:
    """One's own hand before and after; a Potato Dawan shows the target's hand to the actor."""
    allowed = set(before.hands[seat]) | set(after.hands[seat])
    reveal = event["type"] == "papas.selection_offered" and event["reveal"]
    if reveal and before.seats[seat] == event["player"]:
        allowed |= set(before.hands[before.seats.index(event["target"])])
    return allowed


def view_entitled(state: PapasState, seat: int | None) -> set[int]:
    allowed = set(state.discard)
    if seat is None:
        return allowed
    allowed |= set(state.hands[seat])
    play = state.play
    dawan = state.selection and play is not None and play.name == "potato_dawan"
    if dawan and seat == state.active:
        assert play is not None
        allowed |= set(state.hands[play.targets[0]])
    return allowed


class LeakChecker:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        players = self.rng.randint(2, 6)
        self.seats = [f"p{i}" for i in range(players)]
        config = PapasConfig(
            win_threshold=1 if self.rng.random() < 0.9 else 2,
            wildcard_values=tuple(self.rng.choice([0, 0, 3]) for _ in range(3)),
            reaction_seconds=self.rng.choice([7.0, 1.5]),
        )
        self.state = GAME.setup(config, self.seats)
        self.token_owner: dict[str, str] = {}
        self.shuffles: list[bool] = []  # CardSelection: options in the hand's order?
        self.events = 0
        self.seen: Counter[str] = Counter()  # event types, reshuffles, reveals, deadlines
        self.viewer = 0
        self.commands = 0

    # -- checks ------------------------------------------------------------------------------
    def foreign_tokens(self, player: str | None) -> set[str]:
        return {t for t, owner in self.token_owner.items() if owner != player}

    def check_notes(self, before: PapasState, event: Event, notes: Mapping[str, Message]) -> None:
        """Check every message of one event. A message's ``hand`` must be exactly the
        recipient's hand; the rest is scanned as JSON (once per distinct content: most
        recipients of an event get the same public part) for card ids and tokens."""
        public = public_cards(before, event, self.state)
        scanned: list[tuple[dict[str, Any], set[int], str]] = []
        for player, message in notes.items():
            seat = self.seats.index(player)
            rest = dict(message)
            hand = rest.pop("hand", None)
            if hand is not None:
                assert [card["id"] for card in hand] == list(self.state.hands[seat])
                for card in hand:
                    assert card.keys() == FACE_KEYS
                    assert card["name"] == CARD_NAME[card["id"]]
            entry = next((known for known in scanned if known[0] == rest), None)
            if entry is None:
                text = json.dumps(rest)
                entry = (rest, {int(m) for m in CARD_ID.findall(text)}, text)
                scanned.append(entry)
            _, shown, text = entry
            extra = shown - public
            if extra:
                extra -= private_cards(before, event, self.state, seat)
                assert not extra, (event["type"], player, extra)
            secrets = self.foreign_tokens(player)
            assert not [t for t in secrets if t in text], event["type"]

    def check_views(self) -> None:
        """Every fourth command, one view in turn (the spectator's, then each player's)."""
        self.commands += 1
        if self.commands % 4:
            return
        state = self.state
        self.viewer = (self.viewer + 1) % (len(self.seats) + 1)
        for seat in (None if self.viewer == len(self.seats) else self.viewer,):
            player = None if seat is None else self.seats[seat]
            view = GAME.view(state, player)
            shown = card_ids(view)
            allowed = view_entitled(state, seat)
            assert shown <= allowed, (state.phase, seat, shown - allowed)
            assert not mentions(view, self.foreign_tokens(player))

    def apply(self, events: list[Event]) -> None:
        for produced in events:
            event = json.loads(json.dumps(produced))
            before = self.state
            self.state = GAME.evolve(before, event)
            self.events += 1
            kind = event["type"]
            self.seen[kind] += 1
            if event.get("reshuffled"):
                self.seen["reshuffle"] += 1
            if kind == "papas.selection_offered" and event["reveal"]:
                self.seen["dawan_reveal"] += 1
            if kind == "papas.not_interrupted" and event["reason"] == "deadline":
                self.seen["deadline"] += 1
            if kind == "papas.selection_offered":
                for token, _ in event["options"]:
                    self.token_owner[token] = event["player"]
                if len(event["options"]) >= 3:
                    target = before.hands[before.seats.index(event["target"])]
                    self.shuffles.append([c for _, c in event["options"]] == list(target))
            notes = GAME.notify(before, event, self.state)
            expected = {event["player"]} if kind == "papas.reaction_skipped" else set(self.seats)
            assert set(notes) == expected, kind
            # the message keeps the protocol's name of the transition the event is
            assert all(message["type"] == MESSAGES[kind] for message in notes.values())
            self.check_notes(before, event, notes)
            if kind in WINDOW_OPENERS and self.state.phase == "ReactionPhase":
                actor = self.seats[self.state.active]
                prompts = [
                    {k: v for k, v in m.items() if k != "hand"}
                    for p, m in notes.items()
                    if p != actor
                ]
                assert all(p == prompts[0] for p in prompts)  # the same prompt for all

    def settle(self) -> None:
        for _ in range(50):
            events = GAME.follow_up(self.state, self.rng)
            if not events:
                return
            self.apply(events)
        raise AssertionError("no settle")

    def probe(self) -> None:
        """Hostile commands: the answer must not depend on where a foreign card lies."""
        state = self.state
        seat = self.rng.randrange(len(self.seats))
        player = self.seats[seat]
        foreign = [c for s, hand in enumerate(state.hands) if s != seat for c in hand[:1]]
        foreign += list(state.deck[:1]) + list(state.discard[-1:]) + [103, -5]
        for kind in ("PlayCard", "DiscardCard", "PlayInterrupt"):
            answers = set()
            for card in foreign:
                command: dict[str, Any] = {"type": kind, "card": card}
                if kind == "PlayInterrupt":
                    command["window"] = state.window
                with pytest.raises(Rejection) as info:
                    GAME.decide(state, player, command, self.rng)
                answers.add((info.value.code, info.value.message))
            assert len(answers) == 1, answers
            assert not mentions(sorted(answers), self.foreign_tokens(player))
        for token in list(self.foreign_tokens(player))[:2]:
            with pytest.raises(Rejection) as info:
                GAME.decide(state, player, {"type": "SelectCard", "token": token}, self.rng)
            assert token not in info.value.message

    # -- one game ----------------------------------------------------------------------------
    def run(self) -> None:
        self.apply(GAME.start(self.state, self.rng))
        if self.rng.random() < 0.3:
            # a thin deck: most of it already discarded, so reshuffles come early
            keep = self.rng.randint(0, 8)
            state = self.state
            self.state = state._replace(
                deck=state.deck[:keep], discard=state.discard + state.deck[keep:]
            )
        for _ in range(5000):
            self.settle()
            self.check_views()
            if GAME.outcome(self.state) is not None:
                return
            if self.rng.random() < 0.05:
                self.probe()
            deadline = GAME.deadline(self.state)
            if deadline is not None and self.rng.random() < 0.4:
                self.apply(GAME.on_timeout(self.state, deadline.key, self.rng))
                continue
            movers = [(p, a) for p in self.seats if (a := GAME.actions(self.state, p))]
            assert movers, self.state.phase
            player, actions = self.rng.choice(movers)
            command = self.rng.choice(actions)
            self.apply(GAME.decide(self.state, player, command, self.rng))
        raise AssertionError("the game did not end")


def play_games(seeds: Sequence[int]) -> dict[str, Any]:
    events = 0
    shuffles: list[bool] = []
    seen: Counter[str] = Counter()
    for seed in seeds:
        checker = LeakChecker(seed)
        checker.run()
        events += checker.events
        shuffles += checker.shuffles
        seen += checker.seen
    return {"games": len(seeds), "events": events, "shuffles": shuffles, "seen": seen}


def play_games_in_parallel(games: int) -> dict[str, Any]:
    """The games split over the machine's cores (at most 2), each a separate process."""
    workers = min(2, os.cpu_count() or 1)
    chunks = [list(range(games))[i::workers] for i in range(workers)]
    if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
        results = [play_games(chunk) for chunk in chunks]
    else:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            results = list(pool.map(play_games, chunks))
    return {
        "games": sum(r["games"] for r in results),
        "events": sum(r["events"] for r in results),
        "shuffles": [s for r in results for s in r["shuffles"]],
        "seen": sum((r["seen"] for r in results), Counter()),
    }


def test_nothing_hidden_reaches_a_player_over_thousands_of_random_games() -> None:
    result = play_games_in_parallel(GAMES)
    assert result["games"] == GAMES
    assert result["events"] > 20 * GAMES
    seen = result["seen"]
    missing = set(EVENT_TYPES) - set(seen)
    assert not missing  # every kind of event was checked
    for rare in ("reshuffle", "dawan_reveal", "deadline"):
        assert seen[rare] > 10, seen
    shuffles = result["shuffles"]
    assert len(shuffles) > 50
    # the options are offered in a shuffled order, not the hand's
    assert sum(shuffles) < 0.4 * len(shuffles)


def test_the_checker_catches_a_leak() -> None:
    """The model is not vacuous: showing a blind-pick card to its picker is caught."""
    checker = LeakChecker(1)
    checker.apply(GAME.start(checker.state, checker.rng))
    before = checker.state
    other = before.hands[1][0]
    event: Event = {"type": "papas.turn_ended", "player": "p0", "drawn": [], "reshuffled": None}
    checker.check_notes(before, event, {"p0": {"drawn": [], "hand": faces(before, 0)}})
    leaky = {"drawn": [{"id": other, "name": "potato"}], "hand": faces(before, 0)}
    with pytest.raises(AssertionError):
        checker.check_notes(before, event, {"p0": leaky})
    with pytest.raises(AssertionError):  # a hand that is not one's own
        checker.check_notes(before, event, {"p0": {"hand": faces(before, 1)}})
    checker.token_owner["feedbeef"] = "p1"
    with pytest.raises(AssertionError):
        checker.check_notes(before, event, {"p0": {"options": [{"token": "feedbeef"}]}})
    checker.check_notes(before, event, {"p1": {"options": [{"token": "feedbeef"}]}})


def faces(state: PapasState, seat: int) -> list[dict[str, Any]]:
    return [
        {"id": c, "name": CARD_NAME[c], "kind": "x", "value": 0, "alarm": False}
        for c in state.hands[seat]
    ]
