"""The analytics fold: event records -> rows of the analytics tables. Pure, no I/O.

A :class:`Ledger` holds the rows that a batch of events may change (loaded from the tables
by the service, or empty for a rebuild), applies the events in order and remembers which rows
changed. Exactly-once is decided here, per game: an event is applied only if its version is
the game's checkpoint + 1 (:meth:`Ledger.decide`); one at or below it is a duplicate, one
further ahead waits for the missing events (a gap).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from openskill.models import PlackettLuce

from .records import CREATED, FINISHED, JOINED, STARTED, Record, kind_of

Decision = Literal["apply", "duplicate", "gap"]

MODEL = PlackettLuce()
MU: float = MODEL.mu
SIGMA: float = MODEL.sigma


def ordinal(mu: float, sigma: float) -> float:
    """The conservative rating shown on leaderboards: mu - 3 sigma."""
    return mu - 3 * sigma


@dataclass
class GameRow:
    game_id: str
    game_type: str
    version: int = 0
    position: int = 0
    status: str = "lobby"
    creator: str | None = None
    max_seats: int | None = None
    seats: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    duration_s: float | None = None
    events: int = 0
    moves: int = 0
    last_command: str | None = None
    outcome: dict[str, Any] | None = None


@dataclass
class ResultRow:
    game_id: str
    player_id: str
    game_type: str
    kind: str | None
    seat: int | None
    rank: int
    score: float | None
    won: bool
    finished_at: datetime
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float


@dataclass
class RatingRow:
    game_type: str
    player_id: str
    kind: str | None
    mu: float = MU
    sigma: float = SIGMA
    games: int = 0
    wins: int = 0
    rank_sum: int = 0
    score_sum: float = 0.0
    last_game: str = ""
    updated_at: datetime | None = None


@dataclass
class GameTypeRow:
    game_type: str
    created: int = 0
    started: int = 0
    finished: int = 0
    events: int = 0
    moves: int = 0
    players: int = 0
    duration_total_s: float = 0.0
    duration_min_s: float | None = None
    duration_max_s: float | None = None
    first_event_at: datetime | None = None
    last_event_at: datetime | None = None


def ranked_players(outcome: dict[str, Any]) -> list[tuple[str, int]]:
    """``(player, rank)`` from an outcome's ranking (groups of tied players, best first);
    empty when the ranking is unusable (fewer than two players, a player twice)."""
    ranking = outcome.get("ranking")
    if not isinstance(ranking, list):
        return []
    ranked: list[tuple[str, int]] = []
    for index, group in enumerate(ranking):
        if not isinstance(group, list):
            return []
        ranked += [(str(p), index + 1) for p in group]
    players = [p for p, _ in ranked]
    if len(players) < 2 or len(set(players)) != len(players):
        return []
    return ranked


def finished_players(record: Record) -> list[str]:
    """The players whose ratings a ``table.finished`` record changes."""
    if record.type != FINISHED:
        return []
    outcome = record.data.get("outcome")
    return [p for p, _ in ranked_players(outcome)] if isinstance(outcome, dict) else []


class Ledger:
    """Rows of the analytics tables, and the events applied to them."""

    def __init__(self) -> None:
        self.games: dict[str, GameRow] = {}
        self.ratings: dict[tuple[str, str], RatingRow] = {}
        self.types: dict[str, GameTypeRow] = {}
        self.results: list[ResultRow] = []  # new rows only
        self.changed_games: set[str] = set()
        self.changed_ratings: set[tuple[str, str]] = set()
        self.changed_types: set[str] = set()
        self.applied = 0

    # -- loading (the service fills in the rows a batch needs) ------------------------------
    def add_rows(
        self,
        games: Iterable[GameRow] = (),
        ratings: Iterable[RatingRow] = (),
        types: Iterable[GameTypeRow] = (),
    ) -> None:
        for g in games:
            self.games[g.game_id] = g
        for r in ratings:
            self.ratings[(r.game_type, r.player_id)] = r
        for t in types:
            self.types[t.game_type] = t

    def checkpoint(self, game: str) -> int:
        row = self.games.get(game)
        return 0 if row is None else row.version

    # -- exactly once ---------------------------------------------------------------------------
    def decide(self, record: Record) -> Decision:
        done = self.checkpoint(record.game)
        if record.version <= done:
            return "duplicate"
        if record.version == done + 1:
            return "apply"
        return "gap"

    def plan(self, records: Iterable[Record]) -> list[Decision]:
        """What :meth:`apply` would do with each record, in order, without applying any."""
        done: dict[str, int] = {}
        decisions: list[Decision] = []
        for record in records:
            version = done.get(record.game, self.checkpoint(record.game))
            if record.version <= version:
                decisions.append("duplicate")
            elif record.version == version + 1:
                decisions.append("apply")
                done[record.game] = record.version
            else:
                decisions.append("gap")
        return decisions

    # -- the fold ---------------------------------------------------------------------------
    def apply(self, record: Record) -> Decision:
        """Apply one record if it is the next of its game; returns what was decided."""
        decision = self.decide(record)
        if decision != "apply":
            return decision
        game = self.games.get(record.game)
        if game is None:
            game = self.games[record.game] = GameRow(record.game, record.game_type)
        stats = self._type(game.game_type)
        at = record.recorded_at
        game.version = record.version
        game.position = record.position
        game.events += 1
        stats.events += 1
        stats.first_event_at = at if stats.first_event_at is None else min(stats.first_event_at, at)
        stats.last_event_at = at if stats.last_event_at is None else max(stats.last_event_at, at)
        command = record.metadata.get("command_id")
        if isinstance(command, str) and command:
            # one move's events share its player and command id; ids are each player's own
            actor = record.metadata.get("actor")
            move = f"{actor}.{command}" if isinstance(actor, str) else command
            if move != game.last_command:
                game.moves += 1
                stats.moves += 1
                game.last_command = move
        data = record.data
        if record.type == CREATED:
            game.creator = _str_or_none(data.get("creator"))
            seats = data.get("max_seats")
            game.max_seats = seats if isinstance(seats, int) else None
            game.config = dict(data["config"]) if isinstance(data.get("config"), dict) else {}
            game.created_at = at
            stats.created += 1
        elif record.type == JOINED:
            player = data.get("player")
            if isinstance(player, str) and player not in game.seats:
                game.seats = [*game.seats, player]
        elif record.type == STARTED:
            seats = data.get("seats")
            if isinstance(seats, list):
                game.seats = [str(s) for s in seats]
            game.status = "playing"
            game.started_at = at
            stats.started += 1
        elif record.type == FINISHED:
            self._finish(game, stats, record)
        self.changed_games.add(game.game_id)
        self.changed_types.add(stats.game_type)
        self.applied += 1
        return decision

    def _finish(self, game: GameRow, stats: GameTypeRow, record: Record) -> None:
        at = record.recorded_at
        outcome = record.data.get("outcome")
        game.outcome = dict(outcome) if isinstance(outcome, dict) else None
        game.status = "finished"
        game.finished_at = at
        began = game.started_at or game.created_at
        game.duration_s = None if began is None else (at - began).total_seconds()
        stats.finished += 1
        stats.players += len(game.seats)
        if game.duration_s is not None:
            d = game.duration_s
            stats.duration_total_s += d
            stats.duration_min_s = (
                d if stats.duration_min_s is None else min(stats.duration_min_s, d)
            )
            stats.duration_max_s = (
                d if stats.duration_max_s is None else max(stats.duration_max_s, d)
            )
        ranked = ranked_players(game.outcome or {})
        if not ranked:
            return
        scores = (game.outcome or {}).get("scores")
        scores = scores if isinstance(scores, dict) else {}
        # a ranking of one place (everyone tied: Macaua's turn limit) has no winner
        decided = len({rank for _, rank in ranked}) > 1
        before = [self._rating(game.game_type, p) for p, _ in ranked]
        teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
        after = MODEL.rate(teams, ranks=[rank for _, rank in ranked])
        for (player, rank), row, (new,) in zip(ranked, before, after, strict=True):
            score = scores.get(player)
            score = float(score) if isinstance(score, int | float) else None
            won = decided and rank == 1
            self.results.append(
                ResultRow(
                    game_id=game.game_id,
                    player_id=player,
                    game_type=game.game_type,
                    kind=kind_of(player),
                    seat=game.seats.index(player) if player in game.seats else None,
                    rank=rank,
                    score=score,
                    won=won,
                    finished_at=at,
                    mu_before=row.mu,
                    sigma_before=row.sigma,
                    mu_after=float(new.mu),
                    sigma_after=float(new.sigma),
                )
            )
            row.mu, row.sigma = float(new.mu), float(new.sigma)
            row.games += 1
            row.wins += int(won)
            row.rank_sum += rank
            row.score_sum += score or 0.0
            row.last_game = game.game_id
            row.updated_at = at
            self.changed_ratings.add((row.game_type, row.player_id))

    def _type(self, game_type: str) -> GameTypeRow:
        row = self.types.get(game_type)
        if row is None:
            row = self.types[game_type] = GameTypeRow(game_type)
        return row

    def _rating(self, game_type: str, player: str) -> RatingRow:
        row = self.ratings.get((game_type, player))
        if row is None:
            row = self.ratings[(game_type, player)] = RatingRow(game_type, player, kind_of(player))
        return row


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
