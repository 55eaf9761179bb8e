"""The projector's typed sync handler through FastStream's test broker: no NATS server. The
projection it answers from is SQL (read models in the run's database), so the store is the
real one; the bytes in and the replies out are the test broker's."""

from __future__ import annotations

import random
import secrets
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from cardroom_engine import registry, simulate
from cardroom_eventstore import Append, EventStore, NewEvent
from cardroom_projector.service import Projector, checkpoint_name, record_of
from cardroom_runtime.host import Runtime
from cardroom_wire import Subjects, SyncReply
from faststream.nats import NatsBroker, TestNatsBroker
from support.highcard import GAME as HIGHCARD

ROOT = "unit"


class Table:
    """A projected game of highcard between alice and bob, and a test broker to sync on."""

    def __init__(
        self, broker: NatsBroker, store: EventStore, projector: Projector, game: str, version: int
    ) -> None:
        self.broker = broker
        self.store = store
        self.projector = projector
        self.game = game
        self.version = version

    async def sync(self, player: str, body: bytes = b'{"type": "sync"}') -> dict[str, Any]:
        reply = await self.broker.request(body, Subjects(ROOT).sync(self.game, player))
        answer: dict[str, Any] = orjson.loads(reply.body)
        return answer

    async def project(self, upto: int) -> None:
        """Project the events up to ``upto`` as the event stream delivers them."""
        records = await self.store.read_stream(self.game, 1, upto)
        await self.projector.handle_many([record_of(r) for r in records])

    async def projected(self) -> tuple[int, list[int]]:
        """The projection's checkpoint and alice's pending acknowledgements."""
        done = await self.store.checkpoint(checkpoint_name(self.game))
        return done, await self.store.pending_for_player(self.game, "alice")


@pytest.fixture
async def table(database_url: str) -> AsyncIterator[Table]:
    registry.register(HIGHCARD)
    game = f"g{secrets.token_hex(6)}"
    local = simulate.new_game(HIGHCARD, ["alice", "bob"], random.Random(7), game_id=game)
    store = await EventStore.connect(database_url)
    try:
        await store.append(
            Append(
                game,
                HIGHCARD.name,
                0,
                [
                    NewEvent(
                        step.event["type"],
                        {k: v for k, v in step.event.items() if k != "type"},
                        addressees=frozenset(step.notifications),
                    )
                    for step in local.steps
                ],
            )
        )
        broker = NatsBroker()
        projector = Projector(Runtime(Subjects(ROOT), broker, store, "nats://unused", ""))
        projector.register()
        async with TestNatsBroker(broker) as test_broker:
            yield Table(test_broker, store, projector, game, len(local.steps))
    finally:
        await store.close()


async def test_a_sync_answers_the_players_view_and_what_it_owes(table: Table) -> None:
    # the stream brought the first event; the sync catches the projection up to the rest
    await table.project(1)
    answer = await table.sync("alice")
    reply = SyncReply.model_validate(answer)
    assert (reply.game, reply.player, reply.version) == (table.game, "alice", table.version)
    owed = await table.store.pending_for_player(table.game, "alice")
    assert owed, "the deal is owed an acknowledgement"
    assert [n.version for n in reply.notifications] == owed
    assert all(n.player == "alice" for n in reply.notifications)
    assert await table.projected() == (table.version, owed)


async def test_a_stranger_is_not_seated_and_an_unknown_game_is_unknown(table: Table) -> None:
    # before the stream brought the game, nobody can be told whether they sit at it
    assert (await table.sync("carol"))["error"]["code"] == "unavailable"
    await table.project(table.version)
    assert (await table.sync("carol"))["error"]["code"] == "not_seated"
    table.game = "nowhere"
    assert (await table.sync("alice"))["error"]["code"] == "unknown_game"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"type": "sync"', "bad_json"),
        (b'"sync"', "bad_request"),
        (b'{"type": "sync", "version": 3}', "bad_request"),
        (b"{}", "bad_request"),
    ],
    ids=["bad_json", "not_an_object", "unknown_field", "no_type"],
)
async def test_hostile_input_gets_its_code_and_changes_nothing(
    table: Table, body: bytes, code: str
) -> None:
    await table.project(1)
    answer = await table.sync("alice", body)
    assert answer["ok"] is False
    assert answer["error"]["code"] == code
    # refused before the handler: it did not catch the projection up (a sync does)
    assert (await table.projected())[0] == 1
