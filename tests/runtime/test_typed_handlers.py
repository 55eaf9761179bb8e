"""The typed handler form (``Service.serve``/``listen`` with ``model=``): one handler, parsed
and refused alike on the bare path a running host serves and on the FastStream subscriber
(FastStream's test broker here; the AsyncAPI document is built from the same). No server:
the bare path's route is called as its subscription calls it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, cast

import asyncpg
import orjson
import pytest
from cardroom_eventstore import EventStore
from cardroom_runtime.host import Asker, Runtime, Service, Unanswered
from cardroom_wire import MAX_MESSAGE_BYTES, Ack, AckReply, Back, GetTable, ListTables, Subjects, ok
from faststream.nats import NatsBroker, TestNatsBroker
from pydantic import Field, RootModel

ROOT = "unit"
S = Subjects(ROOT)


class Lobby(RootModel[Annotated[ListTables | GetTable, Field(discriminator="type")]]):
    """Two of the lobby's requests, told apart by ``type`` (the subject's verb when absent)."""


class Toy(Service):
    name = "toy"

    def __init__(self, rt: Runtime) -> None:
        super().__init__(rt)
        self.acks: list[tuple[Ack, Asker]] = []
        self.backs: list[tuple[Back, Asker]] = []
        self.failure: Exception | None = None

    def register(self) -> None:
        s = self.subjects
        self.serve(
            s.ack_all, queue="toy", title="acks", model=Ack, handler=self.on_ack, max_workers=4
        )
        self.serve(
            s.lobby_all,
            queue="toy",
            title="lobby",
            model=Lobby,
            handler=self.on_lobby,
            max_workers=4,
        )
        self.listen(
            s.back, queue="toy", title="back", model=Back, listener=self.on_back, max_workers=1
        )

    async def on_ack(self, ack: Ack, asker: Asker) -> dict[str, Any]:
        if self.failure is not None:
            raise self.failure
        self.acks.append((ack, asker))
        return AckReply(version=ack.version).body()

    async def on_lobby(self, request: Lobby, asker: Asker) -> dict[str, Any]:
        return ok(type=request.root.type, player=asker.player, verb=asker.verb)

    async def on_back(self, back: Back, asker: Asker) -> None:
        self.backs.append((back, asker))


class Both:
    """The same service on the bare path and on FastStream's test broker."""

    def __init__(self, direct: Toy, routes: dict[str, Any], faststream: Toy, broker: Any) -> None:
        self.direct, self.routes, self.faststream, self.broker = direct, routes, faststream, broker

    async def ask(self, title: str, subject: str, body: bytes) -> list[dict[str, Any]]:
        """Both paths' replies to one request."""
        bare = await self.routes[title].handle(subject, body)
        through = (await self.broker.request(body, subject)).body
        return [orjson.loads(bare), orjson.loads(through)]

    async def tell(self, title: str, subject: str, body: bytes) -> None:
        assert await self.routes[title].handle(subject, body) is None
        await self.broker.publish(body, subject)


def _toy(direct: bool) -> tuple[Toy, Runtime]:
    rt = Runtime(S, NatsBroker(), cast(EventStore, None), "nats://unused", "", direct=direct)
    toy = Toy(rt)
    toy.register()
    return toy, rt


@pytest.fixture
async def both() -> AsyncIterator[Both]:
    direct, rt = _toy(direct=True)
    faststream, fs_rt = _toy(direct=False)
    assert not fs_rt.routes  # FastStream subscribers, not bare routes
    async with TestNatsBroker(fs_rt.broker) as broker:
        yield Both(direct, {r.title: r for r in rt.routes}, faststream, broker)


async def test_a_typed_handler_gets_the_model_and_the_subjects_asker(both: Both) -> None:
    replies = await both.ask("acks", S.ack("g1", "alice"), b'{"type": "ack", "version": 3}')
    assert replies == [{"ok": True, "version": 3}] * 2
    for toy in (both.direct, both.faststream):
        assert toy.acks == [
            (Ack(type="ack", version=3), Asker(S.ack("g1", "alice"), "g1", "alice"))
        ]


TOO_LARGE = b'{"type": "ack", "version": 1, "pad": "' + b"x" * MAX_MESSAGE_BYTES + b'"}'


@pytest.mark.parametrize(
    ("subject", "body", "code"),
    [
        (S.ack("g1", "alice"), b'{"type": "ack"', "bad_json"),
        (S.ack("g1", "alice"), b'{"type": "ack", "version": NaN}', "bad_json"),
        (S.ack("g1", "alice"), TOO_LARGE, "too_large"),
        (S.ack("g1", "alice"), b"[]", "bad_request"),
        (S.ack("g1", "alice"), b'{"type": "ack", "version": 1, "player": "bob"}', "bad_request"),
        (f"{ROOT}.ack.g1.b@d", b'{"type": "ack", "version": 1}', "bad_id"),
        (f"{ROOT}.ack.g1.b@d", b"{", "bad_id"),  # the subject is read before the body
    ],
    ids=["bad_json", "nan", "too_large", "not_an_object", "unknown_field", "bad_id", "id_first"],
)
async def test_hostile_input_is_refused_alike_and_never_reaches_the_handler(
    both: Both, subject: str, body: bytes, code: str
) -> None:
    bare, through = await both.ask("acks", subject, body)
    assert bare == through
    assert bare["error"]["code"] == code
    assert both.direct.acks == both.faststream.acks == []


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (OSError("connection refused"), "unavailable"),
        (asyncpg.exceptions.TooManyConnectionsError("too many connections"), "unavailable"),
        (KeyError("x"), "internal"),
    ],
    ids=["unreachable", "no_room", "a_bug"],
)
async def test_a_failing_handler_is_answered_alike(
    both: Both, failure: Exception, code: str
) -> None:
    both.direct.failure = both.faststream.failure = failure
    replies = await both.ask("acks", S.ack("g1", "alice"), b'{"type": "ack", "version": 1}')
    assert [r["error"]["code"] for r in replies] == [code, code]
    # nothing of the failure itself is told
    assert "connection" not in str(replies)
    assert "'x'" not in str(replies)


async def test_a_verb_in_the_subject_is_the_bodys_type_when_it_has_none(both: Both) -> None:
    listed = await both.ask("lobby", S.lobby("list", "alice"), b"{}")
    assert listed == [{"ok": True, "type": "list", "player": "alice", "verb": "list"}] * 2
    # a body's own type wins (the handler sees which it was)
    got = await both.ask("lobby", S.lobby("list", "alice"), b'{"type": "get", "game": "g1"}')
    assert [r["type"] for r in got] == ["get", "get"]
    missing = await both.ask("lobby", S.lobby("get", "alice"), b"{}")
    assert [r["error"]["code"] for r in missing] == ["bad_request"] * 2


async def test_a_listener_hears_only_what_parses(both: Both) -> None:
    for body in (b"nope", b'{"game": "g1"}', b'{"game": "g1", "player": "b@d"}'):
        await both.tell("back", S.back, body)
    assert both.direct.backs == both.faststream.backs == []
    await both.tell("back", S.back, b'{"game": "g1", "player": "bob"}')
    heard = [(Back(game="g1", player="bob"), Asker(S.back))]
    assert both.direct.backs == both.faststream.backs == heard


class AckBody:
    """Any model with ``body()`` may be sent (the services send ``cardroom_wire.internal``'s)."""

    def body(self) -> dict[str, Any]:
        return {"type": "ack", "version": 5}


async def test_services_send_each_other_typed_messages_with_tell_and_ask(both: Both) -> None:
    """``Runtime.tell`` publishes a wire model to a typed listener; ``Runtime.ask`` returns the
    JSON object a typed handler answers, and raises ``Unanswered`` when nobody serves the
    subject."""
    rt = both.faststream.rt
    await rt.tell(S.back, Back(game="g1", player="bob"))
    assert [back for back, _ in both.faststream.backs] == [Back(game="g1", player="bob")]
    answer = await rt.ask(S.ack("g1", "alice"), AckBody(), 1.0)
    assert answer == {"ok": True, "version": 5}
    with pytest.raises(Unanswered, match="no service answers it") as caught:
        await rt.ask(S.timeout, Back(game="g1", player="bob"), 1.0)
    assert caught.value.nobody


async def test_ask_refuses_an_answer_that_is_not_an_object() -> None:
    rt = Runtime(S, NatsBroker(), cast(EventStore, None), "nats://unused", "")

    @rt.broker.subscriber(S.reconcile)
    async def a_list(body: Any) -> list[int]:
        return [1]

    async with TestNatsBroker(rt.broker):
        with pytest.raises(Unanswered, match="not a JSON object") as caught:
            await rt.ask(S.reconcile, Back(game="g1", player="bob"), 1.0)
        assert not caught.value.nobody
