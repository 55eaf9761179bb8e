"""Settings, service discovery, embedded servers and migrations for processes and tests.

- :mod:`cardroom_runtime.settings`: ``Settings.from_env()`` (the ``CARDROOM_*`` variables);
- :mod:`cardroom_runtime.discovery`: ``discover()`` finds or starts PostgreSQL and NATS;
  database helpers ``create_database``, ``drop_database``, ``ensure_database``, ``asyncpg_dsn``;
- :mod:`cardroom_runtime.embedded`: the embedded nats-server and PostgreSQL;
- :mod:`cardroom_runtime.migrate`: Alembic ``upgrade``/``downgrade`` for a database URL;
- :mod:`cardroom_runtime.grants`: the services' own PostgreSQL role, which ``cardroom migrate``
  makes and grants rows only;
- :mod:`cardroom_runtime.nats`: ``connect()`` and ``ensure_stream()``.

Nothing is imported here, so importing one module stays cheap.
"""
