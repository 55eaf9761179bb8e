"""A service's start imports what it uses: the store loads SQLAlchemy's asyncio engine without
the ORM, and its in-memory twin only when asked for; code that wants the whole
``sqlalchemy.ext.asyncio`` package still gets it."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_store_imports_neither_the_orm_nor_its_in_memory_twin() -> None:
    out = _run(
        """
        import sys
        import cardroom_eventstore
        from cardroom_eventstore.asyncengine import AsyncEngine
        print(sorted(m for m in sys.modules if m.startswith("sqlalchemy.orm")))
        print("cardroom_eventstore.memory" in sys.modules)
        from cardroom_eventstore import InMemoryEventStore
        print(InMemoryEventStore.__module__)
        """
    )
    assert out.splitlines() == ["[]", "False", "cardroom_eventstore.memory"]


def test_the_whole_package_is_there_for_who_asks() -> None:
    out = _run(
        """
        import cardroom_eventstore.asyncengine as ours
        import sqlalchemy.ext.asyncio as package
        from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
        print(AsyncSession.__name__, create_async_engine is ours.create_async_engine)
        print(package.AsyncEngine is ours.AsyncEngine, hasattr(package, "no_such_name"))
        """
    )
    assert out.splitlines() == ["AsyncSession True", "True False"]


def test_a_package_imported_before_is_used_as_it_is() -> None:
    out = _run(
        """
        import sqlalchemy.ext.asyncio as package
        from cardroom_eventstore.asyncengine import AsyncEngine
        print(AsyncEngine is package.AsyncEngine)
        """
    )
    assert out == "True"
