"""``cardroom serve auth`` refuses settings of its guest limit that cannot limit, in words and
with the configuration exit code (78), before it connects to anything."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cardroom.cli import app

# a URL nothing listens on: a refusal must come before any connection is tried
UNREACHABLE = "nats://127.0.0.1:9"


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("CARDROOM_GUEST_TRUSTED", "10.0.0.0/8,not-a-network", "CARDROOM_GUEST_TRUSTED"),
        ("CARDROOM_GUEST_RATE", "0", "CARDROOM_GUEST_RATE must be a positive number"),
        ("CARDROOM_GUEST_BURST", "many", "CARDROOM_GUEST_BURST must be a positive number"),
        ("CARDROOM_GUEST_BURST", "0.5", "CARDROOM_GUEST_BURST"),
    ],
)
def test_a_guest_limit_that_cannot_limit_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, said: str
) -> None:
    monkeypatch.setenv("CARDROOM_NATS_URL", UNREACHABLE)
    monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["serve", "auth"])
    assert result.exit_code == 78, result.output
    assert said in result.output.replace("\n", " ")
