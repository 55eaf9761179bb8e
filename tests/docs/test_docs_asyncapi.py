"""`make docs`: the AsyncAPI document names every subject and every payload."""

from __future__ import annotations

import json
from pathlib import Path

from cardroom_analytics.queries import AnalyticsQuery
from cardroom_wire import (
    Ack,
    Back,
    Command,
    DeadlineHint,
    LobbyRequest,
    Reconcile,
    Release,
    Resend,
    SeatBotsAt,
    SyncRequest,
    Timeout,
)
from cardroom_wire.events import EventRecord
from pydantic import BaseModel

from cardroom.docs import build


def test_every_subject_and_payload_is_documented() -> None:
    doc = build("cardroom")
    assert doc["asyncapi"].startswith("3.")
    addresses = {c["address"] for c in doc["channels"].values()}
    for subject in (
        "cardroom.lobby.*.*",
        "cardroom.cmd.*.*",
        "cardroom.ack.*.*",
        "cardroom.sync.*.*",
        "cardroom.player.{player}.{game}",
        "cardroom.public.{game}",
        "cardroom.events.{game_type}.{game}",
    ):
        assert subject in addresses
    schemas = doc["components"]["schemas"]
    assert "id" in schemas["Command"]["properties"]
    assert "version" in schemas["Ack"]["properties"]
    variants = [
        schemas[v["$ref"].removeprefix("#/components/schemas/")]
        for v in schemas["LobbyRequest"]["oneOf"]
    ]
    lobby = {v["properties"]["type"]["const"] for v in variants}
    assert lobby == {"create", "join", "start", "list", "get", "bots", "register", "renew"}
    # the actor is the subject's: no lobby request carries a player
    for variant in variants:
        assert "player" not in variant["properties"], variant
    assert "seq" in schemas["Notification"]["properties"]
    for message in doc["components"]["messages"].values():
        assert message["payload"] != {"$ref": "#/components/schemas/EmptyPayload"}, message


def test_every_subscription_documents_its_wire_model() -> None:
    # the payloads come from the models FastStream sees in the handlers' signatures, not
    # from a table patched into the document
    doc = build("cardroom")
    messages = doc["components"]["messages"]
    schemas = doc["components"]["schemas"]
    typed: dict[str, type[BaseModel]] = {
        "acks": Ack,
        "sync": SyncRequest,
        "resend": Resend,
        "deadlines": DeadlineHint,
        "projector": EventRecord,
        "analytics": AnalyticsQuery,
        "lobby": LobbyRequest,
        "commands": Command,
        "release": Release,
        "timeout": Timeout,
        "reconcile": Reconcile,
        "back": Back,
        "presence-syncs": SyncRequest,
        "bots": SeatBotsAt,
    }
    for title, model in typed.items():
        name = model.__name__
        assert messages[f"{title}:SubscribeMessage"]["payload"] == {
            "$ref": f"#/components/schemas/{name}"
        }
        fields = set(model.model_json_schema().get("properties", {}))
        assert set(schemas[name].get("properties", {})) == fields


def test_two_builds_give_the_same_bytes() -> None:
    assert json.dumps(build("cardroom"), indent=2) == json.dumps(build("cardroom"), indent=2)


def test_the_committed_document_is_what_make_docs_writes() -> None:
    # byte for byte: `make docs` is reproducible, and the contract in the repository is the
    # one the code serves
    committed = (Path(__file__).resolve().parents[2] / "docs" / "asyncapi.json").read_text()
    assert committed == json.dumps(build("cardroom"), indent=2) + "\n"
