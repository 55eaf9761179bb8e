"""Helpers for games whose state is a NamedTuple, on the hot path of ``evolve``: every event
of a replay or a rebuild builds one new state. Chains of ``_replace`` cost 1.7 us a call;
a game changes fields of ``list(state)`` by position and builds the state once."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar, cast

from .kit import without

__all__ = ["builder", "without"]

T = TypeVar("T")


def builder(state_type: type[T]) -> Callable[[list[Any]], T]:
    """The ``state_type`` of a list of its fields (``list(state)`` with fields changed by
    position): ``state_type._make`` without its length check (setting items keeps the length)
    and its method call."""
    return cast(Callable[[list[Any]], T], partial(tuple.__new__, state_type))
