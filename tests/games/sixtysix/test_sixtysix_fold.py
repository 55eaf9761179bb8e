"""sixtysix folds each event type with a function of its own (``_FOLDS``); the build by
position it shares with papas and take5 is tested in tests/games/test_fold_by_position.py."""

from __future__ import annotations

import pytest
from cardroom_games.sixtysix import GAME
from cardroom_games.sixtysix.rules import _FOLDS, EVENT_TYPES, evolve

SEATS = ("ann", "bob", "cid")


def test_every_event_type_has_its_fold_and_others_are_refused() -> None:
    assert set(_FOLDS) == EVENT_TYPES
    with pytest.raises(ValueError, match="unknown sixtysix event 'no_such_event'"):
        evolve(GAME.setup(None, SEATS), {"type": "no_such_event"})
