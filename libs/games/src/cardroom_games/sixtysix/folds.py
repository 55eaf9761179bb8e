"""The 66 game's folds: how each event (possibly after a JSON round trip) changes the state.

One function per event type, registered on :data:`FOLDS`; ``FOLDS.evolve`` is the game's
``evolve``. Each builds the new state with one ``_replace``: evolve runs for every event of
every replay.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardroom_engine import Event
from cardroom_engine.kit import Folds, put

from .cards import FIRST_LOOK, PEEK_OTHER_VALUES, PEEK_OWN_VALUES
from .state import (
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
    NEXT_ROUND_PROMPTED,
    OWN_CARD_PEEKED,
    PEEK_OTHER,
    PEEK_OWN,
    POWER_PENDING,
    POWER_PROMPTED,
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
    V2,
    SixtySixState,
)

FOLDS = Folds[SixtySixState]("sixtysix")


def _replace_set(row: tuple[int, ...], indexes: Sequence[int], value: int) -> tuple[int, ...]:
    """The lowest of ``indexes`` (distinct positions in the row: decide checked them) gets
    ``value``; the others leave the row."""
    first = min(indexes)
    kept = list(row)
    kept[first] = value
    for i in sorted(indexes, reverse=True):  # from the end: the positions still to go stay put
        if i != first:
            del kept[i]
    return tuple(kept)


def _power_phase(protocol: str, value: int) -> str:
    if value in PEEK_OWN_VALUES:
        return PEEK_OWN
    if value in PEEK_OTHER_VALUES:
        return PEEK_OTHER
    return SWAP_OWN if protocol == V2 else EXCHANGE


@FOLDS.on(ROUND_DEALT)
def _round_dealt(state: SixtySixState, event: Event) -> SixtySixState:
    hands = tuple(tuple(map(int, hand)) for hand in event["hands"])
    discard = event.get("discard")
    deck = tuple(map(int, event["deck"]))
    return state._replace(
        round=int(event["round"]),
        turn=0,
        phase=DEALT,
        active=int(event["starter"]),
        hands=hands,
        known=tuple((0,) * len(hand) for hand in hands),
        deck=deck,
        deck_size=sum(deck),
        discard=None if discard is None else int(discard),
        stopper=None,
        drawn=None,
        took_discard=False,
        shown=(),
        power=None,
        swap_index=None,
        scores=None,
        next_starter=None,
    )


@FOLDS.on(FIRST_CARDS_SHOWN)
def _first_cards_shown(state: SixtySixState, event: Event) -> SixtySixState:
    known = []
    for p in range(state.n):  # each player saw their own cards at FIRST_LOOK
        masks = list(state.known[p])
        for i in FIRST_LOOK:
            if i < len(masks):
                masks[i] = 1 << p
        known.append(tuple(masks))
    return state._replace(known=tuple(known), phase=BEGIN_TURN)


@FOLDS.on(TURN_STARTED)
def _turn_started(state: SixtySixState, event: Event) -> SixtySixState:
    return state._replace(
        active=int(event["player"]),
        turn=int(event["turn"]),
        phase=ANNOUNCED,
        drawn=None,
        took_discard=False,
        shown=(),
        power=None,
        swap_index=None,
    )


@FOLDS.on(TURN_PROMPTED)
def _turn_prompted(state: SixtySixState, event: Event) -> SixtySixState:
    return state._replace(phase=READY)


@FOLDS.on(DECK_CARD_TAKEN)
def _deck_card_taken(state: SixtySixState, event: Event) -> SixtySixState:
    value = int(event["value"])
    return state._replace(
        deck=put(state.deck, value, state.deck[value] - 1),
        deck_size=state.deck_size - 1,
        drawn=value,
        phase=DECK_TAKEN,
    )


@FOLDS.on(DISCARD_TAKEN_EVENT)
def _discard_taken(state: SixtySixState, event: Event) -> SixtySixState:
    return state._replace(took_discard=True, phase=DISCARD_TAKEN)


@FOLDS.on(ROUND_STOPPED)
def _round_stopped(state: SixtySixState, event: Event) -> SixtySixState:
    return state._replace(stopper=int(event["player"]), phase=TURN_END)


@FOLDS.on(CARDS_REPLACED)
def _cards_replaced(state: SixtySixState, event: Event) -> SixtySixState:
    me = state.active
    replaced = list(map(int, event["cardIndexes"]))
    value = int(event["value"])
    source = event["source"]
    deck, deck_size = state.deck, state.deck_size
    if source == "deck" and event.get("blind"):
        deck, deck_size = put(deck, value, deck[value] - 1), deck_size - 1
        mask = 0  # a blind replacement: nobody sees the new card
    elif source == "deck":
        mask = 1 << me  # the drawer saw it
    else:
        mask = state.everyone  # the discard top was public
    return state._replace(
        hands=put(state.hands, me, _replace_set(state.hands[me], replaced, value)),
        known=put(state.known, me, _replace_set(state.known[me], replaced, mask)),
        discard=int(event["discardedValue"]),
        deck=deck,
        deck_size=deck_size,
        drawn=None,
        took_discard=False,
        shown=(),
        phase=TURN_END,
    )


@FOLDS.on(CARDS_SHOWN)
def _cards_shown(state: SixtySixState, event: Event) -> SixtySixState:
    me = state.active
    indexes = tuple(map(int, event["cardIndexes"]))
    others = state.everyone & ~(1 << me)
    masks = list(state.known[me])
    for i in indexes:  # distinct positions in the hand: decide checked them
        masks[i] |= others
    identical = bool(event["identical"])
    waits = identical or (state.protocol == V2 and state.drawn is not None)
    return state._replace(
        known=put(state.known, me, tuple(masks)),
        shown=indexes,
        phase=CLAIM_SHOWN if waits else TURN_END,
    )


@FOLDS.on(CLAIM_CONFIRMED)
def _claim_confirmed(state: SixtySixState, event: Event) -> SixtySixState:
    return state._replace(phase=CLAIM_REPLACE)


@FOLDS.on(CARD_DISCARDED)
def _card_discarded(state: SixtySixState, event: Event) -> SixtySixState:
    value = int(event["value"])
    power = bool(event["power"])
    return state._replace(
        discard=value,
        drawn=None,
        shown=(),
        power=value if power else None,
        phase=POWER_PENDING if power else TURN_END,
    )


@FOLDS.on(POWER_PROMPTED)
def _power_prompted(state: SixtySixState, event: Event) -> SixtySixState:
    return state._replace(phase=_power_phase(state.protocol, int(event["value"])))


@FOLDS.on(OWN_CARD_PEEKED)
def _own_card_peeked(state: SixtySixState, event: Event) -> SixtySixState:
    me = state.active
    index = int(event["cardIndex"])
    masks = state.known[me]
    return state._replace(
        known=put(state.known, me, put(masks, index, masks[index] | (1 << me))),
        phase=TURN_END,
    )


@FOLDS.on(ANOTHERS_CARD_PEEKED)
def _anothers_card_peeked(state: SixtySixState, event: Event) -> SixtySixState:
    target, index = int(event["target"]), int(event["cardIndex"])
    masks = state.known[target]
    return state._replace(
        known=put(state.known, target, put(masks, index, masks[index] | (1 << state.active))),
        phase=TURN_END,
    )


@FOLDS.on(SWAP_OWN_PICKED)
def _swap_own_picked(state: SixtySixState, event: Event) -> SixtySixState:
    return state._replace(swap_index=int(event["cardIndex"]), phase=SWAP_OTHER)


@FOLDS.on(CARDS_EXCHANGED)
def _cards_exchanged(state: SixtySixState, event: Event) -> SixtySixState:
    me = state.active
    own, target, other = (
        int(event["cardIndex"]),
        int(event["target"]),
        int(event["targetCardIndex"]),
    )
    mine, theirs = state.hands[me][own], state.hands[target][other]
    mine_known, theirs_known = state.known[me][own], state.known[target][other]
    hands = put(state.hands, me, put(state.hands[me], own, theirs))
    hands = put(hands, target, put(hands[target], other, mine))  # target != me: decide checked
    known = put(state.known, me, put(state.known[me], own, theirs_known))
    known = put(known, target, put(known[target], other, mine_known))
    return state._replace(hands=hands, known=known, swap_index=None, phase=TURN_END)


@FOLDS.on(ROUND_ENDED)
def _round_ended(state: SixtySixState, event: Event) -> SixtySixState:
    finished = bool(event["finished"])
    starter = event.get("nextStarter")
    everyone = state.everyone  # a round's end shows every card to everyone
    return state._replace(
        scores=tuple(map(int, event["scores"])),
        totals=tuple(map(int, event["totals"])),
        known=tuple((everyone,) * len(hand) for hand in state.hands),
        next_starter=None if starter is None else int(starter),
        finished=finished,
        phase=GAME_OVER if finished else ROUND_FINISHED,
    )


@FOLDS.on(NEXT_ROUND_PROMPTED)
def _next_round_prompted(state: SixtySixState, event: Event) -> SixtySixState:
    return state._replace(phase=ROUND_OVER)
