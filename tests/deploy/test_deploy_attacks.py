"""A hostile player against the deploy configuration and the real services.

A real nats-server runs deploy/nats/*.conf with the auth callout (``secure_nats``); the
gamemaster, relay, projector, acktracker and timers run in one Host connected as the service
user, with the service edge's limits as deployed (its defaults). Players are registered with
the lobby and connect with their tokens and inbox prefixes. Player A tries each attack; each
test shows that it is refused and that nothing changed: the events of the games involved, the
JetStream stream, what B and spectators received, B's presence. Every attempt is printed
(``-s``) and counted per family, and the module ends with the counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import nats.errors
import pytest
from attack_support import (
    GAME,
    AttackLog,
    CountingClient,
    Flood,
    RawNats,
    Room,
    Tables,
    ask,
    close,
    code_of,
    connect_raw,
    decode,
    finished_normally,
    is_marker,
    is_service_reply,
    register,
    wait_for,
    wait_until,
)
from cardroom_acktracker import AckTracker
from cardroom_client import CardroomError
from cardroom_gamemaster import Gamemaster
from cardroom_projector import Projector
from cardroom_relay import Relay
from cardroom_runtime import migrate
from cardroom_runtime.games import load_games
from cardroom_runtime.host import Host
from cardroom_runtime.postgres import create_database, drop_database
from cardroom_timers import Timers
from cardroom_wire import Notification, new_id
from deploy_support import SecureNats
from support.hostile import UNREADABLE_HEADERS, hpub

load_games("support.highcard:GAME")

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def attack_log() -> Iterator[AttackLog]:
    log = AttackLog()
    yield log
    print("\nattacks tried:", *log.summary(), sep="\n  ", flush=True)


@pytest.fixture(scope="module")
async def room(
    secure_nats: SecureNats, database_admin_url: str, subject_root: str
) -> AsyncIterator[Room]:
    name = f"{subject_root}_attacks"
    url = await create_database(database_admin_url, name)
    try:
        await migrate.upgrade_async(url)
        with pytest.MonkeyPatch.context() as env:
            env.setenv("CARDROOM_PLAYER_TOKEN_SECRET", secure_nats.secret("player_token_secret"))
            env.delenv("CARDROOM_PLAYER_RATE", raising=False)  # the edge's limits as deployed
            env.delenv("CARDROOM_PLAYER_BURST", raising=False)
            host = Host(
                [Gamemaster, Relay, Projector, AckTracker, Timers],
                nats_url=secure_nats.local(secure_nats.secret("nats_url")),
                database_url=url,
                subject_root=secure_nats.root,
            )
            await host.start()
            try:
                yield Room(secure_nats, host, await secure_nats.service())
            finally:
                await host.stop()
    finally:
        await drop_database(database_admin_url, name)


def _failures(family: str, log: AttackLog, problems: list[str]) -> str:
    """Every attempt of ``family`` that got through, and what else went wrong."""
    return "\n".join([*(f"{family} got through: {t}" for t in log.through(family)), *problems])


# -- 1. the lobby acting for someone else --------------------------------------------------------
async def test_the_lobby_acts_only_for_the_player_the_subject_names(
    room: Room, attack_log: AttackLog
) -> None:
    family = "lobby for another"
    s = room.subjects
    a, b, c, watcher = [await register(room.secure) for _ in range(4)]
    alice = await connect_raw(room.secure, a)
    bob = await connect_raw(room.secure, b, s.player_all(b.player), f"{s.inbox(b.player)}.>")
    carol = await connect_raw(room.secure, c)
    spectator = await connect_raw(room.secure, watcher, s.public_all)
    try:
        # A's table waits for players; B's has two of its three seats taken, so B may start it
        mine = (await ask(alice, s.lobby("create", a.player), {"game_type": GAME, "seats": 3}))[
            "game"
        ]
        bobs = (await ask(bob, s.lobby("create", b.player), {"game_type": GAME, "seats": 3}))[
            "game"
        ]
        assert code_of(await ask(carol, s.lobby("join", c.player), {"game": bobs})) == "ok"
        new_games = [new_id("g"), new_id("g")]
        before = {g: await room.events(g) for g in (mine, bobs, *new_games)}
        total = await room.event_count()
        seen_bob, seen_spectator = len(bob.received), len(spectator.received)

        # the subject names somebody else: NATS refuses the publish
        stranger = "p" + secrets.token_hex(8)
        forbidden = [
            (
                "create a table as B",
                s.lobby("create", b.player),
                {"game_type": GAME, "game": new_games[0]},
            ),
            ("join A's table as B", s.lobby("join", b.player), {"game": mine}),
            ("start B's table as B", s.lobby("start", b.player), {"game": bobs}),
            ("renew a token as B", s.lobby("renew", b.player), {"token": a.token}),
            ("join A's table as a made-up player", s.lobby("join", stranger), {"game": mine}),
        ]
        for what, subject, body in forbidden:
            await alice.nc.publish(subject, json.dumps(body).encode(), reply=alice.nc.new_inbox())
            await alice.nc.flush()
            try:
                await alice.violation("publish", subject)
            except AssertionError:
                attack_log.record(family, f"{what} ({subject})", "published", refused=False)
            else:
                outcome = "permissions violation on A's connection"
                attack_log.record(family, f"{what} ({subject})", outcome, refused=True)

        # A's own subject, a body that names B
        named = [
            (
                "create a table, the body naming B",
                s.lobby("create", a.player),
                {"player": b.player, "game_type": GAME, "game": new_games[1]},
                "bad_request",
            ),
            (
                "join A's table, the body naming B",
                s.lobby("join", a.player),
                {"player": b.player, "game": mine},
                "bad_request",
            ),
            (
                "start B's table, the body naming B",
                s.lobby("start", a.player),
                {"player": b.player, "game": bobs},
                "bad_request",
            ),
            ("renew B's token", s.lobby("renew", a.player), {"token": b.token}, "bad_token"),
        ]
        for what, subject, body, expected in named:
            reply = await ask(alice, subject, body)
            code = code_of(reply)
            outcome = f"answered {code}" + ("" if "token" not in reply else " with a token")
            attack_log.record(family, f"{what} ({subject})", outcome, refused=code == expected)

        # every request above was answered or refused by the server; A is still served, and the
        # markers from the services' connection come after whatever it published before them
        assert code_of(await ask(alice, s.lobby("get", a.player), {"game": mine})) == "ok"
        await room.markers_reach(
            (bob, s.player(b.player, "marker")),
            (bob, f"{s.inbox(b.player)}.marker"),
            (spectator, s.public("marker")),
        )
        problems = [
            f"the events of {g} changed" for g in before if await room.events(g) != before[g]
        ]
        if await room.event_count() != total:
            problems.append(f"events were stored: {total} -> {await room.event_count()}")
        problems += [
            f"B received {m.subject}: {m.data[:120]!r}"
            for m in bob.received[seen_bob:]
            if not is_marker(m.data)
        ]
        problems += [
            f"a spectator received an answer on {m.subject}: {m.data[:120]!r}"
            for m in spectator.received[seen_spectator:]
            if is_service_reply(m.data)
        ]
        assert len(attack_log.of(family)) == len(forbidden) + len(named)
        failures = _failures(family, attack_log, problems)
        assert not failures, failures
    finally:
        await close(alice, bob, carol, spectator)


# -- 2. reply addresses that are not the asker's ------------------------------------------------
async def test_answers_go_only_below_the_askers_inbox(room: Room, attack_log: AttackLog) -> None:
    family = "reply address"
    s = room.subjects
    a, b, watcher, owner = [await register(room.secure) for _ in range(4)]
    notes: list[Notification] = []

    async def on_note(note: Notification) -> None:
        notes.append(note)

    alice = await CountingClient.connect(
        room.secure.url, a.player, subject_root=s.root, token=a.token, allow_reconnect=False
    )
    assert isinstance(alice, CountingClient)
    alice.on_notification(on_note)
    bob = await connect_raw(room.secure, b, s.player_all(b.player), f"{s.inbox(b.player)}.>")
    spectator = await connect_raw(room.secure, watcher, s.public_all)
    lobby_owner = await connect_raw(room.secure, owner)
    spy = await room.secure.service()  # sees every subject a misdirected answer could take
    try:
        # a table that waits for players: A could join it
        open_table = (
            await ask(lobby_owner, s.lobby("create", owner.player), {"game_type": GAME, "seats": 3})
        )["game"]
        # A and B play; B never acknowledges, so B is away after a second; then A is
        # prompted (A acknowledges) and the game waits for A's bet
        game = await alice.create(GAME, {"table": {"ack_timeout": 1}}, seats=2)
        assert code_of(await ask(bob, s.lobby("join", b.player), {"game": game})) == "ok"

        async def b_is_away() -> bool:
            return any(
                e.type == "table.away" and e.data.get("player") == b.player
                for e in await room.events(game)
            )

        await wait_until(b_is_away, "B to be marked away")
        await wait_for(
            lambda: any(n.actions for n in notes) and alice.acks == sum(n.ack for n in notes),
            "A to be prompted and to acknowledge",
        )
        version = notes[-1].version

        for pattern in (f"{s.root}.>", "_INBOX.>", f"_INBOX_{s.root}.>", "$JS.API.STREAM.>"):
            await spy.nc.subscribe(pattern, cb=spy.on_message)
        await spy.nc.flush()

        stream = s.events_stream
        targets = [
            ("B's sync subject while B is away", s.sync(game, b.player)),
            ("the event stream", s.events(GAME, game)),
            ("B's private subject", s.player(b.player, game)),
            ("the game's public subject", s.public(game)),
            ("B's inbox", f"{s.inbox(b.player)}.x"),
            ("the services' releases", s.release),
            ("the services' back-from-away", s.back),
            ("the services' reconcile", s.reconcile),
            ("B's command subject", s.cmd(game, b.player)),
            ("the services' shared inbox", "_INBOX.x"),
            ("an inbox that only extends A's prefix", f"{s.inbox(a.player)}x.y"),
            ("JetStream: purge the event stream", f"$JS.API.STREAM.PURGE.{stream}"),
            ("JetStream: delete the event stream", f"$JS.API.STREAM.DELETE.{stream}"),
        ]

        def requests() -> list[tuple[str, str, dict[str, Any]]]:
            """Each kind of request A may send, on A's own subjects; handled, most of them
            would change something (a table, a move, a token)."""
            return [
                ("lobby get", s.lobby("get", a.player), {"game": game}),
                ("lobby list", s.lobby("list", a.player), {}),
                (
                    "lobby create",
                    s.lobby("create", a.player),
                    {"game_type": GAME, "game": new_id("g")},
                ),
                ("lobby join", s.lobby("join", a.player), {"game": open_table}),
                ("lobby renew", s.lobby("renew", a.player), {"token": a.token}),
                ("command", s.cmd(game, a.player), {"type": "bet", "amount": 1, "id": new_id("c")}),
                ("ack", s.ack(game, a.player), {"type": "ack", "version": version}),
                ("sync", s.sync(game, a.player), {"type": "sync"}),
            ]

        # a request of A's on the same subscription as the attack, answered as it should be:
        # the edge handles a subscription's messages in order, so it has judged the attack
        def marker(kind: str) -> tuple[str, dict[str, Any]]:
            if kind.startswith("lobby"):
                return s.lobby("get", a.player), {"game": game}
            if kind == "command":  # refused by the game: changes nothing
                return s.cmd(game, a.player), {"type": "bet", "amount": 9, "id": new_id("c")}
            if kind == "ack":
                return s.ack(game, a.player), {"type": "ack", "version": version}
            return s.sync(game, a.player), {"type": "sync"}

        watched = {g: await room.events(g) for g in (game, open_table)}
        before = watched[game]
        total = await room.event_count()
        stream_before = await room.settled_stream()
        for name, target in targets:
            for kind, subject, body in requests():
                # a sync is heard twice: answered by the projector, and by the gamemaster's
                # presence listener (a sync marks an away player back)
                expected = 2 if kind == "sync" else 1
                counted = room.host.edge.counts.bad_reply
                seen = len(bob.received), len(spectator.received), len(spy.received)
                await alice.nc.publish(subject, json.dumps(body).encode(), reply=target)
                marker_subject, marker_body = marker(kind)
                await alice.nc.request(marker_subject, json.dumps(marker_body).encode(), timeout=10)
                problems: list[str] = []

                def counted_it(before: int = counted, more: int = expected) -> bool:
                    return room.host.edge.counts.bad_reply >= before + more

                with contextlib.suppress(AssertionError):  # judged below, with the rest
                    await wait_for(counted_it, "the edge to count the attempt", timeout=5)
                dropped = room.host.edge.counts.bad_reply - counted
                if dropped != expected:
                    problems.append(f"the edge counted {dropped} bad replies, not {expected}")
                await room.markers_reach(
                    (bob, s.player(b.player, "marker")),
                    (bob, f"{s.inbox(b.player)}.marker"),
                    (spectator, s.public("marker")),
                    (spy, s.public("marker")),
                )
                problems += [
                    f"B received an answer on {m.subject}"
                    for m in bob.received[seen[0] :]
                    if is_service_reply(m.data)
                ]
                problems += [
                    f"a spectator received an answer on {m.subject}"
                    for m in spectator.received[seen[1] :]
                    if is_service_reply(m.data)
                ]
                if any(
                    m.subject == target and is_service_reply(m.data)
                    for m in spy.received[seen[2] :]
                ):
                    problems.append(f"an answer was published on {target}")
                problems += [
                    f"the events of {g} changed"
                    for g in watched
                    if await room.events(g) != watched[g]
                ]
                if kind == "lobby create" and await room.events(body["game"]):
                    problems.append(f"the table {body['game']} was created")
                if await room.event_count() != total:
                    problems.append("events were stored")
                try:  # the relay copies events into the stream; it never holds more
                    if await room.stream_messages() > await room.event_count():
                        problems.append("the event stream holds a message that is no event")
                except nats.errors.Error as exc:
                    problems.append(f"the event stream is gone: {exc!r}")
                # what this attempt changed is told once, not again with the next ones
                watched = {g: await room.events(g) for g in watched}
                total = await room.event_count()
                outcome = (
                    "dropped, nothing delivered or stored" if not problems else "; ".join(problems)
                )
                attack_log.record(
                    family, f"{kind} answered to {name} ({target})", outcome, refused=not problems
                )

        assert len(attack_log.of(family)) == len(targets) * len(requests())
        failures = _failures(family, attack_log, [])
        assert not failures, failures
        # B was never marked back, and the stream holds exactly the stored events still
        after = await room.events(game)
        assert "table.back" not in [e.type for e in after], "B was marked back"
        assert after == before
        assert await room.settled_stream() == stream_before
    finally:
        await alice.close()
        await close(bob, spectator, lobby_owner, spy)


# -- 3. acks with versions storage cannot hold, among other players' acks -------------------------
HOSTILE_VERSIONS: list[tuple[str, object]] = [
    ("2^31", 2**31),
    ("2^63", 2**63),
    ("-1", -1),
    ('"3"', "3"),
    ("2^31-1 (the largest storage holds)", 2**31 - 1),
    ("2^64", 2**64),
    ("true", True),
    ("1.5", 1.5),
]
CLEAN_REFUSALS = {"bad_request", "bad_json", "unknown_version", "not_addressee"}


async def test_a_hostile_ack_refuses_nobody_else(room: Room, attack_log: AttackLog) -> None:
    family = "ack version"
    s = room.subjects
    a = await register(room.secure)
    alice = await connect_raw(room.secure, a)
    tables = await Tables.seat(room.secure, 4)
    answers: dict[str, Counter[str]] = {name: Counter() for name, _ in HOSTILE_VERSIONS}
    try:
        games = await tables.create({"rounds": 4})
        playing = asyncio.create_task(tables.play())
        await wait_for(lambda: tables.acks() > 0, "the bots' first ack")

        async def hostile(name: str, version: object, game: str) -> None:
            reply = await ask(alice, s.ack(game, a.player), {"type": "ack", "version": version})
            answers[name][code_of(reply)] += 1

        rounds = 0
        # rounds of every hostile ack on every table, each round while the bots' acks go on
        # (one at a time: A stays below the edge's burst and its per-player queue, so the
        # answers are the acks' own)
        while not tables.done() and rounds < 10:
            acks = tables.acks()
            for name, v in HOSTILE_VERSIONS:
                for g in games:
                    await hostile(name, v, g)
            rounds += 1

            def moved_on(before: int = acks) -> bool:
                return tables.done() or tables.acks() > before

            await wait_for(moved_on, "the bots' next ack", 30)
        await playing
    finally:
        await tables.close()
        await close(alice)

    for name, _ in HOSTILE_VERSIONS:
        codes = answers[name]
        outcome = ", ".join(f"{code} x{n}" for code, n in sorted(codes.items()))
        attack_log.record(
            family,
            f"ack version {name}, x{sum(codes.values())} in {rounds} rounds as the tables played",
            f"answered {outcome}",
            refused=bool(codes) and set(codes) <= CLEAN_REFUSALS,
        )
    problems = [f"a bot's ack was refused: {line}" for line in tables.refused_acks()]
    problems += await finished_normally(room, tables)
    assert rounds >= 1
    assert len(attack_log.of(family)) == len(HOSTILE_VERSIONS)
    failures = _failures(family, attack_log, problems)
    assert not failures, failures


# -- 4. a token spelled differently ---------------------------------------------------------------
def respellings(token: str) -> list[tuple[str, str]]:
    """The same token, spelled so that a lenient parser reads the same player and expiry."""
    player, expires, signature = token.split(".")

    def digits(zero: int) -> str:
        return "".join(chr(zero + int(d)) for d in expires)

    superscripts = "⁰¹²³⁴⁵⁶⁷⁸⁹"
    return [
        ("a leading zero in the expiry", f"{player}.0{expires}.{signature}"),
        ("Arabic-Indic digits in the expiry", f"{player}.{digits(0x660)}.{signature}"),
        (
            "superscript digits in the expiry",
            f"{player}.{''.join(superscripts[int(d)] for d in expires)}.{signature}",
        ),
        ("fullwidth digits in the expiry", f"{player}.{digits(0xFF10)}.{signature}"),
        ("a padded signature", f"{player}.{expires}.{signature}="),
        ("Devanagari digits in the expiry", f"{player}.{digits(0x966)}.{signature}"),
        ("a plus sign before the expiry", f"{player}.+{expires}.{signature}"),
        ("an underscore in the expiry", f"{player}.{expires[:5]}_{expires[5:]}.{signature}"),
        ("the player id in capitals", f"{player.upper()}.{expires}.{signature}"),
    ]


async def test_a_token_spelled_otherwise_does_not_connect(
    room: Room, attack_log: AttackLog, caplog: pytest.LogCaptureFixture
) -> None:
    family = "token spelling"
    a = await register(room.secure)
    inbox = room.subjects.inbox(a.player)
    variants = respellings(a.token)
    counts = room.secure.responder.counts  # what auth's metrics serve
    before = (counts["refused_credentials"], counts["admitted_player"])
    for what, token in variants:
        assert token != a.token
        caplog.clear()
        started = time.monotonic()
        try:
            player = await room.secure.connect(token=token, inbox_prefix=inbox)
        except nats.errors.Error as exc:
            took = time.monotonic() - started
            refused = "authorization violation" in str(exc).lower()
            outcome = f"refused ({exc}) in {took:.2f}s"
        else:
            refused = False
            outcome = "connected"
            await player.nc.close()
        # the auth service must answer it (a refusal), not fail on it: a failure leaves the
        # connection waiting for the server's callout timeout, and logs a traceback
        auth_failures = [
            r.getMessage()
            for r in caplog.records
            if r.name.startswith("cardroom.natsauth") and r.levelno >= logging.ERROR
        ]
        if auth_failures:
            refused = False
            outcome += f"; the auth service failed on it: {auth_failures[0]}"
        # the auth service still answers: A's own token connects right after
        again = await room.secure.connect(token=a.token, inbox_prefix=inbox)
        assert again.nc.is_connected
        await again.nc.close()
        attack_log.record(
            family, what, outcome + "; A's real token connected after it", refused=refused
        )
    assert len(attack_log.of(family)) == len(variants)
    failures = _failures(family, attack_log, [])
    assert not failures, failures
    # each refusal counted as one of bad credentials, each reconnection as a player admitted
    refused = counts["refused_credentials"] - before[0]
    assert refused == sum(1 for r in attack_log.of(family) if r.refused)
    assert counts["admitted_player"] - before[1] >= len(variants)


# -- 5. subscriptions past the limit ------------------------------------------------------------
async def test_a_player_cannot_hold_more_subscriptions_than_the_limit(
    room: Room, attack_log: AttackLog
) -> None:
    family = "subscriptions"
    s = room.subjects
    limit = room.secure.responder.max_subscriptions
    a = await register(room.secure)
    raw, answer = await RawNats.open(room.secure.url, {"auth_token": a.token})
    try:
        assert answer == "PONG", answer
        raw.send("".join(f"SUB {s.public(f'sub{i}')} {i}\r\n" for i in range(limit)))
        errors, _ = await raw.round_trip()
        assert errors == [], f"the first {limit} subscriptions were refused: {errors[:3]}"
        past = [
            ("one more public subject", s.public(f"sub{limit}")),
            ("one more below its own inbox", f"{s.inbox(a.player)}.extra"),
        ]
        for number, (what, subject) in enumerate(past, start=limit):
            raw.send(f"SUB {subject} {number}\r\n")
            errors, _ = await raw.round_trip()
            refused = any("maximum subscriptions" in e.lower() for e in errors)
            outcome = f"the server answered {errors}" if errors else "the server accepted it"
            attack_log.record(
                family, f"subscription {number + 1} ({what}: {subject})", outcome, refused=refused
            )
        # what the services publish there does not arrive; the marker on a held one does
        service = room.services_nc
        for _, subject in past:
            await service.publish(subject, b"past the limit")
        await service.publish(s.public("sub0"), b"marker")
        await service.flush()
        _, messages = await raw.until(lambda _, msgs: any(m == b"marker" for _, m in msgs))
        delivered = [subject for subject, data in messages if data == b"past the limit"]
    finally:
        raw.close()
    assert len(attack_log.of(family)) == len(past)
    leaks = [f"delivered past the limit: {subject}" for subject in delivered]
    failures = _failures(family, attack_log, leaks)
    assert not failures, failures


# -- 6. messages nobody can read ------------------------------------------------------------------
async def test_unreadable_messages_deafen_no_service(room: Room, attack_log: AttackLog) -> None:
    """A message's header block is its publisher's to write, and so is a wildcard token of
    its subject; some that nats-py could not read (not UTF-8, cut short) ended the reading
    task of the connection that received them: the services' connection then heard nothing
    more, and every game stopped. A sends each such message on each kind of subject it may
    publish to, as B's tables play, and a plain request after each: the services answer the
    plain request, a message with an unreadable header block as its body alone, and B's
    tables end as they should."""
    family = "unreadable"
    s = room.subjects
    a = await register(room.secure)
    inbox = s.inbox(a.player)
    raw, answer = await RawNats.open(room.secure.url, {"auth_token": a.token, "headers": True})
    tables = await Tables.seat(room.secure, 2)
    problems: list[str] = []
    sent = 0

    async def answer_to(message: Callable[[str], bytes], *, answered: bool) -> str | None:
        """Send ``message(reply)``, then a plain request; wait for the plain request's answer,
        and for the message's own when it is to be ``answered``: the code answered to the
        message (None: none). Raises TimeoutError when the services answer nothing."""
        nonlocal sent
        reply, plain = f"{inbox}.m{sent}", f"{inbox}.p{sent}"
        sent += 1
        raw.send(message(reply))
        raw.send(f"PUB {s.lobby('list', a.player)} {plain} 2\r\n{{}}\r\n")
        awaited = {plain, reply} if answered else {plain}
        _, messages = await raw.until(lambda _, got: awaited <= {m[0] for m in got})
        return next((code_of(decode(m)) for r, m in messages if r == reply), None)

    try:
        assert answer == "PONG", answer
        raw.send(f"SUB {inbox}.> 1\r\n")
        games = await tables.create({"rounds": 4})
        playing = asyncio.create_task(tables.play())
        targets = [
            ("the lobby", s.lobby("list", a.player), {}),
            ("a command", s.cmd(games[0], a.player), {"type": "play", "id": new_id()}),
            ("an ack", s.ack(games[0], a.player), {"type": "ack", "version": 1}),
        ]
        for what, subject, body in targets:
            payload = json.dumps(body).encode()
            for kind, headers in UNREADABLE_HEADERS:
                try:
                    code = await answer_to(
                        functools.partial(hpub, subject, headers, payload), answered=True
                    )
                except TimeoutError:
                    outcome, refused = "no answer: the services heard nothing more", False
                else:
                    outcome = f"answered {code} (as its body alone); a plain request after it too"
                    refused = code is not None
                attack_log.record(family, f"{kind} on {what}'s subject", outcome, refused=refused)
            if games[0] not in subject:
                continue
            # the game's token is a wildcard of A's permissions: any bytes the server takes
            unreadable = subject.encode().replace(games[0].encode(), b"\xff\xfe")

            def pub(reply: str, to: bytes = unreadable, data: bytes = payload) -> bytes:
                return b"PUB %s %s %d\r\n%s\r\n" % (to, reply.encode(), len(data), data)

            try:
                code = await answer_to(pub, answered=False)
            except TimeoutError:
                outcome, refused = "no answer: the services heard nothing more", False
            else:
                answered = "dropped" if code is None else f"answered {code}"
                outcome, refused = f"{answered}; a plain request after it answered", True
            kind = f"a game's token that is not UTF-8 on {what}'s subject"
            attack_log.record(family, kind, outcome, refused=refused)
        await playing
        problems += await finished_normally(room, tables)
    finally:
        raw.close()
        await tables.close()
    assert len(attack_log.of(family)) == len(targets) * len(UNREADABLE_HEADERS) + 2
    failures = _failures(family, attack_log, problems)
    assert not failures, failures


# -- 7. a flood ---------------------------------------------------------------------------------
FLOOD_KINDS = ("ack", "cmd", "lobby list", "lobby get", "sync")
# Requests as fast as one connection sends them (about 25,000 a second here), until the flood
# guard has the server throw the connection out, B's tables are over, or the bounds.
FLOOD_COUNT = 1_000_000  # requests at most
FLOOD_SECONDS = 10.0  # at most
# B's tables last long enough (about 2 s here, a short game still) that the guard's reading
# interval and the backlog the flooder queued before it was thrown out are a fraction of them.
FLOOD_ROUNDS = 50


async def test_a_flood_is_rate_limited_and_the_others_play_on(
    room: Room, attack_log: AttackLog, caplog: pytest.LogCaptureFixture
) -> None:
    family = "flood"
    caplog.set_level(logging.WARNING)
    a = await register(room.secure)
    tables = await Tables.seat(room.secure, 3)
    config = {"rounds": FLOOD_ROUNDS}
    problems: list[str] = []
    try:
        # the same tables without the flood first: the time to compare with, on this machine
        started = time.monotonic()
        await tables.create(config)
        await tables.play()
        quiet = time.monotonic() - started
        problems += await finished_normally(room, tables)
        limited = room.host.edge.counts.rate_limited
        flood = await Flood.start(
            {
                "url": room.secure.url,
                "root": room.secure.root,
                "player": a.player,
                "token": a.token,
                "count": FLOOD_COUNT,
                "seconds": FLOOD_SECONDS,
            }
        )
        started = time.monotonic()
        try:
            await flood.target(await tables.create(config))
            # long enough past twice the quiet time to tell how late they are
            await tables.play(timeout=max(5 * quiet, 10.0))
        except (CardroomError, TimeoutError) as exc:
            problems.append(f"B's tables did not finish under the flood: {exc!r}")
        except BaseException:
            await flood.kill()
            raise
        flooded = time.monotonic() - started
        queued = room.queued()
        result = await flood.stop()
        if tables.done():
            problems += await finished_normally(room, tables)
    finally:
        await tables.close()
    server_log = (room.secure.folder / "nats-server.log").read_text(errors="replace")
    slow = [line for line in server_log.splitlines() if "slow consumer" in line.lower()]

    answers: dict[str, dict[str, int]] = result["answers"]
    for kind in FLOOD_KINDS:
        codes = answers.get(kind, {})
        outcome = ", ".join(f"{code} x{n}" for code, n in sorted(codes.items()))
        attack_log.record(
            family,
            f"{kind} requests as fast as they go, {result['sent'] // len(FLOOD_KINDS)} sent",
            f"answered {outcome or 'nothing'}",
            refused=codes.get("rate_limited", 0) > 0,
        )
    logged = [
        f"{r.name} {r.levelname}: {r.getMessage()[:200]}"
        for r in caplog.records
        if r.levelno >= logging.ERROR or r.exc_info
    ]
    refusals = sum((c.refusals for c in tables.clients), Counter[str]())
    bots_limited = refusals["rate_limited"]
    print(f"  flood: B's tables {flooded:.2f}s flooded, {quiet:.2f}s quiet")
    if flooded > 2 * quiet:
        problems.append(f"B's tables took {flooded:.2f}s under the flood, {quiet:.2f}s quiet")
    if not result["kicked"]:
        problems.append("the flooder was not thrown out")
    elif not result["refused_after"]:
        problems.append("the flooder connected again at once")
    if a.player not in [c.user for c in room.secure.guard.kicked]:
        problems.append(f"the guard kicked {room.secure.guard.kicked}, not the flooder")
    if room.secure.guard.kicks < len(room.secure.guard.kicked):  # what auth's metrics serve
        problems.append(f"the guard counted {room.secure.guard.kicks} kicks")
    if room.secure.responder.counts["refused_banned"] < int(bool(result["refused_after"])):
        problems.append("the flooder's refusal was not counted as a ban")
    if bots_limited:
        problems.append(f"B's bots were answered rate_limited {bots_limited} times")
    problems += [f"logged: {line}" for line in logged]
    problems += [f"nats-server: {line}" for line in slow[:5]]
    attack_log.record(
        family,
        f"B's 3 tables while A sent {result['sent']} requests in {result['seconds']}s "
        f"({'thrown out by the flood guard' if result['kicked'] else 'not thrown out'})",
        f"{flooded:.2f}s (quiet {quiet:.2f}s); {queued} requests queued at the services "
        f"then; the edge refused "
        f"{room.host.edge.counts.rate_limited - limited} as rate_limited; "
        f"{len(logged)} errors logged; B's bots were refused {dict(refusals) or 'nothing'}; "
        f"{len(slow)} slow consumer lines in the server's log",
        refused=not problems,
    )
    assert len(attack_log.of(family)) == len(FLOOD_KINDS) + 1
    failures = _failures(family, attack_log, problems)
    assert not failures, failures
