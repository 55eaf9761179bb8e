"""An error crosses a process boundary (a worker pool's result) whole."""

from __future__ import annotations

import pickle

from cardroom_engine import Rejection
from cardroom_wire import ErrorCode, WireError


def test_wire_errors_and_rejections_survive_pickling() -> None:
    for error in (WireError(ErrorCode.BAD_JSON, "not json"), Rejection("illegal_move", "no")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error)
        assert (back.code, back.message, str(back)) == (error.code, error.message, str(error))
