"""Loading and saving a :class:`~cardroom_analytics.fold.Ledger`, inside one transaction.

Every transaction that writes the analytics tables first takes one transaction-level
advisory lock (:data:`LOCK_KEY`), so writers are serialised: batches of two analytics
instances never interleave, and a rebuild holds the live consumer off until it commits.
Besides, one instance at a time leads the consumer (:func:`try_lead`): see the service.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from .fold import GameRow, GameTypeRow, Ledger, RatingRow, finished_players
from .records import Record
from .schema import TABLES, game_types, games, ratings, results

#: pg_advisory_xact_lock key of every analytics write ("analytic" in ASCII).
LOCK_KEY = int.from_bytes(b"analytic", "big")

Snapshot = dict[str, dict[tuple[Any, ...], dict[str, Any]]]


#: class of the session-level advisory lock that the consumer's leader holds (two int4 keys:
#: this and the hash of the durable consumer's name, so two cardrooms on one database, or
#: a rebuild's writer lock, never meet it).
LEAD_CLASS = int.from_bytes(b"lead", "big")


async def lock(conn: AsyncConnection) -> None:
    await conn.execute(sa.text(f"SELECT pg_advisory_xact_lock({LOCK_KEY})"))


async def try_lead(conn: AsyncConnection, consumer: str) -> bool:
    """Take the lead of ``consumer`` for as long as ``conn``'s session lasts, if nobody has
    it (an autocommit connection: a lead must not hold a transaction open)."""
    taken = await conn.scalar(
        sa.text("SELECT pg_try_advisory_lock(:lead, hashtext(:consumer))"),
        {"lead": LEAD_CLASS, "consumer": consumer},
    )
    return bool(taken)


def _row(model: type[Any], row: sa.Row[Any]) -> Any:
    return model(**dict(row._mapping))


async def load(conn: AsyncConnection, records: Sequence[Record]) -> Ledger:
    """Lock the analytics tables and load every row that ``records`` may change."""
    await lock(conn)
    ledger = Ledger()
    ids = sorted({r.game for r in records})
    if ids:
        found = await conn.execute(sa.select(games).where(games.c.game_id.in_(ids)))
        ledger.add_rows(games=[_row(GameRow, r) for r in found])
    planned = [r for r, d in zip(records, ledger.plan(records), strict=True) if d == "apply"]
    types = sorted({r.game_type for r in planned})  # a stream's type never changes
    if types:
        found = await conn.execute(sa.select(game_types).where(game_types.c.game_type.in_(types)))
        ledger.add_rows(types=[_row(GameTypeRow, r) for r in found])
    keys = sorted({(r.game_type, p) for r in planned for p in finished_players(r)})
    if keys:
        found = await conn.execute(
            sa.select(ratings).where(sa.tuple_(ratings.c.game_type, ratings.c.player_id).in_(keys))
        )
        ledger.add_rows(ratings=[_row(RatingRow, r) for r in found])
    return ledger


async def _upsert(conn: AsyncConnection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    key = [c.name for c in table.primary_key.columns]
    stmt = insert(table)
    stmt = stmt.on_conflict_do_update(
        index_elements=key,
        set_={c.name: stmt.excluded[c.name] for c in table.columns if c.name not in key},
    )
    await conn.execute(stmt, rows)


async def save(conn: AsyncConnection, ledger: Ledger) -> None:
    """Write what the ledger changed (in the caller's transaction, after :func:`load`)."""
    await _upsert(
        conn,
        games,
        [dataclasses.asdict(ledger.games[g]) for g in sorted(ledger.changed_games)],
    )
    if ledger.results:
        await conn.execute(insert(results), [dataclasses.asdict(r) for r in ledger.results])
    await _upsert(
        conn,
        ratings,
        [dataclasses.asdict(ledger.ratings[k]) for k in sorted(ledger.changed_ratings)],
    )
    await _upsert(
        conn,
        game_types,
        [dataclasses.asdict(ledger.types[t]) for t in sorted(ledger.changed_types)],
    )


async def clear(conn: AsyncConnection) -> None:
    """Delete every analytics row (the caller holds the lock)."""
    for table in reversed(TABLES):
        await conn.execute(table.delete())


async def snapshot(conn: AsyncConnection) -> Snapshot:
    """Every analytics row, by table and primary key (for rebuild comparisons)."""
    out: Snapshot = {}
    for table in TABLES:
        key = [c.name for c in table.primary_key.columns]
        rows = await conn.execute(sa.select(table))
        out[table.name] = {tuple(m[k] for k in key): dict(m) for m in (r._mapping for r in rows)}
    return out


def differences(live: Snapshot, rebuilt: Snapshot, limit: int = 20) -> list[str]:
    """Human-readable differences between two snapshots (empty: equal)."""
    found: list[str] = []
    for table in sorted(set(live) | set(rebuilt)):
        a, b = live.get(table, {}), rebuilt.get(table, {})
        for key in sorted(set(a) | set(b), key=repr):
            if key not in b:
                found.append(f"{table} {key}: only live")
            elif key not in a:
                found.append(f"{table} {key}: only rebuilt")
            elif a[key] != b[key]:
                cols = sorted(c for c in a[key] if a[key][c] != b[key].get(c))
                detail = ", ".join(f"{c}: {a[key][c]!r} != {b[key][c]!r}" for c in cols)
                found.append(f"{table} {key}: {detail}")
            if len(found) >= limit:
                return found
    return found
