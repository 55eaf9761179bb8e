"""The 66 game as a cardroom game: config, decide, follow_up, view, actions, outcome."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from cardroom_engine import (
    BotFactory,
    Command,
    Event,
    GameRules,
    Outcome,
    Rejection,
    inputs,
)
from cardroom_wire import ErrorCode
from pydantic import BaseModel, ConfigDict

from . import moves as m
from .bots import BOTS
from .protocol import Message, notify
from .rules import (
    ANNOUNCED,
    ANOTHERS_CARD_PEEKED,
    BEGIN_TURN,
    CARD_DISCARDED,
    CARDS_EXCHANGED,
    CARDS_REPLACED,
    CARDS_SHOWN,
    CLAIM_CONFIRMED,
    CLAIM_REPLACE,
    CLAIM_SHOWN,
    DEALT,
    DECK_CARD_TAKEN,
    DECK_TAKEN,
    DISCARD_TAKEN,
    DISCARD_TAKEN_EVENT,
    EXCHANGE,
    FIRST_CARDS_SHOWN,
    GAME_OVER,
    IDLE,
    NEXT_ROUND_PROMPTED,
    OWN_CARD_PEEKED,
    PEEK_OTHER,
    PEEK_OWN,
    POWER_PENDING,
    POWER_PROMPTED,
    POWER_VALUES,
    READY,
    ROUND_DEALT,
    ROUND_ENDED,
    ROUND_FINISHED,
    ROUND_OVER,
    ROUND_STOPPED,
    SWAP_OTHER,
    SWAP_OWN,
    SWAP_OWN_PICKED,
    TURN_END,
    TURN_PROMPTED,
    TURN_STARTED,
    V1,
    State,
    add_scores,
    deal,
    draw,
    evolve,
    game_over,
    remaining_deck,
    round_scores,
    winners,
)

# Stable codes of this game's own refusals (besides the engine's generic ones).
STOP_ALREADY_REQUESTED = "stop_already_requested"
MUST_TARGET_ANOTHER_PLAYER = "must_target_another_player"


class SixtySixConfig(BaseModel):
    """Options of a 66 table. ``protocol`` picks the protocol generation and its rules."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    protocol: Literal["v1", "v2"] = "v2"


def _illegal(message: str) -> Rejection:
    return Rejection(ErrorCode.ILLEGAL_MOVE, message)


MAX_INDEXES = 64
"""The longest list of card indexes read (a hand is far shorter; a longer list is no move)."""


def _int(command: Command, field: str) -> int:
    # bool is not a position; neither is "1" or 1.0. Out of the hand: the game's illegal_move
    return inputs.integer(command.get(field), field)


def _int_list(command: Command, field: str) -> list[int]:
    return inputs.integers(command.get(field), field, 0, MAX_INDEXES)


class SixtySix(GameRules[State]):
    name: ClassVar[str] = "sixtysix"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 5
    config_model: ClassVar[type[BaseModel]] = SixtySixConfig
    bots: ClassVar[Mapping[str, BotFactory]] = BOTS
    # events that may be told to one player only: the others must not see the version move
    private_events: ClassVar[frozenset[str]] = frozenset(
        {
            TURN_PROMPTED,
            DECK_CARD_TAKEN,
            POWER_PROMPTED,
            DISCARD_TAKEN_EVENT,
            SWAP_OWN_PICKED,
            CLAIM_CONFIRMED,
            NEXT_ROUND_PROMPTED,
        }
    )

    def audience(self, state: State, event: Event) -> tuple[str, ...] | None:
        kind = event["type"]
        mover = (state.seats[state.active],)  # the player whose turn it is
        if kind in (TURN_PROMPTED, DECK_CARD_TAKEN, POWER_PROMPTED):
            return mover
        if kind in (DISCARD_TAKEN_EVENT, SWAP_OWN_PICKED):  # told in v2 only (v1: nobody)
            return None if state.protocol == V1 else mover
        if kind == CLAIM_CONFIRMED:  # told in v1 only (v2: nobody)
            return mover if state.protocol == V1 else None
        # the next round's starter (once a round: read from what it is told)
        told = tuple(notify(state, event, evolve(state, event)))
        return told if len(told) == 1 and len(state.seats) > 1 else None

    # -- setup --------------------------------------------------------------------------
    def setup(self, config: Any, seats: Sequence[str]) -> State:
        protocol = config.protocol if isinstance(config, SixtySixConfig) else "v2"
        return State(protocol=protocol, seats=tuple(seats), totals=(0,) * len(seats))

    def start(self, state: State, rng: random.Random) -> list[Event]:
        return [self._deal(state, rng.randrange(state.n), rng)]

    def _deal(self, state: State, starter: int, rng: random.Random) -> Event:
        hands, discard = deal(state.n, state.protocol == V1, rng)
        return {
            "type": ROUND_DEALT,
            "round": state.round + 1,
            "starter": starter,
            "hands": hands,
            "discard": discard,
            "deck": remaining_deck(hands, discard),
        }

    def evolve(self, state: State, event: Event) -> State:
        return evolve(state, event)

    def notify(self, before: State, event: Event, after: State) -> dict[str, Message]:
        return notify(before, event, after)

    # -- the game moving by itself ------------------------------------------------------
    def follow_up(self, state: State, rng: random.Random) -> list[Event]:
        phase = state.phase
        me = state.active
        if phase == DEALT:
            return [{"type": FIRST_CARDS_SHOWN}]
        if phase == BEGIN_TURN:
            return [{"type": TURN_STARTED, "player": me, "turn": state.turn + 1}]
        if phase == ANNOUNCED:
            return [{"type": TURN_PROMPTED, "player": me}]
        if phase == CLAIM_SHOWN:
            return [self._resolve_claim(state)]
        if phase == POWER_PENDING:
            return [{"type": POWER_PROMPTED, "player": me, "value": state.power}]
        if phase == TURN_END:
            following = (me + 1) % state.n
            if state.deck_size == 0 or following == state.stopper:
                return [self._finish_round(state, rng)]
            return [{"type": TURN_STARTED, "player": following, "turn": state.turn + 1}]
        if phase == ROUND_FINISHED:
            return [{"type": NEXT_ROUND_PROMPTED, "player": state.next_starter}]
        return []

    def _resolve_claim(self, state: State) -> Event:
        me = state.active
        hand = state.hands[me]
        shown = state.shown
        if state.protocol == V1:  # only a successful claim waits here
            return {"type": CLAIM_CONFIRMED, "player": me, "cardIndexes": list(shown)}
        if len({hand[i] for i in shown}) == 1:
            from_deck = state.drawn is not None
            return {
                "type": CARDS_REPLACED,
                "player": me,
                "cardIndexes": list(shown),
                "source": "deck" if from_deck else "discard",
                "value": state.drawn if from_deck else state.discard,
                "discardedValue": hand[min(shown)],
                "claim": True,
            }
        # A failed claim with a deck card: the card is discarded, with no power.
        return {"type": CARD_DISCARDED, "player": me, "value": state.drawn, "power": False}

    def _finish_round(self, state: State, rng: random.Random) -> Event:
        scores = round_scores(state.hands, state.stopper)
        totals = add_scores(state.totals, scores)
        finished = game_over(totals)
        zeros = [p for p, score in enumerate(scores) if score == 0]
        return {
            "type": ROUND_ENDED,
            "round": state.round,
            "turnCount": state.turn,
            "hands": [list(hand) for hand in state.hands],
            "stopper": state.stopper,
            "scores": scores,
            "totals": totals,
            "finished": finished,
            "nextStarter": None if finished else zeros[rng.randrange(len(zeros))],
        }

    # -- player commands ----------------------------------------------------------------
    def decide(self, state: State, actor: str, command: Command, rng: random.Random) -> list[Event]:
        kind = command.get("type")
        known = m.V1_COMMANDS if state.protocol == V1 else m.V2_COMMANDS
        if not isinstance(kind, str) or kind not in known:
            raise Rejection(ErrorCode.UNKNOWN_COMMAND, "not a command of this table's protocol")
        if actor not in state.seats:
            raise Rejection(ErrorCode.NOT_SEATED, "you are not seated at this table")
        seat = state.seat_of(actor)
        if state.phase == GAME_OVER:
            raise Rejection(ErrorCode.GAME_FINISHED, "the game is over")
        if state.mover() != seat:
            raise Rejection(ErrorCode.NOT_YOUR_TURN, "it is not your turn to move")
        if state.protocol == V1:
            return [self._decide_v1(state, kind, command, rng)]
        return [self._decide_v2(state, kind, command, rng)]

    # shared pieces ------------------------------------------------------------------------
    def _own_index(self, state: State, command: Command, field: str = "cardIndex") -> int:
        index = _int(command, field)
        if not 0 <= index < len(state.hands[state.active]):
            raise _illegal("there is no card at that position in your hand")
        return index

    def _other_card(
        self, state: State, command: Command, player_field: str, card_field: str
    ) -> tuple[int, int]:
        target = _int(command, player_field)
        index = _int(command, card_field)
        if not 0 <= target < state.n:
            raise _illegal("there is no player with that index")
        if target == state.active:
            raise Rejection(MUST_TARGET_ANOTHER_PLAYER, "pick a card of another player")
        if not 0 <= index < len(state.hands[target]):
            raise _illegal("that player has no card at that position")
        return target, index

    def _claim(self, state: State, command: Command) -> Event:
        indexes = _int_list(command, "cardIndexes")
        hand = state.hands[state.active]
        if len(indexes) < 2 or len(indexes) > len(hand):
            raise _illegal("show at least two of your cards")
        if len(set(indexes)) != len(indexes):
            raise _illegal("show each card only once")
        if any(not 0 <= i < len(hand) for i in indexes):
            raise _illegal("there is no card at that position in your hand")
        values = [hand[i] for i in indexes]
        return {
            "type": CARDS_SHOWN,
            "player": state.active,
            "cardIndexes": indexes,
            "values": values,
            "identical": len(set(values)) == 1,
        }

    def _take_from_deck(self, state: State, rng: random.Random) -> Event:
        value = draw(state.deck, state.deck_size, rng)
        return {"type": DECK_CARD_TAKEN, "player": state.active, "value": value}

    def _stop(self, state: State) -> Event:
        if state.stopper is not None:
            raise Rejection(STOP_ALREADY_REQUESTED, "a stop was already requested this round")
        return {"type": ROUND_STOPPED, "player": state.active}

    def _replace_one(self, state: State, index: int, source: str) -> Event:
        return {
            "type": CARDS_REPLACED,
            "player": state.active,
            "cardIndexes": [index],
            "source": source,
            "value": state.drawn if source == "deck" else state.discard,
            "discardedValue": state.hands[state.active][index],
            "claim": False,
        }

    def _discard(self, state: State) -> Event:
        value = state.drawn
        assert value is not None
        return {
            "type": CARD_DISCARDED,
            "player": state.active,
            "value": value,
            "power": value in POWER_VALUES,
        }

    def _peek_own(self, state: State, command: Command) -> Event:
        index = self._own_index(state, command)
        return {
            "type": OWN_CARD_PEEKED,
            "player": state.active,
            "cardIndex": index,
            "value": state.hands[state.active][index],
        }

    def _peek_other(self, state: State, command: Command, player_field: str) -> Event:
        target, index = self._other_card(state, command, player_field, "cardIndex")
        return {
            "type": ANOTHERS_CARD_PEEKED,
            "player": state.active,
            "target": target,
            "cardIndex": index,
            "value": state.hands[target][index],
        }

    def _exchange(self, state: State, own: int, target: int, other: int) -> Event:
        return {
            "type": CARDS_EXCHANGED,
            "player": state.active,
            "cardIndex": own,
            "target": target,
            "targetCardIndex": other,
            "ownValue": state.hands[state.active][own],
            "targetValue": state.hands[target][other],
        }

    def _next_round(self, state: State, rng: random.Random) -> Event:
        assert state.next_starter is not None
        return self._deal(state, state.next_starter, rng)

    # v2 -------------------------------------------------------------------------------------
    def _decide_v2(self, state: State, kind: str, command: Command, rng: random.Random) -> Event:
        phase = state.phase
        if kind == m.START_NEXT_ROUND and phase == ROUND_OVER:
            return self._next_round(state, rng)
        if phase == READY:
            if kind == m.TAKE_CARD_FROM_DECK:
                return self._take_from_deck(state, rng)
            if kind == m.TAKE_DISCARDED_CARD:
                if state.discard is None:
                    raise _illegal("nothing has been discarded yet")
                return {"type": DISCARD_TAKEN_EVENT, "player": state.active}
            if kind == m.STOP_ROUND:
                return self._stop(state)
        elif phase in (DECK_TAKEN, DISCARD_TAKEN):
            if kind == m.PICK_OWN_CARD:
                index = self._own_index(state, command)
                return self._replace_one(state, index, "deck" if phase == DECK_TAKEN else "discard")
            if kind == m.DISCARD and phase == DECK_TAKEN:
                return self._discard(state)
            if kind == m.SHOW_CARDS:
                return self._claim(state, command)
        elif phase in (PEEK_OWN, SWAP_OWN) and kind in (m.PICK_OWN_CARD, m.PEEK_OWN_CARD):
            if phase == PEEK_OWN:
                return self._peek_own(state, command)
            index = self._own_index(state, command)
            return {"type": SWAP_OWN_PICKED, "player": state.active, "cardIndex": index}
        elif phase in (PEEK_OTHER, SWAP_OTHER) and kind in (
            m.PICK_ANOTHERS_CARD,
            m.PEEK_ANOTHERS_CARD,
        ):
            if phase == PEEK_OTHER:
                return self._peek_other(state, command, "playerIndex")
            target, other = self._other_card(state, command, "playerIndex", "cardIndex")
            assert state.swap_index is not None
            return self._exchange(state, state.swap_index, target, other)
        raise _illegal(f"{kind} is not possible now")

    # v1 -------------------------------------------------------------------------------------
    def _decide_v1(self, state: State, kind: str, command: Command, rng: random.Random) -> Event:
        phase = state.phase
        if kind == m.START_NEXT_ROUND and phase == ROUND_OVER:
            return self._next_round(state, rng)
        if phase == READY:
            if kind == m.TAKE_CARD_FROM_DECK:
                return self._take_from_deck(state, rng)
            if kind == m.REPLACE_CARD_BY_DISCARDED:
                index = self._own_index(state, command)
                if state.discard is None:
                    raise _illegal("nothing has been discarded yet")
                return self._replace_one(state, index, "discard")
            if kind == m.STOP_ROUND:
                return self._stop(state)
            if kind == m.SHOW_CARDS:
                return self._claim(state, command)
        elif phase == DECK_TAKEN:
            if kind == m.REPLACE_CARD_FROM_DECK:
                return self._replace_one(state, self._own_index(state, command), "deck")
            if kind == m.DISCARD:
                return self._discard(state)
        elif phase == CLAIM_REPLACE:
            me = state.active
            shown = list(state.shown)
            discarded = state.hands[me][min(shown)]
            if kind == m.REPLACE_CARDS_FROM_DECK:
                if state.deck_size == 0:
                    raise _illegal("the deck is empty")
                value = draw(state.deck, state.deck_size, rng)
                return {
                    "type": CARDS_REPLACED,
                    "player": me,
                    "cardIndexes": shown,
                    "source": "deck",
                    "blind": True,
                    "value": value,
                    "discardedValue": discarded,
                    "claim": True,
                }
            if kind == m.REPLACE_CARDS_BY_DISCARDED:
                if state.discard is None:
                    raise _illegal("nothing has been discarded yet")
                return {
                    "type": CARDS_REPLACED,
                    "player": me,
                    "cardIndexes": shown,
                    "source": "discard",
                    "value": state.discard,
                    "discardedValue": discarded,
                    "claim": True,
                }
        elif phase == PEEK_OWN and kind == m.PEEK_OWN_CARD:
            return self._peek_own(state, command)
        elif phase == PEEK_OTHER and kind == m.PEEK_ANOTHERS_CARD:
            return self._peek_other(state, command, "anotherPlayerIndex")
        elif phase == EXCHANGE and kind == m.EXCHANGE_CARDS:
            own = self._own_index(state, command)
            target, other = self._other_card(
                state, command, "anotherPlayerIndex", "anotherPlayerCardIndex"
            )
            return self._exchange(state, own, target, other)
        raise _illegal(f"{kind} is not possible now")

    # -- what players see ---------------------------------------------------------------
    def actions(self, state: State, player: str) -> list[dict[str, Any]]:
        if player not in state.seats or state.mover() != state.seat_of(player):
            return []
        return m.legal(state)

    def view(self, state: State, player: str | None) -> dict[str, Any]:
        seat = state.seat_of(player) if player is not None and player in state.seats else None
        bit = 0 if seat is None else 1 << seat
        everyone = state.everyone
        hands = [
            [
                value if (mask & bit or mask == everyone) else None
                for value, mask in zip(hand, masks, strict=True)
            ]
            for hand, masks in zip(state.hands, state.known, strict=True)
        ]
        drawer = seat is not None and seat == state.active and state.drawn is not None
        mover = state.mover()
        if state.phase == IDLE:
            phase = "starting"
        elif state.phase == GAME_OVER:
            phase = "game_finished"
        elif state.phase in (ROUND_FINISHED, ROUND_OVER):
            phase = "round_finished"
        elif state.phase in (DEALT, BEGIN_TURN):
            phase = "round_starting"
        else:
            phase = "turn"
        return {
            "protocol": state.protocol,
            "players": list(state.seats),
            "playerIndex": seat,
            "phase": phase,
            "round": state.round,
            "turn": state.turn,
            "activePlayerIndex": state.active if state.hands else None,
            "deckSize": state.deck_size if drawer else state.public_deck_size(),
            "deckCard": state.drawn if drawer else None,
            "discardedValue": state.discard,
            "handSizes": [len(hand) for hand in state.hands],
            "hands": hands,
            "stopperIndex": state.stopper,
            "stopCounter": state.stop_counter(),
            "totalScores": list(state.totals),
            "roundScores": None if state.scores is None else list(state.scores),
            "nextPlayerIndex": state.next_starter,
            "actions": m.action_names(state) if seat is not None and seat == mover else [],
        }

    def outcome(self, state: State) -> Outcome | None:
        if not state.finished:
            return None
        result = Outcome.from_scores(
            {p: state.totals[i] for i, p in enumerate(state.seats)}, lower_is_better=True
        )
        result.details.update(
            {
                "rounds": state.round,
                "totalScores": list(state.totals),
                "winners": [state.seats[i] for i in winners(state.totals)],
            }
        )
        return result
