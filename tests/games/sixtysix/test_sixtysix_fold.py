"""sixtysix folds each event type with a function of its own, registered on ``FOLDS``, and
decides each command of a protocol generation with one registered on its ``*_COMMANDS``."""

from __future__ import annotations

import pytest
from cardroom_games.sixtysix import GAME
from cardroom_games.sixtysix.commands import V1_COMMANDS, V2_COMMANDS
from cardroom_games.sixtysix.folds import FOLDS

SEATS = ("ann", "bob", "cid")


def test_every_event_type_has_its_fold_and_others_are_refused() -> None:
    assert GAME.private_events <= set(FOLDS.types)
    assert len(FOLDS.types) == 18
    with pytest.raises(ValueError, match="unknown sixtysix event 'no_such_event'"):
        GAME.evolve(GAME.setup(None, SEATS), {"type": "no_such_event"})


def test_each_protocol_generation_knows_its_own_commands() -> None:
    shared = {"TakeCardFromDeck", "StopRound", "Discard", "ShowCards", "StartNextRound"}
    powers = {"PeekOwnCard", "PeekAnothersCard"}
    assert set(V2_COMMANDS.types) == shared | powers | {
        "TakeDiscardedCard",
        "PickOwnCard",
        "PickAnothersCard",
    }
    assert set(V1_COMMANDS.types) == shared | powers | {
        "ReplaceCardByDiscarded",
        "ReplaceCardsFromDeck",
        "ReplaceCardsByDiscarded",
        "ReplaceCardFromDeck",
        "ExchangeCards",
    }
