"""The audit at the end of a Macaua game: which keys each player still holds, and the
opening of every position of every deck with the keys published."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from cardroom_mentalpoker import MentalPokerError, Scalar, decode_card, partial_unmask

from .state import MacauaState, Pos, keys_on, seat_bit


def audit_positions(state: MacauaState, player: str) -> list[Pos]:
    """The positions that still carry ``player``'s key (at most the 54 live cards): its own
    hand and the fresh pile. Every other key it had was published when it was needed."""
    bit = seat_bit(state, player)
    return [
        (d, i)
        for d, deck in enumerate(state.decks)
        for i, masking in enumerate(deck.masking)
        if masking & bit
    ]


def audit_decks(state: MacauaState, withheld: Sequence[str] = ()) -> dict[str, Any]:
    """Open every position of every deck with every published key; check each deck holds
    exactly the cards it was made of (a shuffle that is no permutation shows here).

    A position that still carries the key of a player in ``withheld`` stays sealed: the
    deck is then not verified (``ok`` is false), but a card it was not made of, or a
    position that opens to no card, among the rest still proves it is no deck
    (``tampered``). ``revealed`` names who published its keys; ``at_fault`` who the result
    holds responsible (those who withheld theirs: a bad deck is not laid at anyone's door,
    as the keys cannot tell which shuffle it was)."""
    missing_keys = frozenset(withheld)
    missing_bits = 0
    for player in missing_keys:
        missing_bits |= seat_bit(state, player)
    reports: list[dict[str, Any]] = []
    ok = True
    tampered = False
    for d, deck in enumerate(state.decks):
        # (a settled deck was found whole as its last card opened: it keeps no cards to
        # open, and none to find, so it is reported whole)
        found: list[str | None] = []
        sealed = 0
        for i, card in enumerate(deck.masked):
            masking = deck.masking[i] if deck.masking else 0
            if masking & missing_bits:
                sealed += 1
                continue
            current = card
            try:
                for player in sorted(keys_on(state, masking)):
                    key = Scalar.from_hex(state.audit_keys[player][(d, i)])
                    current = partial_unmask(current, key)
            except (MentalPokerError, KeyError):
                found.append(None)
                continue
            found.append(decode_card(current.msg) if current.is_open else None)
        want = Counter(deck.cards)
        got = Counter(c for c in found if c is not None)
        missing = sorted((want - got).elements())
        extra = sorted((got - want).elements())
        unreadable = sum(1 for c in found if c is None)
        deck_tampered = bool(extra) or unreadable > 0
        deck_ok = not missing and not deck_tampered
        ok = ok and deck_ok
        tampered = tampered or deck_tampered
        report: dict[str, Any] = {
            "deck": d,
            "ok": deck_ok,
            "missing": missing,
            "extra": extra,
            "unreadable": unreadable,
        }
        if missing_keys:
            report["sealed"] = sealed
        reports.append(report)
    audit: dict[str, Any] = {"ok": ok, "decks": reports}
    if missing_keys:
        audit |= {
            "tampered": tampered,
            "revealed": [p for p in state.seats if p in state.audit_keys],
            "withheld": [p for p in state.seats if p in missing_keys],
            "at_fault": [p for p in state.seats if p in missing_keys],
        }
    return audit
