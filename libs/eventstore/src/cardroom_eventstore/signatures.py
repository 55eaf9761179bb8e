"""Transition signatures: what each player acknowledged a signed game's transition with.

A game that signs its transitions (Macaua) has every player check each transition it is sent
and acknowledge it with its signature over it, or with a rejection. The acktracker records
either with the ack (``EventStore.record_signature``), and only while that acknowledgement
is owed, so a player can leave a row only for a transition addressed to it, once. The
gamemaster reads them (``EventStore.signatures_since``) before it moves the game on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from .asyncengine import AsyncEngine

__all__ = ["Signatures", "Signed"]

_RECORD = sa.text(
    """
INSERT INTO transition_signatures (stream_id, version, player_id, signature, rejection)
SELECT CAST(:stream_id AS text), CAST(:version AS integer), CAST(:player_id AS text),
       CAST(:signature AS text), CAST(:rejection AS jsonb)
WHERE EXISTS (
    SELECT 1 FROM pending_acks
    WHERE stream_id = :stream_id AND version = :version AND player_id = :player_id
)
ON CONFLICT DO NOTHING
RETURNING 1
"""
)

_SINCE = sa.text(
    """
SELECT version, player_id, signature, rejection FROM transition_signatures
WHERE stream_id = :stream_id AND version > :after AND version <= :upto
"""
)


@dataclass(frozen=True)
class Signed:
    """One player's acknowledgement of one transition: a signature, or a rejection."""

    signature: str | None
    rejection: Mapping[str, Any] | None


class Signatures:
    """The transition signatures' part of :class:`~cardroom_eventstore.EventStore`."""

    engine: AsyncEngine

    async def record_signature(
        self, stream_id: str, version: int, player_id: str, signed: Signed
    ) -> bool:
        """Keep a player's signature or rejection of the transition at ``version``, if that
        acknowledgement is owed and none was kept before; whether it was kept."""
        rejection = signed.rejection
        params = {
            "stream_id": stream_id,
            "version": version,
            "player_id": player_id,
            "signature": signed.signature,
            "rejection": json.dumps(rejection) if rejection is not None else None,
        }
        async with self.engine.begin() as conn:
            return (await conn.execute(_RECORD, params)).first() is not None

    async def signatures_since(
        self, stream_id: str, after: int, upto: int
    ) -> dict[tuple[int, str], Signed]:
        """The signatures and rejections kept for versions ``after < version <= upto``."""
        params = {"stream_id": stream_id, "after": after, "upto": upto}
        async with self.engine.connect() as conn:
            rows = (await conn.execute(_SINCE, params)).all()
        return {(int(r[0]), str(r[1])): Signed(r[2], r[3]) for r in rows}
