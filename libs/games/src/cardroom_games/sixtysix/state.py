"""The 66 game's immutable state, its phases and its event types.

Both protocol generations (v1, v2) share one state and one set of events; they differ in
which commands lead to which events (commands.py) and in how events are told to the
players (protocol.py).

Indexes: players are numbered by seat (0..n-1, the order of the table's seats), cards by
their position in a hand (0..len-1). When cards leave a hand, later positions shift down.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from cardroom_engine.kit import state

from .cards import DECK_COUNTS, DECK_SIZE

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

# -- event types (folds.FOLDS.types lists them all) -----------------------------------------

ROUND_DEALT: Final = "sixtysix.round_dealt"
FIRST_CARDS_SHOWN: Final = "sixtysix.first_cards_shown"
TURN_STARTED: Final = "sixtysix.turn_started"
TURN_PROMPTED: Final = "sixtysix.turn_prompted"
DECK_CARD_TAKEN: Final = "sixtysix.deck_card_taken"
DISCARD_TAKEN_EVENT: Final = "sixtysix.discarded_card_taken"
ROUND_STOPPED: Final = "sixtysix.round_stopped"
CARDS_REPLACED: Final = "sixtysix.cards_replaced"
CARDS_SHOWN: Final = "sixtysix.cards_shown"
CLAIM_CONFIRMED: Final = "sixtysix.claim_confirmed"
CARD_DISCARDED: Final = "sixtysix.card_discarded"
POWER_PROMPTED: Final = "sixtysix.power_prompted"
OWN_CARD_PEEKED: Final = "sixtysix.own_card_peeked"
ANOTHERS_CARD_PEEKED: Final = "sixtysix.anothers_card_peeked"
SWAP_OWN_PICKED: Final = "sixtysix.swap_own_picked"
CARDS_EXCHANGED: Final = "sixtysix.cards_exchanged"
ROUND_ENDED: Final = "sixtysix.round_finished"
NEXT_ROUND_PROMPTED: Final = "sixtysix.next_round_prompted"


# -- state ----------------------------------------------------------------------------------


@state
class SixtySixState(NamedTuple):
    """One table's game, immutable (the folds copy it with ``_replace``).

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
