"""The PostgreSQL event store (SQLAlchemy Core + asyncpg)."""
