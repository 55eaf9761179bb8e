"""Process settings, read from the environment.

Every cardroom process and the test suite read the same variables:

``CARDROOM_DATABASE_URL``
    PostgreSQL URL: ``postgresql+asyncpg://user:pass@host:5432/db``, ``postgresql://...`` or
    ``postgres://...`` (see :mod:`cardroom_runtime.postgres`), or several, comma-separated:
    the event store's shards, in order (:mod:`cardroom_runtime.shards`; the first also holds
    analytics' tables). Unset: discover. Each is normalised here, once, to the
    ``postgresql+asyncpg://`` form every component takes, and anything but PostgreSQL URLs
    is a :class:`SettingsError`.
``CARDROOM_NATS_URL``
    NATS URL (``nats://host:port``), or several, comma-separated, for the servers of one
    cluster (a client connects to one of them and moves to another when it is lost); the
    servers must have JetStream enabled. Unset: discover.
``CARDROOM_JETSTREAM_REPLICAS``
    How many servers of a NATS cluster keep a copy of the events stream (default 1; 3 on a
    three-node cluster, so that it survives the loss of any one node). A single server takes
    only 1.
``CARDROOM_SUBJECT_ROOT``
    The first token of every NATS subject (default ``cardroom``), so that several
    deployments or parallel test runs can share one NATS server without colliding.
``CARDROOM_DATA_DIR``
    Where embedded servers keep their data (default ``.cardroom`` in the working directory).
``CARDROOM_SERVICES``
    How to find PostgreSQL and NATS: ``auto`` (default), ``local``, ``containers`` or
    ``embedded``; see :mod:`cardroom_runtime.discovery`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .postgres import sqlalchemy_url

ServicesMode = Literal["auto", "local", "containers", "embedded"]
SERVICES_MODES: tuple[str, ...] = get_args(ServicesMode)

# One NATS subject token: no separators, wildcards or whitespace.
_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")

ENV_DATABASE_URL = "CARDROOM_DATABASE_URL"
ENV_NATS_URL = "CARDROOM_NATS_URL"
ENV_SUBJECT_ROOT = "CARDROOM_SUBJECT_ROOT"
ENV_DATA_DIR = "CARDROOM_DATA_DIR"
ENV_SERVICES = "CARDROOM_SERVICES"
ENV_JETSTREAM_REPLICAS = "CARDROOM_JETSTREAM_REPLICAS"
MAX_REPLICAS = 5  # JetStream's own limit
_SCHEMES = frozenset({"nats", "tls", "ws", "wss"})


class SettingsError(ValueError):
    """A setting has a value that cannot be used."""


def nats_servers(url: str) -> list[str]:
    """The servers of a ``CARDROOM_NATS_URL``: one URL, or several comma-separated.

    Raises :class:`ValueError` (without repeating the input: it may hold a password) when an
    entry is empty, has a scheme NATS does not speak, or WebSocket and TCP entries are mixed.
    """
    servers = [part.strip() for part in url.split(",")]
    if not servers or any(not part for part in servers):
        raise ValueError("an empty server in the list (two commas, or one at an end)")
    schemes: set[bool] = set()
    for n, part in enumerate(servers, 1):
        scheme = part.partition("://")[0].lower() if "://" in part else "nats"
        if scheme not in _SCHEMES:
            raise ValueError(f"server {n} of {len(servers)}: scheme {scheme!r} is not NATS's")
        schemes.add(scheme in ("ws", "wss"))
    if len(schemes) > 1:
        raise ValueError("WebSocket (ws://) and TCP (nats://) servers mixed in one list")
    return servers


def database_urls(url: str) -> list[str]:
    """The shards of a ``CARDROOM_DATABASE_URL``: one URL, or several comma-separated, each
    in the ``postgresql+asyncpg://`` form (a comma inside a URL is written ``%2C``).

    Raises :class:`ValueError` (without repeating the input: it may hold a password) for an
    empty entry, anything but a PostgreSQL URL, or one database listed twice."""
    parts = [part.strip() for part in url.split(",")]
    if any(not part for part in parts):
        raise ValueError("an empty URL in the list (two commas, or one at an end)")
    urls: list[str] = []
    for n, part in enumerate(parts, 1):
        try:
            urls.append(sqlalchemy_url(part))
        except ValueError as exc:
            where = f"shard {n} of {len(parts)}: " if len(parts) > 1 else ""
            raise ValueError(f"{where}{exc}") from None
    if len(set(urls)) < len(urls):
        raise ValueError("one database listed twice: each shard is a database of its own")
    return urls


def _listed(name: str, value: str | None, parse: Callable[[str], list[str]]) -> str | None:
    """The comma-separated list setting ``name`` as ``parse`` checks it, in one spelling."""
    if value is None:
        return None
    try:
        return ",".join(parse(value))
    except ValueError as exc:
        raise SettingsError(f"{name}: {exc}") from None


def jetstream_replicas(environ: Mapping[str, str] | None = None) -> int:
    """``CARDROOM_JETSTREAM_REPLICAS`` (default 1); :class:`SettingsError` unless 1 to 5."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_JETSTREAM_REPLICAS, "").strip() or "1"
    try:
        replicas = int(raw)
    except ValueError:
        replicas = 0
    if not 1 <= replicas <= MAX_REPLICAS:
        raise SettingsError(f"{ENV_JETSTREAM_REPLICAS}={raw!r}: expected 1 to {MAX_REPLICAS}")
    return replicas


class Settings(BaseModel):
    """The settings every cardroom process shares. Immutable."""

    # a refused URL may hold a password: errors do not repeat the input
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    database_url: str | None = None
    nats_url: str | None = None
    subject_root: str = "cardroom"
    data_dir: Path = Field(default_factory=lambda: Path.cwd() / ".cardroom")
    services: ServicesMode = "auto"
    jetstream_replicas: int = Field(default=1, ge=1, le=MAX_REPLICAS)

    @field_validator("subject_root")
    @classmethod
    def _one_token(cls, value: str) -> str:
        if not _TOKEN.match(value):
            raise ValueError(
                f"subject root {value!r} must be one NATS token (letters, digits, '_' or '-')"
            )
        return value

    @field_validator("database_url", "nats_url")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            return None
        return value.strip() if value is not None else None

    @field_validator("nats_url")
    @classmethod
    def _server_list(cls, value: str | None) -> str | None:
        return None if value is None else ",".join(nats_servers(value))

    @field_validator("database_url")
    @classmethod
    def _one_form(cls, value: str | None) -> str | None:
        return None if value is None else ",".join(database_urls(value))

    @property
    def database_urls(self) -> list[str]:
        """The configured shards' URLs, in order (empty when unset: discover one)."""
        return [] if self.database_url is None else self.database_url.split(",")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the settings from ``environ`` (default ``os.environ``).

        Unset and empty variables take their defaults. A bad value raises
        :class:`SettingsError` naming the variable.
        """
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        services = (get(ENV_SERVICES) or "auto").lower()
        if services not in SERVICES_MODES:
            raise SettingsError(
                f"{ENV_SERVICES}={services!r}: expected one of {', '.join(SERVICES_MODES)}"
            )
        root = get(ENV_SUBJECT_ROOT) or "cardroom"
        if not _TOKEN.match(root):
            raise SettingsError(
                f"{ENV_SUBJECT_ROOT}={root!r}: must be one NATS token "
                "(letters, digits, '_' or '-'; no dots, spaces or wildcards)"
            )
        database_url = _listed(ENV_DATABASE_URL, get(ENV_DATABASE_URL), database_urls)
        nats_url = _listed(ENV_NATS_URL, get(ENV_NATS_URL), nats_servers)
        data_dir = Path(get(ENV_DATA_DIR) or ".cardroom").expanduser()
        if not data_dir.is_absolute():
            data_dir = Path.cwd() / data_dir
        return cls(
            database_url=database_url,
            nats_url=nats_url,
            subject_root=root,
            data_dir=data_dir,
            services=cast(ServicesMode, services),
            jetstream_replicas=jetstream_replicas(env),
        )
