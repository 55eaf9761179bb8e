"""The client SDK checks every transition of a game that signs them before its handler sees
it, and acknowledges with the verdict: a signature, or a rejection. Without a verifier such a
notification is neither handled nor acknowledged, so a client cannot skip the check by
accident. The acks go to a stand-in ack tracker on a real NATS server, which records them."""

from __future__ import annotations

import json
import threading
from typing import Any

import nats
from cardroom_client import Client
from cardroom_wire import Notification, Subjects
from support.stack import wait_until


def _note(seq: int, transition: bool = True) -> Notification:
    message: dict[str, Any] = {"type": "MacauaUpdate", "seq": seq}
    if transition:
        message["transition"] = {"type": "macaua.keys", "n": seq}
    return Notification(game="g1", player="p1", seq=seq, version=10 + seq, message=message)


class Verdict:
    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields

    def ack_fields(self) -> dict[str, Any]:
        return self.fields


class Verifier:
    """Signs every transition but the third, which it rejects; notes where it ran."""

    def __init__(self) -> None:
        self.checked: list[int] = []
        self.threads: set[int] = set()

    def check(self, version: int, message: dict[str, Any]) -> Verdict:
        self.checked.append(version)
        self.threads.add(threading.get_ident())
        if message["seq"] == 3:
            return Verdict({"reject": {"code": "bad_proof", "blame": "p2"}})
        return Verdict({"signature": f"{version:02x}" * 64})


async def _setup(nats_url: str, root: str) -> tuple[Any, Client, list[dict[str, Any]]]:
    server = await nats.connect(nats_url)
    acks: list[dict[str, Any]] = []

    async def ack(msg: Any) -> None:
        acks.append(json.loads(msg.data))
        await msg.respond(json.dumps({"ok": True}).encode())

    await server.subscribe(Subjects(root).ack("g1", "p1"), cb=ack)
    await server.flush()
    return server, await Client.connect(nats_url, "p1", subject_root=root), acks


async def test_transitions_are_checked_off_the_loop_and_acked_with_the_verdict(
    nats_url: str, subject_root: str
) -> None:
    root = f"{subject_root}verify"
    server, client, acks = await _setup(nats_url, root)
    handled: list[int] = []

    async def handler(note: Notification) -> None:
        handled.append(note.seq)

    client.on_notification(handler)
    verifier = Verifier()
    try:
        client.verify("g1", verifier)
        feed = client._feed("g1")
        for seq in (1, 2, 3):
            feed.queue.put_nowait(_note(seq))
        await wait_until(lambda: len(acks) == 3, timeout=10)
        assert handled == [1, 2, 3]
        assert verifier.checked == [11, 12, 13]
        assert threading.get_ident() not in verifier.threads  # not on the event loop
        assert acks[0] == {"type": "ack", "version": 11, "signature": "0b" * 64}
        assert acks[1]["signature"] == "0c" * 64
        assert acks[2] == {
            "type": "ack",
            "version": 13,
            "reject": {"code": "bad_proof", "blame": "p2"},
        }
        # a resend is acknowledged again with the same verdict, not checked again
        feed.queue.put_nowait(_note(2))
        await wait_until(lambda: len(acks) == 4, timeout=10)
        assert acks[3] == acks[1]
        assert verifier.checked == [11, 12, 13]
    finally:
        await client.close()
        await server.close()


async def test_without_a_verifier_a_transition_is_not_handled_nor_acked(
    nats_url: str, subject_root: str
) -> None:
    root = f"{subject_root}noverify"
    server, client, acks = await _setup(nats_url, root)
    handled: list[int] = []

    async def handler(note: Notification) -> None:
        handled.append(note.seq)

    client.on_notification(handler)
    try:
        feed = client._feed("g1")
        feed.queue.put_nowait(_note(1, transition=False))  # not a transition: as ever
        feed.queue.put_nowait(_note(2))
        feed.queue.put_nowait(_note(3, transition=False))
        await wait_until(lambda: len(acks) == 1, timeout=10)
        # seq 3 waits behind the gap the unchecked transition left: the feed stopped there
        await wait_until(lambda: 3 in feed.held, timeout=10)
        assert handled == [1]
        assert acks == [{"type": "ack", "version": 11}]
        assert feed.last_seq == 1  # seq 2 was not taken: a sync will offer it again
    finally:
        await client.close()
        await server.close()


async def test_a_transition_its_handler_failed_on_is_not_checked_again(
    nats_url: str, subject_root: str
) -> None:
    """A handler that fails leaves the notification unacknowledged, to come again. Its
    transition was checked already: the verdict stands (a verifier checks each version once,
    and would refuse it as replayed)."""
    root = f"{subject_root}reverify"
    server, client, acks = await _setup(nats_url, root)
    failures = [1]

    async def handler(note: Notification) -> None:
        if failures:
            failures.pop()
            raise RuntimeError("the handler fails once")

    client.on_notification(handler)
    verifier = Verifier()
    try:
        client.verify("g1", verifier)
        feed = client._feed("g1")
        feed.queue.put_nowait(_note(1))
        await wait_until(lambda: not failures and feed.queue.empty(), timeout=10)
        assert acks == []
        feed.queue.put_nowait(_note(1))  # as a resend or a sync brings it again
        await wait_until(lambda: len(acks) == 1, timeout=10)
        assert acks == [{"type": "ack", "version": 11, "signature": "0b" * 64}]
        assert verifier.checked == [11]
    finally:
        await client.close()
        await server.close()
