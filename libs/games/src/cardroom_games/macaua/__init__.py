"""Macaua, dealt by mental poker (RULES.md section 4 and its Decisions; seed macaua-mental-poker).

The players' programs hold every key; the server (this game's ``decide``) relays, validates
and records, and can check everything on public data: sequence, turn, Ed25519 signatures,
that every published card key matches its commitment and unmasks the card as claimed, the
Schnorr / Chaum-Pedersen proofs of every key, shuffle and mask step, the cut-and-choose
shuffle proof, and that a revealed card is legal to play. It never receives the key of a
hidden card, so it cannot see one.

Phases of every deck (the deal is deck 0, each re-shuffle of the discard pile is the next
deck, with fresh keys), strictly one player at a time, in seat order:

1. ``keys``: each player publishes a shuffle key and one key per position (commitments with
   proofs of knowledge); with deck 0 also its Ed25519 verify key (trust on first use).
2. ``shuffle``: each adds its shuffle key, permutes (CSPRNG Fisher-Yates), re-randomises
   and proves it. A proof too large for one command (64 KiB) comes in ``shuffle_proof``
   parts; the shuffle counts once the last part verifies.
3. ``mask``: each swaps its shuffle key for its per-position keys, with proofs.
4. ``deal`` (deck 0): each publishes its keys for every other hand and the face-up card;
   each hand card is then masked by its owner's key alone and opened privately.

Play (RULES.md 4.2 + Decisions): a player plays cards of one rank whose first matches the
top by suit or rank (a Joker or an Ace goes on anything, anything on a Joker, after an Ace
the declared suit), revealing them by publishing its own keys; 2, 3 and Joker add 2, 3 and
5 to a pending challenge that only a 2, 3 or Joker counters, whatever its suit; or it draws
(one card, or the whole challenge), which ends its turn: the others publish their keys for
the next fresh positions, in seat order after the drawer, and the drawer opens them
privately. When the fresh pile runs out the discard pile but its top becomes a new deck
by the same protocol. An empty hand wins. The initial face-up card has no effect.

The end: after a win (or ``max_turns``) every player publishes each of its card keys that is
still secret, i.e. for its own hand and the fresh pile (``audit``; at most 54 keys, so the
move fits one command however many decks there were); the server opens every position of
every deck and checks that each deck holds exactly the cards it was made of. A shuffle
that was no permutation (possible undetected only with ``shuffle_rounds = 0``, or with
luck 2^-rounds) is reported in the outcome's ``details.audit`` and the game is void
(everyone ranks equal).

House moves and deadlines: the house bot cannot make a player's move, because every move
needs that player's secret keys or signature (RULES.md: a "server plays every seat" mode
exists only for tests and bots). So ``house_action`` is None; the table's fallback to
``actions`` is refused too (they are unsigned templates), so an away player is never
played for. Instead the config's ``move_timeout`` (off by default) sets a deadline on every
awaited move; when it passes the game is aborted (``macaua.aborted``) and the silent player
ranks last, the others tie. Without it the table waits.

Game binding: signatures bind ``binding = "<game id>/<128-bit nonce>"``: the table's game
id (the engine hands it over through ``GameRules.bind_table``) and a nonce drawn at start,
so a move signed in one game, or under another deployment that reused a game id, is
refused (``wrong_game``) everywhere else.

Test mode: ``shuffle_rounds`` may be lowered (tests use 2-8) for speed; the default, 64,
is what production uses. The bots verify nothing the server verified: a client that does
not trust the server would check the same proofs (see ``cardroom_mentalpoker.protocol``).
"""

from .bots import HeuristicBot, MacauaBot, RandomMacauaBot, game_view
from .cards import check_play, legal_first, play_challenge, rank, suit
from .rules import (
    BAD_KEY,
    BAD_PROOF,
    BAD_SEQUENCE,
    BAD_SIGNATURE,
    CARD_MISMATCH,
    NOT_YOUR_CARD,
    REPLAYED_MOVE,
    STALE_STATE,
    WRONG_GAME,
    Macaua,
    MacauaConfig,
    MacauaState,
    audit_decks,
)

GAME = Macaua()

__all__ = [
    "BAD_KEY",
    "BAD_PROOF",
    "BAD_SEQUENCE",
    "BAD_SIGNATURE",
    "CARD_MISMATCH",
    "GAME",
    "NOT_YOUR_CARD",
    "REPLAYED_MOVE",
    "STALE_STATE",
    "WRONG_GAME",
    "HeuristicBot",
    "Macaua",
    "MacauaBot",
    "MacauaConfig",
    "MacauaState",
    "RandomMacauaBot",
    "audit_decks",
    "check_play",
    "game_view",
    "legal_first",
    "play_challenge",
    "rank",
    "suit",
]
