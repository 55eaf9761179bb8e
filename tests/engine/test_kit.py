"""The game-authoring kit: the fast ``_replace`` of a state, the handler registries."""

from __future__ import annotations

import random
from typing import NamedTuple

import pytest
from cardroom_engine import Rejection
from cardroom_engine.kit import Commands, Folds, put, state, without
from cardroom_wire import ErrorCode


@state
class Sample(NamedTuple):
    seats: tuple[str, ...]
    phase: str = "setup"
    scores: tuple[int, ...] = ()
    turn: int | None = None


class Plain(NamedTuple):
    seats: tuple[str, ...]
    phase: str = "setup"
    scores: tuple[int, ...] = ()
    turn: int | None = None


CHANGES = [
    {},
    {"phase": "play"},
    {"turn": None},
    {"turn": 2, "scores": (1, 2)},
    {"seats": ("c",), "phase": "over", "scores": (), "turn": 0},
]


@pytest.mark.parametrize("change", CHANGES)
def test_replace_gives_what_the_standard_replace_gives(change: dict[str, object]) -> None:
    before = Sample(("a", "b"), "play", (3, 4), 1)
    after = before._replace(**change)  # type: ignore[arg-type]
    expected = Plain(("a", "b"), "play", (3, 4), 1)._replace(**change)  # type: ignore[arg-type]
    assert type(after) is Sample
    assert tuple(after) == tuple(expected)
    assert before == Sample(("a", "b"), "play", (3, 4), 1)  # unchanged


def test_replace_refuses_what_is_not_a_field() -> None:
    s = Sample(("a",))
    with pytest.raises(TypeError):
        s._replace(colour="red")  # type: ignore[call-arg]


def test_a_state_with_private_field_names_is_refused() -> None:
    class Odd(NamedTuple):
        x: int
        self: int  # no clash with the generated code's own names

    assert state(Odd)(1, 2)._replace(self=3) == (1, 3)

    with pytest.raises(TypeError):

        @state
        class Empty(NamedTuple):
            pass


def test_put_and_without() -> None:
    assert put((1, 2, 3), 1, 9) == (1, 9, 3)
    assert without((1, 2, 3), 2) == (1, 3)
    items = (1, 2)
    assert without(items, 5) is items


FOLDS = Folds[Sample]("sample")


@FOLDS.on("started")
def _started(s: Sample, event: dict[str, object]) -> Sample:
    return s._replace(phase="play")


@FOLDS.on("scored", "rescored")
def _scored(s: Sample, event: dict[str, object]) -> Sample:
    return s._replace(scores=(*s.scores, 1))


COMMANDS = Commands[Sample]("sample")


@COMMANDS.on("go")
def _go(s: Sample, actor: str, command: object, rng: random.Random) -> list[dict[str, object]]:
    return [{"type": "started", "by": actor}]


def test_folds_dispatch_on_type_and_refuse_an_unknown_one() -> None:
    s = Sample(("a",))
    assert FOLDS.evolve(s, {"type": "started"}).phase == "play"
    assert FOLDS.evolve(s, {"type": "rescored"}).scores == (1,)
    assert FOLDS.types == ("started", "scored", "rescored")
    assert "scored" in FOLDS
    assert "other" not in FOLDS
    with pytest.raises(ValueError, match="unknown sample event"):
        FOLDS.evolve(s, {"type": "other"})


def test_a_type_has_one_handler() -> None:
    with pytest.raises(ValueError, match="has a handler already"):
        FOLDS.on("started")(_started)


def test_commands_dispatch_and_refuse_an_unknown_one_with_the_standard_code() -> None:
    s = Sample(("a",))
    assert COMMANDS.decide(s, "a", {"type": "go"}, random.Random(1)) == [
        {"type": "started", "by": "a"}
    ]
    with pytest.raises(Rejection) as refused:
        COMMANDS.decide(s, "a", {"type": "jump"}, random.Random(1))
    assert refused.value.code == ErrorCode.UNKNOWN_COMMAND
    assert "go" in refused.value.message
    assert "jump" not in refused.value.message


def test_a_command_without_a_string_type_is_a_bad_request_and_a_game_words_its_unknown() -> None:
    s = Sample(("a",))
    for command in ({}, {"type": 1}):
        with pytest.raises(Rejection) as refused:
            COMMANDS.decide(s, "a", command, random.Random(1))
        assert refused.value.code == ErrorCode.BAD_REQUEST
    worded = Commands[Sample]("sample", unknown="sample plays only 'go'")
    with pytest.raises(Rejection) as refused:
        worded.decide(s, "a", {"type": "jump"}, random.Random(1))
    assert refused.value.code == ErrorCode.UNKNOWN_COMMAND
    assert refused.value.message == "sample plays only 'go'"
