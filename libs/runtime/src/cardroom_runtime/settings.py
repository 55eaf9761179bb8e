"""Process settings, read from the environment.

Every cardroom process and the test suite read the same variables:

``CARDROOM_DATABASE_URL``
    PostgreSQL URL: ``postgresql+asyncpg://user:pass@host:5432/db``, ``postgresql://...`` or
    ``postgres://...`` (see :mod:`cardroom_runtime.postgres`). Unset: discover. It is
    normalised here, once, to the ``postgresql+asyncpg://`` form every component takes, and
    anything but a PostgreSQL URL is a :class:`SettingsError`.
``CARDROOM_NATS_URL``
    NATS URL (``nats://host:port``); the server must have JetStream enabled. Unset: discover.
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
from collections.abc import Mapping
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


class SettingsError(ValueError):
    """A setting has a value that cannot be used."""


class Settings(BaseModel):
    """The settings every cardroom process shares. Immutable."""

    # a refused URL may hold a password: errors do not repeat the input
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    database_url: str | None = None
    nats_url: str | None = None
    subject_root: str = "cardroom"
    data_dir: Path = Field(default_factory=lambda: Path.cwd() / ".cardroom")
    services: ServicesMode = "auto"

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

    @field_validator("database_url")
    @classmethod
    def _one_form(cls, value: str | None) -> str | None:
        return None if value is None else sqlalchemy_url(value)

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
        database_url = get(ENV_DATABASE_URL)
        if database_url is not None:
            try:
                database_url = sqlalchemy_url(database_url)
            except ValueError as exc:
                raise SettingsError(f"{ENV_DATABASE_URL}: {exc}") from None
        data_dir = Path(get(ENV_DATA_DIR) or ".cardroom").expanduser()
        if not data_dir.is_absolute():
            data_dir = Path.cwd() / data_dir
        return cls(
            database_url=database_url,
            nats_url=get(ENV_NATS_URL),
            subject_root=root,
            data_dir=data_dir,
            services=cast(ServicesMode, services),
        )
