"""Settings from the environment, and PostgreSQL URL conversions."""

from __future__ import annotations

from pathlib import Path

import pytest
from cardroom_runtime.postgres import (
    asyncpg_dsn,
    check_database_name,
    database_url,
    redact,
    sqlalchemy_url,
)
from cardroom_runtime.settings import Settings, SettingsError
from pydantic import ValidationError


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env({})
    assert settings.database_url is None
    assert settings.nats_url is None
    assert settings.subject_root == "cardroom"
    assert settings.data_dir == tmp_path / ".cardroom"
    assert settings.services == "auto"


def test_from_env_reads_every_variable(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "CARDROOM_DATABASE_URL": "postgresql+asyncpg://u:p@db:5432/cardroom",
            "CARDROOM_NATS_URL": "nats://nats:4222",
            "CARDROOM_SUBJECT_ROOT": "crt0badcafe",
            "CARDROOM_DATA_DIR": str(tmp_path / "data"),
            "CARDROOM_SERVICES": "Embedded",
        }
    )
    assert settings.database_url == "postgresql+asyncpg://u:p@db:5432/cardroom"
    assert settings.nats_url == "nats://nats:4222"
    assert settings.subject_root == "crt0badcafe"
    assert settings.data_dir == tmp_path / "data"
    assert settings.services == "embedded"


def test_empty_variables_are_unset() -> None:
    settings = Settings.from_env({"CARDROOM_DATABASE_URL": " ", "CARDROOM_SERVICES": ""})
    assert settings.database_url is None
    assert settings.services == "auto"


def test_settings_are_frozen() -> None:
    settings = Settings.from_env({})
    with pytest.raises(ValidationError):
        settings.subject_root = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CARDROOM_SERVICES", "docker"),
        ("CARDROOM_SUBJECT_ROOT", "a.b"),
        ("CARDROOM_SUBJECT_ROOT", "a*"),
        ("CARDROOM_SUBJECT_ROOT", "a b"),
    ],
)
def test_bad_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})


def test_url_forms() -> None:
    plain = "postgresql://postgres:@/postgres?host=/tmp/x/pg"
    alchemy = sqlalchemy_url(plain)
    assert alchemy.startswith("postgresql+asyncpg://postgres:@/postgres?host=")
    assert asyncpg_dsn(alchemy).startswith("postgresql://postgres:@/postgres?host=")
    other = database_url(alchemy, "games")
    assert other.startswith("postgresql+asyncpg://postgres:@/games?host=")
    assert "pg" in other.split("host=")[1]
    assert asyncpg_dsn("postgresql+asyncpg://u:p%40ss@h:5/db") == "postgresql://u:p%40ss@h:5/db"
    assert redact("postgresql+asyncpg://u:secret@h/db") == "postgresql+asyncpg://u:***@h/db"
    with pytest.raises(ValueError, match="not a PostgreSQL URL"):
        asyncpg_dsn("mysql://u@h/db")


@pytest.mark.parametrize("name", ["Upper", "a-b", "1abc", 'x"; drop', "a" * 64])
def test_database_names_are_checked(name: str) -> None:
    with pytest.raises(ValueError, match="database name"):
        check_database_name(name)
