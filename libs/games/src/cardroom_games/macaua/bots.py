"""Macaua bots: the client side of the mental poker. Each bot is one player's program.

A bot holds what the server never sees: its Ed25519 signing key and, for every deck, its
secret shuffle key and card keys (all from the operating system's CSPRNG, via
``secrets``/libsodium). From its player's view alone it builds each move (keys, shuffle with
the proof its table asks for, mask, the card keys others need, plays and draws, the final
audit), signs it over ``(binding, seq, previous hash, move)`` and privately opens the cards
dealt or drawn to it.

Building a move is heavy CPU work (a shuffle with its proof, a mask step with 54 proofs,
opening cards), so the bots say ``heavy_choices = True``: a bot service calls ``choose`` in a
worker thread (``asyncio.to_thread``), never on its event loop. ``choose`` holds a lock, so a
stale choice still computing in one thread and a newer one never interleave on the secrets.

``HeuristicBot`` plays whenever it can, the rank it holds most of, and declares its
commonest suit with an Ace; ``RandomMacauaBot`` picks uniformly among every legal play and
the draw. ``build``/``sign`` are public so tests can make moves of their own (or forge them).
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from cardroom_engine import BotFactory, Message
from cardroom_mentalpoker import (
    MaskedCard,
    MentalPokerError,
    PlayerSecrets,
    deck_from_json,
    deck_to_json,
    mask_step,
    open_card,
    proof_context,
    shuffle_step,
    sign_move,
    verify_key_hex,
)
from nacl.signing import SigningKey

from .cards import SUITS, legal_first, rank, suit
from .config import MIN_SHUFFLE_ROUNDS

if TYPE_CHECKING:
    from .verify import TransitionVerifier

__all__ = [
    "HeuristicBot",
    "MacauaBot",
    "RandomMacauaBot",
    "chunk_openings",
    "game_view",
    "play_score",
]

COMMAND_BUDGET = 40_000
"""Bytes of JSON per command for shuffle-proof openings (commands are at most 64 KiB)."""


def chunk_openings(
    openings: Sequence[Any], first_budget: int, budget: int = COMMAND_BUDGET
) -> list[list[Any]]:
    """Split shuffle-proof openings into groups that each fit one command; the first group
    (sent with the shuffled deck itself) has ``first_budget`` bytes and may be empty."""
    groups: list[list[Any]] = [[]]
    room = first_budget
    for opening in openings:
        n = len(json.dumps(opening, separators=(",", ":")))
        if n > room and (groups[-1] or len(groups) == 1):
            groups.append([])
            room = budget
        groups[-1].append(opening)
        room -= n
    return groups


def game_view(view: Mapping[str, Any]) -> Mapping[str, Any]:
    """The game's own view (the table's view wraps it in ``state``)."""
    inner = view.get("state")
    return inner if isinstance(inner, Mapping) else view


Pos = tuple[int, int]


class MacauaBot:
    """The cryptography and bookkeeping of one player; subclasses choose the plays."""

    heavy_choices: ClassVar[bool] = True
    """``choose`` is CPU work (proofs): a service runs it off its event loop."""

    min_rounds: int = MIN_SHUFFLE_ROUNDS
    """The fewest shuffle proof rounds its check of a table accepts (:meth:`verifier`)."""

    def __init__(self, player: str, signing_key: SigningKey | None = None) -> None:
        self.player = player
        self.signing_key = signing_key if signing_key is not None else SigningKey.generate()
        self.secrets: dict[int, PlayerSecrets] = {}
        self.known: dict[Pos, str | None] = {}
        self._chunks: dict[int, list[Any]] = {}
        self._lock = threading.Lock()
        self.checked: TransitionVerifier | None = None  # what it acts on (:meth:`verifier`)

    @property
    def verify_key(self) -> str:
        """The verify key (hex) this player binds to its seat when it joins."""
        return verify_key_hex(self.signing_key)

    def verifier(self, game_id: str) -> TransitionVerifier:
        """This player's check of every transition of ``game_id``, signing with its key.
        From then on this player acts only on what it checked: its moves are built from
        the verifier's copy of the game, never from the view and actions the server sends
        (:meth:`TransitionVerifier.asked`)."""
        from .verify import TransitionVerifier  # (verify imports the rules, which import bots)

        self.checked = TransitionVerifier(
            self.player, self.signing_key, game_id, min_rounds=self.min_rounds
        )
        return self.checked

    def asked(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]]
    ) -> tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]:
        """The view and actions a move is built from: the checked copy's once this player
        has a verifier (it plays through a server), else those given (a table in this
        process, as in the simulations, has no server between the players)."""
        if self.checked is None:
            return game_view(view), actions
        return self.checked.asked()

    # -- the Bot protocol ---------------------------------------------------------------------
    def observe(self, message: Message) -> None:
        return None

    def choose(
        self, view: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> Mapping[str, Any]:
        with self._lock:  # one choice at a time, whichever thread asks
            v, asked = self.asked(view, actions)
            move = self.build(v, asked, rng)
            return self.sign(v, move)

    def completions(
        self, view: Mapping[str, Any], action: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Every signed move this player may send now for the listed ``action`` (the rules'
        actions are templates: only the player holds its keys and knows its cards): a play
        is each of its legal plays (an Ace declaring the first suit), anything else the one
        move its kind allows."""
        with self._lock:
            v, asked = self.asked(view, [action])
            found = next((a for a in asked if a["kind"] == action["kind"]), None)
            if found is None:  # not asked of this player in what it checked
                return []
            action, kind = found, found["kind"]
            if kind == "play":
                moves = [
                    self.play_move(v, play, SUITS[0] if rank(play[0][1]) == "A" else None)
                    for play in self.legal_plays(v)
                ]
            elif kind == "draw":
                moves = [{"kind": "draw"}]
            else:
                moves = [self.build(v, [action], random.Random(0))]
            return [self.sign(v, move) for move in moves]

    # -- moves --------------------------------------------------------------------------------
    def sign(self, v: Mapping[str, Any], move: Mapping[str, Any]) -> dict[str, Any]:
        signed = sign_move(self.signing_key, v["binding"], v["seq"] + 1, v["hash"], dict(move))
        return {"type": "move", **signed.to_json()}

    def context(self, v: Mapping[str, Any], deck: int) -> bytes:
        return proof_context(v["binding"], deck, self.player)

    def build(
        self, v: Mapping[str, Any], actions: Sequence[Mapping[str, Any]], rng: random.Random
    ) -> dict[str, Any]:
        action = actions[0]
        kind = action["kind"]
        deck = int(action.get("deck", v["deck"]))
        if kind == "keys":
            return self.keys_move(v, deck)
        if kind == "shuffle":
            if action.get("proof") == "argument":
                return self.argument_shuffle_move(v, deck)
            return self.shuffle_move(v, deck, int(action["rounds"]))
        if kind == "shuffle_proof":
            offset = int(action["offset"])
            return {"kind": "shuffle_proof", "offset": offset, "openings": self._chunks[offset]}
        if kind == "mask":
            cards, proof = mask_step(
                deck_from_json(v["cards"]), self.secrets[deck], context=self.context(v, deck)
            )
            return {
                "kind": "mask",
                "deck": deck,
                "cards": deck_to_json(cards),
                "proof": proof.to_json(),
            }
        if kind == "reveal":
            return {
                "kind": "reveal",
                "deck": deck,
                "keys": [self.key_item(int(d), int(i)) for d, i in action["positions"]],
            }
        if kind == "audit":
            return {
                "kind": "audit",
                "keys": [self.key_item(int(d), int(i)) for d, i in action["positions"]],
            }
        self.open_hand(v)
        plays = self.legal_plays(v)
        return self.choose_play(v, plays, rng)

    def keys_move(self, v: Mapping[str, Any], deck: int) -> dict[str, Any]:
        secrets = self.secrets.get(deck)
        if secrets is None:
            secrets = PlayerSecrets.generate(int(v["deck_sizes"][deck]))
            self.secrets[deck] = secrets
        move: dict[str, Any] = {
            "kind": "keys",
            "deck": deck,
            "keys": secrets.public_keys(context=self.context(v, deck)).to_json(),
        }
        if deck == 0:
            move["verify_key"] = verify_key_hex(self.signing_key)
        return move

    def argument_shuffle_move(self, v: Mapping[str, Any], deck: int) -> dict[str, Any]:
        """The shuffle proved by the Terelius-Wikström argument: one command (about 40 KB
        with the cards), no ``shuffle_proof`` parts."""
        cards, proof = shuffle_step(
            deck_from_json(v["cards"]),
            self.secrets[deck],
            context=self.context(v, deck),
            argument=True,
        )
        data = proof.to_json()
        return {
            "kind": "shuffle",
            "deck": deck,
            "cards": deck_to_json(cards),
            "keyed": data["keyed"],
            "key_proofs": data["key_proofs"],
            "argument": data["argument"],
        }

    def shuffle_move(self, v: Mapping[str, Any], deck: int, rounds: int) -> dict[str, Any]:
        """The shuffle proved by ``rounds`` rounds of cut-and-choose (tables whose config
        says ``shuffle_proof = "rounds"``): openings beyond one command's budget wait in
        ``_chunks`` for the ``shuffle_proof`` parts."""
        cards, proof = shuffle_step(
            deck_from_json(v["cards"]),
            self.secrets[deck],
            context=self.context(v, deck),
            rounds=rounds,
        )
        data = proof.to_json()
        move: dict[str, Any] = {
            "kind": "shuffle",
            "deck": deck,
            "cards": deck_to_json(cards),
            "keyed": data["keyed"],
            "key_proofs": data["key_proofs"],
            "digest": data["shuffle"]["digest"],
            "rounds": rounds,
            "openings": [],
        }
        base = len(json.dumps(move, separators=(",", ":")))
        groups = chunk_openings(data["shuffle"]["openings"], max(COMMAND_BUDGET + 8_000 - base, 0))
        move["openings"] = groups[0]
        self._chunks = {}
        offset = len(groups[0])
        for group in groups[1:]:
            self._chunks[offset] = group
            offset += len(group)
        return move

    def key_item(self, deck: int, position: int) -> dict[str, Any]:
        return {
            "deck": deck,
            "position": position,
            "key": self.secrets[deck].card_key(position).hex(),
        }

    # -- the hand -----------------------------------------------------------------------------
    def open_hand(self, v: Mapping[str, Any]) -> list[tuple[Pos, str]]:
        """Open (privately) every card of the hand not opened yet; the known hand."""
        hand: list[tuple[Pos, str]] = []
        for item in v.get("hand") or ():
            pos = (int(item["deck"]), int(item["position"]))
            if pos not in self.known:
                try:
                    card = MaskedCard.from_json(item["masked"])
                    self.known[pos] = open_card(card, self.secrets[pos[0]].card_key(pos[1]))
                except (MentalPokerError, KeyError):
                    self.known[pos] = None  # a cheated deck: never play it
            code = self.known[pos]
            if code is not None:
                hand.append((pos, code))
        return hand

    def hand(self, v: Mapping[str, Any]) -> list[tuple[Pos, str]]:
        return self.open_hand(v)

    def legal_plays(self, v: Mapping[str, Any]) -> list[list[tuple[Pos, str]]]:
        """Every legal play: a legal first card, then any subset of its rank (in hand order)."""
        hand = self.open_hand(v)
        top, declared, challenge = v["top"], v["declared"], int(v["challenge"])
        plays: list[list[tuple[Pos, str]]] = []
        for first in hand:
            if not legal_first(first[1], top, declared, challenge):
                continue
            same = [c for c in hand if c != first and rank(c[1]) == rank(first[1])]
            for mask in range(1 << len(same)):
                play = [first, *(c for k, c in enumerate(same) if mask >> k & 1)]
                if len({code for _, code in play}) == len(play):  # a cheated deck has twins
                    plays.append(play)
        return plays

    def play_move(
        self, v: Mapping[str, Any], play: Sequence[tuple[Pos, str]], new_suit: str | None
    ) -> dict[str, Any]:
        return {
            "kind": "play",
            "cards": [{**self.key_item(*pos), "card": code} for pos, code in play],
            "suit": new_suit,
        }

    def declare(
        self, v: Mapping[str, Any], play: Sequence[tuple[Pos, str]], rng: random.Random
    ) -> str | None:
        if rank(play[0][1]) != "A":
            return None
        played = {pos for pos, _ in play}
        left = Counter(suit(c) for pos, c in self.open_hand(v) if pos not in played and suit(c))
        return max(SUITS, key=lambda s: (left[s], -SUITS.index(s)))

    def choose_play(
        self, v: Mapping[str, Any], plays: list[list[tuple[Pos, str]]], rng: random.Random
    ) -> dict[str, Any]:
        raise NotImplementedError


class HeuristicBot(MacauaBot):
    """Plays when it can: counters a challenge, else the biggest group of one rank, keeping
    Aces and Jokers for later; ends on the suit it holds most of; declares its commonest
    suit with an Ace."""

    def choose_play(
        self, v: Mapping[str, Any], plays: list[list[tuple[Pos, str]]], rng: random.Random
    ) -> dict[str, Any]:
        if not plays:
            return {"kind": "draw"}
        hand = self.open_hand(v)
        counts = Counter(suit(c) for _, c in hand if suit(c))
        best = max(plays, key=lambda play: play_score([c for _, c in play], counts))
        return self.play_move(v, best, self.declare(v, best, rng))


def play_score(cards: Sequence[str], suits: Mapping[str | None, int]) -> tuple[int, int, int]:
    """How much the heuristic bot likes a play (the highest is played): more cards, then not
    an Ace or Joker (kept for later), then ending on the suit the hand holds most of
    (``suits``: the hand's cards per suit)."""
    wild = rank(cards[0]) in ("A", "JOKER")
    last = suit(cards[-1])
    return (len(cards), 0 if wild else 1, suits.get(last, 0) if last else 0)


class RandomMacauaBot(MacauaBot):
    """Uniform among every legal play and the draw."""

    def choose_play(
        self, v: Mapping[str, Any], plays: list[list[tuple[Pos, str]]], rng: random.Random
    ) -> dict[str, Any]:
        options: list[list[tuple[Pos, str]] | None] = [*plays, None]
        pick = rng.choice(options)
        if pick is None:
            return {"kind": "draw"}
        new_suit = rng.choice(SUITS) if rank(pick[0][1]) == "A" else None
        return self.play_move(v, pick, new_suit)


def _search_bot(player: str) -> Any:
    """The information-set search bot (``.search``, which imports these bots)."""
    from .search import search_bot

    return search_bot(player)


BOTS: dict[str, BotFactory] = {
    "heuristic": HeuristicBot,
    "random": RandomMacauaBot,
    "search": _search_bot,
}
