"""Macaua (the Romanian Macao, of the Mau-Mau family), dealt by mental poker.

The players' programs hold every key; the server (this game's ``decide``) relays, validates
and records, and can check everything on public data: sequence, turn, Ed25519 signatures,
that every published card key matches its commitment and unmasks the card as claimed, the
Schnorr / Chaum-Pedersen proofs of every key, shuffle and mask step, the shuffle's argument
(or cut-and-choose proof), and that a revealed card is legal to play. It never receives the key of a
hidden card, so it cannot see one.

Phases of every deck (the deal is deck 0, each re-shuffle of the discard pile is the next
deck, with fresh keys), strictly one player at a time, in seat order:

1. ``keys``: each player publishes a shuffle key and one key per position (commitments with
   proofs of knowledge); with deck 0 also its Ed25519 verify key (trust on first use).
2. ``shuffle``: each adds its shuffle key, permutes (CSPRNG Fisher-Yates), re-randomises
   and proves it, as the config's ``shuffle_proof`` says: ``argument`` (a new table's
   default), the Terelius-Wikström argument, one command of about 40 KB; or ``rounds``, the
   cut-and-choose proof of ``shuffle_rounds`` rounds, what every table stored before the
   argument has (a stored config without the field reads so, and hashes as it did). A proof
   too large for one command (64 KiB) comes in ``shuffle_proof`` parts; the shuffle counts
   once the last part verifies.
3. ``mask``: each swaps its shuffle key for its per-position keys, with proofs.
4. ``deal`` (deck 0): each publishes its keys for every other hand and the face-up card;
   each hand card is then masked by its owner's key alone and opened privately.

Play: a player plays cards of one rank whose first matches the
top by suit or rank (a Joker or an Ace goes on anything, anything on a Joker, after an Ace
the declared suit), revealing them by publishing its own keys; 2, 3 and Joker add 2, 3 and
5 to a pending challenge that only a 2, 3 or Joker counters, whatever its suit; or it draws
(one card, or the whole challenge), which ends its turn: the others publish their keys for
the next fresh positions, in seat order after the drawer, and the drawer opens them
privately. When the fresh pile runs out the discard pile but its top becomes a new deck
by the same protocol. The initial face-up card has no effect.

The end: the first player to empty its hand wins, and play stops there (or at ``max_turns``,
undecided). Then every player publishes each of its card keys that is still secret, i.e.
for its own hand and the fresh pile (``audit``, in any order; at most 54 keys, so the move
fits one command however many decks there were); with the last one the server opens every
position of every deck and checks that each deck holds exactly the cards it was made of. A
shuffle that was no permutation (possible undetected only against cut-and-choose, by
about 2^rounds tries offline, so a new table needs 64 rounds or more; or against the
argument, by breaking the discrete logarithm) is reported in the outcome's
``details.audit`` and the game is void (everyone ranks equal).

The audit cannot undo the win: it has a deadline, ``audit_timeout`` (60 s by default, from
the win), and when it passes the game ends (``macaua.audit_withheld``) with result
``forfeited``: whoever has not published its keys ranks last (``details.withheld``), the
winner keeps its win and score, the others tie between. Keys are what a player could hold
back to spoil a lost game; without the deadline it would hold the table open forever. What
the published keys open is audited all the same (``details.audit``: ``withheld``,
``at_fault``, ``revealed``, and per deck the ``sealed`` positions): a card that a deck was
not made of still voids the game, and the withholders still rank last.

House moves and deadlines: the house bot cannot make a player's move, because every move
needs that player's secret keys or signature (playing every seat from the server is only
for tests and bots, which hold the keys themselves). So ``house_action`` is None; the
table's fallback to ``actions`` is refused too (they are unsigned templates), so an away
player is never played for. Instead the config's ``move_timeout`` (off by default) sets a
deadline on every awaited move before the audit; when it passes the game is aborted
(``macaua.aborted``) and the silent player ranks last, the others tie. Without it the table
waits for a move of play; the audit always has its own deadline.

Game binding: signatures bind ``binding = "<game id>/<128-bit nonce>"``: the table's game
id (the engine hands it over through ``GameRules.bind_table``) and a nonce drawn at start,
so a move signed in one game, or under another deployment that reused a game id, is
refused (``wrong_game``) everywhere else.

Weak tables: a new table's ``shuffle_rounds`` is at least ``MIN_SHUFFLE_ROUNDS`` (64), and
every player's check refuses fewer; games in one process (simulations, tests) may lower it
for speed within :func:`.config.weak_proofs`.

Transition signing: nobody has to trust the server. Every transition reaches every player
whole, each player's program checks it on its own copy of the state with these same rules
(:class:`TransitionVerifier`, in :mod:`.verify`) and acknowledges it with its signature, or
with a rejection that halts the table (``macaua.rejected``). The rejection says whom it
blames (the server, or the player whose signed move broke the rules); the server, which
recorded only what these rules decided, ranks the player that halted the table last and
keeps that blame as its ``claim``. The bots check and sign every transition, and build each
move from their own checked copy, never from the server's view or actions.

Off the event loop: checking a move is CPU work (a shuffle's argument about 0.1 s), so the
rules say ``heavy = True`` and the gamemaster runs ``decide`` in a worker thread; the SDK runs
each player's check of a transition in one too.
"""

from .audit import audit_decks
from .bots import HeuristicBot, MacauaBot, RandomMacauaBot, game_view
from .cards import check_play, legal_first, play_challenge, rank, suit
from .commands import (
    BAD_KEY,
    BAD_PROOF,
    BAD_SEQUENCE,
    BAD_SIGNATURE,
    CARD_MISMATCH,
    NOT_YOUR_CARD,
    REPLAYED_MOVE,
    STALE_STATE,
    WRONG_GAME,
)
from .config import MacauaConfig
from .rules import GAME, Macaua
from .state import MacauaState
from .verify import TransitionVerifier, Verdict

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
    "TransitionVerifier",
    "Verdict",
    "audit_decks",
    "check_play",
    "game_view",
    "legal_first",
    "play_challenge",
    "rank",
    "suit",
]
