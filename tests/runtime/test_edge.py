"""The service edge on its own: where a reply may go, each asker's token bucket, the
rate-limited log of failures (cardroom_runtime.edge), and how a route's workers are shared
between askers (cardroom_runtime.host)."""

from __future__ import annotations

import logging

import pytest
from cardroom_runtime import edge as edge_module
from cardroom_runtime import logs
from cardroom_runtime.edge import Edge, FailureLog
from cardroom_runtime.host import PER_ASKER, WAITING_PER_ASKER, _Workers
from cardroom_wire import Subjects

ROOT = "root"
S = Subjects(ROOT)
CMD = S.cmd("g1", "alice")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def edge(*, rate: float = 10.0, burst: float = 5.0, max_buckets: int = 1000) -> Edge:
    return Edge(S, rate=rate, burst=burst, clock=Clock(), max_buckets=max_buckets)


def tick(e: Edge, seconds: float) -> None:
    clock = e.clock
    assert isinstance(clock, Clock)
    clock.now += seconds


# -- where a reply may go ------------------------------------------------------------------

ALLOWED = [
    (CMD, "_INBOX_root.alice.abc123.1"),
    (CMD, "_INBOX_root.alice.x"),
    (S.ack("g1", "alice"), "_INBOX_root.alice.n.2"),
    (S.sync("g1", "alice"), "_INBOX_root.alice.n.3"),
    (S.lobby("create", "alice"), "_INBOX_root.alice.n.4"),
    (S.lobby("register", "nonce1"), "_GUEST_root.nonce1.n.5"),
    (S.release, "_INBOX.abc.1"),  # between services: the services' own inbox
    (CMD, None),  # no reply asked for: handled, nothing answered
    (CMD, ""),
]

DROPPED = [
    (CMD, "_INBOX_root.bob.x"),  # another player's inbox
    (CMD, "_INBOX_root.alice2.x"),  # only starts alike
    (CMD, "_INBOX_root.alice"),  # the prefix itself, not below it
    (CMD, "_INBOX_root.alicex"),
    (CMD, "_INBOX_root.ali"),
    (CMD, "_INBOX_other.alice.x"),  # another deployment's inbox of the same name
    (CMD, "_INBOX.x.y"),  # the services' inbox
    (CMD, "_GUEST_root.alice.x"),
    (CMD, S.sync("g1", "bob")),
    (CMD, S.cmd("g1", "bob")),
    (CMD, S.ack("g1", "alice")),
    (CMD, S.events("highcard", "g1")),
    (CMD, S.player("bob", "g1")),
    (CMD, S.player("alice", "g1")),  # even its own notification subject
    (CMD, S.public("g1")),
    (CMD, S.release),
    (CMD, "x_INBOX_root.alice.x"),
    (S.ack("g1", "alice"), "_INBOX_root.bob.1"),
    (S.sync("g1", "alice"), S.sync("g1", "bob")),
    (S.lobby("join", "alice"), "_INBOX_root.bob.1"),
    (S.lobby("register", "nonce1"), "_INBOX_root.nonce1.x"),  # a guest answers as a guest
    (S.lobby("register", "nonce1"), "_GUEST_root.nonce2.x"),
    (S.release, "_INBOX_root.alice.x"),  # starts with "_INBOX" but is a player's inbox
    (S.release, "_INBOXES.x"),
]


@pytest.mark.parametrize(("subject", "reply"), ALLOWED)
def test_a_reply_below_the_askers_inbox_is_admitted(subject: str, reply: str | None) -> None:
    e = edge()
    assert e.admit(0, subject, reply) is None
    assert (e.counts.bad_reply, e.counts.no_asker, e.counts.rate_limited) == (0, 0, 0)


@pytest.mark.parametrize(("subject", "reply"), DROPPED)
def test_a_reply_anywhere_else_is_dropped_and_counted(subject: str, reply: str) -> None:
    e = edge()
    assert e.admit(0, subject, reply) == "drop"
    assert e.counts.bad_reply == 1
    assert e.counts.no_asker == 0
    # a dropped request costs its asker no token: a bucket was never even made
    assert e._buckets == {}


def test_a_dropped_requests_log_line_names_its_service_and_route(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It is logged before any request context is bound, so it binds its own."""
    # a log of its own: the module's allows a few lines a second, the tests above used them
    monkeypatch.setattr(edge_module, "_DROPS", FailureLog(edge_module.log))
    e = edge()
    e.names[3] = ("gamemaster", "commands")
    keep = logs.ContextFilter()
    caplog.set_level(logging.WARNING, logger="cardroom.edge")
    caplog.handler.addFilter(keep)
    try:
        assert e.admit(3, CMD, "_INBOX_root.mallory.x") == "drop"
    finally:
        caplog.handler.removeFilter(keep)
    (line,) = [r for r in caplog.records if "not the asker" in r.getMessage()]
    assert line.context == {"service": "gamemaster", "route": "commands"}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "subject",
    [
        S.public("g1"),
        S.player("alice", "g1"),
        S.events("highcard", "g1"),
        "other.cmd.g1.alice",
        f"{ROOT}.cmd.g1",
        f"{ROOT}.cmd.g1.alice.extra",
        f"{ROOT}.lobby.create",
        f"{ROOT}.cmd.g1.",
        ROOT,
        "",
    ],
)
def test_a_subject_nobody_may_ask_on_is_dropped(subject: str) -> None:
    e = edge()
    assert e.admit(0, subject, "_INBOX_root.alice.x") == "drop"
    assert e.admit(0, subject, None) == "drop"
    assert e.counts.no_asker == 2
    assert e.counts.bad_reply == 0


# -- each asker's token bucket ----------------------------------------------------------------


def test_a_burst_passes_then_the_asker_is_limited() -> None:
    e = edge(rate=10, burst=5)
    assert e.counts.checked == 0
    assert [e.admit(0, CMD, None) for _ in range(5)] == [None] * 5
    assert e.admit(0, CMD, None) == "limit"
    assert e.admit(0, CMD, "_INBOX_root.alice.x") == "limit"
    assert e.counts.rate_limited == 2
    assert e.counts.checked == 7


# (rates and steps below are powers of two, so that the clock's sums are exact)


def test_the_bucket_refills_at_the_rate_and_never_beyond_the_burst() -> None:
    e = edge(rate=8, burst=5)
    for _ in range(5):
        assert e.admit(0, CMD, None) is None
    assert e.admit(0, CMD, None) == "limit"
    tick(e, 1 / 16)  # half a token
    assert e.admit(0, CMD, None) == "limit"
    tick(e, 1 / 16)  # a whole one
    assert e.admit(0, CMD, None) is None
    assert e.admit(0, CMD, None) == "limit"
    tick(e, 3600)  # an hour idle is worth one burst, not 28,800 requests
    assert [e.admit(0, CMD, None) for _ in range(6)] == [None] * 5 + ["limit"]


def test_a_refused_request_spends_nothing() -> None:
    """Refusals do not push the asker's next allowed request further away."""
    e = edge(rate=8, burst=1)
    assert e.admit(0, CMD, None) is None
    for _ in range(60):  # refusals while 60/512 s = 0.94 of a token is earned
        tick(e, 1 / 512)
        assert e.admit(0, CMD, None) == "limit"
    tick(e, 4 / 512)  # one token since the admitted request, refusals or not
    assert e.admit(0, CMD, None) is None


def test_a_steady_rate_passes_at_the_limit_and_is_cut_above_it() -> None:
    e = edge(rate=128, burst=1)
    admitted = 0
    for _ in range(1280):  # ten seconds at the rate
        tick(e, 1 / 128)
        admitted += e.admit(0, CMD, None) is None
    assert admitted == 1280
    admitted = 0
    for _ in range(1280):  # five seconds at twice the rate: half pass
        tick(e, 1 / 256)
        admitted += e.admit(0, CMD, None) is None
    assert admitted == 640


def test_buckets_are_per_asker() -> None:
    e = edge(rate=10, burst=3)
    for _ in range(3):
        assert e.admit(0, S.cmd("g1", "alice"), None) is None
    assert e.admit(0, S.cmd("g1", "alice"), None) == "limit"
    # another game of the same player shares the player's bucket
    assert e.admit(0, S.cmd("g2", "alice"), None) == "limit"
    # another player has a bucket of its own
    assert [e.admit(0, S.cmd("g1", "bob"), None) for _ in range(4)] == [None] * 3 + ["limit"]
    # a guest nonce is an asker of its own too
    register = S.lobby("register", "n1")
    assert e.admit(0, register, None) is None


def test_buckets_are_per_subscription() -> None:
    e = edge(rate=10, burst=2)
    for _ in range(2):
        assert e.admit(0, CMD, None) is None
    assert e.admit(0, CMD, None) == "limit"
    # the same asker on another subscription (acks, say) is not held back by its commands
    ack = S.ack("g1", "alice")
    assert [e.admit(1, ack, None) for _ in range(3)] == [None, None, "limit"]
    assert e.counts.rate_limited == 2


def test_requests_between_services_are_never_limited() -> None:
    e = edge(rate=1, burst=1)
    for _ in range(1000):
        assert e.admit(0, S.release, "_INBOX.x.1") is None
    assert e.counts.rate_limited == 0
    assert e._buckets == {}


def test_idle_buckets_are_forgotten_when_the_table_is_full() -> None:
    e = edge(rate=10, burst=2, max_buckets=3)
    for player in ("a", "b", "c"):
        assert e.admit(0, S.cmd("g", player), None) is None
    assert len(e._buckets) == 3
    assert e.admit(0, S.cmd("g", "a"), None) is None
    assert e.admit(0, S.cmd("g", "a"), None) == "limit"  # a is empty now
    tick(e, 0.1)  # b and c are full again (1 + 0.1 * 10 >= 2); a is not (0 + 1 < 2)
    assert e.admit(0, S.cmd("g", "d"), None) is None
    assert set(e._buckets) == {(0, "_INBOX_root.a"), (0, "_INBOX_root.d")}
    # forgetting a full bucket changes nothing: b comes back with a full burst
    assert [e.admit(0, S.cmd("g", "b"), None) for _ in range(3)] == [None, None, "limit"]
    # the one still draining keeps its state
    assert e.admit(0, S.cmd("g", "a"), None) is None
    assert e.admit(0, S.cmd("g", "a"), None) == "limit"


def test_a_table_of_busy_buckets_starts_afresh() -> None:
    e = edge(rate=10, burst=2, max_buckets=2)
    for player in ("a", "b"):
        for _ in range(2):
            assert e.admit(0, S.cmd("g", player), None) is None
    assert e.admit(0, S.cmd("g", "c"), None) is None
    assert len(e._buckets) <= 2  # bounded, whatever the number of askers


def test_the_rate_and_burst_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARDROOM_PLAYER_RATE", "7.5")
    monkeypatch.setenv("CARDROOM_PLAYER_BURST", "12")
    e = Edge(S)
    assert (e.rate, e.burst) == (7.5, 12.0)
    monkeypatch.setenv("CARDROOM_PLAYER_RATE", "0")
    with pytest.raises(ValueError, match="CARDROOM_PLAYER_RATE"):
        Edge(S)
    monkeypatch.setenv("CARDROOM_PLAYER_RATE", "-3")
    with pytest.raises(ValueError, match="CARDROOM_PLAYER_RATE"):
        Edge(S)


# -- the log of failures --------------------------------------------------------------------


def _raise(exc: Exception) -> Exception:
    try:
        raise exc
    except Exception as caught:
        return caught


def test_a_failure_is_one_line_with_a_reference_and_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("cardroom.test-edge")
    failures = FailureLog(logger, per_second=5, clock=Clock())
    caplog.set_level(logging.DEBUG, logger=logger.name)
    ref = failures.failure("on root.cmd.g1.alice", _raise(KeyError("the secret card is 42")))
    above_debug = [r for r in caplog.records if r.levelno > logging.DEBUG]
    assert len(above_debug) == 1
    line = above_debug[0]
    assert line.levelno == logging.ERROR
    assert line.exc_info is None
    assert line.exc_text is None
    text = line.getMessage()
    assert ref in text
    assert "KeyError" in text
    assert "test_edge.py:" in text
    assert "in _raise" in text
    assert "42" not in text.replace(ref, "")  # never the exception's message
    assert "\n" not in text
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(debug) == 1
    assert debug[0].exc_info is not None
    assert ref in debug[0].getMessage()
    # a reference tells one failure from another
    assert failures.failure("again", _raise(KeyError())) != ref


def test_failures_are_logged_at_most_n_a_second_and_the_rest_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("cardroom.test-edge")
    clock = Clock()
    failures = FailureLog(logger, per_second=3, clock=clock)
    caplog.set_level(logging.INFO, logger=logger.name)
    refs = [failures.failure("x", _raise(ValueError())) for _ in range(10)]
    assert len(set(refs)) == 10  # every caller gets a reference, logged or not
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3
    assert all(ref in line for ref, line in zip(refs, lines, strict=False))
    assert failures.suppressed == 7
    clock.now += 0.5  # the same second: still quiet
    failures.failure("x", _raise(ValueError()))
    assert len(caplog.records) == 3
    assert failures.suppressed == 8
    clock.now += 0.6  # a new second: the next line tells how many were left out
    failures.report("a warning %s", "w1")
    assert len(caplog.records) == 4
    last = caplog.records[-1]
    assert last.levelno == logging.WARNING
    assert last.getMessage() == "a warning w1 (8 more not logged)"
    assert failures.suppressed == 0
    failures.report("a warning %s", "w2")
    assert caplog.records[-1].getMessage() == "a warning w2"  # told once


def test_a_flood_of_failures_logs_a_bounded_number_of_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("cardroom.test-edge")
    clock = Clock()
    failures = FailureLog(logger, per_second=5, clock=clock)
    caplog.set_level(logging.INFO, logger=logger.name)
    for _ in range(10):  # ten seconds of 1,000 failures a second
        for _ in range(1000):
            clock.now += 0.001
            failures.failure("x", _raise(RuntimeError()))
    assert 45 <= len(caplog.records) <= 55
    told = sum(
        int(r.getMessage().rsplit("(", 1)[1].split()[0])
        for r in caplog.records
        if "more not logged" in r.getMessage()
    )
    assert told + len(caplog.records) + failures.suppressed == 10_000


# -- who works on what, per route (cardroom_runtime.host) -------------------------------------


def _drain(workers: _Workers, asker: str) -> list[tuple[str, str]]:
    """Finish requests one at a time, starting with one of ``asker``; what was taken next."""
    order = []
    nxt = workers.done(asker)
    while nxt is not None:
        order.append(nxt)
        nxt = workers.done(nxt[0])
    return order


def test_one_askers_requests_are_taken_one_at_a_time_and_others_pass_them() -> None:
    workers = _Workers(max_workers=8, services="_INBOX")
    assert workers.take("a")
    for i in range(5):
        assert not workers.take("a")  # one in hand already: the rest wait
        assert workers.wait("a", f"a{i}")
    assert workers.take("b")  # another asker is not behind a's queue
    assert workers.busy == 2
    assert _drain(workers, "a") == [("a", f"a{i}") for i in range(5)]
    assert workers.busy == 1  # b's is still in hand
    assert workers.done("b") is None
    assert workers.busy == 0


def test_when_every_worker_is_busy_the_askers_take_turns() -> None:
    workers = _Workers(max_workers=1, services="_INBOX")
    assert workers.take("a")
    for i in range(3):
        assert not workers.take("a")
        workers.wait("a", f"a{i}")
    for asker in ("b", "c"):
        assert not workers.take(asker)  # no worker free
        workers.wait(asker, f"{asker}0")
    assert _drain(workers, "a") == [("a", "a0"), ("b", "b0"), ("c", "c0"), ("a", "a1"), ("a", "a2")]
    assert (workers.busy, workers.size) == (0, 0)


def test_an_asker_may_have_only_so_many_waiting() -> None:
    workers = _Workers(max_workers=4, services="_INBOX")
    assert workers.take("a")
    accepted = [workers.wait("a", i) for i in range(WAITING_PER_ASKER + 3)]
    assert accepted == [True] * WAITING_PER_ASKER + [False] * 3
    assert workers.size == WAITING_PER_ASKER
    assert workers.take("b")  # others are served all the same


def test_the_services_own_requests_are_not_capped() -> None:
    workers = _Workers(max_workers=4, services="_INBOX")
    assert [workers.take("_INBOX") for _ in range(5)] == [True] * 4 + [False]
    assert all(workers.wait("_INBOX", i) for i in range(WAITING_PER_ASKER + 10))
    assert PER_ASKER == 1
