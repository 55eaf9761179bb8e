"""The 66 game: constants, the immutable state, scoring, and the pure fold of events.

Everything here is pure and protocol-agnostic: both protocol generations (v1, v2) share one
state and one set of events; they differ in which commands lead to which events (game.py)
and in how events are told to the players (protocol.py).

Indexes: players are numbered by seat (0..n-1, the order of the table's seats), cards by
their position in a hand (0..len-1). When cards leave a hand, later positions shift down.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

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
    """One table's game, immutable (a named tuple: ``_replace`` is the cheapest copy).

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


# -- scoring (RULES.md 1.9) -------------------------------------------------------------------


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


def _with(
    rows: tuple[tuple[int, ...], ...], player: int, row: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    return (*rows[:player], row, *rows[player + 1 :])


def _set(
    rows: tuple[tuple[int, ...], ...], player: int, index: int, value: int
) -> tuple[tuple[int, ...], ...]:
    row = rows[player]
    return _with(rows, player, (*row[:index], value, *row[index + 1 :]))


def _replace_set(row: tuple[int, ...], indexes: Sequence[int], value: int) -> tuple[int, ...]:
    """The lowest of ``indexes`` gets ``value``; the others leave the row."""
    first = min(indexes)
    gone = set(indexes) - {first}
    return tuple(value if i == first else v for i, v in enumerate(row) if i not in gone)


def _power_phase(protocol: str, value: int) -> str:
    if value in PEEK_OWN_VALUES:
        return PEEK_OWN
    if value in PEEK_OTHER_VALUES:
        return PEEK_OTHER
    return SWAP_OWN if protocol == V2 else EXCHANGE


def evolve(state: State, event: dict[str, Any]) -> State:
    """Fold one event (possibly after a JSON round trip) into the state."""
    kind = event["type"]
    me = state.active

    if kind == ROUND_DEALT:
        hands = tuple(tuple(int(v) for v in hand) for hand in event["hands"])
        discard = event.get("discard")
        deck = tuple(int(c) for c in event["deck"])
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

    if kind == FIRST_CARDS_SHOWN:
        known = tuple(
            tuple((1 << p) if i in FIRST_LOOK else mask for i, mask in enumerate(state.known[p]))
            for p in range(state.n)
        )
        return state._replace(known=known, phase=BEGIN_TURN)

    if kind == TURN_STARTED:
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

    if kind == TURN_PROMPTED:
        return state._replace(phase=READY)

    if kind == DECK_CARD_TAKEN:
        value = int(event["value"])
        counts = list(state.deck)
        counts[value] -= 1
        return state._replace(
            deck=tuple(counts), deck_size=state.deck_size - 1, drawn=value, phase=DECK_TAKEN
        )

    if kind == DISCARD_TAKEN_EVENT:
        return state._replace(took_discard=True, phase=DISCARD_TAKEN)

    if kind == ROUND_STOPPED:
        return state._replace(stopper=int(event["player"]), phase=TURN_END)

    if kind == CARDS_REPLACED:
        replaced = [int(i) for i in event["cardIndexes"]]
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
        return state._replace(
            hands=_with(state.hands, me, _replace_set(state.hands[me], replaced, value)),
            known=_with(state.known, me, _replace_set(state.known[me], replaced, mask)),
            discard=int(event["discardedValue"]),
            deck=deck,
            deck_size=deck_size,
            drawn=None,
            took_discard=False,
            shown=(),
            phase=TURN_END,
        )

    if kind == CARDS_SHOWN:
        indexes = tuple(int(i) for i in event["cardIndexes"])
        others = state.everyone & ~(1 << me)
        row = tuple(
            mask | others if i in indexes else mask for i, mask in enumerate(state.known[me])
        )
        identical = bool(event["identical"])
        if identical or (state.protocol == V2 and state.drawn is not None):
            phase = CLAIM_SHOWN
        else:
            phase = TURN_END
        return state._replace(known=_with(state.known, me, row), shown=indexes, phase=phase)

    if kind == CLAIM_CONFIRMED:
        return state._replace(phase=CLAIM_REPLACE)

    if kind == CARD_DISCARDED:
        value = int(event["value"])
        power = bool(event["power"])
        return state._replace(
            discard=value,
            drawn=None,
            shown=(),
            power=value if power else None,
            phase=POWER_PENDING if power else TURN_END,
        )

    if kind == POWER_PROMPTED:
        return state._replace(phase=_power_phase(state.protocol, int(event["value"])))

    if kind == OWN_CARD_PEEKED:
        index = int(event["cardIndex"])
        mask = state.known[me][index] | (1 << me)
        return state._replace(known=_set(state.known, me, index, mask), phase=TURN_END)

    if kind == ANOTHERS_CARD_PEEKED:
        target, index = int(event["target"]), int(event["cardIndex"])
        mask = state.known[target][index] | (1 << me)
        return state._replace(known=_set(state.known, target, index, mask), phase=TURN_END)

    if kind == SWAP_OWN_PICKED:
        return state._replace(swap_index=int(event["cardIndex"]), phase=SWAP_OTHER)

    if kind == CARDS_EXCHANGED:
        own, target, other = (
            int(event["cardIndex"]),
            int(event["target"]),
            int(event["targetCardIndex"]),
        )
        mine, theirs = state.hands[me][own], state.hands[target][other]
        mine_known, theirs_known = state.known[me][own], state.known[target][other]
        hands = _set(_set(state.hands, me, own, theirs), target, other, mine)
        known = _set(_set(state.known, me, own, theirs_known), target, other, mine_known)
        return state._replace(hands=hands, known=known, swap_index=None, phase=TURN_END)

    if kind == ROUND_ENDED:
        finished = bool(event["finished"])
        starter = event.get("nextStarter")
        return state._replace(
            scores=tuple(int(s) for s in event["scores"]),
            totals=tuple(int(t) for t in event["totals"]),
            known=tuple((state.everyone,) * len(hand) for hand in state.hands),
            next_starter=None if starter is None else int(starter),
            finished=finished,
            phase=GAME_OVER if finished else ROUND_FINISHED,
        )

    if kind == NEXT_ROUND_PROMPTED:
        return state._replace(phase=ROUND_OVER)

    raise ValueError(f"unknown sixtysix event {kind!r}")
