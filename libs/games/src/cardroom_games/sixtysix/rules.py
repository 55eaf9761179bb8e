"""The 66 game: constants, the immutable state, scoring, and the pure fold of events.

Everything here is pure and protocol-agnostic: both protocol generations (v1, v2) share one
state and one set of events; they differ in which commands lead to which events (game.py)
and in how events are told to the players (protocol.py).

Indexes: players are numbered by seat (0..n-1, the order of the table's seats), cards by
their position in a hand (0..len-1). When cards leave a hand, later positions shift down.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

from cardroom_engine.fields import builder

# -- the deck -------------------------------------------------------------------------------

DECK_COUNTS: Final[tuple[int, ...]] = (2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2)
"""How many cards of each value 0..13: two 0s, four each of 1..12, two 13s (52 cards)."""
DECK_SIZE: Final = 52
HAND_SIZE: Final = 4
FIRST_LOOK: Final[tuple[int, ...]] = (0, 1)
"""The positions each player privately looks at when a round starts."""

GAME_LIMIT: Final = 66
"""The game ends after a round in which some total is strictly greater than this."""
EXACT_HIT: Final = 66
EXACT_HIT_BECOMES: Final = 33
STOP_PENALTY: Final = 5

PEEK_OWN_VALUES: Final = frozenset({7, 8})
PEEK_OTHER_VALUES: Final = frozenset({9, 10})
SWAP_VALUES: Final = frozenset({11, 12})
POWER_VALUES: Final = PEEK_OWN_VALUES | PEEK_OTHER_VALUES | SWAP_VALUES

V1: Final = "v1"
V2: Final = "v2"

# -- phases -----------------------------------------------------------------------------------
# "auto" phases are left by follow_up (the game moves by itself once the gate opens);
# "player" phases wait for one player's command.

IDLE: Final = "idle"  # before the first deal
DEALT: Final = "dealt"  # auto: show everyone their first two cards
BEGIN_TURN: Final = "begin_turn"  # auto: announce the first turn of a round
ANNOUNCED: Final = "announced"  # auto: the others were told; now prompt the active player
READY: Final = "ready"  # player: take from the deck / the discard, stop, (v1) claim
DECK_TAKEN: Final = "deck_taken"  # player: replace, discard, (v2) claim
DISCARD_TAKEN: Final = "discard_taken"  # player (v2): replace or claim
CLAIM_SHOWN: Final = "claim_shown"  # auto: resolve a claim once everyone saw the cards
CLAIM_REPLACE: Final = "claim_replace"  # player (v1): replace the set from deck / discard
POWER_PENDING: Final = "power_pending"  # auto: the others were told; prompt the power
PEEK_OWN: Final = "peek_own"  # player: 7/8
PEEK_OTHER: Final = "peek_other"  # player: 9/10
SWAP_OWN: Final = "swap_own"  # player (v2): 11/12, first pick the own card
SWAP_OTHER: Final = "swap_other"  # player (v2): 11/12, then the other player's card
EXCHANGE: Final = "exchange"  # player (v1): 11/12 in one command
TURN_END: Final = "turn_end"  # auto: next turn or end of round
ROUND_FINISHED: Final = "round_finished"  # auto: prompt the next round's starter
ROUND_OVER: Final = "round_over"  # player: the starter sends StartNextRound
GAME_OVER: Final = "game_over"

AUTO_PHASES: Final = frozenset(
    {DEALT, BEGIN_TURN, ANNOUNCED, CLAIM_SHOWN, POWER_PENDING, TURN_END, ROUND_FINISHED}
)

# -- event types ----------------------------------------------------------------------------

ROUND_DEALT: Final = "round_dealt"
FIRST_CARDS_SHOWN: Final = "first_cards_shown"
TURN_STARTED: Final = "turn_started"
TURN_PROMPTED: Final = "turn_prompted"
DECK_CARD_TAKEN: Final = "deck_card_taken"
DISCARD_TAKEN_EVENT: Final = "discarded_card_taken"
ROUND_STOPPED: Final = "round_stopped"
CARDS_REPLACED: Final = "cards_replaced"
CARDS_SHOWN: Final = "cards_shown"
CLAIM_CONFIRMED: Final = "claim_confirmed"
CARD_DISCARDED: Final = "card_discarded"
POWER_PROMPTED: Final = "power_prompted"
OWN_CARD_PEEKED: Final = "own_card_peeked"
ANOTHERS_CARD_PEEKED: Final = "anothers_card_peeked"
SWAP_OWN_PICKED: Final = "swap_own_picked"
CARDS_EXCHANGED: Final = "cards_exchanged"
ROUND_ENDED: Final = "round_finished"
NEXT_ROUND_PROMPTED: Final = "next_round_prompted"

EVENT_TYPES: Final = frozenset(
    {
        ROUND_DEALT,
        FIRST_CARDS_SHOWN,
        TURN_STARTED,
        TURN_PROMPTED,
        DECK_CARD_TAKEN,
        DISCARD_TAKEN_EVENT,
        ROUND_STOPPED,
        CARDS_REPLACED,
        CARDS_SHOWN,
        CLAIM_CONFIRMED,
        CARD_DISCARDED,
        POWER_PROMPTED,
        OWN_CARD_PEEKED,
        ANOTHERS_CARD_PEEKED,
        SWAP_OWN_PICKED,
        CARDS_EXCHANGED,
        ROUND_ENDED,
        NEXT_ROUND_PROMPTED,
    }
)


# -- state ----------------------------------------------------------------------------------


class State(NamedTuple):
    """One table's game, immutable (a named tuple; evolve copies it with changes by
    position, see :class:`At`).

    ``known[p][i]`` is a bitmask of the seats that know the value of card ``i`` of player
    ``p`` (bit ``q`` = seat ``q``): what the views show, kept by the same events that move
    the cards, so knowledge travels with a card when it is swapped or shifted.
    """

    protocol: str
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    round: int = 0
    turn: int = 0
    phase: str = IDLE
    active: int = 0
    hands: tuple[tuple[int, ...], ...] = ()
    known: tuple[tuple[int, ...], ...] = ()
    deck: tuple[int, ...] = DECK_COUNTS
    deck_size: int = DECK_SIZE
    discard: int | None = None
    stopper: int | None = None
    drawn: int | None = None  # the deck card the active player holds, unseen by others
    took_discard: bool = False  # (v2) the active player holds the discard top
    shown: tuple[int, ...] = ()  # the positions of a claim
    power: int | None = None  # the discarded power card being used
    swap_index: int | None = None  # (v2) the own card picked for an 11/12 swap
    scores: tuple[int, ...] | None = None  # the last finished round's scores
    next_starter: int | None = None
    finished: bool = False

    @property
    def n(self) -> int:
        return len(self.seats)

    @property
    def everyone(self) -> int:
        return (1 << len(self.seats)) - 1

    def seat_of(self, player: str) -> int:
        return self.seats.index(player)

    def public_deck_size(self) -> int:
        """The deck size as the players other than the drawer know it: a drawn card stays
        "in the deck" for them until it is placed or discarded."""
        return self.deck_size + (1 if self.drawn is not None else 0)

    def stop_counter(self) -> int | None:
        """Turns left in this round after a stop (None before any stop): n-1 right after
        the stop, then at every turn start the turns left including the one starting."""
        if self.stopper is None:
            return None
        if self.active == self.stopper:
            return self.n - 1
        return (self.stopper - self.active) % self.n

    def mover(self) -> int | None:
        """The seat whose command the game waits for, if any."""
        if self.phase in AUTO_PHASES or self.phase in (IDLE, GAME_OVER):
            return None
        if self.phase == ROUND_OVER:
            return self.next_starter
        return self.active


class At:
    """The positions of :class:`State`'s fields, for evolve's copy with changes::

        new = list(state)
        new[At.PHASE] = READY
        return from_fields(new)

    About a third of the cost of ``state._replace(phase=READY)``, which maps ``kwds.pop``
    over every field name and then checks what is left; evolve runs for every event."""

    PROTOCOL: Final = State._fields.index("protocol")
    SEATS: Final = State._fields.index("seats")
    TOTALS: Final = State._fields.index("totals")
    ROUND: Final = State._fields.index("round")
    TURN: Final = State._fields.index("turn")
    PHASE: Final = State._fields.index("phase")
    ACTIVE: Final = State._fields.index("active")
    HANDS: Final = State._fields.index("hands")
    KNOWN: Final = State._fields.index("known")
    DECK: Final = State._fields.index("deck")
    DECK_SIZE: Final = State._fields.index("deck_size")
    DISCARD: Final = State._fields.index("discard")
    STOPPER: Final = State._fields.index("stopper")
    DRAWN: Final = State._fields.index("drawn")
    TOOK_DISCARD: Final = State._fields.index("took_discard")
    SHOWN: Final = State._fields.index("shown")
    POWER: Final = State._fields.index("power")
    SWAP_INDEX: Final = State._fields.index("swap_index")
    SCORES: Final = State._fields.index("scores")
    NEXT_STARTER: Final = State._fields.index("next_starter")
    FINISHED: Final = State._fields.index("finished")


#: The State of ``list(state)`` with fields changed by position (``At``).
from_fields = builder(State)


# -- randomness -----------------------------------------------------------------------------


def draw(deck: Sequence[int], size: int, rng: random.Random) -> int:
    """One uniformly random card value from a deck of per-value counts (``size`` cards)."""
    k = rng.randrange(size)
    for value, count in enumerate(deck):
        if k < count:
            return value
        k -= count
    raise ValueError("the deck is smaller than its size says")


def deal(n: int, with_discard: bool, rng: random.Random) -> tuple[list[list[int]], int | None]:
    """Four random cards for each of ``n`` players, then (v1) one face-up discard."""
    deck = list(DECK_COUNTS)
    size = DECK_SIZE
    hands: list[list[int]] = []
    for _ in range(n):
        hand: list[int] = []
        for _ in range(HAND_SIZE):
            value = draw(deck, size, rng)
            deck[value] -= 1
            size -= 1
            hand.append(value)
        hands.append(hand)
    discard = draw(deck, size, rng) if with_discard else None
    return hands, discard


def remaining_deck(hands: Sequence[Sequence[int]], discard: int | None) -> list[int]:
    deck = list(DECK_COUNTS)
    for hand in hands:
        for value in hand:
            deck[value] -= 1
    if discard is not None:
        deck[discard] -= 1
    return deck


# -- scoring ---------------------------------------------------------------------------------


def round_scores(hands: Sequence[Sequence[int]], stopper: int | None) -> list[int]:
    """The round score of each player.

    1. raw score = the sum of the hand; 2. ``low`` = the lowest raw score; 3. a stopper whose
    raw score is not the unique lowest gets +5; 4. every score equal to ``low`` (after the
    penalty) becomes 0 -- so a stopper tied for lowest keeps low+5 while the others score 0.
    """
    raw = [sum(hand) for hand in hands]
    low = min(raw)
    scores = list(raw)
    if stopper is not None and (raw[stopper] > low or raw.count(low) > 1):
        scores[stopper] += STOP_PENALTY
    return [0 if score == low else score for score in scores]


def add_scores(totals: Sequence[int], scores: Sequence[int]) -> list[int]:
    """Positive round scores are added; a total of exactly 66 drops to 33."""
    result = []
    for total, score in zip(totals, scores, strict=True):
        if score > 0:
            total += score
            if total == EXACT_HIT:
                total = EXACT_HIT_BECOMES
        result.append(total)
    return result


def game_over(totals: Sequence[int]) -> bool:
    return any(total > GAME_LIMIT for total in totals)


def winners(totals: Sequence[int]) -> list[int]:
    low = min(totals)
    return [i for i, total in enumerate(totals) if total == low]


# -- folding events -------------------------------------------------------------------------
#
# One function per event type. Each copies the state into a list, sets the changed fields
# by position and builds the new state once (``from_fields``): see ``At``.

Fold = Callable[[State, dict[str, Any]], State]


def _with(
    rows: tuple[tuple[int, ...], ...], player: int, row: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    changed = list(rows)
    changed[player] = row
    return tuple(changed)


def _set(
    rows: tuple[tuple[int, ...], ...], player: int, index: int, value: int
) -> tuple[tuple[int, ...], ...]:
    row = list(rows[player])
    row[index] = value
    return _with(rows, player, tuple(row))


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


def _in_phase(state: State, phase: str) -> State:
    new = list(state)
    new[At.PHASE] = phase
    return from_fields(new)


def _round_dealt(state: State, event: dict[str, Any]) -> State:
    hands = tuple(tuple(map(int, hand)) for hand in event["hands"])
    discard = event.get("discard")
    deck = tuple(map(int, event["deck"]))
    new = list(state)
    new[At.ROUND] = int(event["round"])
    new[At.TURN] = 0
    new[At.PHASE] = DEALT
    new[At.ACTIVE] = int(event["starter"])
    new[At.HANDS] = hands
    new[At.KNOWN] = tuple((0,) * len(hand) for hand in hands)
    new[At.DECK] = deck
    new[At.DECK_SIZE] = sum(deck)
    new[At.DISCARD] = None if discard is None else int(discard)
    new[At.STOPPER] = None
    new[At.DRAWN] = None
    new[At.TOOK_DISCARD] = False
    new[At.SHOWN] = ()
    new[At.POWER] = None
    new[At.SWAP_INDEX] = None
    new[At.SCORES] = None
    new[At.NEXT_STARTER] = None
    return from_fields(new)


def _first_cards_shown(state: State, event: dict[str, Any]) -> State:
    known = []
    for p in range(state.n):  # each player saw their own cards at FIRST_LOOK
        masks = list(state.known[p])
        for i in FIRST_LOOK:
            if i < len(masks):
                masks[i] = 1 << p
        known.append(tuple(masks))
    new = list(state)
    new[At.KNOWN] = tuple(known)
    new[At.PHASE] = BEGIN_TURN
    return from_fields(new)


def _turn_started(state: State, event: dict[str, Any]) -> State:
    new = list(state)
    new[At.ACTIVE] = int(event["player"])
    new[At.TURN] = int(event["turn"])
    new[At.PHASE] = ANNOUNCED
    new[At.DRAWN] = None
    new[At.TOOK_DISCARD] = False
    new[At.SHOWN] = ()
    new[At.POWER] = None
    new[At.SWAP_INDEX] = None
    return from_fields(new)


def _turn_prompted(state: State, event: dict[str, Any]) -> State:
    return _in_phase(state, READY)


def _deck_card_taken(state: State, event: dict[str, Any]) -> State:
    value = int(event["value"])
    counts = list(state.deck)
    counts[value] -= 1
    new = list(state)
    new[At.DECK] = tuple(counts)
    new[At.DECK_SIZE] = state.deck_size - 1
    new[At.DRAWN] = value
    new[At.PHASE] = DECK_TAKEN
    return from_fields(new)


def _discard_taken(state: State, event: dict[str, Any]) -> State:
    new = list(state)
    new[At.TOOK_DISCARD] = True
    new[At.PHASE] = DISCARD_TAKEN
    return from_fields(new)


def _round_stopped(state: State, event: dict[str, Any]) -> State:
    new = list(state)
    new[At.STOPPER] = int(event["player"])
    new[At.PHASE] = TURN_END
    return from_fields(new)


def _cards_replaced(state: State, event: dict[str, Any]) -> State:
    me = state.active
    replaced = list(map(int, event["cardIndexes"]))
    value = int(event["value"])
    source = event["source"]
    deck, deck_size = state.deck, state.deck_size
    if source == "deck" and event.get("blind"):
        left = list(deck)
        left[value] -= 1
        deck, deck_size = tuple(left), deck_size - 1
        mask = 0  # a blind replacement: nobody sees the new card
    elif source == "deck":
        mask = 1 << me  # the drawer saw it
    else:
        mask = state.everyone  # the discard top was public
    new = list(state)
    new[At.HANDS] = _with(state.hands, me, _replace_set(state.hands[me], replaced, value))
    new[At.KNOWN] = _with(state.known, me, _replace_set(state.known[me], replaced, mask))
    new[At.DISCARD] = int(event["discardedValue"])
    new[At.DECK] = deck
    new[At.DECK_SIZE] = deck_size
    new[At.DRAWN] = None
    new[At.TOOK_DISCARD] = False
    new[At.SHOWN] = ()
    new[At.PHASE] = TURN_END
    return from_fields(new)


def _cards_shown(state: State, event: dict[str, Any]) -> State:
    me = state.active
    indexes = tuple(map(int, event["cardIndexes"]))
    others = state.everyone & ~(1 << me)
    masks = list(state.known[me])
    for i in indexes:  # distinct positions in the hand: decide checked them
        masks[i] |= others
    identical = bool(event["identical"])
    new = list(state)
    new[At.KNOWN] = _with(state.known, me, tuple(masks))
    new[At.SHOWN] = indexes
    if identical or (state.protocol == V2 and state.drawn is not None):
        new[At.PHASE] = CLAIM_SHOWN
    else:
        new[At.PHASE] = TURN_END
    return from_fields(new)


def _claim_confirmed(state: State, event: dict[str, Any]) -> State:
    return _in_phase(state, CLAIM_REPLACE)


def _card_discarded(state: State, event: dict[str, Any]) -> State:
    value = int(event["value"])
    power = bool(event["power"])
    new = list(state)
    new[At.DISCARD] = value
    new[At.DRAWN] = None
    new[At.SHOWN] = ()
    new[At.POWER] = value if power else None
    new[At.PHASE] = POWER_PENDING if power else TURN_END
    return from_fields(new)


def _power_prompted(state: State, event: dict[str, Any]) -> State:
    return _in_phase(state, _power_phase(state.protocol, int(event["value"])))


def _own_card_peeked(state: State, event: dict[str, Any]) -> State:
    me = state.active
    index = int(event["cardIndex"])
    new = list(state)
    new[At.KNOWN] = _set(state.known, me, index, state.known[me][index] | (1 << me))
    new[At.PHASE] = TURN_END
    return from_fields(new)


def _anothers_card_peeked(state: State, event: dict[str, Any]) -> State:
    target, index = int(event["target"]), int(event["cardIndex"])
    mask = state.known[target][index] | (1 << state.active)
    new = list(state)
    new[At.KNOWN] = _set(state.known, target, index, mask)
    new[At.PHASE] = TURN_END
    return from_fields(new)


def _swap_own_picked(state: State, event: dict[str, Any]) -> State:
    new = list(state)
    new[At.SWAP_INDEX] = int(event["cardIndex"])
    new[At.PHASE] = SWAP_OTHER
    return from_fields(new)


def _cards_exchanged(state: State, event: dict[str, Any]) -> State:
    me = state.active
    own, target, other = (
        int(event["cardIndex"]),
        int(event["target"]),
        int(event["targetCardIndex"]),
    )
    mine, theirs = state.hands[me][own], state.hands[target][other]
    mine_known, theirs_known = state.known[me][own], state.known[target][other]
    new = list(state)
    new[At.HANDS] = _set(_set(state.hands, me, own, theirs), target, other, mine)
    new[At.KNOWN] = _set(_set(state.known, me, own, theirs_known), target, other, mine_known)
    new[At.SWAP_INDEX] = None
    new[At.PHASE] = TURN_END
    return from_fields(new)


def _round_ended(state: State, event: dict[str, Any]) -> State:
    finished = bool(event["finished"])
    starter = event.get("nextStarter")
    everyone = state.everyone  # a round's end shows every card to everyone
    new = list(state)
    new[At.SCORES] = tuple(map(int, event["scores"]))
    new[At.TOTALS] = tuple(map(int, event["totals"]))
    new[At.KNOWN] = tuple((everyone,) * len(hand) for hand in state.hands)
    new[At.NEXT_STARTER] = None if starter is None else int(starter)
    new[At.FINISHED] = finished
    new[At.PHASE] = GAME_OVER if finished else ROUND_FINISHED
    return from_fields(new)


def _next_round_prompted(state: State, event: dict[str, Any]) -> State:
    return _in_phase(state, ROUND_OVER)


_FOLDS: Final[dict[str, Fold]] = {
    ROUND_DEALT: _round_dealt,
    FIRST_CARDS_SHOWN: _first_cards_shown,
    TURN_STARTED: _turn_started,
    TURN_PROMPTED: _turn_prompted,
    DECK_CARD_TAKEN: _deck_card_taken,
    DISCARD_TAKEN_EVENT: _discard_taken,
    ROUND_STOPPED: _round_stopped,
    CARDS_REPLACED: _cards_replaced,
    CARDS_SHOWN: _cards_shown,
    CLAIM_CONFIRMED: _claim_confirmed,
    CARD_DISCARDED: _card_discarded,
    POWER_PROMPTED: _power_prompted,
    OWN_CARD_PEEKED: _own_card_peeked,
    ANOTHERS_CARD_PEEKED: _anothers_card_peeked,
    SWAP_OWN_PICKED: _swap_own_picked,
    CARDS_EXCHANGED: _cards_exchanged,
    ROUND_ENDED: _round_ended,
    NEXT_ROUND_PROMPTED: _next_round_prompted,
}


def evolve(state: State, event: dict[str, Any]) -> State:
    """Fold one event (possibly after a JSON round trip) into the state."""
    kind = event["type"]
    fold = _FOLDS.get(kind)
    if fold is None:
        raise ValueError(f"unknown sixtysix event {kind!r}")
    return fold(state, event)
