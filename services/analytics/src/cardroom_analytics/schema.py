"""Analytics' own tables, as SQLAlchemy Core metadata.

Alembic owns the schema (``migrations/versions/0003_analytics.py`` builds exactly these
tables); this module describes them so queries can be built from them, and a test proves the
two agree. Only the analytics service writes them, always in one transaction per batch of
events together with its checkpoint (``analytics_games.version``), so they can be dropped and
rebuilt from the event stream at any time.

- ``analytics_games``: one row per game (event stream). ``version`` is the checkpoint: the
  last event version of that game whose effects are in these tables.
- ``analytics_results``: one row per player of a finished game, with the rating before and
  after it.
- ``analytics_ratings``: the openskill (Plackett-Luce) rating of each player per game type,
  with running totals.
- ``analytics_game_types``: per game type counters and durations.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Double,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB

NAMING_CONVENTION = {
    "pk": "pk_%(table_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

games = Table(
    "analytics_games",
    metadata,
    Column("game_id", Text, nullable=False),
    Column("game_type", Text, nullable=False),
    Column("version", Integer, nullable=False),  # the checkpoint of this game
    Column("position", BigInteger, nullable=False),  # global position of that event
    Column("status", Text, nullable=False),  # lobby | playing | finished
    Column("creator", Text, nullable=True),
    Column("max_seats", Integer, nullable=True),
    Column("seats", JSONB, nullable=False),
    Column("config", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=True),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("duration_s", Double, nullable=True),
    Column("events", Integer, nullable=False),
    Column("moves", Integer, nullable=False),
    Column("last_command", Text, nullable=True),
    Column("outcome", JSONB, nullable=True),
    PrimaryKeyConstraint("game_id"),
    Index(None, "game_type", "status"),
    Index(None, "finished_at"),
)

results = Table(
    "analytics_results",
    metadata,
    Column("game_id", Text, nullable=False),
    Column("player_id", Text, nullable=False),
    Column("game_type", Text, nullable=False),
    Column("kind", Text, nullable=True),
    Column("seat", Integer, nullable=True),
    Column("rank", Integer, nullable=False),
    Column("score", Double, nullable=True),
    Column("won", Boolean, nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("mu_before", Double, nullable=False),
    Column("sigma_before", Double, nullable=False),
    Column("mu_after", Double, nullable=False),
    Column("sigma_after", Double, nullable=False),
    PrimaryKeyConstraint("game_id", "player_id"),
    Index(None, "game_type", "player_id"),
)

ratings = Table(
    "analytics_ratings",
    metadata,
    Column("game_type", Text, nullable=False),
    Column("player_id", Text, nullable=False),
    Column("kind", Text, nullable=True),
    Column("mu", Double, nullable=False),
    Column("sigma", Double, nullable=False),
    Column("games", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("rank_sum", Integer, nullable=False),
    Column("score_sum", Double, nullable=False),
    Column("last_game", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("game_type", "player_id"),
)

game_types = Table(
    "analytics_game_types",
    metadata,
    Column("game_type", Text, nullable=False),
    Column("created", Integer, nullable=False),
    Column("started", Integer, nullable=False),
    Column("finished", Integer, nullable=False),
    Column("events", BigInteger, nullable=False),
    Column("moves", BigInteger, nullable=False),
    Column("players", Integer, nullable=False),  # seats of the finished games, summed
    Column("duration_total_s", Double, nullable=False),
    Column("duration_min_s", Double, nullable=True),
    Column("duration_max_s", Double, nullable=True),
    Column("first_event_at", DateTime(timezone=True), nullable=True),
    Column("last_event_at", DateTime(timezone=True), nullable=True),
    PrimaryKeyConstraint("game_type"),
)

#: Every analytics table, in the order rows are written (and the reverse of deletion).
TABLES = (games, results, ratings, game_types)

__all__ = ["TABLES", "game_types", "games", "metadata", "ratings", "results"]
