"""What each event tells each player, in the message names and fields of each
protocol generation, and what each player's view shows.

``notify(before, event, after)`` returns ``{player id: message}``; its keys are exactly the
addressees who must acknowledge the event. Where a protocol sends "the others first, then the
active player", the two halves are two events (the second made by ``follow_up``), so each
is its own gate. Every field a protocol names is present (``null`` where there is no value).

Indexes in messages are seat indexes (``playerIndex`` = the seat) and hand positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .cards import FIRST_LOOK, PEEK_OTHER_VALUES, PEEK_OWN_VALUES
from .moves import action_names
from .state import (
    ANOTHERS_CARD_PEEKED,
    BEGIN_TURN,
    CARD_DISCARDED,
    CARDS_EXCHANGED,
    CARDS_REPLACED,
    CARDS_SHOWN,
    CLAIM_CONFIRMED,
    DEALT,
    DECK_CARD_TAKEN,
    DISCARD_TAKEN_EVENT,
    FIRST_CARDS_SHOWN,
    GAME_OVER,
    IDLE,
    NEXT_ROUND_PROMPTED,
    OWN_CARD_PEEKED,
    POWER_PROMPTED,
    ROUND_DEALT,
    ROUND_ENDED,
    ROUND_FINISHED,
    ROUND_OVER,
    ROUND_STOPPED,
    SWAP_OWN_PICKED,
    TURN_PROMPTED,
    TURN_STARTED,
    V1,
    SixtySixState,
)

Message = dict[str, Any]


def notify(
    before: SixtySixState, event: dict[str, Any], after: SixtySixState
) -> dict[str, Message]:
    by_seat = notify_v1(event, after) if after.protocol == V1 else notify_v2(event, after)
    return {after.seats[seat]: message for seat, message in by_seat.items()}


def _split(state: SixtySixState, seat: int, theirs: Message, mine: Message) -> dict[int, Message]:
    """``mine`` to ``seat``, ``theirs`` to everyone else (one event, one gate)."""
    return {p: (mine if p == seat else theirs) for p in range(state.n)}


def _others(state: SixtySixState, seat: int, message: Message) -> dict[int, Message]:
    return {p: message for p in range(state.n) if p != seat}


def _everyone(state: SixtySixState, message: Message) -> dict[int, Message]:
    return dict.fromkeys(range(state.n), message)


def _player_cards(
    looking: Sequence[int], target: int, indexes: Sequence[int], values: Sequence[int] | None
) -> dict[str, Any]:
    """v2's description of some cards of one player that some players look at."""
    return {
        "lookingPlayerIndexes": list(looking),
        "targetPlayerIndex": target,
        "cardIndexes": list(indexes),
        "values": None if values is None else list(values),
    }


def _revealed(*cards: dict[str, Any]) -> Message:
    return {"type": "CardsRevealed", "cards": list(cards)}


# -- v2 -------------------------------------------------------------------------------------


def notify_v2(event: dict[str, Any], after: SixtySixState) -> dict[int, Message]:
    kind = event["type"]
    me = after.active

    if kind == ROUND_DEALT:
        return _everyone(
            after,
            {
                "type": "BoardInitialized",
                "deckSize": after.deck_size,
                "deckCard": None,
                "discardedValue": after.discard,
                "handSizes": [len(hand) for hand in after.hands],
                "stopCounter": after.stop_counter(),
                "round": after.round,
                "turn": after.turn,
            },
        )

    if kind == FIRST_CARDS_SHOWN:
        first = list(FIRST_LOOK)
        return {
            p: _revealed(
                *(
                    _player_cards(
                        [q], q, first, [after.hands[q][i] for i in first] if q == p else None
                    )
                    for q in range(after.n)
                )
            )
            for p in range(after.n)
        }

    if kind == TURN_STARTED:
        return _others(
            after,
            me,
            {
                "type": "BoardUpdated",
                "activePlayerIndex": me,
                "deckCard": None,
                "stopCounter": after.stop_counter(),
                "turn": after.turn,
            },
        )

    if kind == TURN_PROMPTED:
        return {
            me: {
                "type": "BoardUpdated",
                "activePlayerIndex": me,
                "deckCard": None,
                "stopCounter": after.stop_counter(),
                "turn": after.turn,
                "actions": action_names(after),
            }
        }

    if kind == DECK_CARD_TAKEN:
        return {
            me: {
                "type": "BoardUpdated",
                "deckSize": after.deck_size,
                "deckCard": after.drawn,
                "actions": action_names(after),
            }
        }

    if kind in (DISCARD_TAKEN_EVENT, SWAP_OWN_PICKED, NEXT_ROUND_PROMPTED):
        seat = after.next_starter if kind == NEXT_ROUND_PROMPTED else me
        assert seat is not None
        return {seat: {"type": "BoardUpdated", "actions": action_names(after)}}

    if kind == ROUND_STOPPED:
        return _everyone(after, {"type": "BoardUpdated", "stopCounter": after.stop_counter()})

    if kind == CARDS_REPLACED:
        return _everyone(
            after,
            {
                "type": "CardsReplaced",
                "playerIndex": me,
                "cardIndexes": list(event["cardIndexes"]),
                "fromDeck": event["source"] == "deck",
                "discardedValue": after.discard,
                "deckSize": after.deck_size,
            },
        )

    if kind == CARDS_SHOWN:
        looking = [p for p in range(after.n) if p != me]
        indexes = list(event["cardIndexes"])
        return _split(
            after,
            me,
            _revealed(_player_cards(looking, me, indexes, event["values"])),
            _revealed(_player_cards(looking, me, indexes, None)),
        )

    if kind == CARD_DISCARDED:
        if event["power"]:
            return _others(
                after,
                me,
                {
                    "type": "BoardUpdated",
                    "deckSize": after.deck_size,
                    "discardedValue": after.discard,
                },
            )
        return _everyone(
            after,
            {
                "type": "BoardUpdated",
                "deckSize": after.deck_size,
                "deckCard": None,
                "discardedValue": after.discard,
            },
        )

    if kind == POWER_PROMPTED:
        return {
            me: {
                "type": "BoardUpdated",
                "deckSize": after.deck_size,
                "deckCard": None,
                "discardedValue": after.discard,
                "actions": action_names(after),
            }
        }

    if kind in (OWN_CARD_PEEKED, ANOTHERS_CARD_PEEKED):
        target = me if kind == OWN_CARD_PEEKED else int(event["target"])
        index = int(event["cardIndex"])
        return _split(
            after,
            me,
            _revealed(_player_cards([me], target, [index], None)),
            _revealed(_player_cards([me], target, [index], [int(event["value"])])),
        )

    if kind == CARDS_EXCHANGED:
        return _everyone(
            after,
            {
                "type": "CardExchanged",
                "playerIndex": me,
                "cardIndex": int(event["cardIndex"]),
                "anotherPlayerIndex": int(event["target"]),
                "anotherPlayerCardIndex": int(event["targetCardIndex"]),
            },
        )

    if kind == ROUND_ENDED:
        return _everyone(
            after,
            {
                "type": "RoundFinished",
                "cards": [list(hand) for hand in after.hands],
                "scores": list(after.scores or ()),
                "totalScores": list(after.totals),
                "isGameFinished": after.finished,
            },
        )

    if kind == CLAIM_CONFIRMED:  # v1 only; nothing to tell in v2
        return {}
    raise ValueError(f"unknown sixtysix event {kind!r}")


# -- v1 -------------------------------------------------------------------------------------


def _round_finished_v1(after: SixtySixState) -> Message:
    return {
        "type": "RoundFinished",
        "turnCount": after.turn,
        "scores": list(after.scores or ()),
        "totalScores": list(after.totals),
        "nextPlayerIndex": after.next_starter,
    }


def notify_v1(event: dict[str, Any], after: SixtySixState) -> dict[int, Message]:
    kind = event["type"]
    me = after.active

    if kind == ROUND_DEALT:
        sizes = [len(hand) for hand in after.hands]
        return {
            p: {
                "type": "GameState",
                "deckSize": after.deck_size,
                "discardedValue": after.discard,
                "handSizes": sizes,
                "playerIndex": p,
            }
            for p in range(after.n)
        }

    if kind == FIRST_CARDS_SHOWN:
        first, second = FIRST_LOOK
        return {
            p: {"type": "FirstTwoCards", "value1": hand[first], "value2": hand[second]}
            for p, hand in enumerate(after.hands)
        }

    if kind == TURN_STARTED:
        return _others(after, me, {"type": "NextTurn", "playerIndex": me})

    if kind == TURN_PROMPTED:
        return {me: {"type": "YourTurn"}}

    if kind == DECK_CARD_TAKEN:
        return {me: {"type": "TookDeckCard", "value": after.drawn, "deckSize": after.deck_size}}

    if kind == ROUND_STOPPED:
        return _split(
            after, me, {"type": "StopInitiated", "playerIndex": me}, {"type": "InitiatedStop"}
        )

    if kind == CARDS_REPLACED:
        by_discard = event["source"] == "discard"
        indexes = list(event["cardIndexes"])
        if event.get("claim"):
            name = "ByDiscarded" if by_discard else "FromDeck"
            return _split(
                after,
                me,
                {
                    "type": f"CardsReplaced{name}",
                    "playerIndex": me,
                    "cardIndexes": indexes,
                    "discardedValue": after.discard,
                },
                {
                    "type": f"ReplacedCards{name}",
                    "cardIndexes": indexes,
                    "discardedValue": after.discard,
                },
            )
        name = "ByDiscarded" if by_discard else "FromDeck"
        return _split(
            after,
            me,
            {
                "type": f"CardReplaced{name}",
                "playerIndex": me,
                "cardIndex": indexes[0],
                "discardedValue": after.discard,
            },
            {
                "type": f"ReplacedCard{name}",
                "cardIndex": indexes[0],
                "discardedValue": after.discard,
            },
        )

    if kind == CARDS_SHOWN:
        indexes = list(event["cardIndexes"])
        values = [int(v) for v in event["values"]]
        if event["identical"]:
            return _others(
                after,
                me,
                {
                    "type": "IdenticalCardsShown",
                    "playerIndex": me,
                    "cardIndexes": indexes,
                    "value": values[0],
                },
            )
        return _split(
            after,
            me,
            {
                "type": "DifferentCardsShown",
                "playerIndex": me,
                "cardIndexes": indexes,
                "values": values,
            },
            {"type": "ShowedDifferentCards", "cardIndexes": indexes},
        )

    if kind == CLAIM_CONFIRMED:
        return {me: {"type": "ShowedIdenticalCards", "cardIndexes": list(event["cardIndexes"])}}

    if kind == CARD_DISCARDED:
        theirs = {"type": "CardDiscarded", "playerIndex": me, "discardedValue": after.discard}
        if event["power"]:
            return _others(after, me, theirs)
        return _split(after, me, theirs, {"type": "DiscardedCard", "discardedValue": after.discard})

    if kind == POWER_PROMPTED:
        value = int(event["value"])
        if value in PEEK_OWN_VALUES:
            name = "PeekingOwnCard"
        elif value in PEEK_OTHER_VALUES:
            name = "PeekingAnothersCard"
        else:
            name = "ExchangingCards"
        return {me: {"type": name, "discardedValue": value}}

    if kind == OWN_CARD_PEEKED:
        index = int(event["cardIndex"])
        return _split(
            after,
            me,
            {"type": "OwnCardPeeked", "playerIndex": me, "cardIndex": index},
            {"type": "OwnCard", "cardIndex": index, "value": int(event["value"])},
        )

    if kind == ANOTHERS_CARD_PEEKED:
        target, index = int(event["target"]), int(event["cardIndex"])
        return _split(
            after,
            me,
            {
                "type": "AnothersCardPeeked",
                "playerIndex": me,
                "anotherPlayerIndex": target,
                "cardIndex": index,
            },
            {
                "type": "AnothersCard",
                "anotherPlayerIndex": target,
                "cardIndex": index,
                "value": int(event["value"]),
            },
        )

    if kind == CARDS_EXCHANGED:
        own, target = int(event["cardIndex"]), int(event["target"])
        other = int(event["targetCardIndex"])
        return _split(
            after,
            me,
            {
                "type": "CardsExchanged",
                "playerIndex": me,
                "cardIndex": own,
                "anotherPlayerIndex": target,
                "anotherPlayerCardIndex": other,
            },
            {
                "type": "ExchangedCards",
                "cardIndex": own,
                "anotherPlayerIndex": target,
                "anotherPlayerCardIndex": other,
            },
        )

    if kind == ROUND_ENDED:
        if after.finished:
            return _everyone(
                after,
                {
                    "type": "GameFinished",
                    "roundCount": after.round,
                    "scores": list(after.scores or ()),
                    "totalScores": list(after.totals),
                },
            )
        starter = after.next_starter
        assert starter is not None
        return _others(after, starter, _round_finished_v1(after))

    if kind == NEXT_ROUND_PROMPTED:
        starter = after.next_starter
        assert starter is not None
        return {starter: _round_finished_v1(after)}

    if kind in (DISCARD_TAKEN_EVENT, SWAP_OWN_PICKED):  # v2 only
        return {}
    raise ValueError(f"unknown sixtysix event {kind!r}")


# -- views ----------------------------------------------------------------------------------


def view(state: SixtySixState, player: str | None) -> dict[str, Any]:
    """The table as ``player`` sees it (``None``: a spectator): the cards they know, the
    deck card only to its drawer."""
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
        "actions": action_names(state) if seat is not None and seat == mover else [],
    }
