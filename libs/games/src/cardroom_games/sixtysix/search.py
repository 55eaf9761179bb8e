"""The 66 game's hook for the information-set search bot (``cardroom_engine.search``).

What a player of the 66 game knows is in its view and its notifications: the values of the
cards it has seen (its own first two, what it peeked at, what was shown or taken from the
discard pile, everything when a round ends; the view keeps each value with its card when
cards move), the discard top and every card that went onto the discard pile this round (each
is told to everyone), the card it drew from the deck, the deck's size, the stop, the totals.
What it does not know is the value of every other card in the hands and which cards the deck
still holds. A determinization deals those from the cards it has not seen this round (the 52
of the deck's counts, less the values it saw in hands, on the discard pile or drawn, and the
cards buried under the discard pile, counted from the notifications): first to every hand
position whose value it does not know, the rest is the deck.

Who has seen which card is public (the first look is the rule, peeks are announced, a card
keeps its watchers when it moves), and the others' play tells something of the cards they
have seen (:class:`HandReading`): read as players who give up their worst card, keep a
drawn card or take the discard top only when it is clearly lower, and stop only with a low
hand, each of their moves bounds the cards they have seen. A determinization deals each
bounded card a value within its bound where the unseen cards allow it (the tightest bound
first), the others uniformly; its players know the cards they have seen.

The phase of the turn is read from the actions its view lists (and, for a taken discard top
that leaves only ``PickOwnCard`` in v2, from its last prompt); the own card picked for a v2
swap is the bot's own previous command (the search bot remembers its commands).

A playout runs to the end of the round; its value for the player is where its points gained
in the round rank among everyone's (fewer is better), and by how much (and when the round
ends the game, half of it is where its total ranks). The rollouts play
each seat as the heuristic bot would, from what that seat knows in the sampled state: stop
with a low known hand, take a low discard top, keep a low drawn card, peek at unknown cards,
swap the worst card for a lower known one.

In the rollouts, each other player also stops a round, at the start of its turn, as often
as this player has seen it stop when it could (who moves and who stops is told to all): a
player that stops at random ends rounds early, and the playouts should know it.

The bot (:class:`SixtySixSearchBot`) is the engine's paired search with a heuristic bot of
its own as the prior: every candidate action is played out in every determinization, and
the heuristic's choice stands unless another beats it clearly. The candidates leave out
claims of cards the player does not know to be equal (blind gambles).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from cardroom_engine import Message
from cardroom_engine.search import GuidedSearchBot

from . import moves as m
from .bots import HeuristicBot, own_seat
from .cards import DECK_COUNTS, FIRST_LOOK, PEEK_OTHER_VALUES, PEEK_OWN_VALUES
from .rules import SixtySix
from .state import (
    CLAIM_REPLACE,
    DECK_TAKEN,
    DISCARD_TAKEN,
    EXCHANGE,
    GAME_OVER,
    PEEK_OTHER,
    PEEK_OWN,
    READY,
    ROUND_FINISHED,
    ROUND_OVER,
    SWAP_OTHER,
    SWAP_OWN,
    V1,
    SixtySixState,
)

__all__ = ["SixtySixDeterminizer", "SixtySixSearchBot", "rollout", "search_bot"]

_RULES = SixtySix()
UNKNOWN = 6.5
"""The mean card (338 / 52): what a card of unknown value is worth on average."""
STOP_AT = 9.0
ROUND_STARTS = frozenset({"BoardInitialized", "GameState"})
"""The messages that deal a round (both protocols): what was seen before is gone."""
FROM_DISCARD = frozenset(
    {
        "CardReplacedByDiscarded",
        "ReplacedCardByDiscarded",
        "CardsReplacedByDiscarded",
        "ReplacedCardsByDiscarded",
    }
)
"""v1's messages of a replacement by the discard top (v2: ``CardsReplaced``, not fromDeck)."""
REPLACEMENTS = FROM_DISCARD | {
    "CardsReplaced",
    "CardsReplacedFromDeck",
    "ReplacedCardsFromDeck",
    "CardReplacedFromDeck",
    "ReplacedCardFromDeck",
}


ALL_SEE = (1 << 16) - 1
"""The mask of a card everybody has seen."""
KEPT_BELOW = 2
"""A drawn card is kept in place of the worst card only if lower by this much than it
(the heuristic's rule; an unseen card is reckoned at 6.5)."""
TOP_BELOW = 3
"""The discard top is taken only if lower by this much than the worst card."""
TRUST_BROKEN = 0.1
"""A player is read only while at most this share of the bounds on its cards checked at
the rounds' ends has been broken."""


class HandReading:
    """What the others' play tells of their cards: for every hand position this round, a
    bound on its card (None: none) and who has seen it (a mask of seats, from what is
    public), following the cards as they move.

    The others are read as players who give up their worst card, keep a drawn card only
    when it is clearly lower than that, take the discard top only when it is clearly lower,
    and reckon a card they have not seen at its mean. So, with ``worst`` the highest of what
    a player reckons its cards to be worth (a card it saw at its value, one it did not at
    6.5), each of its moves bounds every card it has seen: giving up a card (worth ``v``,
    now on the discard pile) says ``worst`` was ``v`` if it had seen that card, else 6.5;
    discarding a drawn card ``d`` says ``worst < d + KEPT_BELOW``; drawing instead of taking
    the top ``t`` says ``worst < t + TOP_BELOW``; a kept card is at most ``worst -
    KEPT_BELOW``; and stopping says the cards it has seen come to at most ``STOP_AT`` less
    6.5 for an unseen one (so each of them is at most that).

    Not everybody plays so: when a round ends with every card shown (v2), the bounds are
    checked, and a player whose bounds broke too often (``TRUST_BROKEN``) is no longer read
    (its cards are dealt without bounds)."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.me: int | None = None
        self.active: int | None = None
        self.top: int | None = None
        self.cards: list[list[tuple[int | None, int]]] = []
        self.checked: dict[int, tuple[int, int]] = {}  # seat -> (bounds held, broken)

    def trusts(self, seat: int) -> bool:
        held, broken = self.checked.get(seat, (0, 0))
        return broken <= TRUST_BROKEN * (held + broken)

    def observe(self, message: Mapping[str, Any]) -> None:
        try:
            self._observe(message)
        except (IndexError, KeyError, TypeError, ValueError):
            self.cards = []  # lost track: no bounds until the next deal

    def of(self, hands: Sequence[Sequence[Any]]) -> list[list[tuple[int | None, int]]] | None:
        """Each card's bound and watchers, if they still match the shape of ``hands`` (the
        view's)."""
        cards = self.cards
        if len(cards) != len(hands) or any(
            len(c) != len(h) for c, h in zip(cards, hands, strict=True)
        ):
            return None
        return [
            row if self.trusts(p) else [(None, mask) for _, mask in row]
            for p, row in enumerate(cards)
        ]

    def _observe(self, message: Mapping[str, Any]) -> None:
        kind = message.get("type")
        me = self.me if self.me is not None else -1
        if kind == "GameStarted":
            self.me = own_seat(message, self.player)
        elif kind in ROUND_STARTS:
            if kind == "GameState":
                self.me = message["playerIndex"]
            self.cards = [
                [(None, 1 << p if j in FIRST_LOOK else 0) for j in range(size)]
                for p, size in enumerate(message["handSizes"])
            ]
            self.active = None
        elif kind == "BoardUpdated" and "activePlayerIndex" in message:
            self.active = message["activePlayerIndex"]
        elif kind in ("NextTurn", "YourTurn"):
            self.active = message.get("playerIndex", me)
        elif kind == "CardsRevealed":
            for info in message["cards"]:
                looking = sum(1 << p for p in info["lookingPlayerIndexes"])
                for j in info["cardIndexes"]:
                    self._see(info["targetPlayerIndex"], j, looking)
        elif kind in ("OwnCardPeeked", "OwnCard"):
            owner = message.get("playerIndex", me)
            self._see(owner, message["cardIndex"], 1 << owner)
        elif kind in ("AnothersCardPeeked", "AnothersCard"):
            looker = message.get("playerIndex", me)
            self._see(message["anotherPlayerIndex"], message["cardIndex"], 1 << looker)
        elif kind in ("IdenticalCardsShown", "DifferentCardsShown"):
            for j in message["cardIndexes"]:
                self._see(message["playerIndex"], j, ALL_SEE)
        elif kind in ("CardExchanged", "CardsExchanged", "ExchangedCards"):
            p, j = message.get("playerIndex", me), message["cardIndex"]
            q, k = message["anotherPlayerIndex"], message["anotherPlayerCardIndex"]
            self.cards[p][j], self.cards[q][k] = self.cards[q][k], self.cards[p][j]
        elif kind in REPLACEMENTS:
            self._replaced(message, me)
        elif kind == "RoundFinished" and "cards" in message:
            self._check(message["cards"])
        elif kind in ("StopInitiated", "InitiatedStop") or (
            kind == "BoardUpdated" and set(message) == {"type", "stopCounter"}
        ):
            stopper = message.get("playerIndex", me if kind == "InitiatedStop" else self.active)
            if isinstance(stopper, int):
                bit = 1 << stopper
                unseen = sum(not mask & bit for _, mask in self.cards[stopper])
                self._bound_seen(stopper, math.floor(STOP_AT - UNKNOWN * unseen))
        elif kind in ("CardDiscarded", "DiscardedCard") or (
            kind == "BoardUpdated" and "discardedValue" in message and "actions" not in message
        ):
            player = message.get("playerIndex", me if kind == "DiscardedCard" else self.active)
            if isinstance(player, int):
                self._bound_seen(player, message["discardedValue"] + KEPT_BELOW - 1)
                self._declined_top(player)
        if "discardedValue" in message:
            value = message["discardedValue"]
            self.top = value if isinstance(value, int) else None

    def _replaced(self, message: Mapping[str, Any], me: int) -> None:
        kind = message["type"]
        player = message.get("playerIndex", me)
        indexes = message.get("cardIndexes") or [message["cardIndex"]]
        given_up = message["discardedValue"]
        from_deck = message["fromDeck"] if kind == "CardsReplaced" else kind not in FROM_DISCARD
        row = self.cards[player]
        if len(indexes) > 1:  # a claimed set: nothing is read from it
            first = min(indexes)
            for i in sorted(set(indexes) - {first}, reverse=True):
                del row[i]
            # the new card: the discard top is public, a drawn card its drawer saw (v1's
            # claim from the deck is blind)
            blind = kind in ("CardsReplacedFromDeck", "ReplacedCardsFromDeck")
            row[first] = (None, 0 if blind else 1 << player if from_deck else ALL_SEE)
            return
        j = indexes[0]
        saw = bool(row[j][1] & (1 << player))
        worst = float(given_up) if saw else UNKNOWN
        row[j] = (None, 0)  # (gone: bound the rest)
        self._bound_seen(player, math.floor(worst))
        if from_deck:
            self._declined_top(player)
            row[j] = (math.floor(worst - KEPT_BELOW), 1 << player)
        else:
            row[j] = (None, ALL_SEE)

    def _check(self, hands: Sequence[Sequence[int]]) -> None:
        """Count the bounds the shown ``hands`` kept and broke, by player."""
        if self.of(hands) is None:
            return
        for p, (row, values) in enumerate(zip(self.cards, hands, strict=True)):
            held, broken = self.checked.get(p, (0, 0))
            for (bound, _), value in zip(row, values, strict=True):
                if bound is not None:
                    held, broken = (held, broken + 1) if value > bound else (held + 1, broken)
            self.checked[p] = (held, broken)
        self.cards = []

    def _declined_top(self, player: int) -> None:
        if self.top is not None:
            self._bound_seen(player, self.top + TOP_BELOW - 1)

    def _bound_seen(self, player: int, bound: int) -> None:
        """Every card ``player`` has seen is at most ``bound``."""
        bit = 1 << player
        row = self.cards[player]
        for i, (old, mask) in enumerate(row):
            if mask & bit and (old is None or bound < old):
                row[i] = (bound, mask)

    def _see(self, player: int, index: int, looking: int) -> None:
        bound, mask = self.cards[player][index]
        self.cards[player][index] = (bound, mask | looking)


class SixtySixDeterminizer:
    """The cards one player saw leave play this round, and states consistent with its view."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.buried = [0] * len(DECK_COUNTS)  # per value: seen going under the discard top
        self.top: int | None = None
        self.prompt: Message = {}  # the last message that listed this player's actions
        self.shown: tuple[int, ...] = ()  # (v1) the positions of this player's own claim
        self.own: Mapping[str, Any] = {}  # this player's last command (the search's choice)
        # how often each other player stopped a round when it could (public: who moves, who
        # stops), for the rollouts to play the others as they have played
        self.turns: dict[int, int] = {}
        self.stops: dict[int, int] = {}
        self.active: int | None = None
        self.stopped = False
        self.reading = HandReading(player)

    # -- what the notifications say -------------------------------------------------------
    def observe(self, message: Message) -> None:
        kind = message.get("type")
        self.reading.observe(message)
        if kind in ROUND_STARTS:
            self.buried = [0] * len(DECK_COUNTS)
            top = message.get("discardedValue")
            self.top = top if isinstance(top, int) else None
            self.stopped = False
            return
        self._count_stops(message)
        if "actions" in message:
            self.prompt = message
        if kind == "ShowedIdenticalCards":
            self.shown = tuple(int(i) for i in message["cardIndexes"])
        if "discardedValue" not in message:
            return
        # one card went onto the discard pile: the previous top is buried under it, unless
        # it is the card that was taken into a hand
        taken = kind in FROM_DISCARD or (kind == "CardsReplaced" and not message["fromDeck"])
        if self.top is not None and not taken:
            self.buried[self.top] += 1
        value = message["discardedValue"]
        self.top = value if isinstance(value, int) else None
        if kind in REPLACEMENTS and self.top is not None:
            # a claimed set: the cards of the set beyond the one discarded leave the game
            # (they were all of the discarded card's value)
            self.buried[self.top] += max(len(message.get("cardIndexes") or ()) - 1, 0)

    def _count_stops(self, message: Message) -> None:
        kind = message.get("type")
        started: Any = None
        if kind == "BoardUpdated" and "activePlayerIndex" in message:
            started = message["activePlayerIndex"]  # (v2) a turn begins, told to everyone
        elif kind == "NextTurn":
            started = message.get("playerIndex")  # (v1) another player's turn begins
        elif kind == "YourTurn":
            self.active = None  # (v1) this player's own turn: its stops are not counted
            return
        if isinstance(started, int):
            self.active = started
            if not self.stopped:  # a turn in which it could have stopped
                self.turns[started] = self.turns.get(started, 0) + 1
            return
        stopper: Any = None
        if kind == "StopInitiated":
            stopper = message.get("playerIndex")  # (v1)
        elif kind == "BoardUpdated" and set(message) == {"type", "stopCounter"}:
            stopper = self.active  # (v2) the player whose turn it is stopped
        if kind == "InitiatedStop" or stopper is not None:
            self.stopped = True
        if isinstance(stopper, int):
            self.stops[stopper] = self.stops.get(stopper, 0) + 1

    def stop_rate(self, seat: int) -> float:
        """How often ``seat`` stopped a round when it could, as this player saw (a prior of
        one stop in ten turns while it has seen few)."""
        return (self.stops.get(seat, 0) + 0.3) / (self.turns.get(seat, 0) + 3.0)

    def chose(self, command: Mapping[str, Any]) -> None:
        self.own = command

    # -- states consistent with the view ----------------------------------------------------
    def unseen(self, view: Mapping[str, Any]) -> list[int]:
        """The values of the cards this player has not seen this round (one item a card)."""
        g = _game(view)
        counts = [c - b for c, b in zip(DECK_COUNTS, self.buried, strict=True)]
        seen = [v for hand in g.get("hands") or () for v in hand if v is not None]
        for extra in (g.get("discardedValue"), g.get("deckCard")):
            if extra is not None:
                seen.append(extra)
        for value in seen:
            counts[int(value)] -= 1
        return [v for v, c in enumerate(counts) for _ in range(max(c, 0))]

    def phase(self, view: Mapping[str, Any]) -> str:
        """The phase this player's view and last prompt say it is in (it must move)."""
        g = _game(view)
        names = set(g.get("actions") or ())
        top = g.get("discardedValue")
        if m.START_NEXT_ROUND in names:
            return ROUND_OVER
        if m.TAKE_CARD_FROM_DECK in names:
            return READY
        if g.get("protocol") == V1:
            if m.REPLACE_CARD_FROM_DECK in names or m.DISCARD in names:
                return DECK_TAKEN
            if names & {m.REPLACE_CARDS_FROM_DECK, m.REPLACE_CARDS_BY_DISCARDED}:
                return CLAIM_REPLACE
            if m.PEEK_OWN_CARD in names:
                return PEEK_OWN
            if m.PEEK_ANOTHERS_CARD in names:
                return PEEK_OTHER
            return EXCHANGE
        if m.DISCARD in names:
            return DECK_TAKEN
        if m.SHOW_CARDS in names:
            return DISCARD_TAKEN
        if m.PICK_OWN_CARD in names:
            if "discardedValue" not in self.prompt:  # not a power's prompt: a taken top
                return DISCARD_TAKEN
            return PEEK_OWN if top in PEEK_OWN_VALUES else SWAP_OWN
        return PEEK_OTHER if top in PEEK_OTHER_VALUES else SWAP_OTHER

    def sample(self, view: Mapping[str, Any], player: str, rng: random.Random) -> SixtySixState:
        g = _game(view)
        seats = tuple(str(s) for s in g["players"])
        me = seats.index(player)
        pool = self.unseen(view)
        rng.shuffle(pool)
        seen_hands = g.get("hands") or ()
        read = self.reading.of(seen_hands)
        dealt = _deal_bounded(pool, seen_hands, read, me)
        hands: list[tuple[int, ...]] = []
        known: list[tuple[int, ...]] = []
        for p, seen in enumerate(seen_hands):
            values: list[int] = []
            masks: list[int] = []
            for j, value in enumerate(seen):
                if value is None:
                    drawn = dealt.get((p, j))
                    if drawn is None:
                        drawn = pool.pop() if pool else rng.randrange(len(DECK_COUNTS))
                    values.append(drawn)
                    mask = 0
                else:
                    values.append(int(value))
                    mask = 1 << me
                if read is not None:
                    mask |= read[p][j][1] & ~(1 << me)  # (what this player saw is its view's)
                elif p != me and rng.random() < 0.5:
                    mask |= 1 << p  # (lost track) a guess: the owner may know it
                masks.append(mask)
            hands.append(tuple(values))
            known.append(tuple(masks))
        deck_size = int(g.get("deckSize") or 0)
        deck = [0] * len(DECK_COUNTS)
        for value in pool[:deck_size]:
            deck[value] += 1
        while sum(deck) < deck_size:  # (never, if the counting is sound)
            deck[rng.randrange(len(DECK_COUNTS))] += 1
        phase = self.phase(view)
        top = g.get("discardedValue")
        power = top if phase in (PEEK_OWN, PEEK_OTHER, SWAP_OWN, SWAP_OTHER, EXCHANGE) else None
        swap_index = None
        if phase == SWAP_OTHER:
            own = self.own
            picked = own.get("cardIndex") if own.get("type") == m.PICK_OWN_CARD else None
            swap_index = picked if isinstance(picked, int) and picked < len(hands[me]) else 0
        scores = g.get("roundScores")
        return SixtySixState(
            protocol=str(g.get("protocol") or "v2"),
            seats=seats,
            totals=tuple(int(t) for t in g["totalScores"]),
            round=int(g.get("round") or 0),
            turn=int(g.get("turn") or 0),
            phase=phase,
            active=int(g.get("activePlayerIndex") or 0),
            hands=tuple(hands),
            known=tuple(known),
            deck=tuple(deck),
            deck_size=deck_size,
            discard=top,
            stopper=g.get("stopperIndex"),
            drawn=g.get("deckCard") if phase == DECK_TAKEN else None,
            took_discard=phase == DISCARD_TAKEN,
            shown=self.shown if phase == CLAIM_REPLACE else (),
            power=power,
            swap_index=swap_index,
            scores=None if scores is None else tuple(int(s) for s in scores),
            next_starter=g.get("nextPlayerIndex"),
            finished=False,
        )

    # -- judging a playout ------------------------------------------------------------------
    def done(self, start: SixtySixState, state: SixtySixState, steps: int) -> bool:
        return state.round != start.round or state.phase in (ROUND_FINISHED, ROUND_OVER, GAME_OVER)

    def value(self, start: SixtySixState, state: SixtySixState, player: str) -> float:
        me = state.seats.index(player)
        if state.round == start.round and state.phase not in (ROUND_FINISHED, GAME_OVER):
            # (a playout cut short: judge the hands as they stand)
            gained = [float(sum(hand)) for hand in state.hands]
        else:
            gained = [float(b - a) for a, b in zip(start.totals, state.totals, strict=True)]
        round_value = _standing(gained, me, 8.0)
        if state.phase != GAME_OVER:
            return round_value
        # the game ended with this round: the totals rank the players
        return 0.5 * round_value + 0.5 * _standing([float(t) for t in state.totals], me, 8.0)


def _deal_bounded(
    pool: list[int],
    hands: Sequence[Sequence[Any]],
    read: Sequence[Sequence[tuple[int | None, int]]] | None,
    me: int,
) -> dict[tuple[int, int], int]:
    """Deal the others' unseen cards that have a bound first, each a card of the shuffled
    ``pool`` within its bound (taken out of ``pool``), at random among those. The tightest
    bound goes first: every card that fits it fits the looser ones, so when the true cards
    meet every bound, so does the deal."""
    dealt: dict[tuple[int, int], int] = {}
    if read is None:
        return dealt
    bounded = sorted(
        (bound, p, j)
        for p, (seen, cards) in enumerate(zip(hands, read, strict=True))
        if p != me
        for j, (value, (bound, _)) in enumerate(zip(seen, cards, strict=True))
        if value is None and bound is not None
    )
    for bound, p, j in bounded:
        at = next((i for i in range(len(pool) - 1, -1, -1) if pool[i] <= bound), None)
        if at is not None:
            dealt[(p, j)] = pool.pop(at)
    return dealt


def _standing(points: Sequence[float], me: int, scale: float) -> float:
    """How good ``me``'s points are among everyone's (fewer is better), in [0, 1]: where they
    rank, and by how much they beat the others' mean."""
    others = [x for i, x in enumerate(points) if i != me]
    mine = points[me]
    rank = sum(1.0 if x > mine else 0.5 if x == mine else 0.0 for x in others) / len(others)
    margin = 1.0 / (1.0 + math.exp((mine - sum(others) / len(others)) / scale))
    return 0.25 * rank + 0.75 * margin


def _game(view: Mapping[str, Any]) -> Mapping[str, Any]:
    """The game's own view (the table's view wraps it in ``state``)."""
    inner = view.get("state")
    return inner if isinstance(inner, Mapping) else view


# -- the rollouts' policy -------------------------------------------------------------------


def _pick(actions: Sequence[dict[str, Any]], command: dict[str, Any]) -> dict[str, Any] | None:
    return command if command in actions else None


def rollout(
    state: SixtySixState, player: str, actions: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any]:
    """The playouts' policy: the heuristic bot's rules of thumb, on what ``player`` knows in
    the sampled state."""
    return _rollout(state, player, actions, rng) or rng.choice(actions)


def _rollout(
    state: SixtySixState, player: str, actions: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any] | None:
    phase = state.phase
    if phase == ROUND_OVER:
        return actions[0]
    seat = state.seats.index(player)
    bit = 1 << seat
    hand = state.hands[seat]
    est = [float(v) if k & bit else UNKNOWN for v, k in zip(hand, state.known[seat], strict=True)]
    unknown = [i for i, k in enumerate(state.known[seat]) if not k & bit]
    if not hand:
        return None
    worst = max(range(len(hand)), key=lambda i: (est[i], i in unknown))
    v1 = state.protocol == V1
    if phase == READY:
        if state.stopper is None and len(unknown) <= 1 and sum(est) <= STOP_AT:
            return {"type": m.STOP_ROUND}
        if state.discard is not None and state.discard + 3 <= est[worst]:
            if v1:
                return {"type": m.REPLACE_CARD_BY_DISCARDED, "cardIndex": worst}
            return {"type": m.TAKE_DISCARDED_CARD}
        return {"type": m.TAKE_CARD_FROM_DECK}
    if phase == DECK_TAKEN:
        held = state.drawn if state.drawn is not None else UNKNOWN
        if held + 2 <= est[worst]:
            name = m.REPLACE_CARD_FROM_DECK if v1 else m.PICK_OWN_CARD
            return {"type": name, "cardIndex": worst}
        return {"type": m.DISCARD}
    if phase == DISCARD_TAKEN:
        return {"type": m.PICK_OWN_CARD, "cardIndex": worst}
    if phase == CLAIM_REPLACE:
        if state.discard is not None and state.discard < UNKNOWN:
            return _pick(actions, {"type": m.REPLACE_CARDS_BY_DISCARDED})
        return _pick(actions, {"type": m.REPLACE_CARDS_FROM_DECK})
    if phase == PEEK_OWN:
        name = m.PEEK_OWN_CARD if v1 else m.PICK_OWN_CARD
        return {"type": name, "cardIndex": unknown[0] if unknown else worst}
    if phase == SWAP_OWN:
        return {"type": m.PICK_OWN_CARD, "cardIndex": worst}
    others = [
        (p, j, v if state.known[p][j] & bit else None)
        for p in range(state.n)
        if p != seat
        for j, v in enumerate(state.hands[p])
    ]
    if not others:
        return None
    blind = [(p, j) for p, j, v in others if v is None]
    if phase == PEEK_OTHER:
        p, j = rng.choice(blind) if blind else rng.choice([(p, j) for p, j, _ in others])
        if v1:
            return {"type": m.PEEK_ANOTHERS_CARD, "anotherPlayerIndex": p, "cardIndex": j}
        return {"type": m.PICK_ANOTHERS_CARD, "playerIndex": p, "cardIndex": j}
    own = state.swap_index if phase == SWAP_OTHER and state.swap_index is not None else worst
    lower = [(v, p, j) for p, j, v in others if v is not None and v < est[own]]
    if lower:
        _, p, j = min(lower)
    elif blind:
        p, j = rng.choice(blind)
    else:
        return None
    if phase == EXCHANGE:
        return {
            "type": m.EXCHANGE_CARDS,
            "cardIndex": own,
            "anotherPlayerIndex": p,
            "anotherPlayerCardIndex": j,
        }
    return {"type": m.PICK_ANOTHERS_CARD, "playerIndex": p, "cardIndex": j}


class SixtySixSearchBot(GuidedSearchBot[SixtySixState]):
    """The engine's paired search with the heuristic bot's choice as its prior (a heuristic
    bot of its own, fed the same notifications), over the :func:`candidates`; it tells the
    determinizer its own commands (a v2 swap's first pick is known to its player, though no
    notification repeats it)."""

    determinizer: SixtySixDeterminizer
    heuristic: HeuristicBot

    def __init__(self, player: str, iterations: int = 500) -> None:
        super().__init__(
            player,
            _RULES,
            SixtySixDeterminizer(player),
            HeuristicBot(player),
            iterations=iterations,
            confidence=1.0,
        )
        self.rollout = self._rollout

    def _rollout(
        self, state: SixtySixState, player: str, actions: list[dict[str, Any]], rng: random.Random
    ) -> dict[str, Any]:
        """:func:`rollout`, but another player stops a round as often as it was seen to."""
        if (
            player != self.player
            and state.phase == READY
            and state.stopper is None
            and rng.random() < self.determinizer.stop_rate(state.seats.index(player))
        ):
            return {"type": m.STOP_ROUND}
        return rollout(state, player, actions, rng)

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        choice = super().choose(view, candidates(view, actions), rng)
        self.determinizer.chose(choice)
        if self.heuristic.swap_from is not None and choice.get("type") == m.PICK_OWN_CARD:
            self.heuristic.swap_from = int(choice["cardIndex"])  # the card it gives, if not its
        return choice


def candidates(
    view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]]
) -> Sequence[Mapping[str, Any]]:
    """The actions worth searching: a claim only of cards the player knows to be equal (a
    claim of unknown cards is a blind gamble the rollouts cannot judge fairly)."""
    g = _game(view)
    me = g.get("playerIndex")
    hands = g.get("hands") or ()
    own = hands[me] if isinstance(me, int) and me < len(hands) else []

    def worth(action: Mapping[str, Any]) -> bool:
        if action.get("type") != m.SHOW_CARDS:
            return True
        values = [own[i] if i < len(own) else None for i in action["cardIndexes"]]
        return None not in values and len(set(values)) == 1

    kept = [a for a in actions if worth(a)]
    return kept or actions


def search_bot(player: str, iterations: int = 500) -> SixtySixSearchBot:
    """The 66 game's search bot for ``player`` (the registry's ``"search"`` kind): every
    candidate action in each determinization, ``iterations`` playouts a move."""
    return SixtySixSearchBot(player, iterations=iterations)
