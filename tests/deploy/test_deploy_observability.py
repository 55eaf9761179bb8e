"""deploy/'s Prometheus and Grafana files: valid for the real tools, and about metrics that
exist.

``promtool check config`` (Debian's prometheus package, which CI installs) validates the
scrape configuration. The dashboard is provisioned as it is: every panel queries the
provisioned data source, and every metric it names is one that cardroom's code exports
(the names are read from the sources that register them), so a renamed metric cannot leave
an empty panel behind.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SOURCES = [
    *ROOT.glob("libs/*/src/**/*.py"),
    *ROOT.glob("services/*/src/**/*.py"),
    *ROOT.glob("src/**/*.py"),  # (the auth service's, composed there)
]
SUFFIXES = ("_total", "_bucket", "_count", "_sum")


def exported() -> set[str]:
    """Every metric family the code registers: a ``cardroom_...`` name in a string."""
    names: set[str] = set()
    for path in SOURCES:
        names |= set(re.findall(r'"(cardroom_[a-z0-9_]+)"', path.read_text()))
    return names


def family(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def test_promtool_accepts_the_scrape_configuration() -> None:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is needed (Debian's prometheus package; .ci/run installs it)"
    checked = subprocess.run(
        [promtool, "check", "config", str(DEPLOY / "prometheus" / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_service_that_serves_metrics_is_scraped() -> None:
    """Every ``cardroom serve`` service of the compose file, auth included."""
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    names = {
        n for job in config["scrape_configs"] for sd in job["dns_sd_configs"] for n in sd["names"]
    }
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    ours = {
        name
        for name, service in compose["services"].items()
        if service.get("command", [None, None, None])[:2] == ["cardroom", "serve"]
    }
    assert ours
    assert names == ours
    assert {sd["port"] for job in config["scrape_configs"] for sd in job["dns_sd_configs"]} == {
        9464
    }
    assert compose["x-cardroom-env"]["CARDROOM_METRICS_PORT"] == "9464"
    assert compose["services"]["auth"]["environment"]["CARDROOM_METRICS_PORT"] == "9464"


def test_the_dashboard_queries_metrics_that_exist() -> None:
    dashboard: dict[str, Any] = json.loads(
        (DEPLOY / "grafana" / "dashboards" / "cardroom.json").read_text()
    )
    datasource = yaml.safe_load(
        (DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text()
    )["datasources"][0]
    names = exported()
    assert {"cardroom_requests", "cardroom_commands", "cardroom_acks"} <= names
    used: set[str] = set()
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == datasource["uid"], panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            for metric in re.findall(r"\b(cardroom_[a-z0-9_]+)", target["expr"]):
                used.add(metric)
                assert family(metric) in names or metric in names, (panel["title"], metric)
    # the figures an operator looks for first are on it
    for wanted in (
        "cardroom_commands_total",
        "cardroom_command_seconds_bucket",
        "cardroom_acks_total",
        "cardroom_projector_delay_seconds_bucket",
        "cardroom_presence_changes_total",
        "cardroom_nats_reconnects_total",
        "cardroom_gate_wait_seconds_bucket",
        "cardroom_auth_requests_total",
    ):
        assert wanted in used, wanted


def test_the_alerts_are_valid_rules_about_metrics_that_exist() -> None:
    """``promtool check rules``, and every metric an alert names is exported (a real
    Prometheus evaluates them against a playing cardroom: tests/observability)."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool is needed (Debian's prometheus package; .ci/run installs it)"
    alerts = DEPLOY / "prometheus" / "alerts.yml"
    checked = subprocess.run(
        [promtool, "check", "rules", str(alerts)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    assert config["rule_files"] == [alerts.name]
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert (
        f"./prometheus/{alerts.name}:/etc/prometheus/{alerts.name}:ro"
        in (compose["services"]["prometheus"]["volumes"])
    )
    names = exported()
    rules = [r for group in yaml.safe_load(alerts.read_text())["groups"] for r in group["rules"]]
    assert {r["alert"] for r in rules} >= {"CardroomServiceDown", "CardroomFollowerBehind"}
    for rule in rules:
        for metric in re.findall(r"\b(cardroom_[a-z0-9_]+)", rule["expr"]):
            assert family(metric) in names or metric in names, (rule["alert"], metric)
