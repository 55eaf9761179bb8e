"""The analytics queries, answered on ``<root>.analytics.<verb>`` (request/reply).

Every request is a JSON object (an empty body is ``{}``), one of the models below
(:class:`AnalyticsQuery`: its ``type`` is the subject's verb, which it may leave out); unknown
fields are refused. Replies are ``{"ok": true, ...}`` or
``{"ok": false, "error": {"code", "message"}}``.

- ``stats`` ``{game_type?}``: ``game_types: [...]`` (counters, durations), ``totals``;
- ``leaderboard`` ``{game_type, players?, games?, limit?}``: ``ratings: [...]``, ``kinds``;
- ``game`` ``{game}``: ``game: {...}`` (its row), ``results: [...]`` (one per player);
- ``games`` ``{games?, game_type?, status?, limit?}``: ``games: [...]`` (summaries);
- ``player`` ``{player, game_type?, limit?}``: ``ratings: [...]``, ``results: [...]``.

``rating`` is the conservative openskill ordinal, ``mu - 3 sigma``. With ``games`` the
leaderboard's counts (games, wins, average rank and score) are over those games only; the
ratings are always the players' current ones.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

import sqlalchemy as sa
from cardroom_wire import ErrorCode, WireError, ok
from pydantic import BaseModel, ConfigDict, Field, RootModel
from sqlalchemy.ext.asyncio import AsyncEngine

from .fold import ordinal
from .schema import game_types, games, ratings, results

MAX_IDS = 10_000

Id = Annotated[str, Field(min_length=1, max_length=200)]
Ids = Annotated[list[Id], Field(max_length=MAX_IDS)]


class _Query(BaseModel):
    # strict: a limit is an integer, not a float or a boolean
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class StatsQuery(_Query):
    """``stats``: counters and durations per game type (``game_types``), and ``totals``."""

    type: Literal["stats"] = "stats"
    game_type: Id | None = None


class LeaderboardQuery(_Query):
    """``leaderboard``: ``ratings`` (best first) and ``kinds``; with ``games`` the counts
    are over those games only."""

    type: Literal["leaderboard"] = "leaderboard"
    game_type: Id
    players: Ids | None = None
    games: Ids | None = None
    limit: int = Field(default=50, ge=1, le=10_000)


class GameQuery(_Query):
    """``game``: the game's row (``game``) and its ``results``, one per player."""

    type: Literal["game"] = "game"
    game: Id


class GamesQuery(_Query):
    """``games``: game summaries, the latest first (by when each finished, else started,
    else was created)."""

    type: Literal["games"] = "games"
    games: Ids | None = None
    game_type: Id | None = None
    status: Literal["lobby", "playing", "finished"] | None = None
    limit: int = Field(default=100, ge=1, le=MAX_IDS)


class PlayerQuery(_Query):
    """``player``: the player's ``ratings`` and latest ``results``."""

    type: Literal["player"] = "player"
    player: Id
    game_type: Id | None = None
    limit: int = Field(default=20, ge=1, le=1000)


AnyQuery = StatsQuery | LeaderboardQuery | GameQuery | GamesQuery | PlayerQuery


class AnalyticsQuery(RootModel[Annotated[AnyQuery, Field(discriminator="type")]]):
    """A query on ``<root>.analytics.<verb>``; its ``type`` is the verb."""


def _bad(message: str) -> WireError:
    return WireError(ErrorCode.BAD_REQUEST, message)


def jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def _row(row: Any) -> dict[str, Any]:
    return {k: jsonable(v) for k, v in row._mapping.items()}


async def answer(engine: AsyncEngine, verb: str, query: AnyQuery) -> dict[str, Any]:
    """The reply to ``query`` asked on the subject of ``verb``."""
    if query.type != verb:
        raise _bad(f"type must be {verb!r}")
    handler: Callable[[AsyncEngine, Any], Awaitable[dict[str, Any]]] = _HANDLERS[query.type]
    return await handler(engine, query)


# -- stats --------------------------------------------------------------------------------------


async def _stats(engine: AsyncEngine, q: StatsQuery) -> dict[str, Any]:
    game_type = q.game_type
    query = sa.select(game_types).order_by(game_types.c.game_type)
    players = sa.select(ratings.c.game_type, sa.func.count().label("n")).group_by(
        ratings.c.game_type
    )
    if game_type is not None:
        query = query.where(game_types.c.game_type == game_type)
        players = players.where(ratings.c.game_type == game_type)
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
        rated = {t: int(n) for t, n in (await conn.execute(players)).all()}
    out: list[dict[str, Any]] = []
    for row in rows:
        r = row._mapping
        finished = int(r["finished"])
        out.append(
            {
                "game_type": r["game_type"],
                "created": r["created"],
                "started": r["started"],
                "finished": finished,
                "playing": r["started"] - finished,
                "events": r["events"],
                "moves": r["moves"],
                "players_avg": r["players"] / finished if finished else None,
                "rated_players": rated.get(r["game_type"], 0),
                "duration_avg_s": r["duration_total_s"] / finished if finished else None,
                "duration_min_s": r["duration_min_s"],
                "duration_max_s": r["duration_max_s"],
                "first_event_at": jsonable(r["first_event_at"]),
                "last_event_at": jsonable(r["last_event_at"]),
            }
        )
    totals = {
        key: sum(int(t[key]) for t in out) for key in ("created", "finished", "events", "moves")
    }
    return ok(game_types=out, totals=totals)


# -- leaderboard --------------------------------------------------------------------------------


async def _leaderboard(engine: AsyncEngine, q: LeaderboardQuery) -> dict[str, Any]:
    game_type, players, only_games, limit = q.game_type, q.players, q.games, q.limit
    query = sa.select(ratings).where(ratings.c.game_type == game_type)
    if players is not None:
        query = query.where(ratings.c.player_id.in_(players))
    async with engine.connect() as conn:
        rows = [dict(r._mapping) for r in await conn.execute(query)]
        counted: dict[str, dict[str, Any]] | None = None
        if only_games is not None:
            won = sa.func.sum(sa.cast(results.c.won, sa.Integer))
            per_player = (
                sa.select(
                    results.c.player_id,
                    sa.func.count().label("games"),
                    won.label("wins"),
                    sa.func.sum(results.c.rank).label("rank_sum"),
                    sa.func.sum(sa.func.coalesce(results.c.score, 0.0)).label("score_sum"),
                )
                .where(results.c.game_type == game_type, results.c.game_id.in_(only_games))
                .group_by(results.c.player_id)
            )
            counted = {r.player_id: dict(r._mapping) for r in await conn.execute(per_player)}
    entries: list[dict[str, Any]] = []
    for row in rows:
        tally = row if counted is None else counted.get(row["player_id"])
        if tally is None:
            continue  # not in any of those games
        n = int(tally["games"])
        entries.append(
            {
                "player": row["player_id"],
                "kind": row["kind"],
                "rating": ordinal(row["mu"], row["sigma"]),
                "mu": row["mu"],
                "sigma": row["sigma"],
                "games": n,
                "wins": int(tally["wins"] or 0),
                "win_rate": int(tally["wins"] or 0) / n if n else None,
                "avg_rank": int(tally["rank_sum"] or 0) / n if n else None,
                "avg_score": float(tally["score_sum"] or 0.0) / n if n else None,
            }
        )
    entries.sort(key=lambda e: (-e["rating"], e["player"]))
    for i, entry in enumerate(entries):
        entry["rank"] = i + 1
    return ok(game_type=game_type, ratings=entries[:limit], kinds=_kinds(entries))


def _kinds(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The aggregate per bot kind (players named ``<kind>-<n>``)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if entry["kind"] is not None:
            groups.setdefault(entry["kind"], []).append(entry)
    out: list[dict[str, Any]] = []
    for kind, members in groups.items():
        n = sum(e["games"] for e in members)
        wins = sum(e["wins"] for e in members)
        out.append(
            {
                "kind": kind,
                "players": len(members),
                "games": n,
                "wins": wins,
                "win_rate": wins / n if n else None,
                "mu": sum(e["mu"] for e in members) / len(members),
                "rating": sum(e["rating"] for e in members) / len(members),
                "avg_rank": (
                    sum(e["avg_rank"] * e["games"] for e in members if e["games"]) / n
                    if n
                    else None
                ),
            }
        )
    out.sort(key=lambda k: (-k["rating"], k["kind"]))
    return out


# -- games --------------------------------------------------------------------------------------

_SUMMARY = (
    games.c.game_id.label("game"),
    games.c.game_type,
    games.c.status,
    games.c.version,
    games.c.events,
    games.c.moves,
    games.c.seats,
    games.c.created_at,
    games.c.started_at,
    games.c.finished_at,
    games.c.duration_s,
)


async def _game(engine: AsyncEngine, q: GameQuery) -> dict[str, Any]:
    game = q.game
    async with engine.connect() as conn:
        row = (await conn.execute(sa.select(games).where(games.c.game_id == game))).first()
        if row is None:
            raise WireError(ErrorCode.UNKNOWN_GAME, f"analytics has seen no game {game!r}")
        found = await conn.execute(
            sa.select(results)
            .where(results.c.game_id == game)
            .order_by(results.c.rank, results.c.player_id)
        )
        rows = [_row(r) for r in found]
    summary = _row(row)
    summary["game"] = summary.pop("game_id")
    return ok(game=summary, results=rows)


async def _games(engine: AsyncEngine, q: GamesQuery) -> dict[str, Any]:
    ids, game_type, status, limit = q.games, q.game_type, q.status, q.limit
    query = sa.select(*_SUMMARY)
    if ids is not None:
        query = query.where(games.c.game_id.in_(ids))
    if game_type is not None:
        query = query.where(games.c.game_type == game_type)
    if status is not None:
        query = query.where(games.c.status == status)
    # latest first by time: positions are counted per event store shard
    latest = sa.func.coalesce(games.c.finished_at, games.c.started_at, games.c.created_at)
    query = query.order_by(latest.desc().nulls_last(), games.c.game_id)
    query = query.limit(len(ids) if ids is not None else limit)
    async with engine.connect() as conn:
        rows = [_row(r) for r in await conn.execute(query)]
    return ok(games=rows)


async def _player(engine: AsyncEngine, q: PlayerQuery) -> dict[str, Any]:
    player, game_type, limit = q.player, q.game_type, q.limit
    rq = sa.select(ratings).where(ratings.c.player_id == player).order_by(ratings.c.game_type)
    gq = (
        sa.select(results)
        .where(results.c.player_id == player)
        .order_by(results.c.finished_at.desc(), results.c.game_id)
        .limit(limit)
    )
    if game_type is not None:
        rq = rq.where(ratings.c.game_type == game_type)
        gq = gq.where(results.c.game_type == game_type)
    async with engine.connect() as conn:
        rated = [_row(r) for r in await conn.execute(rq)]
        recent = [_row(r) for r in await conn.execute(gq)]
    for r in rated:
        r["rating"] = ordinal(r["mu"], r["sigma"])
    return ok(player=player, ratings=rated, results=recent)


_HANDLERS: Mapping[str, Callable[[AsyncEngine, Any], Awaitable[dict[str, Any]]]] = {
    "stats": _stats,
    "leaderboard": _leaderboard,
    "game": _game,
    "games": _games,
    "player": _player,
}
