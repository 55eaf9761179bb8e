"""6 nimmt! (take5): the pure rules.

Flow (one event per protocol message; every "send to each player" of the protocol is one gate):

    start       -> dealt                 deal to every player (their own hand only)
    follow_up   -> turn_started          play_request (the board) to every player
    decide      -> card_played           no message: a play is secret until everyone played
                   [+ plays_revealed]    the last play reveals all: played to every player
    follow_up   -> card_placed*          no message (the next play_request shows the board)
                   then one of: row_taken (taken to all, a full row: the sixth card),
                   choice_requested (choose_request to its player only), turn_started,
                   dealt (a new round) or game_ended (game_over to all)
    decide      -> row_taken             the choose_response of the chooser: taken to all

Players are named in the events by their cardroom id and in the messages by their seat
index (see ``protocol``). Commands are the protocol's response messages themselves:
``{"type": "play_response", "data": CARD}`` and ``{"type": "choose_response", "data": "A"}``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal, NamedTuple

from cardroom_engine import (
    BotFactory,
    Command,
    Deadline,
    Event,
    GameRules,
    Message,
    Outcome,
    RandomBot,
    Rejection,
    inputs,
)
from cardroom_engine.fields import builder, without
from cardroom_wire import ErrorCode

from . import protocol as p
from .bots import HeuristicBot
from .config import MAX_PLAYERS, MIN_PLAYERS, ROWS, Take5Config, check_start
from .placement import cheapest_row, target_row

Phase = Literal["setup", "dealt", "play", "resolve", "choose", "over"]

# Event types (the internal log: the full truth, never sent as such).
DEALT = "dealt"
TURN_STARTED = "turn_started"
CARD_PLAYED = "card_played"
PLAYS_REVEALED = "plays_revealed"
CARD_PLACED = "card_placed"
CHOICE_REQUESTED = "choice_requested"
ROW_TAKEN = "row_taken"
GAME_ENDED = "game_ended"

# Game-specific rejection code (the others are the wire's ErrorCode).
ALREADY_PLAYED = "already_played"

_ROW_INDEX = {name: index for index, name in enumerate(ROWS)}


class Take5State(NamedTuple):
    """The whole truth of one game (immutable: a named tuple, fast to copy with a change)."""

    config: Take5Config
    seats: tuple[str, ...]
    bulls: tuple[int, ...]
    """Bull heads by face (index 0 unused)."""
    phase: Phase = "setup"
    round: int = 0
    turn: int = 0
    hands: tuple[tuple[int, ...], ...] = ()
    """Faces in each seat's hand, ascending (a played card has left it)."""
    rows: tuple[tuple[int, ...], ...] = ()
    scores: tuple[int, ...] = ()
    plays: tuple[int | None, ...] = ()
    """This turn's secret plays by seat (None: not played yet); cleared when revealed."""
    revealed: tuple[tuple[int, int], ...] = ()
    """This turn's plays as (face, seat), ascending: public once ``played`` was sent."""
    placed: int = 0
    """How many of ``revealed`` are resolved."""
    chooser: int | None = None

    def seat(self, player: str) -> int:
        return self.seats.index(player)


class At:
    """The positions of :class:`Take5State`'s fields, for evolve's copy with changes::

        new = list(state)
        new[At.PHASE] = "play"
        return from_fields(new)

    About a third of the cost of ``state._replace(phase="play")``, which maps ``kwds.pop``
    over every field name and then checks what is left; evolve runs for every event."""

    CONFIG: Final = Take5State._fields.index("config")
    SEATS: Final = Take5State._fields.index("seats")
    BULLS: Final = Take5State._fields.index("bulls")
    PHASE: Final = Take5State._fields.index("phase")
    ROUND: Final = Take5State._fields.index("round")
    TURN: Final = Take5State._fields.index("turn")
    HANDS: Final = Take5State._fields.index("hands")
    ROWS: Final = Take5State._fields.index("rows")
    SCORES: Final = Take5State._fields.index("scores")
    PLAYS: Final = Take5State._fields.index("plays")
    REVEALED: Final = Take5State._fields.index("revealed")
    PLACED: Final = Take5State._fields.index("placed")
    CHOOSER: Final = Take5State._fields.index("chooser")


#: The Take5State of ``list(state)`` with fields changed by position (``At``).
from_fields = builder(Take5State)


def _set(items: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    changed = list(items)
    changed[index] = value
    return tuple(changed)


def _search_bot(player: str) -> Any:
    """The information-set search bot (``.search``, which imports these rules)."""
    from .search import search_bot

    return search_bot(player)


def game_is_over(scores: Sequence[int], win_score: int) -> bool:
    """The game loop: play on while everyone is below win_score or the lowest is tied."""
    if max(scores) < win_score:
        return False
    low = sorted(scores)
    return low[0] != low[1]


class Take5(GameRules[Take5State]):
    name: ClassVar[str] = "take5"
    min_players: ClassVar[int] = MIN_PLAYERS
    max_players: ClassVar[int] = MAX_PLAYERS
    config_model: ClassVar[type[Take5Config]] = Take5Config
    bots: ClassVar[Mapping[str, BotFactory]] = {
        "random": RandomBot,
        "heuristic": HeuristicBot,
        "search": lambda player: _search_bot(player),
    }

    def __init__(self) -> None:
        self._evolvers: dict[str, Callable[[Take5State, Event], Take5State]] = {
            DEALT: self._on_dealt,
            TURN_STARTED: self._on_turn_started,
            CARD_PLAYED: self._on_card_played,
            PLAYS_REVEALED: self._on_plays_revealed,
            CARD_PLACED: self._on_card_placed,
            CHOICE_REQUESTED: self._on_choice_requested,
            ROW_TAKEN: self._on_row_taken,
            GAME_ENDED: self._on_game_ended,
        }

    # -- setup ------------------------------------------------------------------------------
    def check_start(self, config: Take5Config, seats: Sequence[str]) -> None:
        check_start(config, seats)

    def setup(self, config: Take5Config, seats: Sequence[str]) -> Take5State:
        return Take5State(
            config=config,
            seats=tuple(seats),
            bulls=config.bull_values(),
            scores=(0,) * len(seats),
        )

    def start(self, state: Take5State, rng: random.Random) -> list[Event]:
        return [self._deal(state, rng)]

    def _deal(self, state: Take5State, rng: random.Random) -> Event:
        """A fresh full deck, shuffled: turn_count cards to each player, then four rows."""
        deck = list(range(1, state.config.deck_size + 1))
        rng.shuffle(deck)
        count = state.config.turn_count
        hands = {
            player: sorted(deck[i * count : (i + 1) * count])
            for i, player in enumerate(state.seats)
        }
        dealt = len(state.seats) * count
        return {
            "type": DEALT,
            "round": state.round + 1,
            "hands": hands,
            "rows": deck[dealt : dealt + len(ROWS)],
        }

    # -- commands ----------------------------------------------------------------------------
    def decide(
        self, state: Take5State, actor: str, command: Command, rng: random.Random
    ) -> list[Event]:
        kind = command.get("type") if isinstance(command, Mapping) else None
        if not isinstance(kind, str):
            raise Rejection(ErrorCode.BAD_REQUEST, "a command needs a string 'type'")
        if kind == p.PLAY_RESPONSE:
            return self._decide_play(state, actor, command)
        if kind == p.CHOOSE_RESPONSE:
            return self._decide_choose(state, actor, command)
        raise Rejection(
            ErrorCode.UNKNOWN_COMMAND,
            f"take5 knows the commands {p.PLAY_RESPONSE!r} and {p.CHOOSE_RESPONSE!r}",
        )

    def _decide_play(self, state: Take5State, actor: str, command: Command) -> list[Event]:
        face, bull = _card_fields(command.get("data"))
        if actor not in state.seats or state.phase != "play":
            raise Rejection(ErrorCode.NOT_YOUR_TURN, "no card is asked for now")
        seat = state.seat(actor)
        if state.plays[seat] is not None:
            raise Rejection(ALREADY_PLAYED, "you have already played a card this turn")
        if face not in state.hands[seat] or state.bulls[face] != bull:
            raise Rejection(ErrorCode.ILLEGAL_MOVE, "that card is not in your hand")
        return self._play(state, seat, face, house=False)

    def _play(self, state: Take5State, seat: int, face: int, *, house: bool) -> list[Event]:
        played: Event = {"type": CARD_PLAYED, "player": state.seats[seat], "face": face}
        if house:
            played["house"] = True
        events = [played]
        if all(play is not None for i, play in enumerate(state.plays) if i != seat):
            plays = [(face if i == seat else play, i) for i, play in enumerate(state.plays)]
            events.append(
                {
                    "type": PLAYS_REVEALED,
                    "plays": [
                        {"player": state.seats[i], "face": f}
                        for f, i in sorted((f, i) for f, i in plays if f is not None)
                    ],
                }
            )
        return events

    def _decide_choose(self, state: Take5State, actor: str, command: Command) -> list[Event]:
        data = inputs.choice(command.get("data"), "data (a STACK_ID)", _ROW_INDEX)
        if (
            state.phase != "choose"
            or actor not in state.seats
            or state.chooser != state.seat(actor)
        ):
            raise Rejection(ErrorCode.NOT_YOUR_TURN, "no row choice is asked of you now")
        return [self._take(state, _ROW_INDEX[data], chosen=True, house=False)]

    def _take(self, state: Take5State, row: int, *, chosen: bool, house: bool) -> Event:
        face, seat = state.revealed[state.placed]
        stack = state.rows[row]
        event: Event = {
            "type": ROW_TAKEN,
            "player": state.seats[seat],
            "face": face,
            "row": ROWS[row],
            "stack": list(stack),
            "bulls": sum(state.bulls[f] for f in stack),
            "chosen": chosen,
        }
        if house:
            event["house"] = True
        return event

    # -- what happens by itself -------------------------------------------------------------
    def follow_up(self, state: Take5State, rng: random.Random) -> list[Event]:
        if state.phase == "dealt":
            return [{"type": TURN_STARTED, "round": state.round, "turn": state.turn + 1}]
        if state.phase != "resolve":
            return []
        # Silent placements run on until an event that someone must see (and acknowledge).
        events: list[Event] = []
        while True:
            event = self._next(state, rng)
            events.append(event)
            if event["type"] != CARD_PLACED:
                return events
            state = self._on_card_placed(state, event)

    def _next(self, state: Take5State, rng: random.Random) -> Event:
        if state.placed < len(state.revealed):
            face, seat = state.revealed[state.placed]
            row = target_row(state.rows, face)
            if row is None:
                return {"type": CHOICE_REQUESTED, "player": state.seats[seat], "face": face}
            if len(state.rows[row]) >= state.config.stack_size:
                return self._take(state, row, chosen=False, house=False)
            return {
                "type": CARD_PLACED,
                "player": state.seats[seat],
                "face": face,
                "row": ROWS[row],
            }
        if state.turn < state.config.turn_count:
            return {"type": TURN_STARTED, "round": state.round, "turn": state.turn + 1}
        if game_is_over(state.scores, state.config.win_score):
            return {
                "type": GAME_ENDED,
                "rounds": state.round,
                "scores": dict(zip(state.seats, state.scores, strict=True)),
            }
        return self._deal(state, rng)

    def deadline(self, state: Take5State) -> Deadline | None:
        key = _window(state)
        return None if key is None else Deadline(state.config.turn_timeout, key)

    def on_timeout(self, state: Take5State, key: str, rng: random.Random) -> list[Event]:
        """The turn timeout: the house plays for every player still missing."""
        if key != _window(state):
            return []
        if state.phase == "choose" and state.chooser is not None:
            row = cheapest_row(state.rows, state.bulls)
            return [self._take(state, row, chosen=True, house=True)]
        events: list[Event] = []
        for seat, play in enumerate(state.plays):
            if play is None:
                produced = self._play(state, seat, state.hands[seat][0], house=True)
                events += produced
                state = self._on_card_played(state, produced[0])
        return events

    def house_action(
        self, state: Take5State, player: str, rng: random.Random
    ) -> dict[str, Any] | None:
        """RULES: the lowest card; when choosing, the row with the fewest bull heads."""
        if player not in state.seats:
            return None
        seat = state.seat(player)
        if state.phase == "play" and state.plays[seat] is None:
            return p.play_response(state.hands[seat][0], state.bulls)
        if state.phase == "choose" and state.chooser == seat:
            return p.choose_response(cheapest_row(state.rows, state.bulls))
        return None

    # -- folding ------------------------------------------------------------------------------
    def evolve(self, state: Take5State, event: Event) -> Take5State:
        return self._evolvers[event["type"]](state, event)

    # Each evolver copies the state into a list, sets the changed fields by position and
    # builds the new state once: see ``At``.
    def _on_dealt(self, state: Take5State, event: Event) -> Take5State:
        hands = event["hands"]
        new = list(state)
        new[At.PHASE] = "dealt"
        new[At.ROUND] = event["round"]
        new[At.TURN] = 0
        new[At.HANDS] = tuple(tuple(sorted(hands[player])) for player in state.seats)
        new[At.ROWS] = tuple((face,) for face in event["rows"])
        new[At.PLAYS] = (None,) * len(state.seats)
        new[At.REVEALED] = ()
        new[At.PLACED] = 0
        new[At.CHOOSER] = None
        return from_fields(new)

    def _on_turn_started(self, state: Take5State, event: Event) -> Take5State:
        new = list(state)
        new[At.PHASE] = "play"
        new[At.TURN] = event["turn"]
        new[At.PLAYS] = (None,) * len(state.seats)
        new[At.REVEALED] = ()
        new[At.PLACED] = 0
        new[At.CHOOSER] = None
        return from_fields(new)

    def _on_card_played(self, state: Take5State, event: Event) -> Take5State:
        seat = state.seat(event["player"])
        face = event["face"]
        new = list(state)
        new[At.HANDS] = _set(state.hands, seat, without(state.hands[seat], face))
        new[At.PLAYS] = _set(state.plays, seat, face)
        return from_fields(new)

    def _on_plays_revealed(self, state: Take5State, event: Event) -> Take5State:
        revealed = tuple((play["face"], state.seat(play["player"])) for play in event["plays"])
        new = list(state)
        new[At.PHASE] = "resolve"
        new[At.PLAYS] = (None,) * len(state.seats)
        new[At.REVEALED] = revealed
        new[At.PLACED] = 0
        return from_fields(new)

    def _on_card_placed(self, state: Take5State, event: Event) -> Take5State:
        row = _ROW_INDEX[event["row"]]
        new = list(state)
        new[At.ROWS] = _set(state.rows, row, (*state.rows[row], event["face"]))
        new[At.PLACED] = state.placed + 1
        return from_fields(new)

    def _on_choice_requested(self, state: Take5State, event: Event) -> Take5State:
        new = list(state)
        new[At.PHASE] = "choose"
        new[At.CHOOSER] = state.seat(event["player"])
        return from_fields(new)

    def _on_row_taken(self, state: Take5State, event: Event) -> Take5State:
        seat = state.seat(event["player"])
        new = list(state)
        new[At.PHASE] = "resolve"
        new[At.ROWS] = _set(state.rows, _ROW_INDEX[event["row"]], (event["face"],))
        new[At.SCORES] = _set(state.scores, seat, state.scores[seat] + event["bulls"])
        new[At.PLACED] = state.placed + 1
        new[At.CHOOSER] = None
        return from_fields(new)

    def _on_game_ended(self, state: Take5State, event: Event) -> Take5State:
        new = list(state)
        new[At.PHASE] = "over"
        return from_fields(new)

    # -- what players see --------------------------------------------------------------------
    def notify(self, before: Take5State, event: Event, after: Take5State) -> dict[str, Message]:
        kind = event["type"]
        bulls = after.bulls
        if kind == DEALT:
            return {
                player: p.deal_msg(hand, bulls)
                for player, hand in zip(after.seats, after.hands, strict=True)
            }
        if kind == TURN_STARTED:
            return {player: p.play_request_msg(after.rows, bulls) for player in after.seats}
        if kind == PLAYS_REVEALED:
            return {player: p.played_msg(after.revealed, bulls) for player in after.seats}
        if kind == CHOICE_REQUESTED:
            return {event["player"]: p.choose_request_msg(after.rows, bulls)}
        if kind == ROW_TAKEN:
            seat = after.seat(event["player"])
            return {player: p.taken_msg(seat, event["stack"], bulls) for player in after.seats}
        if kind == GAME_ENDED:
            return {player: p.game_over_msg(after.scores) for player in after.seats}
        return {}  # card_played (secret) and card_placed (shown by the next board)

    def view(self, state: Take5State, player: str | None) -> dict[str, Any]:
        bulls = state.bulls
        me = state.seat(player) if player is not None and player in state.seats else None
        if state.phase == "play":
            waiting = [i for i, play in enumerate(state.plays) if play is None]
        elif state.phase == "choose" and state.chooser is not None:
            waiting = [state.chooser]
        else:
            waiting = []
        view: dict[str, Any] = {
            "phase": state.phase,
            "round": state.round,
            "turn": state.turn,
            "turn_count": state.config.turn_count,
            "stack_size": state.config.stack_size,
            "win_score": state.config.win_score,
            "ids": p.ids(state.seats),
            "me": me,
            "board": p.board(state.rows, bulls) if state.rows else None,
            "scores": [{"player": i, "score": s} for i, s in enumerate(state.scores)],
            "waiting_for": waiting,
            "played": p.played_msg(state.revealed, bulls)["data"],
            "to_place": p.played_msg(state.revealed[state.placed :], bulls)["data"],
            "chooser": state.chooser,
        }
        if me is not None:
            view["hand"] = p.cards(state.hands[me], bulls) if state.hands else []
            mine = state.plays[me] if state.plays else None
            view["my_play"] = None if mine is None else p.card(mine, bulls)
        return view

    def actions(self, state: Take5State, player: str) -> list[dict[str, Any]]:
        if player not in state.seats:
            return []
        seat = state.seat(player)
        if state.phase == "play" and state.plays[seat] is None:
            return [p.play_response(face, state.bulls) for face in state.hands[seat]]
        if state.phase == "choose" and state.chooser == seat:
            return [p.choose_response(row) for row in range(len(ROWS))]
        return []

    def outcome(self, state: Take5State) -> Outcome | None:
        if state.phase != "over":
            return None
        ranked = Outcome.from_scores(
            dict(zip(state.seats, state.scores, strict=True)), lower_is_better=True
        )
        return Outcome(
            scores=ranked.scores,
            ranking=ranked.ranking,
            details={"rounds": state.round, "ids": p.ids(state.seats)},
        )


def _card_fields(data: object) -> tuple[int, int]:
    """(face, bull) of a CARD, or a ``bad_request`` (JSON booleans are not numbers)."""
    card = inputs.obj(data, 'data (a CARD {"face": integer, "bull": integer})')
    face = inputs.integer(card.get("face"), "data.face")
    return face, inputs.integer(card.get("bull"), "data.bull")


def _window(state: Take5State) -> str | None:
    """The key of the open turn window, or None while nobody is asked for anything."""
    if state.phase == "play":
        return f"play:{state.round}:{state.turn}"
    if state.phase == "choose":
        return f"choose:{state.round}:{state.turn}"
    return None
