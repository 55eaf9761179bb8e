"""`make docs`: the AsyncAPI document names every subject and every payload."""

from __future__ import annotations

from cardroom.docs import build


def test_every_subject_and_payload_is_documented() -> None:
    doc = build("cardroom")
    assert doc["asyncapi"].startswith("3.")
    addresses = {c["address"] for c in doc["channels"].values()}
    for subject in (
        "cardroom.lobby.*",
        "cardroom.cmd.*.*",
        "cardroom.ack.*.*",
        "cardroom.sync.*.*",
        "cardroom.player.{player}.{game}",
        "cardroom.public.{game}",
        "cardroom.events.{game_type}.{game}",
    ):
        assert subject in addresses
    schemas = doc["components"]["schemas"]
    assert "id" in schemas["CommandsRequest"]["properties"]
    assert "version" in schemas["AcksRequest"]["properties"]
    lobby = {v["properties"]["type"]["const"] for v in schemas["LobbyRequest"]["oneOf"]}
    assert lobby == {"create", "join", "start", "list", "get", "register", "renew"}
    assert "seq" in schemas["Notification"]["properties"]
    for message in doc["components"]["messages"].values():
        assert message["payload"] != {"$ref": "#/components/schemas/EmptyPayload"}, message
