"""The options of a Macaua table (:class:`MacauaConfig`) and their bounds."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Literal

from cardroom_engine import NEW_TABLE
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

MAX_SHUFFLE_ROUNDS = 256
MIN_SHUFFLE_ROUNDS = 64
"""The fewest cut-and-choose rounds a new table may prove its shuffles with. The proof's
challenge is a hash of the shuffler's own commitments, so a shuffler that stacks the deck
may try again and again before it sends anything: ``r`` rounds fall to about ``2**r`` tries.
(A table stored with fewer keeps them: its games replay as played.) Every player's check
refuses a start with fewer too (:class:`.verify.TransitionVerifier`)."""
AUDIT_TIMEOUT = 60.0
"""Seconds every player has, once the game is decided, to publish its audit keys."""
AUDIT_TIMEOUT_MIN = 1.0
AUDIT_TIMEOUT_MAX = 3600.0

ShuffleProofKind = Literal["argument", "rounds"]


@contextlib.contextmanager
def weak_proofs() -> Iterator[None]:
    """Within it, a table made may prove its shuffles by fewer rounds than
    :data:`MIN_SHUFFLE_ROUNDS` (0: none), as one stored before the floor can. For games in
    one process (simulations, tests), where no shuffler is anyone's adversary and the
    cryptography is only cost; the services never enter it. Not thread-safe: it changes the
    floor for the whole process while it lasts."""
    global MIN_SHUFFLE_ROUNDS
    floor = MIN_SHUFFLE_ROUNDS
    MIN_SHUFFLE_ROUNDS = 0
    try:
        yield
    finally:
        MIN_SHUFFLE_ROUNDS = floor


class MacauaConfig(BaseModel):
    """Options of a Macaua table. Numbers are strict (``true`` is no 1, ``"5"`` no number)
    and bounded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hand_size: int = Field(5, ge=1, le=8, strict=True, description="cards dealt to each player")
    shuffle_proof: ShuffleProofKind = Field(
        "rounds",
        description="how every shuffle is proved: 'argument', the Terelius-Wikström argument "
        "(about 27 KB of proof, one command; the default of a new table), or 'rounds', the "
        "cut-and-choose proof of shuffle_rounds rounds (about 250 KB at 64, sent in parts). A "
        "config stored without this field is read as 'rounds': its games replay as played.",
    )
    shuffle_rounds: int = Field(
        64,
        ge=0,
        le=MAX_SHUFFLE_ROUNDS,
        strict=True,
        description="cut-and-choose rounds of every shuffle proof (soundness 2^-rounds), "
        f"with shuffle_proof 'rounds' (the argument has no rounds): at least "
        f"{MIN_SHUFFLE_ROUNDS} for a new table that proves its shuffles so, since a cheating "
        "shuffler can search offline for a proof that passes.",
    )
    max_turns: int = Field(
        2000, ge=1, le=100_000, strict=True, description="turns after which the game ends undecided"
    )
    move_timeout: float | None = Field(
        None,
        ge=0.1,
        le=86_400,
        strict=True,
        allow_inf_nan=False,
        description="seconds a player has for a move before the game is aborted and they "
        "lose (null: wait forever); nobody else can make a player's move (keys)",
    )
    audit_timeout: float = Field(
        AUDIT_TIMEOUT,
        ge=AUDIT_TIMEOUT_MIN,
        le=AUDIT_TIMEOUT_MAX,
        strict=True,
        allow_inf_nan=False,
        description="seconds every player has, once the game is decided, to publish its "
        "audit keys; then the game ends and whoever has not ranks last (the winner keeps "
        "its win)",
    )

    @model_validator(mode="before")
    @classmethod
    def _new_tables_argue(cls, data: Any, info: ValidationInfo) -> Any:
        # the argument came after games were stored with the cut-and-choose proof and no
        # such field: only a table being created now gets the argument by default
        if (
            isinstance(data, dict)
            and "shuffle_proof" not in data
            and (info.context or {}).get(NEW_TABLE)
        ):
            return {**data, "shuffle_proof": "argument"}
        return data

    @model_validator(mode="after")
    def _new_tables_prove(self, info: ValidationInfo) -> MacauaConfig:
        if (
            (info.context or {}).get(NEW_TABLE)
            and self.shuffle_proof == "rounds"
            and self.shuffle_rounds < MIN_SHUFFLE_ROUNDS
        ):
            raise ValueError(
                f"shuffle_rounds: at least {MIN_SHUFFLE_ROUNDS} with shuffle_proof 'rounds' (a "
                "proof of fewer rounds can be forged by trying again offline)"
            )
        return self

    @field_validator("audit_timeout", mode="before")
    @classmethod
    def _audit_ends(cls, value: object) -> object:
        if value is None:
            raise ValueError(
                f"a number of seconds from {AUDIT_TIMEOUT_MIN:g} to {AUDIT_TIMEOUT_MAX:g} is "
                "required (there is no 'never': a player who keeps its keys must not hold "
                "the game open)"
            )
        return value


def hashed_config(config: MacauaConfig) -> str:
    """The config's JSON as the genesis hash takes it. ``audit_timeout`` and ``shuffle_proof``
    came later: at the values of the games stored before them (the default timeout, the
    cut-and-choose proof) they are left out, so those games hash as they always did."""
    exclude: set[str] = set()
    if config.audit_timeout == AUDIT_TIMEOUT:
        exclude.add("audit_timeout")
    if config.shuffle_proof == "rounds":
        exclude.add("shuffle_proof")
    return config.model_dump_json(exclude=exclude)
