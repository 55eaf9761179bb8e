"""The algebra, by key sets (extends test_mentalpoker_masking / _deal): after the dealing
protocol a card opens with exactly the full set of its position's keys, removed in any
order, and with no proper subset; and publishing every key of some positions opens those
positions only."""

from __future__ import annotations

import itertools

from cardroom_mentalpoker import (
    MACAUA_CARDS,
    Deck,
    PlayerSecrets,
    decode_card,
    mask_step,
    open_deck,
    partial_unmask,
    proof_context,
    shuffle_step,
    unmasked_point,
)

N = len(MACAUA_CARDS)


def _dealt(players: int) -> tuple[Deck, list[PlayerSecrets]]:
    secrets = [PlayerSecrets.generate(N) for _ in range(players)]
    deck: Deck = open_deck()
    for i, s in enumerate(secrets):
        deck, _ = shuffle_step(deck, s, context=proof_context("sets", 0, f"p{i}"), rounds=0)
    for i, s in enumerate(secrets):
        deck, _ = mask_step(deck, s, context=proof_context("sets", 0, f"p{i}"))
    return deck, secrets


def test_a_card_opens_with_every_key_in_any_order_and_with_no_proper_subset() -> None:
    deck, secrets = _dealt(3)
    position = 7
    card = deck[position]
    keys = [s.card_keys[position] for s in secrets]
    opened = set()
    for order in itertools.permutations(range(3)):
        c = card
        for k in order:
            c = partial_unmask(c, keys[k])
        assert c.is_open
        opened.add(decode_card(c.msg))
    assert len(opened) == 1
    assert None not in opened
    for size in (0, 1, 2):
        for subset in itertools.combinations(range(3), size):
            c = card
            for k in subset:
                c = partial_unmask(c, keys[k])
            assert not c.is_open
            assert decode_card(c.msg) is None
            # removing one more key alone opens it only when it is the last one left
            for k in set(range(3)) - set(subset):
                found = decode_card(unmasked_point(c, keys[k]))
                assert (found is not None) == (size == 2)
    # the shuffle keys (no longer on any card after the mask phase) open nothing
    c = card
    for s in secrets:
        assert decode_card(unmasked_point(c, s.shuffle_key)) is None


def test_publishing_every_key_of_some_positions_opens_only_those() -> None:
    deck, secrets = _dealt(2)
    opened_positions = {0, 13, 53}
    after = list(deck)
    for pos in opened_positions:
        for s in secrets:
            after[pos] = partial_unmask(after[pos], s.card_keys[pos])
    cards = [decode_card(c.msg) if c.is_open else None for c in after]
    assert {i for i, c in enumerate(cards) if c is not None} == opened_positions
    # every other position is untouched and still needs both keys
    for i, c in enumerate(after):
        if i in opened_positions:
            continue
        assert c == deck[i]
        for s in secrets:
            assert decode_card(partial_unmask(c, s.card_keys[i]).msg) is None
    # and all 54 cards come out, each once, when every key is published
    full = list(after)
    for i in range(N):
        if i not in opened_positions:
            for s in secrets:
                full[i] = partial_unmask(full[i], s.card_keys[i])
    assert sorted(decode_card(c.msg) or "?" for c in full) == sorted(MACAUA_CARDS)
