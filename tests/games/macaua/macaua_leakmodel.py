"""An entitlement model of Macaua written from the rules and the mental-poker algebra, not
from the game's code: who may know which card at each event version.

Ground truth comes from the end of the game: every player's audit publishes every card key,
so the card at every position of every deck is computed here directly with the
``cardroom_mentalpoker`` primitives (the deck after its mask phase, minus every key).

At each event (applied before its own scan, since an event may be what makes a card public):

- a deck's positions become hidden when its first shuffle is complete (with the last part
  of its proof; that event itself is judged before: its input is the open deck);
- the face-up card becomes public when the last deal reveal opens it; played cards become
  public when played; everything becomes public when the audit result is published;
- a hand position (deal layout, ``draw_assigned``) belongs to its owner.

A message for player p (None: a spectator, or the event store) leaks when it contains the
code (a JSON string equal to it) or the point (its hex anywhere in the text) of a card at a
position hidden from p. Separately, the server must never hold the owner's key of a hidden
hand card, nor every key of a fresh card: :meth:`LeakModel.check_keys` looks at every
64-hex token of every event before the audit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardroom_mentalpoker import (
    MACAUA_CARDS,
    Scalar,
    card_point,
    deck_from_json,
    decode_card,
    partial_unmask,
    standard_deal,
)

HEX64 = re.compile(r"[0-9a-f]{64}")
POINT_HEX = {card_point(c).hex(): c for c in MACAUA_CARDS}
CODES = frozenset(MACAUA_CARDS)
Pos = tuple[int, int]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def mentioned(message: Any) -> set[str]:
    """Card codes and card points (as codes) anywhere in a JSON value."""
    text = json.dumps(message)
    found = {s for s in _strings(message) if s in CODES}
    found |= {POINT_HEX[h] for h in HEX64.findall(text) if h in POINT_HEX}
    return found


def all_keys(events: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int, int], str]:
    """Every card key published during the game, (player, deck, position) -> hex: in the
    deal and draw reveals, with the played cards, and in the final audit."""
    out: dict[tuple[str, int, int], str] = {}
    for e in events:
        kind = e["type"]
        if kind in ("macaua.reveal", "macaua.audit"):
            for item in e["signed"]["move"]["keys"]:
                out[(e["player"], item["deck"], item["position"])] = item["key"]
        elif kind == "macaua.played":
            for d, i, _card, key in e["cards"]:
                out[(e["player"], d, i)] = key
    return out


def truth(events: Sequence[Mapping[str, Any]], seats: Sequence[str]) -> dict[Pos, str]:
    """The card at every position of every deck: the deck after its mask phase, with every
    player's key for that position removed (all of them are published by the end)."""
    masked: dict[int, Any] = {}
    deck_no = 0
    for e in events:
        if e["type"] == "macaua.reshuffled":
            deck_no = e["deck"]
        elif e["type"] == "macaua.mask":
            masked[deck_no] = deck_from_json(e["signed"]["move"]["cards"])
    assert any(e["type"] == "macaua.audited" for e in events), "the audit did not complete"
    keys = all_keys(events)
    out: dict[Pos, str] = {}
    for d, deck in masked.items():
        for i, card in enumerate(deck):
            for p in seats:
                card = partial_unmask(card, Scalar.from_hex(keys[(p, d, i)]))
            code = decode_card(card.msg)
            assert code is not None
            out[(d, i)] = code
    return out


@dataclass
class LeakModel:
    seats: Sequence[str]
    truth: Mapping[Pos, str]
    hand_size: int = 5
    hidden: set[Pos] = field(default_factory=set)
    owner: dict[Pos, str] = field(default_factory=dict)
    deck_sizes: list[int] = field(default_factory=lambda: [len(MACAUA_CARDS)])
    deck_no: int = 0
    shuffled: set[int] = field(default_factory=set)
    proof_left: int = 0
    deal_reveals: int = 0
    audited: bool = False
    published: dict[Pos, set[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def _completes_shuffle(self, e: Mapping[str, Any]) -> bool:
        move = e.get("signed", {}).get("move", {})
        if e["type"] == "macaua.shuffle":
            if "argument" in move:  # complete in one command
                return True
            return len(move["openings"]) >= int(move["rounds"])
        if e["type"] == "macaua.shuffle_proof":
            return self.proof_left <= len(move["openings"])
        return False

    def hides(self, e: Mapping[str, Any]) -> bool:
        """Whether ``e`` completes the first shuffle of a deck (its proof may come in parts):
        until then the deck on show is the open input deck, a public list in a public order
        (also in the first shuffle's ``keyed`` points). Such an event is scanned before it is
        applied; every other event is applied first (it may be what makes a card public)."""
        return self.deck_no not in self.shuffled and self._completes_shuffle(e)

    def apply(self, e: Mapping[str, Any]) -> None:
        kind = e["type"]
        if kind == "macaua.shuffle":
            move = e["signed"]["move"]
            if "argument" in move:
                self.proof_left = 0
            else:
                self.proof_left = int(move["rounds"]) - len(move["openings"])
        elif kind == "macaua.shuffle_proof":
            self.proof_left -= len(e["signed"]["move"]["openings"])
        if (
            kind.startswith("macaua.shuffle")
            and self.proof_left <= 0
            and self.deck_no not in self.shuffled
        ):
            self.shuffled.add(self.deck_no)
            self.hidden |= {(self.deck_no, i) for i in range(self.deck_sizes[self.deck_no])}
        elif kind == "macaua.mask" and self.deck_no == 0 and not self.owner:
            layout = standard_deal(len(self.seats), len(MACAUA_CARDS), self.hand_size)
            for s, p in enumerate(self.seats):
                for i in layout.hands[s]:
                    self.owner[(0, i)] = p
        elif kind == "macaua.reveal" and self.deck_no == 0 and self.deal_reveals < len(self.seats):
            self.deal_reveals += 1
            if self.deal_reveals == len(self.seats):
                layout = standard_deal(len(self.seats), len(MACAUA_CARDS), self.hand_size)
                self.hidden.discard((0, layout.top))
        elif kind == "macaua.draw_assigned":
            for i in e["positions"]:
                self.owner[(e["deck"], i)] = e["player"]
        elif kind == "macaua.played":
            for d, i, _card, _key in e["cards"]:
                self.hidden.discard((d, i))
                self.owner.pop((d, i), None)
        elif kind == "macaua.reshuffled":
            self.deck_no = e["deck"]
            self.deck_sizes.append(len(e["cards"]))
        elif kind == "macaua.audited":
            self.audited = True
            self.hidden.clear()

    def hidden_from(self, player: str | None) -> set[str]:
        return {
            self.truth[pos]
            for pos in self.hidden
            if self.owner.get(pos) != player or player is None
        }

    def scan(self, where: str, player: str | None, message: Any) -> None:
        leaked = mentioned(message) & self.hidden_from(player)
        if leaked:
            self.problems.append(f"{where}: {player} sees hidden {sorted(leaked)}")

    def check_keys(
        self, where: str, event: Mapping[str, Any], keys: Mapping[tuple[str, int, int], str]
    ) -> None:
        """The server must not get the key of a hidden card that would open it."""
        if event["type"] in ("macaua.audit", "macaua.audited") or self.audited:
            return
        tokens = set(HEX64.findall(json.dumps(event)))
        for (p, d, i), key in keys.items():
            if key in tokens:
                self.published.setdefault((d, i), set()).add(p)
        for pos in self.hidden:
            got = self.published.get(pos, set())
            owner = self.owner.get(pos)
            if owner is not None and owner in got:
                self.problems.append(f"{where}: the owner's key of hidden {pos} was published")
            if len(got) == len(self.seats):
                self.problems.append(f"{where}: every key of hidden {pos} was published")
