"""The analytics queries, answered on ``<root>.analytics.<verb>`` (request/reply).

Every request is a JSON object (an empty body is ``{}``); unknown fields are refused. Replies
are ``{"ok": true, ...}`` or ``{"ok": false, "error": {"code", "message"}}``.

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
from typing import Any

import sqlalchemy as sa
from cardroom_wire import ErrorCode, WireError, decode_json, ok
from sqlalchemy.ext.asyncio import AsyncEngine

from .fold import ordinal
from .schema import game_types, games, ratings, results

VERBS = ("stats", "leaderboard", "game", "games", "player")
STATUSES = ("lobby", "playing", "finished")
MAX_IDS = 10_000


_ID = {"type": "string", "minLength": 1, "maxLength": 200}
_IDS = {"type": "array", "items": _ID, "maxItems": MAX_IDS}


def _request(verb: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "title": f"analytics.{verb}",
        "type": "object",
        "properties": {"type": {"const": verb}, **properties},
        "required": required,
        "additionalProperties": False,
    }


#: JSON schema of the requests on ``<root>.analytics.<verb>`` (for the AsyncAPI document).
QUERY_SCHEMA: dict[str, Any] = {
    "oneOf": [
        _request("stats", {"game_type": _ID}, []),
        _request(
            "leaderboard",
            {
                "game_type": _ID,
                "players": _IDS,
                "games": _IDS,
                "limit": {"type": "integer", "minimum": 1, "maximum": 10_000},
            },
            ["game_type"],
        ),
        _request("game", {"game": _ID}, ["game"]),
        _request(
            "games",
            {
                "games": _IDS,
                "game_type": _ID,
                "status": {"enum": list(STATUSES)},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_IDS},
            },
            [],
        ),
        _request(
            "player",
            {
                "player": _ID,
                "game_type": _ID,
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            },
            ["player"],
        ),
    ]
}


def _bad(message: str) -> WireError:
    return WireError(ErrorCode.BAD_REQUEST, message)


class _Body:
    """A request object, read field by field (a field read is a field allowed)."""

    def __init__(self, verb: str, raw: bytes) -> None:
        payload = decode_json(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise _bad(f"a {verb} request is a JSON object")
        if payload.get("type", verb) != verb:
            raise _bad(f"type must be {verb!r}")
        self.payload = {k: v for k, v in payload.items() if k != "type"}
        self.read: set[str] = set()

    def text(self, key: str, *, required: bool = False) -> str | None:
        self.read.add(key)
        value = self.payload.get(key)
        if value is None:
            if required:
                raise _bad(f"{key}: field required")
            return None
        if not isinstance(value, str) or not value or len(value) > 200:
            raise _bad(f"{key}: expected a non-empty string")
        return value

    def texts(self, key: str) -> list[str] | None:
        self.read.add(key)
        value = self.payload.get(key)
        if value is None:
            return None
        if (
            not isinstance(value, list)
            or len(value) > MAX_IDS
            or not all(isinstance(v, str) and v for v in value)
        ):
            raise _bad(f"{key}: expected a list of at most {MAX_IDS} strings")
        return list(value)

    def integer(self, key: str, default: int, least: int, most: int) -> int:
        self.read.add(key)
        value = self.payload.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise _bad(f"{key}: expected an integer from {least} to {most}")
        return value

    def done(self) -> None:
        extra = sorted(set(self.payload) - self.read)
        if extra:
            raise _bad(f"unknown field(s): {', '.join(extra)}")


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


async def answer(engine: AsyncEngine, verb: str, raw: bytes) -> dict[str, Any]:
    handler = _HANDLERS.get(verb)
    if handler is None:
        raise _bad(f"unknown analytics query {verb!r}; one of {', '.join(VERBS)}")
    body = _Body(verb, raw)
    return await handler(engine, body)


# -- stats --------------------------------------------------------------------------------------


async def _stats(engine: AsyncEngine, body: _Body) -> dict[str, Any]:
    game_type = body.text("game_type")
    body.done()
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


async def _leaderboard(engine: AsyncEngine, body: _Body) -> dict[str, Any]:
    game_type = body.text("game_type", required=True)
    players = body.texts("players")
    only_games = body.texts("games")
    limit = body.integer("limit", 50, 1, 10_000)
    body.done()
    assert game_type is not None
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


async def _game(engine: AsyncEngine, body: _Body) -> dict[str, Any]:
    game = body.text("game", required=True)
    body.done()
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


async def _games(engine: AsyncEngine, body: _Body) -> dict[str, Any]:
    ids = body.texts("games")
    game_type = body.text("game_type")
    status = body.text("status")
    limit = body.integer("limit", 100, 1, MAX_IDS)
    body.done()
    if status is not None and status not in STATUSES:
        raise _bad(f"status: one of {', '.join(STATUSES)}")
    query = sa.select(*_SUMMARY)
    if ids is not None:
        query = query.where(games.c.game_id.in_(ids))
    if game_type is not None:
        query = query.where(games.c.game_type == game_type)
    if status is not None:
        query = query.where(games.c.status == status)
    query = query.order_by(games.c.position.desc()).limit(len(ids) if ids is not None else limit)
    async with engine.connect() as conn:
        rows = [_row(r) for r in await conn.execute(query)]
    return ok(games=rows)


async def _player(engine: AsyncEngine, body: _Body) -> dict[str, Any]:
    player = body.text("player", required=True)
    game_type = body.text("game_type")
    limit = body.integer("limit", 20, 1, 1000)
    body.done()
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


Handler = Callable[[AsyncEngine, _Body], Awaitable[dict[str, Any]]]
_HANDLERS: Mapping[str, Handler] = {
    "stats": _stats,
    "leaderboard": _leaderboard,
    "game": _game,
    "games": _games,
    "player": _player,
}
