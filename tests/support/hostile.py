"""Helpers of the hostile-input tests: a prober that sends anything on any subject with any
reply address, the world it attacks (players, tables at each stage), a fingerprint of
everything a request could change, bot tables that play meanwhile, and the checks that each
answer is a clean refusal.

A case names its kind of bad input; a run counts the kinds per entry point, so the summary
can say what was tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import nats
import orjson
import sqlalchemy as sa
from cardroom_bots import play_table
from cardroom_client import Client
from cardroom_runtime.edge import EdgeCounts
from cardroom_wire import ErrorCode, Notification, Subjects, dumps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.client import Client as NatsClient
from support.players import check_stream
from support.stack import Stack, projected, wait_until

DROP = "dropped"
"""The expected outcome of a request whose reply address is not its asker's: no answer
anywhere, and the edge counts it."""

OK = "ok"
"""The expected outcome of a request that is accepted (and changes nothing: a read)."""

KNOWN_CODES = frozenset(str(c) for c in ErrorCode) - {str(ErrorCode.INTERNAL)}
"""Codes a refusal may carry (the test game refuses with ErrorCode's codes too)."""

BOT_PREFIX = "bot"
"""Players of the bot tables that play while the hostile requests arrive."""

SERVICE_ROUTES = {"sync": 2}  # subscriptions that see a request (a sync: projector + presence)


UNREADABLE_HEADERS = [
    ("a status that is not UTF-8", b"NATS/1.0 \xff\xfe\xfd\r\n\r\n"),
    ("a status description that is not UTF-8", b"NATS/1.0 503 \xff\xfe\r\n\r\n"),
    ("a block with no status nor line end", b"NATS/1.0"),
]
"""Header blocks a publisher may write that nats-py's own reading raised on (unmended, each
ended the reading task of the connection that received it)."""


def hpub(subject: str, headers: bytes, payload: bytes, reply: str | None = None) -> bytes:
    """The NATS protocol's publication of ``payload`` with the header block ``headers``, as
    written on a bare connection (whatever the block holds)."""
    size = len(headers) + len(payload)
    to = f" {reply}" if reply else ""
    return f"HPUB {subject}{to} {len(headers)} {size}\r\n".encode() + headers + payload + b"\r\n"


def asker_inbox(root: str, subject: str) -> str:
    """The inbox prefix of the asker that ``subject`` names, worked out here on its own (not
    with ``Subjects.reply_prefix``, which is what is being tested)."""
    parts = subject.split(".")
    if parts[1] == "lobby" and parts[2] == "register":
        return f"_GUEST_{root}.{parts[3]}"
    return f"_INBOX_{root}.{parts[3]}"


@dataclass(frozen=True)
class Case:
    """One kind of bad input: ``expect`` is an error code, :data:`OK` or :data:`DROP`."""

    kind: str
    subject: str
    body: bytes
    expect: str
    reply: str | None = None  # None: below the asker's own inbox prefix


def body(payload: Any) -> bytes:
    return payload if isinstance(payload, bytes) else orjson.dumps(payload)


class Raw(bytes):
    """A field value spliced into a body as these bytes of JSON (or not JSON), for what
    orjson will not write: integers beyond 64 bits, invalid UTF-8, deep nesting."""


class Prober:
    """A bare NATS connection that can ask anything: any subject, body and reply address."""

    def __init__(self, nc: NatsClient, root: str) -> None:
        self.nc = nc
        self.root = root
        self._n = itertools.count()
        self.stray: list[Any] = []  # subscriptions on addresses no answer may reach

    @classmethod
    async def connect(cls, url: str, root: str) -> Prober:
        return cls(await nats.connect(url, name="hostile-prober"), root)

    def reply_to(self, subject: str) -> str:
        return f"{asker_inbox(self.root, subject)}.hz{next(self._n)}"

    async def ask(
        self, subject: str, data: bytes, reply: str | None = None, timeout: float = 15
    ) -> dict[str, Any]:
        """Send with a reply address below the asker's inbox prefix (or ``reply``); the
        answer, decoded."""
        reply = reply or self.reply_to(subject)
        sub = await self.nc.subscribe(reply, max_msgs=1)
        try:
            await self.nc.publish(subject, data, reply=reply)
            msg = await sub.next_msg(timeout=timeout)
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        answer: dict[str, Any] = orjson.loads(msg.data)
        return answer

    async def send_foreign(self, subject: str, data: bytes, reply: str) -> None:
        """Send with a reply address that is not the asker's, listening there for good."""
        self.stray.append(await self.nc.subscribe(reply))
        await self.nc.publish(subject, data, reply=reply)
        await self.nc.flush()

    async def strays(self) -> list[tuple[str, bytes]]:
        """The answers that arrived where none may go (after a round trip to the server)."""
        await self.nc.flush()
        got = []
        for sub in self.stray:
            while True:
                try:
                    msg = await sub.next_msg(timeout=0.001)
                except nats.errors.TimeoutError:
                    break
                with contextlib.suppress(orjson.JSONDecodeError):
                    # an answer (not, say, a release the services send there themselves)
                    data = orjson.loads(msg.data)
                    if isinstance(data, dict) and "ok" in data:
                        got.append((msg.subject, msg.data))
        return got

    async def close(self) -> None:
        await self.nc.close()


@dataclass
class World:
    """The tables the hostile requests aim at, each at a stage where a bad request has
    something to break; none of them changes by itself (no timeouts)."""

    stack: Stack
    prober: Prober
    s: Subjects
    lobby: str  # alice's table, 1 of 3 seats taken
    game: str  # alice and bob play; it is alice's turn, every ack is in
    finished: str  # dave and erin played it out
    prompt: Notification  # alice's turn
    guest: dict[str, Any]  # a registered guest's player id and token
    clients: dict[str, Client] = field(default_factory=dict)

    @property
    def games(self) -> list[str]:
        return [self.lobby, self.game, self.finished]

    @property
    def counts(self) -> EdgeCounts:
        assert self.stack.host is not None, "an in-process stack"
        return self.stack.host.edge.counts


# nothing happens to these tables by itself: no game deadline, no turn timeout, and the ack
# timeout (the longest there is) runs only while an ack is owed, which none is once settled
QUIET = {"table": {"ack_timeout": 3600}}


async def prepare(stack: Stack) -> World:
    """Set up the tables, wait until nothing about them moves, and lift the request rate
    limit: hundreds of requests a second come from one prober here, and the limit has tests
    of its own."""
    assert stack.host is not None
    stack.host.edge.rate = stack.host.edge.burst = 1e9
    alice, bob = [await stack.client(p) for p in ("alice", "bob")]
    prompts: list[Notification] = []

    async def on_alice(note: Notification) -> None:
        if note.actions:
            prompts.append(note)

    alice.on_notification(on_alice)
    lobby = await alice.create("highcard", QUIET, seats=3)
    game = await alice.create("highcard", QUIET, seats=2)
    await bob.join(game)
    await wait_until(lambda: bool(prompts))
    finished, outcome = await play_table(
        stack.nats_url,
        "highcard",
        ["dave", "erin"],
        subject_root=stack.root,
        config={"rounds": 1, **QUIET},
    )
    assert outcome
    prober = await Prober.connect(stack.nats_url, stack.root)
    s = Subjects(stack.root)
    guest = await prober.ask(s.lobby("register", "nonce1"), b"{}")
    assert guest["ok"], guest
    world = World(stack, prober, s, lobby, game, finished, prompts[-1], guest)
    world.clients = {"alice": alice, "bob": bob}
    await settled(world)
    return world


async def settled(world: World, timeout: float = 30) -> None:
    """Wait until the world's tables stop changing: every ack in, every released gate
    marked handled, every notification owed deleted, projected, deadlines written."""
    store = world.stack.store
    for game in world.games:
        await projected(store, game)

    async def quiet() -> bool:
        async with store.engine.connect() as conn:
            row = (
                await conn.execute(
                    sa.text(
                        """
SELECT
  (SELECT count(*) FROM pending_acks WHERE stream_id = ANY(:g)),
  (SELECT count(*) FROM gates WHERE stream_id = ANY(:g) AND NOT handled),
  (SELECT count(*) FROM notifications WHERE game_id = ANY(:g)),
  (SELECT count(*) FROM streams s LEFT JOIN deadline_versions d ON d.game_id = s.stream_id
   WHERE s.stream_id = ANY(:g) AND d.version IS DISTINCT FROM s.version)
"""
                    ),
                    {"g": world.games},
                )
            ).one()
        return tuple(row) == (0, 0, 0, 0)

    await wait_until(quiet, timeout=timeout)


# Everything a request could change, per table: rows of the world's games, and anything
# written outside them by someone who is not a bot of the bot tables.
_FINGERPRINT = sa.text(
    """
SELECT
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM (SELECT stream_id, version, event_id, type, data, metadata, recorded_at
           FROM events WHERE stream_id = ANY(:g)) t) AS events,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM streams t WHERE stream_id = ANY(:g)) AS streams,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM pending_acks t WHERE stream_id = ANY(:g)) AS pending_acks,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM gates t WHERE stream_id = ANY(:g)) AS gates,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM commands t WHERE stream_id = ANY(:g)) AS commands,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM notifications t WHERE game_id = ANY(:g)) AS notifications,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM views t WHERE game_id = ANY(:g)) AS views,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM deadlines t WHERE game_id = ANY(:g)) AS deadlines,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM (SELECT game_id, version, active FROM deadline_versions
           WHERE game_id = ANY(:g)) t) AS deadline_versions,
  (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
     FROM tables t WHERE game_id = ANY(:g)) AS listing,
  (SELECT count(*) FROM events WHERE stream_id <> ALL(:g) AND version = 1
     AND coalesce(data->>'creator', '') NOT LIKE :bots) AS stray_tables,
  (SELECT count(*) FROM events WHERE stream_id <> ALL(:g) AND metadata ? 'actor'
     AND metadata->>'actor' NOT LIKE :bots) AS stray_moves,
  (SELECT count(*) FROM commands WHERE stream_id <> ALL(:g)
     AND NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = commands.stream_id
                     AND e.version = 1 AND e.data->>'creator' LIKE :bots)) AS stray_commands
"""
)


async def fingerprint(world: World) -> dict[str, Any]:
    async with world.stack.store.engine.connect() as conn:
        row = await conn.execute(_FINGERPRINT, {"g": world.games, "bots": f"{BOT_PREFIX}%"})
        return dict(row.one()._mapping)


def changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return [k for k in before if before[k] != after[k]]


class BotTables:
    """Bot tables of highcard that play, one after another in each lane, until stopped;
    every one must finish."""

    def __init__(self, stack: Stack, lanes: int = 2, rounds: int = 2) -> None:
        self.stack = stack
        self.rounds = rounds
        self.finished: list[str] = []
        self.per_lane = [0] * lanes
        self._stop = asyncio.Event()
        self._tasks = [asyncio.create_task(self._lane(i)) for i in range(lanes)]

    async def _lane(self, lane: int) -> None:
        for table in itertools.count():
            if self._stop.is_set():
                return
            players = [f"{BOT_PREFIX}{lane}t{table}p{i}" for i in range(3)]
            game, outcome = await play_table(
                self.stack.nats_url,
                "highcard",
                players,
                subject_root=self.stack.root,
                config={"rounds": self.rounds},
                timeout=60,
            )
            assert outcome, f"bot table {game} ended without an outcome"
            self.finished.append(game)
            self.per_lane[lane] += 1

    async def __aenter__(self) -> BotTables:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """A test that failed does not wait for its tables."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def stop(self) -> list[str]:
        """Let the tables being played finish; the games every lane finished."""
        self._stop.set()
        async with asyncio.timeout(90):
            await asyncio.gather(*self._tasks)
        assert all(self.per_lane), f"tables finished per lane: {self.per_lane}"
        return self.finished


def service_errors(records: Sequence[logging.LogRecord]) -> list[str]:
    """Log records of the services at ERROR or with a traceback (the test's own clients
    and bots are not services)."""
    return [
        f"{r.name} {r.levelname}: {r.getMessage()}"
        for r in records
        if (r.levelno >= logging.ERROR or r.exc_info or r.exc_text)
        and not r.name.startswith(("cardroom.client", "cardroom.bots"))
    ]


async def finish(
    world: World, finished: Sequence[str], records: Sequence[logging.LogRecord]
) -> None:
    """The end of a hostile run: the bot tables finished, played cleanly, and are the only
    tables besides the world's; the services logged no error."""
    assert finished, "no bot table finished while the hostile requests came"
    store = world.stack.store
    async with store.engine.connect() as conn:
        streams = set((await conn.scalars(sa.text("SELECT stream_id FROM streams"))).all())
    assert streams == {*world.games, *finished}, streams - {*world.games, *finished}
    for game in finished:
        check_stream(await store.read_stream(game))
    errors = service_errors(records)
    assert not errors, errors
    await world.prober.close()


@dataclass
class Tally:
    """What one entry point's run tried and got."""

    entry: str
    kinds: list[str] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)
    generated: int = 0  # hypothesis bodies

    def summary(self) -> str:
        codes = ", ".join(f"{c} {n}" for c, n in sorted(self.codes.items()))
        groups = Counter(kind.split(":")[0] for kind in self.kinds)
        kinds = ", ".join(f"{g} {n}" for g, n in groups.items())
        return (
            f"hostile {self.entry}: {len(self.kinds)} kinds of bad input ({kinds})"
            f" + {self.generated} generated bodies; outcomes: {codes}"
        )


async def run_cases(world: World, entry: str, cases: Sequence[Case]) -> Tally:
    """Send each case; check its outcome and that the store did not change."""
    names = [c.kind for c in cases]
    duplicates = [n for n, k in Counter(names).items() if k > 1]
    assert not duplicates, f"kinds named twice: {duplicates}"
    tally = Tally(entry)
    before = await fingerprint(world)
    for case in cases:
        where = f"{entry} [{case.kind}] {case.subject} {case.body[:80]!r}"
        if case.expect == DROP:
            assert case.reply is not None
            routes = SERVICE_ROUTES.get(case.subject.split(".")[1], 1)
            dropped = world.counts.bad_reply
            await world.prober.send_foreign(case.subject, case.body, case.reply)
            await wait_until(lambda d=dropped + routes: world.counts.bad_reply >= d, timeout=10)
            assert world.counts.bad_reply == dropped + routes, where
            tally.codes[DROP] += 1
        else:
            answer = await world.prober.ask(case.subject, case.body, case.reply)
            got = OK if answer.get("ok") is True else answer.get("error", {}).get("code")
            assert got == case.expect, f"{where}: {answer}"
            if got != OK:
                assert set(answer) == {"ok", "error"}, f"{where}: {answer}"
                assert answer["ok"] is False
                assert set(answer["error"]) == {"code", "message"}, f"{where}: {answer}"
                assert isinstance(answer["error"]["message"], str)
                assert answer["error"]["message"], where
            tally.codes[got] += 1
        after = await fingerprint(world)
        assert not changed(before, after), f"{where} changed {changed(before, after)}"
        tally.kinds.append(case.kind)
    strays = await world.prober.strays()
    assert not strays, f"answers where none may go: {strays}"
    return tally


def json_values() -> st.SearchStrategy[Any]:
    """Any JSON value orjson writes (integers within its 64 bits)."""
    leaves = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**63), max_value=2**64 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=40)
    )
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=20,
    )


def bodies(fields: Sequence[str], types: Sequence[str]) -> st.SearchStrategy[bytes]:
    """Request bodies: objects made of the request's own field names (and others) with any
    values, any JSON at all, and any bytes."""
    names = st.sampled_from([*fields, "type", "player", "id", "x"]) | st.text(max_size=8)
    objects = st.dictionaries(
        names, st.sampled_from(list(types)) | json_values(), min_size=0, max_size=5
    )
    return st.one_of(
        objects.map(lambda o: orjson.dumps(o)),
        json_values().map(lambda o: orjson.dumps(o)),
        st.binary(max_size=120),
    )


async def run_generated(
    world: World,
    tally: Tally,
    subject: str,
    strategy: st.SearchStrategy[bytes],
    *,
    examples: int = 60,
    allowed: Callable[[str], bool] = lambda code: code in KNOWN_CODES,
) -> None:
    """Hypothesis bodies on ``subject``: each answered with ``ok`` (a read, or a legal move)
    or a known refusal, never ``internal``, and the store unchanged (but by a legal move).
    Hypothesis runs in a thread of its own and sends each body through this test's event
    loop."""
    loop = asyncio.get_running_loop()
    before = await fingerprint(world)
    seen: Counter[str] = Counter()

    async def probe(data: bytes) -> None:
        nonlocal before
        answer = await world.prober.ask(subject, data)
        got = OK if answer.get("ok") is True else answer.get("error", {}).get("code")
        assert got == OK or allowed(str(got)), f"{tally.entry} {data[:120]!r}: {answer}"
        seen[str(got)] += 1
        if got == OK and tally.entry == "cmd":
            # a body that happens to be a legal move (``{"type": "fold", "id": "0"}``) is
            # taken, as from the player's own client: what it moves settles before the next
            await settled(world)
            before = await fingerprint(world)
            return
        after = await fingerprint(world)
        assert not changed(before, after), f"{data[:120]!r} changed {changed(before, after)}"

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=strategy)
    def check(data: bytes) -> None:
        asyncio.run_coroutine_threadsafe(probe(data), loop).result(timeout=60)

    await asyncio.to_thread(check)
    tally.generated += sum(seen.values())
    tally.codes.update({f"generated {k}": n for k, n in seen.items()})


# -- kinds every entry point gets ------------------------------------------------------------


def body_kinds(subject: str, base: dict[str, Any], *, empty: str = "bad_json") -> list[Case]:
    """Bodies that are not what any request may be. ``empty``: the outcome of an empty body
    (a sync may have one)."""
    raw = orjson.dumps(base)
    inner = raw[:-1] + (b"," if len(base) else b"")
    big = dumps({**base, "pad": "x" * 70_000})

    def c(kind: str, data: bytes, expect: str) -> Case:
        return Case(f"body: {kind}", subject, data, expect)

    return [
        c("not JSON", b"{not json", "bad_json"),
        c("truncated JSON", raw[:-1], "bad_json"),
        c("invalid UTF-8", inner + b'"x":"\xff\xfe"}', "bad_json"),
        c("overlong UTF-8", inner + b'"x":"\xc0\xaf"}', "bad_json"),
        c("UTF-8 byte order mark", b"\xef\xbb\xbf" + raw, "bad_json"),
        c("UTF-16", raw.decode().encode("utf-16"), "bad_json"),
        c("empty", b"", empty),
        c("whitespace only", b" \t\r\n ", empty),
        c("a NUL byte", b"\x00", "bad_json"),
        c("NaN", inner + b'"x":NaN}', "bad_json"),
        c("Infinity", inner + b'"x":Infinity}', "bad_json"),
        c("-Infinity", inner + b'"x":-Infinity}', "bad_json"),
        c("a number beyond a double (1e400)", inner + b'"x":1e400}', "bad_json"),
        c("an integer of 5,000 digits", inner + b'"x":' + b"7" * 5000 + b"}", "bad_json"),
        c("nesting 2,000 deep", b"[" * 2000 + b"]" * 2000, "bad_json"),
        c("objects nested 2,000 deep", b'{"a":' * 2000 + b"1" + b"}" * 2000, "bad_json"),
        c("a lone high surrogate escape", inner + b'"x":"\\ud800"}', "bad_json"),
        c("a lone low surrogate escape", inner + b'"x":"\\udc00"}', "bad_json"),
        c("surrogate bytes in UTF-8", inner + b'"x":"\xed\xa0\x80"}', "bad_json"),
        c("a raw control character in a string", inner + b'"x":"a\x01b"}', "bad_json"),
        c("a raw newline in a string", inner + b'"x":"a\nb"}', "bad_json"),
        c("trailing garbage", raw + b"x", "bad_json"),
        c("two JSON documents", raw + raw, "bad_json"),
        c("a comment", raw[:-1] + b"/* c */}", "bad_json"),
        c("single quotes", raw.replace(b'"', b"'") if base else b"{'a': 1}", "bad_json"),
        c("a trailing comma", inner + b'"x":1,}', "bad_json"),
        c("a number with a leading zero", inner + b'"x":01}', "bad_json"),
        c("a hexadecimal number", inner + b'"x":0x10}', "bad_json"),
        c("a number with a plus sign", inner + b'"x":+1}', "bad_json"),
        c("JSON null", b"null", "bad_request"),
        c("JSON true", b"true", "bad_request"),
        c("a JSON number", b"42", "bad_request"),
        c("a JSON string", b'"{}"', "bad_request"),
        c("an empty array", b"[]", "bad_request"),
        c("the request inside an array", b"[" + raw + b"]", "bad_request"),
        c("over 64 KiB (a padded field)", big, "too_large"),
        c("over 64 KiB of whitespace", b" " * 65_537, "too_large"),
        c("over 64 KiB of invalid bytes", b"\xff" * 70_000, "too_large"),
    ]


def reply_kinds(world: World, subject: str, data: bytes) -> list[Case]:
    """Reply addresses that are not the asker's: each dropped, answered nowhere."""
    root, s = world.stack.root, world.s
    asker = asker_inbox(root, subject)
    n = itertools.count()

    def c(kind: str, reply: str) -> Case:
        return Case(f"reply: {kind}", subject, data, DROP, reply)

    def fresh() -> str:
        return f"hz{subject.split('.')[1]}{subject.split('.')[2]}{next(n)}"[:60]

    other = "bob" if not asker.endswith(".bob") else "carol"
    return [
        c("another player's inbox", f"_INBOX_{root}.{other}.{fresh()}"),
        c("an inbox that only starts like the asker's", f"{asker}2.{fresh()}"),
        c("an inbox that the asker's only starts like", f"{asker[:-1]}.{fresh()}"),
        c("the asker's prefix itself, not below it", asker),
        c(
            "the asker's inbox in another deployment",
            asker.replace(f"_{root}.", f"_{root}x.", 1) + f".{fresh()}",
        ),
        c("the services' own inbox", f"_INBOX.{fresh()}"),
        c("a guest inbox of the same name", asker.replace("_INBOX_", "_GUEST_", 1) + ".x1")
        if asker.startswith("_INBOX_")
        else c("a player inbox of the same name", asker.replace("_GUEST_", "_INBOX_", 1) + ".x"),
        c("another player's notification subject", s.player(other, fresh())),
        c("the asker's own notification subject", f"{root}.player.{asker.split('.')[-1]}.x9"),
        c("another player's sync subject", s.sync(fresh(), other)),
        c("another player's command subject", s.cmd(fresh(), other)),
        c("the event stream", s.events("highcard", fresh())),
        c("the public subject", s.public(fresh())),
        c("the services' release subject", s.release),
        c("another player's lobby subject", s.lobby("create", other)),
    ]


def id_kinds(field_name: str, valid: Any, *, optional: bool = False) -> list[tuple[str, Any, str]]:
    """(kind, value, code) of a bad id in a body field: the wrong type, or not one token
    (``optional``: null is a valid value of the field, so it is not tried)."""
    kinds = [
        (f"{field_name}: an integer", 12, "bad_request"),
        (f"{field_name}: a float", 1.5, "bad_request"),
        (f"{field_name}: true", True, "bad_request"),
        (f"{field_name}: null", None, "bad_request"),
        (f"{field_name}: a list", [valid], "bad_request"),
        (f"{field_name}: an object", {"id": valid}, "bad_request"),
        (f"{field_name}: an integer beyond 64 bits", 2**64, "bad_request"),
        (f"{field_name}: empty", "", "bad_id"),
        (f"{field_name}: dots", f"{valid}.x", "bad_id"),
        (f"{field_name}: a space", "a b", "bad_id"),
        (f"{field_name}: the * wildcard", "*", "bad_id"),
        (f"{field_name}: the > wildcard", ">", "bad_id"),
        (f"{field_name}: non-ASCII", "gäme", "bad_id"),
        (f"{field_name}: 65 characters", "g" * 65, "bad_id"),
        (f"{field_name}: an escaped NUL", "g\u0000", "bad_json"),
        (f"{field_name}: a newline", "g\n", "bad_id"),
        (f"{field_name}: a lone surrogate", Raw(b'"g\xed\xa0\x80"'), "bad_json"),
        (f"{field_name}: 60,000 characters", "g" * 60_000, "bad_id"),
    ]
    return [k for k in kinds if not (optional and k[1] is None)]


def field_cases(
    subject: str, base: dict[str, Any], kinds: Sequence[tuple[str, Any, str]]
) -> list[Case]:
    """``base`` with one field set to each bad value (a value of bytes is spliced in raw)."""
    out = []
    for kind, value, code in kinds:
        name = kind.split(":", 1)[0]
        if isinstance(value, int) and not -(2**63) <= value < 2**64:  # beyond orjson's ints
            value = Raw(str(value).encode())
        if isinstance(value, Raw):
            raw = orjson.dumps({**base, name: "@@"}).replace(b'"@@"', value)
        else:
            raw = orjson.dumps({**base, name: value})
        out.append(Case(f"field {kind}", subject, raw, code))
    return out


def subject_kinds(
    world: World, make: Callable[[str, str], str], body_: bytes, *, game: str | None
) -> list[Case]:
    """Ids in the subject that are not single safe tokens (the asker's inbox is the one that
    subject names, so an answer is due). ``make(game, asker)`` builds the subject."""
    g = game or "x"
    cases = [
        Case("subject: asker non-ASCII", make(g, "älice"), body_, "bad_id"),
        Case("subject: asker of 65 characters", make(g, "a" * 65), body_, "bad_id"),
        Case("subject: asker with a '!'", make(g, "al!ce"), body_, "bad_id"),
        Case("subject: asker '*'", make(g, "*"), body_, "bad_id"),
        Case("subject: asker with a control character", make(g, "al\x01ce"), body_, "bad_id"),
    ]
    if game is not None:
        cases += [
            Case("subject: game '*'", make("*", "alice"), body_, "bad_id"),
            Case("subject: game '>'", make(">", "alice"), body_, "bad_id"),
            Case("subject: game non-ASCII", make("gäme", "alice"), body_, "bad_id"),
            Case("subject: game of 65 characters", make("g" * 65, "alice"), body_, "bad_id"),
            Case("subject: game with a '#'", make("g#1", "alice"), body_, "bad_id"),
        ]
    return cases
