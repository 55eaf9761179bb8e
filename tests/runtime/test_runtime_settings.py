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
from cardroom_runtime.settings import Settings, SettingsError, nats_servers
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


CANONICAL = "postgresql+asyncpg://u:p%40ss@db.example:5433/cardroom"


@pytest.mark.parametrize(
    "form",
    [
        CANONICAL,
        "postgresql://u:p%40ss@db.example:5433/cardroom",
        "postgres://u:p%40ss@db.example:5433/cardroom",
        "postgresql+psycopg://u:p%40ss@db.example:5433/cardroom",
        "postgresql+psycopg2://u:p%40ss@db.example:5433/cardroom",
        "  postgresql://u:p%40ss@db.example:5433/cardroom  ",
    ],
)
def test_every_database_url_form_is_normalised_once(form: str) -> None:
    from_env = Settings.from_env({"CARDROOM_DATABASE_URL": form})
    assert from_env.database_url == CANONICAL
    assert Settings(database_url=form).database_url == CANONICAL  # built directly, the same
    assert asyncpg_dsn(form) == "postgresql://u:p%40ss@db.example:5433/cardroom"


def test_a_unix_socket_and_libpq_sslmode_keep_their_meaning() -> None:
    url = Settings.from_env(
        {"CARDROOM_DATABASE_URL": "postgres://postgres@/cardroom?host=/run/pg&sslmode=require"}
    ).database_url
    assert url == "postgresql+asyncpg://postgres@/cardroom?host=%2Frun%2Fpg&ssl=require"
    # asyncpg's keyword for libpq's sslmode is ssl; its DSN takes libpq's name again
    assert asyncpg_dsn(url) == "postgresql://postgres@/cardroom?host=%2Frun%2Fpg&sslmode=require"
    assert database_url(url, "other").endswith("/other?host=%2Frun%2Fpg&ssl=require")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("mysql://root:s3cr3t@db/cardroom", "not a PostgreSQL URL"),
        ("sqlite:///cardroom.db", "not a PostgreSQL URL"),
        ("db.example:5432", "not a URL"),
        ("://s3cr3t@", "not a URL"),
    ],
)
def test_a_database_url_that_is_not_postgresql_is_a_clear_error(value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=f"CARDROOM_DATABASE_URL: {says}") as refused:
        Settings.from_env({"CARDROOM_DATABASE_URL": value})
    assert "s3cr3t" not in str(refused.value)
    with pytest.raises(ValidationError) as invalid:
        Settings(database_url=value)
    assert "s3cr3t" not in str(invalid.value)


def test_nats_urls_are_redacted_for_messages() -> None:
    from cardroom_runtime.nats import redact as redact_nats

    assert redact_nats("nats://127.0.0.1:4222") == "nats://127.0.0.1:4222"
    assert redact_nats("nats://u:s3cr3t@h:4222") == "nats://u:***@h:4222"
    assert redact_nats("nats://t0ken@h:4222,tls://h2:4222") == "nats://***@h:4222,tls://h2:4222"


def test_a_cluster_is_a_comma_separated_server_list() -> None:
    settings = Settings.from_env(
        {"CARDROOM_NATS_URL": " nats://a:4222, nats://u:p@b:4222 ,c:4222 ", **_REPLICAS_3}
    )
    assert settings.nats_url == "nats://a:4222,nats://u:p@b:4222,c:4222"
    assert nats_servers(settings.nats_url) == ["nats://a:4222", "nats://u:p@b:4222", "c:4222"]
    assert settings.jetstream_replicas == 3
    assert Settings.from_env({}).jetstream_replicas == 1


_REPLICAS_3 = {"CARDROOM_JETSTREAM_REPLICAS": "3"}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CARDROOM_NATS_URL", "nats://a:4222,,nats://b:4222"),
        ("CARDROOM_NATS_URL", "nats://a:4222,"),
        ("CARDROOM_NATS_URL", "http://u:secret@a:4222"),
        ("CARDROOM_NATS_URL", "nats://a:4222,ws://b:8080"),
        ("CARDROOM_JETSTREAM_REPLICAS", "0"),
        ("CARDROOM_JETSTREAM_REPLICAS", "6"),
        ("CARDROOM_JETSTREAM_REPLICAS", "three"),
    ],
)
def test_bad_server_lists_and_replicas_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name) as caught:
        Settings.from_env({name: value})
    assert "secret" not in str(caught.value)
