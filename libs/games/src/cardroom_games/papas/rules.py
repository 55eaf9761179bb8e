"""The rules: decide, evolve, follow-ups, legal actions, the reaction deadline, the outcome.

What players see (``notify`` and ``view``) lives in :mod:`.protocol`; this module holds the
truth. Every random outcome (the deal, a reshuffle, a Runaway potatoes pick, the selection
tokens) is drawn in ``start``/``decide``/``follow_up``/``on_timeout`` and written into the
event, so ``evolve`` never draws.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from cardroom_engine import Deadline, Event, GameRules, Message, Outcome, Rejection, inputs
from cardroom_engine.fields import without
from cardroom_engine.game import BotFactory, Command
from cardroom_wire import ErrorCode

from . import cards as C
from . import protocol
from .bots import BOTS
from .cards import CARD_NAME, NAMES, TYPES
from .state import (
    ACTION_RESOLUTION,
    CARD_NAME_SELECTION,
    CARD_SELECTION,
    DISCARD_PHASE,
    END_SCORE,
    GAME_END,
    HAND_LIMIT,
    HAND_SIZE,
    NEXT_PLAYER,
    PLAYER_TURN,
    REACTION_PHASE,
    SETUP,
    TARGET_SELECTION,
    At,
    PapasConfig,
    Play,
    State,
    from_fields,
)

# Stable refusal codes of this game (besides the engine's ErrorCode values).
CARD_NOT_IN_HAND = "card_not_in_hand"
NOT_PLAYABLE = "not_playable"
INVALID_THREESOME = "invalid_threesome"
BAD_TARGET = "bad_target"
REACTION_CLOSED = "reaction_closed"
ALREADY_INTERRUPTED = "already_interrupted"
ALREADY_SKIPPED = "already_skipped"
NOT_AN_INTERRUPT = "not_an_interrupt"
CANNOT_CANCEL_THREESOME = "cannot_cancel_threesome"
UNKNOWN_TOKEN = "unknown_token"
UNKNOWN_CARD_NAME = "unknown_card_name"
DISCARD_AND_DRAW_UNAVAILABLE = "discard_and_draw_unavailable"
WRONG_STATE = "wrong_state"

REACTION_KEY = "reaction"

Draw = tuple[list[int], list[int] | None]
Draft = list[Any]
"""A state being changed in evolve: ``list(state)``, set by position (``At``), then
``from_fields``."""


# -- small pure helpers ------------------------------------------------------------------------


def _without_all(cards: tuple[int, ...], gone: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(c for c in cards if c not in gone)


def _set(items: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    changed = list(items)
    changed[index] = value
    return tuple(changed)


def draw_cards(deck: Sequence[int], discard: Sequence[int], n: int, rng: random.Random) -> Draw:
    """Draw ``n`` cards from the top; when the deck runs out, the discard pile is shuffled
    into a new deck (the permutation is returned to be written in the event)."""
    if len(deck) >= n:
        return list(deck[:n]), None
    drawn = list(deck)
    if not discard:
        return drawn, None
    order = list(discard)
    rng.shuffle(order)
    drawn += order[: n - len(drawn)]
    return drawn, order


def _apply_draw(
    deck: tuple[int, ...],
    discard: tuple[int, ...],
    drawn: Sequence[int],
    reshuffled: Sequence[int] | None,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The deck and discard pile after a draw written by :func:`draw_cards`."""
    if reshuffled is None:
        return deck[len(drawn) :], discard
    return tuple(reshuffled[len(drawn) - len(deck) :]), ()


def _token(rng: random.Random, taken: set[str]) -> str:
    while True:
        token = f"{rng.getrandbits(64):016x}"
        if token not in taken:
            taken.add(token)
            return token


# -- command fields ----------------------------------------------------------------------------


def _card(command: Command, key: str = "card") -> int:
    # any integer: one that is no card of the deck is not in the hand either
    return inputs.integer(command[key], key)


class PapasRules(GameRules[State]):
    """Dónde las papas queman: the rules of the package docs."""

    name = "papas"
    min_players = 2
    max_players = 6
    config_model = PapasConfig
    bots: ClassVar[Mapping[str, BotFactory]] = BOTS
    # a pass is told to the passer only: the others must not see the version move either
    private_events: ClassVar[frozenset[str]] = frozenset({"SkipReaction"})

    def audience(self, state: State, event: Event) -> tuple[str, ...] | None:
        return (event["player"],) if event["type"] == "SkipReaction" else None

    # -- setup -------------------------------------------------------------------------------
    def setup(self, config: Any, seats: Sequence[str]) -> State:
        if not isinstance(config, PapasConfig):
            config = PapasConfig.model_validate(config)
        n = len(seats)
        return State(
            seats=tuple(seats),
            threshold=config.win_threshold or C.win_threshold(n),
            reaction_seconds=config.reaction_seconds,
            values=C.card_values(config.wildcard_values),
            hands=((),) * n,
            potatoes=(0,) * n,
        )

    def start(self, state: State, rng: random.Random) -> list[Event]:
        order = list(range(C.DECK_SIZE))
        rng.shuffle(order)
        return [{"type": "GameStart", "deck": order, "hand_size": HAND_SIZE}]

    # -- decide ------------------------------------------------------------------------------
    def decide(self, state: State, actor: str, command: Command, rng: random.Random) -> list[Event]:
        kind = command.get("type")
        if type(kind) is not str:
            raise Rejection(ErrorCode.BAD_REQUEST, "a command needs a string 'type'")
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise Rejection(ErrorCode.UNKNOWN_COMMAND, "unknown command type")
        if actor not in state.seats:
            raise Rejection(ErrorCode.NOT_YOUR_TURN, "you are not playing in this game")
        if state.phase in (SETUP, END_SCORE, GAME_END):
            raise Rejection(ErrorCode.ILLEGAL_MOVE, "the game is not running")
        return handler(self, state, state.seat(actor), command, rng)

    def _turn(self, state: State, seat: int, phase: str) -> None:
        if seat != state.active:
            raise Rejection(ErrorCode.NOT_YOUR_TURN, "it is not your turn")
        if state.phase != phase:
            raise Rejection(WRONG_STATE, f"not possible now: the game is in {state.phase}")

    def _in_hand(self, state: State, seat: int, card: int) -> None:
        if card not in state.hands[seat]:
            raise Rejection(CARD_NOT_IN_HAND, "that card is not in your hand")

    def _play_card(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command, "card")
        card = _card(command)
        self._turn(state, seat, PLAYER_TURN)
        self._in_hand(state, seat, card)
        name = CARD_NAME[card]
        if name not in C.PLAYABLE:
            raise Rejection(
                NOT_PLAYABLE, "potatoes, wildcards and interrupts cannot be played alone"
            )
        targets: list[str] = []
        if TYPES[name].target == "next_player":
            targets = [state.seats[state.next_seat(seat)]]
        return [
            {
                "type": "PlayCard",
                "player": state.seats[seat],
                "card": card,
                "name": name,
                "targets": targets,
            }
        ]

    def _play_threesome(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command, "cards")
        cards = inputs.integers(command["cards"], "cards", 3, 3)
        if len(set(cards)) != 3:
            raise Rejection(ErrorCode.BAD_REQUEST, "cards: three different cards are required")
        self._turn(state, seat, PLAYER_TURN)
        for card in cards:
            self._in_hand(state, seat, card)
        reward = C.threesome_reward(cards, state.values)
        if not reward:
            raise Rejection(INVALID_THREESOME, "these three cards are not a threesome")
        return [
            {
                "type": "PlayThreesome",
                "player": state.seats[seat],
                "cards": cards,
                "kind": C.threesome_kind(cards, state.values),
                "reward": reward,
            }
        ]

    def _select_targets(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command, "targets")
        targets = inputs.texts(command["targets"], "targets", 1, 2)
        self._turn(state, seat, TARGET_SELECTION)
        assert state.play is not None
        kind = TYPES[state.play.name].target
        for target in targets:
            if target not in state.seats:
                raise Rejection(BAD_TARGET, "every target must be a player of this game")
        if kind == "two_players":
            if len(targets) != 2 or targets[0] == targets[1]:
                raise Rejection(BAD_TARGET, "this card needs two different players")
        elif len(targets) != 1 or targets[0] == state.seats[seat]:
            raise Rejection(BAD_TARGET, "this card needs one opponent")
        return [{"type": "SelectTargets", "player": state.seats[seat], "targets": targets}]

    def _window(self, state: State, seat: int, window: int) -> None:
        """Refuse a reaction that does not belong to the open window (public facts only)."""
        if state.phase != REACTION_PHASE or window != state.window:
            if window == state.window and state.window_interrupted:
                raise Rejection(ALREADY_INTERRUPTED, "another player has already reacted")
            raise Rejection(REACTION_CLOSED, "that reaction window is not open")
        if seat == state.active:
            raise Rejection(ErrorCode.NOT_YOUR_TURN, "you cannot react to your own play")
        if seat not in state.reactors:
            raise Rejection(ALREADY_SKIPPED, "you have already passed in this window")

    def _skip(self, state: State, seat: int, command: Command, rng: random.Random) -> list[Event]:
        inputs.only(command, "window")
        window = inputs.integer(command["window"], "window")
        self._window(state, seat, window)
        events: list[Event] = [
            {"type": "SkipReaction", "player": state.seats[seat], "window": window}
        ]
        if state.reactors == (seat,):
            events.append(self._no_interrupt(state, "all_skipped"))
        return events

    def _interrupt(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command, "window", "card")
        window = inputs.integer(command["window"], "window")
        card = _card(command)
        self._window(state, seat, window)
        self._in_hand(state, seat, card)
        name = CARD_NAME[card]
        if name not in C.INTERRUPTS:
            raise Rejection(NOT_AN_INTERRUPT, "that card is not an interrupt")
        assert state.play is not None
        if name == C.NO_DUDE and state.play.kind == "threesome":
            raise Rejection(CANNOT_CANCEL_THREESOME, '"No dude" cannot cancel a threesome')
        return [
            {
                "type": "InterruptPlayed",
                "player": state.seats[seat],
                "window": window,
                "card": card,
                "name": name,
                "cancelled": state.seats[state.active],
            }
        ]

    def _no_interrupt(self, state: State, reason: str) -> Event:
        return {"type": "NoInterrupt", "window": state.window, "reason": reason}

    def _select_card(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command, "token")
        token = inputs.text(command["token"], "token")
        self._turn(state, seat, CARD_SELECTION)
        for known, card in state.selection:
            if known == token:
                return [
                    {
                        "type": "CardSelected",
                        "player": state.seats[seat],
                        "token": token,
                        "card": card,
                    }
                ]
        raise Rejection(UNKNOWN_TOKEN, "that selection token is not valid")

    def _select_name(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command, "name")
        name = inputs.text(command["name"], "name")
        self._turn(state, seat, CARD_NAME_SELECTION)
        if name not in TYPES:
            raise Rejection(UNKNOWN_CARD_NAME, "no card has that name")
        return [{"type": "CardNameSelected", "player": state.seats[seat], "name": name}]

    def _end_turn(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command)
        self._turn(state, seat, PLAYER_TURN)
        drawn, reshuffled = draw_cards(state.deck, state.discard, 1, rng)
        return [
            {
                "type": "EndTurn",
                "player": state.seats[seat],
                "drawn": drawn,
                "reshuffled": reshuffled,
            }
        ]

    def _discard_and_draw(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command)
        self._turn(state, seat, PLAYER_TURN)
        hand = state.hands[seat]
        if not (state.turn_fresh and len(hand) == 1):
            raise Rejection(
                DISCARD_AND_DRAW_UNAVAILABLE,
                "only with exactly one card at the start of your turn",
            )
        discard = (*state.discard, hand[0])
        drawn, reshuffled = draw_cards(state.deck, discard, 3, rng)
        return [
            {
                "type": "DiscardAndDraw",
                "player": state.seats[seat],
                "card": hand[0],
                "drawn": drawn,
                "reshuffled": reshuffled,
            }
        ]

    def _discard(
        self, state: State, seat: int, command: Command, rng: random.Random
    ) -> list[Event]:
        inputs.only(command, "card")
        card = _card(command)
        self._turn(state, seat, DISCARD_PHASE)
        self._in_hand(state, seat, card)
        return [{"type": "DiscardCards", "player": state.seats[seat], "card": card}]

    # -- what happens by itself --------------------------------------------------------------
    def follow_up(self, state: State, rng: random.Random) -> list[Event]:
        phase = state.phase
        seat = state.active
        player = state.seats[seat] if state.seats else ""
        if phase == PLAYER_TURN:
            if state.turn_fresh and not state.hands[seat]:
                drawn, reshuffled = draw_cards(state.deck, state.discard, 3, rng)
                return [
                    {"type": "AutoDraw", "player": player, "drawn": drawn, "reshuffled": reshuffled}
                ]
            return []
        if phase == CARD_SELECTION and not state.selection:
            assert state.play is not None
            target = state.play.targets[0]
            hand = list(state.hands[target])
            rng.shuffle(hand)
            taken: set[str] = set()
            options = [[_token(rng, taken), card] for card in hand]
            return [
                {
                    "type": "CardSelection",
                    "player": player,
                    "target": state.seats[target],
                    "reveal": state.play.name in C.REVEALS_HAND,
                    "options": options,
                }
            ]
        if phase == ACTION_RESOLUTION:
            return [self._resolve(state, rng)]
        if phase == NEXT_PLAYER:
            if state.draw_due:
                drawn, reshuffled = draw_cards(state.deck, state.discard, 1, rng)
                return [
                    {"type": "DrawCard", "player": player, "drawn": drawn, "reshuffled": reshuffled}
                ]
            nxt = state.next_seat(seat)
            skipped = []
            if state.skip_next:
                skipped = [state.seats[nxt]]
                nxt = state.next_seat(nxt)
            return [{"type": "NextTurn", "player": state.seats[nxt], "skipped": skipped}]
        if phase == END_SCORE:
            assert state.winner is not None
            return [
                {
                    "type": "EndScore",
                    "winner": state.seats[state.winner],
                    "scores": dict(zip(state.seats, state.potatoes, strict=True)),
                }
            ]
        return []

    def _resolve(self, state: State, rng: random.Random) -> Event:
        """ActionResolution: the effect of an action card that nobody interrupted."""
        play = state.play
        assert play is not None
        seat = state.active
        name = play.name
        event: Event = {
            "type": "ActionResolved",
            "player": state.seats[seat],
            "card": play.card,
            "name": name,
            "targets": [state.seats[t] for t in play.targets],
        }
        target = play.targets[0] if play.targets else seat
        if name in (C.GET_OFF_THE_PONY, C.LOOK_AHEAD):  # never below 0
            event["potatoes"] = 1 if state.potatoes[target] > 0 else 0
        elif name == C.POTATO_OF_THE_YEAR:
            event["potatoes"] = 1
        elif name in (C.LEND_ME_A_BUCK, C.POTATO_DAWAN):
            event["taken"] = state.selected
        elif name == C.PAPAGEDDON:
            event["taken"] = state.selected
            event["direction"] = -state.direction
        elif name == C.POPE_POTATO:
            event["named"] = state.named
            event["taken"] = next(
                (c for c in state.hands[target] if CARD_NAME[c] == state.named), None
            )
        elif name == C.RUNAWAY_POTATOES:
            taken: dict[str, int] = {}
            for other in range(len(state.seats)):
                if other != seat and state.hands[other]:
                    taken[state.seats[other]] = rng.choice(state.hands[other])
            event["runaway"] = taken
            deck: list[int] | None = None
            if taken:  # the taken cards go into the deck, which is shuffled
                deck = [*state.deck, *taken.values()]
                rng.shuffle(deck)
            event["deck"] = deck
        elif name in (C.HARRY_POTATO, C.JUMP_TO_THE_SIDE):
            count = 2 if name == C.HARRY_POTATO else 1
            event["drawn"], event["reshuffled"] = draw_cards(state.deck, state.discard, count, rng)
        elif name == C.POTATO_OF_DESTINY:
            lost = state.hands[target]
            event["discarded"] = list(lost)
            discard = (*state.discard, *lost)
            event["drawn"], event["reshuffled"] = draw_cards(state.deck, discard, 2, rng)
        # Spider potato needs nothing more than its two targets.
        return event

    # -- the reaction window deadline --------------------------------------------------------
    def deadline(self, state: State) -> Deadline | None:
        if state.phase == REACTION_PHASE:
            return Deadline(state.reaction_seconds, f"{REACTION_KEY}:{state.window}")
        return None

    def on_timeout(self, state: State, key: str, rng: random.Random) -> list[Event]:
        if state.phase == REACTION_PHASE and key == f"{REACTION_KEY}:{state.window}":
            return [self._no_interrupt(state, "deadline")]
        return []

    def house_action(self, state: State, player: str, rng: random.Random) -> dict[str, Any] | None:
        """For an away player: pass in reaction windows; on its turn play a threesome it holds
        (the only way to golden potatoes: a table whose players are all away must still come
        to an end), else end the turn; otherwise pick at random."""
        actions = self.actions(state, player)
        for kind in ("SkipReaction", "PlayThreesome", "EndTurn"):
            for action in actions:
                if action["type"] == kind:
                    return action
        return rng.choice(actions) if actions else None

    # -- evolve ------------------------------------------------------------------------------
    def evolve(self, state: State, event: Event) -> State:
        evolver = _EVOLVERS.get(event["type"])
        if evolver is None:
            raise ValueError(f"unknown papas event {event['type']!r}")
        return evolver(state, event)

    # -- legal actions -----------------------------------------------------------------------
    def actions(self, state: State, player: str) -> list[dict[str, Any]]:
        """Complete legal commands, one per distinct card face (copies of a face are
        interchangeable; ``decide`` accepts any copy)."""
        if player not in state.seats:
            return []
        seat = state.seat(player)
        phase = state.phase
        if phase == REACTION_PHASE:
            if seat not in state.reactors:
                return []
            out: list[dict[str, Any]] = [{"type": "SkipReaction", "window": state.window}]
            assert state.play is not None
            seen: set[str] = set()
            for card in state.hands[seat]:
                name = CARD_NAME[card]
                if name in C.INTERRUPTS and name not in seen:
                    if name == C.NO_DUDE and state.play.kind == "threesome":
                        continue
                    seen.add(name)
                    out.append({"type": "PlayInterrupt", "window": state.window, "card": card})
            return out
        if seat != state.active:
            return []
        hand = state.hands[seat]
        if phase == PLAYER_TURN:
            if state.turn_fresh and not hand:
                return []  # the automatic draw follows
            out = []
            for card in _distinct(hand, state.values):
                if CARD_NAME[card] in C.PLAYABLE:
                    out.append({"type": "PlayCard", "card": card})
            out.extend(
                {"type": "PlayThreesome", "cards": t} for t in threesomes(hand, state.values)
            )
            if state.turn_fresh and len(hand) == 1:
                out.append({"type": "DiscardAndDraw"})
            out.append({"type": "EndTurn"})
            return out
        if phase == TARGET_SELECTION:
            assert state.play is not None
            others = [p for p in state.seats if p != player]
            if TYPES[state.play.name].target == "two_players":
                seats = state.seats
                return [
                    {"type": "SelectTargets", "targets": [a, b]}
                    for i, a in enumerate(seats)
                    for b in seats[i + 1 :]
                ]
            return [{"type": "SelectTargets", "targets": [p]} for p in others]
        if phase == CARD_SELECTION:
            return [{"type": "SelectCard", "token": token} for token, _ in state.selection]
        if phase == CARD_NAME_SELECTION:
            return [{"type": "SelectCardName", "name": name} for name in NAMES]
        if phase == DISCARD_PHASE:
            return [{"type": "DiscardCard", "card": c} for c in _distinct(hand, state.values)]
        return []

    # -- outcome -----------------------------------------------------------------------------
    def outcome(self, state: State) -> Outcome | None:
        if state.phase != GAME_END or state.winner is None:
            return None
        scores = {p: float(n) for p, n in zip(state.seats, state.potatoes, strict=True)}
        ranked = Outcome.from_scores(scores, lower_is_better=False)
        details = {"winner": state.seats[state.winner], "threshold": state.threshold}
        return replace(ranked, details=details)

    # -- protocol (see protocol.py) ----------------------------------------------------------
    def notify(self, before: State, event: Event, after: State) -> dict[str, Message]:
        return protocol.notify(before, event, after)

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        return protocol.view(state, player)


def _distinct(hand: Sequence[int], values: Sequence[int]) -> list[int]:
    """One card of each face (name and value) in the hand, in hand order."""
    seen: set[tuple[str, int]] = set()
    out = []
    for card in hand:
        face = (CARD_NAME[card], values[card])
        if face not in seen:
            seen.add(face)
            out.append(card)
    return out


def threesomes(hand: Sequence[int], values: Sequence[int]) -> list[list[int]]:
    """Every legal threesome in a hand, one per distinct combination of faces."""
    candidates = [c for c in hand if TYPES[CARD_NAME[c]].kind != "action" or values[c] == 3]
    if len(candidates) < 3:
        return []
    by_face: dict[tuple[str, int], list[int]] = {}
    for card in candidates:
        by_face.setdefault((CARD_NAME[card], values[card]), []).append(card)
    faces = list(by_face.values())
    out: list[list[int]] = []
    count = len(faces)
    for i in range(count):
        for j in range(i, count):
            for k in range(j, count):
                picked = _pick(faces, (i, j, k))
                if picked is not None and C.threesome_reward(picked, values):
                    out.append(picked)
    return out


def _pick(faces: list[list[int]], indexes: tuple[int, int, int]) -> list[int] | None:
    used: dict[int, int] = {}
    picked = []
    for index in indexes:
        n = used.get(index, 0)
        if n >= len(faces[index]):
            return None
        picked.append(faces[index][n])
        used[index] = n + 1
    return picked


# -- evolve, one function per event type ---------------------------------------------------------
#
# Each evolver copies the state into a list, sets the changed fields by position and builds
# the new state once (``from_fields``): see :class:`At`. Helpers that change several fields
# write into that list (``new``, a ``Draft``) and read the state it was copied from.


def _after_potatoes(new: Draft, threshold: int, potatoes: tuple[int, ...], phase: str) -> None:
    """Change golden potatoes; reaching the threshold ends the game (EndScore)."""
    new[At.POTATOES] = potatoes
    best = max(potatoes)
    if best >= threshold:
        new[At.PHASE] = END_SCORE
        new[At.WINNER] = potatoes.index(best)  # the first seat with the most
    else:
        new[At.PHASE] = phase


def _open_window(new: Draft, state: State, play: Play) -> None:
    active = state.active
    new[At.PLAY] = play
    new[At.PHASE] = REACTION_PHASE
    new[At.WINDOW] = state.window + 1
    new[At.REACTORS] = (*range(active), *range(active + 1, len(state.seats)))  # all others
    new[At.WINDOW_INTERRUPTED] = False


def _give(
    deck: tuple[int, ...],
    discard: tuple[int, ...],
    hands: tuple[tuple[int, ...], ...],
    seat: int,
    event: Event,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """The deck, discard pile and hands once ``seat`` drew the event's ``drawn`` cards."""
    drawn = event["drawn"]
    deck, discard = _apply_draw(deck, discard, drawn, event["reshuffled"])
    return deck, discard, _set(hands, seat, (*hands[seat], *drawn))


def _move(
    hands: tuple[tuple[int, ...], ...], card: int | None, source: int, dest: int
) -> tuple[tuple[int, ...], ...]:
    if card is None:
        return hands
    hands = _set(hands, source, without(hands[source], card))
    return _set(hands, dest, (*hands[dest], card))


def _ev_game_start(state: State, event: Event) -> State:
    deck = tuple(event["deck"])
    size = int(event["hand_size"])
    n = len(state.seats)
    new = list(state)
    new[At.DECK] = deck[n * size :]
    new[At.HANDS] = tuple(deck[i * size : (i + 1) * size] for i in range(n))
    new[At.PHASE] = PLAYER_TURN
    new[At.ACTIVE] = 0
    new[At.TURN_FRESH] = True
    return from_fields(new)


def _ev_play_card(state: State, event: Event) -> State:
    seat = state.active
    card = int(event["card"])
    name = event["name"]
    targets = tuple(map(state.seat, event["targets"]))
    play = Play("card", (card,), name, targets=targets)
    new = list(state)
    new[At.HANDS] = _set(state.hands, seat, without(state.hands[seat], card))
    new[At.DISCARD] = (*state.discard, card)
    new[At.TURN_FRESH] = False
    if name in C.NEEDS_TARGET:
        new[At.PLAY] = play
        new[At.PHASE] = TARGET_SELECTION
    else:
        _open_window(new, state, play)
    return from_fields(new)


def _ev_play_threesome(state: State, event: Event) -> State:
    seat = state.active
    cards = tuple(int(c) for c in event["cards"])
    new = list(state)
    new[At.HANDS] = _set(state.hands, seat, _without_all(state.hands[seat], cards))
    new[At.DISCARD] = (*state.discard, *cards)
    new[At.TURN_FRESH] = False
    _open_window(new, state, Play("threesome", cards, event["kind"], int(event["reward"])))
    return from_fields(new)


def _ev_select_targets(state: State, event: Event) -> State:
    play = state.play
    assert play is not None
    targets = tuple(map(state.seat, event["targets"]))
    new = list(state)
    _open_window(new, state, Play(play.kind, play.cards, play.name, play.reward, targets))
    return from_fields(new)


def _ev_skip(state: State, event: Event) -> State:
    new = list(state)
    new[At.REACTORS] = without(state.reactors, state.seat(event["player"]))
    return from_fields(new)


def _ev_interrupt(state: State, event: Event) -> State:
    seat = state.seat(event["player"])
    card = int(event["card"])
    new = list(state)
    new[At.HANDS] = _set(state.hands, seat, without(state.hands[seat], card))
    new[At.DISCARD] = (*state.discard, card)
    new[At.PLAY] = None
    new[At.REACTORS] = ()
    new[At.WINDOW_INTERRUPTED] = True
    new[At.PHASE] = PLAYER_TURN
    return from_fields(new)


def _ev_no_interrupt(state: State, event: Event) -> State:
    play = state.play
    assert play is not None
    new = list(state)
    new[At.REACTORS] = ()
    new[At.WINDOW_INTERRUPTED] = False
    if play.kind == "threesome":
        active = state.active
        potatoes = _set(state.potatoes, active, state.potatoes[active] + play.reward)
        new[At.PLAY] = None
        _after_potatoes(new, state.threshold, potatoes, PLAYER_TURN)
    elif play.name in C.NEEDS_CARD_SELECTION:
        if state.hands[play.targets[0]]:
            new[At.PHASE] = CARD_SELECTION
            new[At.SELECTION] = ()
        else:
            new[At.PHASE] = ACTION_RESOLUTION
            new[At.SELECTED] = None
    elif play.name == C.POPE_POTATO:
        new[At.PHASE] = CARD_NAME_SELECTION
    else:
        new[At.PHASE] = ACTION_RESOLUTION
    return from_fields(new)


def _ev_card_selection(state: State, event: Event) -> State:
    new = list(state)
    new[At.SELECTION] = tuple((str(token), int(card)) for token, card in event["options"])
    return from_fields(new)


def _ev_card_selected(state: State, event: Event) -> State:
    new = list(state)
    new[At.SELECTION] = ()
    new[At.SELECTED] = int(event["card"])
    new[At.PHASE] = ACTION_RESOLUTION
    return from_fields(new)


def _ev_card_name_selected(state: State, event: Event) -> State:
    new = list(state)
    new[At.NAMED] = str(event["name"])
    new[At.PHASE] = ACTION_RESOLUTION
    return from_fields(new)


def _ev_action_resolved(state: State, event: Event) -> State:
    play = state.play
    assert play is not None
    seat = state.active
    name = play.name
    target = play.targets[0] if play.targets else seat
    potatoes, hands, deck, discard = state.potatoes, state.hands, state.deck, state.discard
    new = list(state)
    if name == C.GET_OFF_THE_PONY:
        n = int(event["potatoes"])
        potatoes = _set(potatoes, target, potatoes[target] - n)
        potatoes = _set(potatoes, seat, potatoes[seat] + n)
    elif name == C.LOOK_AHEAD:
        potatoes = _set(potatoes, target, max(0, potatoes[target] - int(event["potatoes"])))
    elif name == C.POTATO_OF_THE_YEAR:
        potatoes = _set(potatoes, seat, potatoes[seat] + int(event["potatoes"]))
    elif name in (C.LEND_ME_A_BUCK, C.POTATO_DAWAN, C.POPE_POTATO):
        hands = _move(hands, event["taken"], target, seat)
    elif name == C.PAPAGEDDON:
        hands = _move(hands, event["taken"], target, seat)
        new[At.DIRECTION] = int(event["direction"])
    elif name == C.RUNAWAY_POTATOES:
        for player, card in event["runaway"].items():
            other = state.seat(player)
            hands = _set(hands, other, without(hands[other], int(card)))
        if event["deck"] is not None:
            deck = tuple(event["deck"])
    elif name in (C.HARRY_POTATO, C.JUMP_TO_THE_SIDE):
        deck, discard, hands = _give(deck, discard, hands, seat, event)
        if name == C.JUMP_TO_THE_SIDE:
            new[At.SKIP_NEXT] = True
    elif name == C.POTATO_OF_DESTINY:
        discard = (*discard, *hands[target])
        hands = _set(hands, target, ())
        deck, discard, hands = _give(deck, discard, hands, target, event)
    elif name == C.SPIDER_POTATO:
        a, b = play.targets
        hands = _set(_set(hands, a, hands[b]), b, hands[a])
    new[At.HANDS] = hands
    new[At.DECK] = deck
    new[At.DISCARD] = discard
    alarm = TYPES[name].alarm
    _after_potatoes(new, state.threshold, potatoes, NEXT_PLAYER if alarm else PLAYER_TURN)
    new[At.DRAW_DUE] = alarm
    new[At.PLAY] = None
    new[At.SELECTION] = ()
    new[At.SELECTED] = None
    new[At.NAMED] = None
    return from_fields(new)


def _ev_end_turn(state: State, event: Event) -> State:
    seat = state.active
    deck, discard, hands = _give(state.deck, state.discard, state.hands, seat, event)
    new = list(state)
    new[At.DECK] = deck
    new[At.DISCARD] = discard
    new[At.HANDS] = hands
    new[At.PHASE] = DISCARD_PHASE if len(hands[seat]) > HAND_LIMIT else NEXT_PLAYER
    new[At.DRAW_DUE] = False
    return from_fields(new)


def _ev_discard_and_draw(state: State, event: Event) -> State:
    seat = state.active
    card = int(event["card"])
    hands = _set(state.hands, seat, without(state.hands[seat], card))
    deck, discard, hands = _give(state.deck, (*state.discard, card), hands, seat, event)
    new = list(state)
    new[At.DECK] = deck
    new[At.DISCARD] = discard
    new[At.HANDS] = hands
    new[At.TURN_FRESH] = False
    new[At.PHASE] = NEXT_PLAYER
    new[At.DRAW_DUE] = False
    return from_fields(new)


def _ev_auto_draw(state: State, event: Event) -> State:
    deck, discard, hands = _give(state.deck, state.discard, state.hands, state.active, event)
    new = list(state)
    new[At.DECK] = deck
    new[At.DISCARD] = discard
    new[At.HANDS] = hands
    new[At.PHASE] = NEXT_PLAYER
    new[At.DRAW_DUE] = False
    new[At.TURN_FRESH] = False
    return from_fields(new)


def _ev_draw_card(state: State, event: Event) -> State:
    return _ev_end_turn(state, event)


def _ev_discard(state: State, event: Event) -> State:
    seat = state.active
    card = int(event["card"])
    hand = without(state.hands[seat], card)
    new = list(state)
    new[At.HANDS] = _set(state.hands, seat, hand)
    new[At.DISCARD] = (*state.discard, card)
    new[At.PHASE] = DISCARD_PHASE if len(hand) > HAND_LIMIT else NEXT_PLAYER
    return from_fields(new)


def _ev_next_turn(state: State, event: Event) -> State:
    new = list(state)
    new[At.ACTIVE] = state.seat(event["player"])
    new[At.PHASE] = PLAYER_TURN
    new[At.TURN_FRESH] = True
    new[At.SKIP_NEXT] = False
    new[At.DRAW_DUE] = False
    return from_fields(new)


def _ev_end_score(state: State, event: Event) -> State:
    new = list(state)
    new[At.PHASE] = GAME_END
    return from_fields(new)


_EVOLVERS = {
    "GameStart": _ev_game_start,
    "PlayCard": _ev_play_card,
    "PlayThreesome": _ev_play_threesome,
    "SelectTargets": _ev_select_targets,
    "SkipReaction": _ev_skip,
    "InterruptPlayed": _ev_interrupt,
    "NoInterrupt": _ev_no_interrupt,
    "CardSelection": _ev_card_selection,
    "CardSelected": _ev_card_selected,
    "CardNameSelected": _ev_card_name_selected,
    "ActionResolved": _ev_action_resolved,
    "EndTurn": _ev_end_turn,
    "DiscardAndDraw": _ev_discard_and_draw,
    "AutoDraw": _ev_auto_draw,
    "DrawCard": _ev_draw_card,
    "DiscardCards": _ev_discard,
    "NextTurn": _ev_next_turn,
    "EndScore": _ev_end_score,
}

_HANDLERS = {
    "PlayCard": PapasRules._play_card,
    "PlayThreesome": PapasRules._play_threesome,
    "SelectTargets": PapasRules._select_targets,
    "SkipReaction": PapasRules._skip,
    "PlayInterrupt": PapasRules._interrupt,
    "SelectCard": PapasRules._select_card,
    "SelectCardName": PapasRules._select_name,
    "EndTurn": PapasRules._end_turn,
    "DiscardAndDraw": PapasRules._discard_and_draw,
    "DiscardCard": PapasRules._discard,
}

COMMAND_TYPES = tuple(_HANDLERS)
EVENT_TYPES = tuple(_EVOLVERS)
