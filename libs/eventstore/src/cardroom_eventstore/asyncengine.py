"""SQLAlchemy's asyncio engine, without the ORM its package imports.

The package ``sqlalchemy.ext.asyncio`` imports its ORM session (``AsyncSession``) and with
it the whole ORM: about 0.3 s of every service's start on a quiet machine (a restarted
service is back that much later), for nothing here: the store runs Core statements on
``AsyncEngine`` and ``AsyncConnection``. So this module loads the package's ``engine``
module without running the package's ``__init__`` first, and leaves the package to complete
itself (running that ``__init__``, ORM and all) the first time anyone asks it for a name it
does not hold yet, e.g. ``from sqlalchemy.ext.asyncio import AsyncSession``: code that wants
the whole package still gets it.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

_PACKAGE = "sqlalchemy.ext.asyncio"


def _load_engine() -> None:
    """Import the package's ``engine`` module, and the package without running its
    ``__init__`` (unless it is imported already), which runs on the first name looked up
    that the package lacks."""
    if _PACKAGE in sys.modules:
        importlib.import_module(f"{_PACKAGE}.engine")
        return
    import sqlalchemy.ext

    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.loader is None:  # pragma: no cover (SQLAlchemy without asyncio)
        raise ImportError(f"no {_PACKAGE}")
    package = importlib.util.module_from_spec(spec)
    completed = False

    def complete(name: str) -> Any:
        nonlocal completed
        if not completed:
            completed = True
            assert spec.loader is not None
            spec.loader.exec_module(package)
        try:
            return package.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {_PACKAGE!r} has no attribute {name!r}") from None

    sys.modules[_PACKAGE] = package
    sqlalchemy.ext.asyncio = package
    try:
        importlib.import_module(f"{_PACKAGE}.engine")
    except BaseException:
        del sys.modules[_PACKAGE]
        raise
    # only now: while ``engine`` loads, a name the package lacks is a submodule to import
    package.__getattr__ = complete  # type: ignore[method-assign]


_load_engine()

from sqlalchemy.ext.asyncio.engine import (  # noqa: E402 (after the package is in place)
    AsyncConnection,
    AsyncEngine,
    create_async_engine,
)

__all__ = ["AsyncConnection", "AsyncEngine", "create_async_engine"]
