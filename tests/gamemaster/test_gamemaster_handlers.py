"""The gamemaster's handlers on the in-memory event store: no PostgreSQL, no NATS.

The service is the real one, its handlers called with the wire models the runtime parses
(tests/gamemaster/test_gamemaster_broker.py goes through FastStream's test broker); only its
two ways out to NATS are replaced, through their public seams: the notifications it publishes
are collected in a list (``Sessions.notifier``), and deadline hints are dropped
(``DeadlineWrites.hint``). Acks are paid into the
store as the acktracker would, and a release is handed to ``on_release`` as the acktracker
publishes it. A second gamemaster on the same store is another instance's concurrent writer.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from cardroom_engine import AWAY, BACK, Rejection, Table, registry
from cardroom_eventstore import Append, EventStore, NewEvent
from cardroom_eventstore.memory import InMemoryEventStore
from cardroom_gamemaster import Gamemaster, deadline_writes
from cardroom_gamemaster.commands import command_key
from cardroom_gamemaster.service import BOTS_AT_ONCE
from cardroom_gamemaster.session import Loaded
from cardroom_runtime import logs
from cardroom_runtime.host import Asker, Runtime
from cardroom_wire import (
    Command,
    DeadlineHint,
    ErrorCode,
    LobbyRequest,
    Release,
    Subjects,
    Timeout,
    WireError,
)
from faststream.nats import NatsBroker
from support.highcard import BET_PLACED, FOLDED, GAME, TURN_PROMPTED, TURN_STARTED
from support.stack import wait_until
from support.timedhighcard import EveryonePrompted

if "highcard" not in registry:
    registry.register(GAME)

SUBJECTS = Subjects("unit")


class Collected:
    """A Publisher that keeps the notifications instead of sending them."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, Any]]] = []  # (game, player, notification)

    async def publish(self, game: str, notes: Sequence[tuple[str, int, bytes]]) -> None:
        self.sent += [(game, player, json.loads(payload)) for player, _, payload in notes]


async def no_hint(hint: DeadlineHint) -> None:
    pass


class Recorded(Gamemaster):
    """The gamemaster with its notifications collected instead of published."""

    def __init__(self, rt: Runtime) -> None:
        super().__init__(rt)
        collected = Collected()
        self.sent = collected.sent
        self.sessions.notifier = collected
        self.deadlines.hint = no_hint


def gamemaster(store: InMemoryEventStore) -> Recorded:
    rt = Runtime(SUBJECTS, cast(NatsBroker, None), cast(EventStore, store), "", "")
    return Recorded(rt)


async def lobby(gm: Gamemaster, verb: str, asker: str, **body: Any) -> dict[str, Any]:
    request = LobbyRequest.model_validate({"type": verb, **body})
    return await gm.on_lobby(request, Asker(SUBJECTS.lobby(verb, asker), None, asker, verb))


async def command(gm: Gamemaster, game: str, player: str, **body: Any) -> dict[str, Any]:
    return await gm.on_command(Command(**body), Asker(SUBJECTS.cmd(game, player), game, player))


async def acknowledge_all(
    gm: Gamemaster, store: InMemoryEventStore, game: str, by: Collection[str] | None = None
) -> None:
    """Every addressee (of ``by``, if given) acknowledges what it was sent; each released gate
    goes to ``on_release``, as the acktracker sends it; until nothing more is owed."""
    while owed := [
        (version, player)
        for version, players in sorted((await store.pending(game)).items())
        for player in sorted(players)
        if by is None or player in by
    ]:
        for version, player in owed:
            result = await store.ack(game, version, player)
            if result.released_gate is not None:
                release = Release(game=game, version=result.released_gate)
                await gm.on_release(release, Asker(SUBJECTS.release))


async def another_writer_marks_away(store: InMemoryEventStore, game: str, player: str) -> None:
    """Move the game on as another gamemaster would (this one's copy falls behind)."""
    version = await store.stream_version(game)
    await store.append(Append(game, "highcard", version, [NewEvent(AWAY, {"player": player})]))


@dataclass
class Started:
    """A two-seat high-card table, dealt and acknowledged, waiting for ``mover``."""

    store: InMemoryEventStore
    gm: Recorded
    game: str
    mover: str
    other: str
    version: int  # the game's version then


@pytest.fixture
async def started() -> Started:
    return await start()


async def start() -> Started:
    store = InMemoryEventStore()
    gm = gamemaster(store)
    game = (await lobby(gm, "create", "alice", game_type="highcard", config={}, seats=2))["game"]
    await lobby(gm, "join", "bob", game=game)
    await acknowledge_all(gm, store, game)
    loaded = await gm.sessions.load(game)
    movers = loaded.table.movers(loaded.state)
    assert len(movers) == 1
    other = next(p for p in ("alice", "bob") if p != movers[0])
    gm.sent.clear()
    return Started(store, gm, game, movers[0], other, await store.stream_version(game))


async def test_an_accepted_command_is_appended_and_every_addressee_notified(
    started: Started,
) -> None:
    t = started
    reply = await command(t.gm, t.game, t.mover, type="bet", amount=2, id="c1")

    assert reply["ok"] is True
    records = await t.store.read_stream(t.game, t.version + 1)
    assert [r.type for r in records] == [BET_PLACED]
    assert records[0].metadata["command_id"] == "c1"
    assert {player for _, player, _ in t.gm.sent} == {t.mover, t.other}
    assert await t.store.command_reply(t.game, command_key(t.mover, "c1")) == reply


async def test_a_command_id_is_the_players_own_another_seat_may_name_the_same(
    started: Started,
) -> None:
    """Command ids are the clients' to choose, unique among one player's moves: a second
    seat's ``c1`` is its own command, applied and answered as its own, never the first seat's
    answer (a version counted as another player sees the game) with its own move dropped."""
    t = started
    first = await command(t.gm, t.game, t.mover, type="bet", amount=1, id="c1")
    await acknowledge_all(t.gm, t.store, t.game)
    loaded = await t.gm.sessions.load(t.game)
    assert loaded.table.movers(loaded.state) == [t.other]

    second = await command(t.gm, t.game, t.other, type="bet", amount=2, id="c1")

    records = await t.store.read_stream(t.game, t.version + 1)
    bets = [(r.metadata["actor"], r.data["amount"]) for r in records if r.type == BET_PLACED]
    assert bets == [(t.mover, 1), (t.other, 2)]
    seen = (await t.gm.sessions.load(t.game)).state.seen(t.other)
    assert second == {"ok": True, "version": seen}
    # each seat's retry of its c1 is answered as its own first time, and changes nothing
    version = await t.store.stream_version(t.game)
    assert await command(t.gm, t.game, t.mover, type="bet", amount=1, id="c1") == first
    assert await command(t.gm, t.game, t.other, type="bet", amount=2, id="c1") == second
    assert await t.store.stream_version(t.game) == version


def _prompted(loaded: Loaded, player: str) -> bool:
    game = loaded.state.game
    return bool(game.turn == player and game.prompted)


async def test_an_event_told_to_some_seats_only_holds_nobody(started: Started) -> None:
    """The prompt goes to the player whose turn it is only (a private event: the others'
    versions do not move). Until that player acknowledges it, the others' commands are judged
    as if it had not happened (``not_your_turn``, not ``awaiting_acks``, which would tell them
    it did); the prompt is still owed, and its player may move without acknowledging it."""
    t = started
    loaded = await _prompted_after_a_bet(t)
    prompt = loaded.state.seen(t.other)
    assert await t.store.pending(t.game) == {prompt: frozenset({t.other})}
    assert await t.store.gate_open(t.game)

    with pytest.raises(Rejection) as refused:
        await command(t.gm, t.game, t.mover, type="bet", amount=1, id="c2")
    assert refused.value.code == ErrorCode.NOT_YOUR_TURN
    # the prompt's player moves; its ack of the prompt is still owed, and then taken
    await command(t.gm, t.game, t.other, type="bet", amount=2, id="c3")
    assert prompt in await t.store.pending_for_player(t.game, t.other)
    assert (await t.store.ack(t.game, prompt, t.other)).accepted


async def _prompted_after_a_bet(t: Started) -> Loaded:
    """The mover bets; every ack is paid but the next player's of its own prompt."""
    await command(t.gm, t.game, t.mover, type="bet", amount=1, id="c1")
    while owed := [
        (version, player)
        for version, players in sorted((await t.store.pending(t.game)).items())
        for player in sorted(players)
        if not _prompted(await t.gm.sessions.load(t.game), t.other)
    ]:
        for version, player in owed:
            result = await t.store.ack(t.game, version, player)
            if result.released_gate is not None:
                release = Release(game=t.game, version=result.released_gate)
                await t.gm.on_release(release, Asker(SUBJECTS.release))
    loaded = await t.gm.sessions.load(t.game)
    assert _prompted(loaded, t.other)
    assert loaded.table.movers(loaded.state) == [t.other]
    return loaded


async def test_a_silent_player_the_game_waits_for_is_timed_by_its_own_prompt(
    started: Started,
) -> None:
    """The prompt is told to the player whose turn it is only, and the game waits for that
    player: its ack is timed from the prompt itself, so a mover that goes silent is marked
    away and the house plays for it (the table has no turn timeout). No gate after it would
    time it: none comes while the game waits. (An ack of an event told to a seat the game
    does not wait for, a pass in papas, is timed only with the next gate that holds, so that
    a silent seat's away mark does not date it: the event store's contract test.)"""
    t = started
    loaded = await _prompted_after_a_bet(t)
    assert loaded.state.options.turn_timeout is None
    await t.gm.deadlines.now(loaded, force=True)
    far = datetime.now(UTC) + timedelta(days=1)
    (timed,) = await t.store.deadlines.claim(far, far, 100)
    assert timed.key.startswith("acks:")

    timeout = Timeout(game=t.game, version=timed.version, key=timed.key)
    version = await t.store.stream_version(t.game)
    reply = await t.gm.on_timeout(timeout, Asker(SUBJECTS.timeout))

    assert reply["result"] == "fired"
    after = await t.store.read_stream(t.game, version + 1)
    assert (after[0].type, after[0].data) == (AWAY, {"player": t.other})
    # once the present player has seen it, the game goes on: the house plays the away seat
    await acknowledge_all(t.gm, t.store, t.game, by={t.mover})
    after = await t.store.read_stream(t.game, version + 1)
    house = [r for r in after if r.metadata.get("house")]
    assert [r.metadata["actor"] for r in house] == [t.other]


async def test_beside_an_event_told_to_every_seat_one_told_to_some_holds_nobody(
    started: Started,
) -> None:
    """In one batch, the gate waits for the acks of the events told to every seat only: an
    event told to some seats beside them (a prompt, as when an away player comes back with
    a move that draws a hidden card) would keep it held until its addressee acknowledged,
    and the others would see that in their own commands' answers."""
    t = started
    for version, players in sorted((await t.store.pending(t.game)).items()):
        for player in players:  # what came before: acknowledged
            await t.store.ack(t.game, version, player)
    assert await t.store.gate_open(t.game)
    loaded = await t.gm.sessions.load(t.game)
    items = [
        ({"type": BET_PLACED, "player": t.mover, "amount": 1}, {"actor": t.mover}),
        ({"type": TURN_STARTED, "player": t.other}, {}),  # (public: every version moves)
        ({"type": TURN_PROMPTED, "player": t.other}, {}),  # told to its player only
    ]
    await t.gm.sessions.commit(loaded, items)
    assert not await t.store.gate_open(t.game)
    # every seat acknowledges what is public (the other seat its bet, by the version it saw)
    for version in await t.store.pending_for_player(t.game, t.mover):
        assert (await t.store.ack(t.game, version, t.mover)).accepted
    other_bet, prompt = await t.store.pending_for_player(t.game, t.other)
    assert (await t.store.ack(t.game, other_bet, t.other)).released_gate is not None
    # the gate is open; the prompt's ack is still owed
    assert await t.store.gate_open(t.game)
    assert await t.store.pending_for_player(t.game, t.other) == [prompt]


@pytest.mark.parametrize(
    ("player", "code"), [("other", ErrorCode.NOT_YOUR_TURN), ("mallory", ErrorCode.NOT_SEATED)]
)
async def test_a_refused_command_answers_its_code_and_appends_nothing(
    started: Started, player: str, code: ErrorCode
) -> None:
    t = started
    sender = t.other if player == "other" else player

    with pytest.raises(Rejection) as refused:
        await command(t.gm, t.game, sender, type="bet", amount=1, id="c1")

    assert refused.value.code == code
    assert await t.store.stream_version(t.game) == t.version
    assert t.gm.sent == []
    assert await t.store.command_reply(t.game, command_key(sender, "c1")) is None


async def test_a_command_after_a_concurrent_writer_is_decided_again_on_the_fresh_game(
    started: Started,
) -> None:
    t = started
    await another_writer_marks_away(t.store, t.game, t.other)  # behind the cached copy
    stale = t.gm.sessions.cached(t.game)
    assert stale is not None
    assert stale.state.version == t.version

    reply = await command(t.gm, t.game, t.mover, type="bet", amount=3, id="c1")

    assert reply["ok"] is True
    records = await t.store.read_stream(t.game, t.version + 1)
    assert [r.type for r in records] == [AWAY, BET_PLACED]
    # the first append (on the stale copy) was refused; the second was decided on the game
    # read afresh
    fresh = t.gm.sessions.cached(t.game)
    assert fresh is not None
    assert fresh is not stale
    assert fresh.state.away == (t.other,)


@pytest.mark.parametrize("first_by", ["this", "another"])
async def test_a_repeated_command_id_is_answered_as_the_first_time(
    started: Started, first_by: str
) -> None:
    """Sent again to the gamemaster that accepted it, the command is refused on the game as
    it is now (no longer the mover's turn); sent to one whose copy is behind, it is accepted
    on that copy and its append refused. Either way the first answer comes back from the
    store, and nothing is appended."""
    t = started
    first_gm = t.gm if first_by == "this" else gamemaster(t.store)
    first = await command(first_gm, t.game, t.mover, type="bet", amount=2, id="c1")
    after = await t.store.stream_version(t.game)

    again = await command(t.gm, t.game, t.mover, type="bet", amount=2, id="c1")

    assert again == first
    assert await t.store.stream_version(t.game) == after


async def test_a_game_that_keeps_moving_under_every_attempt_answers_conflict(
    started: Started, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = started
    real_load = t.gm.sessions.load

    async def load_then_move(game: str, **kwargs: Any) -> Any:
        """Every load is followed by another writer's append."""
        loaded = await real_load(game, **kwargs)
        await another_writer_marks_away(t.store, game, t.other)
        return loaded

    monkeypatch.setattr(t.gm.sessions, "load", load_then_move)
    with pytest.raises(WireError) as busy:
        await command(t.gm, t.game, t.mover, type="bet", amount=1, id="c1")
    assert busy.value.code == ErrorCode.CONFLICT
    assert await t.store.command_reply(t.game, command_key(t.mover, "c1")) is None


async def test_a_command_from_an_away_player_takes_the_seat_back_in_the_same_batch(
    started: Started,
) -> None:
    t = started
    await another_writer_marks_away(t.store, t.game, t.mover)
    await t.gm.sessions.load(t.game, fresh=True)

    await command(t.gm, t.game, t.mover, type="bet", amount=1, id="c1")

    records = await t.store.read_stream(t.game, t.version + 2)
    assert [r.type for r in records] == [BACK, BET_PLACED]
    assert [r.metadata.get("command_id") for r in records] == [None, "c1"]
    loaded = await t.gm.sessions.load(t.game)
    assert loaded.state.away == ()


async def test_an_ack_timeout_marks_the_late_player_away_and_the_house_plays_for_them(
    started: Started,
) -> None:
    t = started
    await command(t.gm, t.game, t.mover, type="bet", amount=1, id="c1")
    gate = await t.store.stream_version(t.game)
    assert (await t.store.ack(t.game, gate, t.mover)).accepted  # the other never acknowledges
    timeout = Timeout(game=t.game, version=gate, key=f"acks:{gate}")
    seen: list[logging.LogRecord] = []
    keep = _Keep(seen)
    gm_log = logging.getLogger("cardroom.gamemaster")
    level = gm_log.level
    gm_log.setLevel(logging.INFO)
    gm_log.addHandler(keep)
    try:
        reply = await t.gm.on_timeout(timeout, Asker(SUBJECTS.timeout))
    finally:
        gm_log.removeHandler(keep)
        gm_log.setLevel(level)

    assert reply["result"] == "fired"
    # its log line names the game and the player, as a request's would
    (line,) = [r for r in seen if "away" in r.getMessage()]
    context = line.context  # type: ignore[attr-defined]
    assert (context["game"], context["player"]) == (t.game, t.other)
    records = await t.store.read_stream(t.game, gate + 1)
    assert [(r.type, r.data, r.metadata.get("reason")) for r in records] == [
        (AWAY, {"player": t.other}, "ack_timeout")
    ]
    # once the present player has seen it, the game goes on: the house plays the away seat
    await acknowledge_all(t.gm, t.store, t.game, by={t.mover})
    records = await t.store.read_stream(t.game, gate + 2)
    house = [r for r in records if r.metadata.get("house")]
    assert [r.metadata["actor"] for r in house] == [t.other]
    assert house[0].type in (BET_PLACED, FOLDED)


class _Keep(logging.Handler):
    """Keeps the records, with the bound context (as the services' log handlers put it)."""

    def __init__(self, seen: list[logging.LogRecord]) -> None:
        super().__init__(logging.INFO)
        self.seen = seen
        self.addFilter(logs.ContextFilter())

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record)


async def test_a_game_loaded_from_the_store_is_settled_before_it_is_kept(
    started: Started, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replayed state is kept in the cache: what it computes lazily is computed first
    (``Table.settle``; Macaua's last hash-chain digest), so the cache does not keep the
    events behind it."""
    settled: list[int] = []
    monkeypatch.setattr(Table, "settle", lambda self, state: settled.append(state.version))
    loaded = await started.gm.sessions.load(started.game, fresh=True)
    assert settled == [loaded.state.version] == [started.version]
    await started.gm.sessions.load(started.game)  # from the cache: nothing to settle again
    assert settled == [started.version]


async def test_a_stop_writes_the_deadlines_still_waiting_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A command's deadlines are written debounced, after a delay; a stop writes them at once
    rather than dropping them or waiting the delay out (made longer here than the stop's
    own bound on its waits, 5 s: the table's ack timeout of 30 s puts it at 7.5 s)."""
    monkeypatch.setattr(deadline_writes, "WRITE_DELAY", 3600.0)
    t = await start()
    written = t.store.deadlines._versions
    await command(t.gm, t.game, t.mover, type="bet", amount=2, id="c1")
    version = await t.store.stream_version(t.game)
    assert written.get(t.game, (0, True))[0] < version  # still waiting
    await t.gm.stop()
    assert written[t.game][0] == version


async def test_bots_requests_at_once_are_capped_and_the_lobby_serves_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each ``bots`` request holds a lobby worker until the service that runs bots answers.
    With that service slow, past ``BOTS_AT_ONCE`` of them at once one more is refused
    ``unavailable`` at once, asks nothing and seats nobody, while the lobby serves everyone's
    other requests; once the service answers, bots can be asked for again."""
    store = InMemoryEventStore()
    gm = gamemaster(store)
    answer = asyncio.Event()
    asked: list[Any] = []

    async def slow_bots_service(subject: str, message: Any, timeout: float) -> dict[str, Any]:
        asked.append(message)
        await answer.wait()
        return {"ok": True, "players": []}

    monkeypatch.setattr(gm.rt, "ask", slow_bots_service)
    players = [f"p{i}" for i in range(BOTS_AT_ONCE + 1)]
    games = [
        (await lobby(gm, "create", p, game_type="highcard", config={}, seats=2))["game"]
        for p in players
    ]
    held = [
        asyncio.ensure_future(lobby(gm, "bots", p, game=g, kind="random"))
        for p, g in zip(players[:-1], games[:-1], strict=True)
    ]
    await wait_until(lambda: len(asked) == BOTS_AT_ONCE)

    with pytest.raises(WireError) as refused:
        async with asyncio.timeout(10):  # a bound on a hang: the refusal comes at once
            await lobby(gm, "bots", players[-1], game=games[-1], kind="random")
    assert refused.value.code == ErrorCode.UNAVAILABLE
    assert len(asked) == BOTS_AT_ONCE
    assert (await lobby(gm, "get", players[-1], game=games[-1]))["table"]["seats"] == [players[-1]]
    assert (await lobby(gm, "join", "newcomer", game=games[-1]))["ok"] is True

    answer.set()
    assert [(await h)["ok"] for h in held] == [True] * BOTS_AT_ONCE
    game = (await lobby(gm, "create", "later", game_type="highcard", config={}, seats=2))["game"]
    assert (await lobby(gm, "bots", "later", game=game, kind="random"))["ok"] is True


async def test_a_turn_runs_from_the_opening_of_the_gate_after_it_began() -> None:
    """A seat slow to acknowledge the turn's start (within its ack timeout) holds the gate,
    and the player whose turn it is cannot move until it opens: its turn timeout counts from
    then, or the slow seat could have the house play the other's whole turn."""
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    store = InMemoryEventStore(now=lambda: now[0])
    gm = gamemaster(store)
    config = {"table": {"turn_timeout": 60, "ack_timeout": 3600}}
    game = (await lobby(gm, "create", "alice", game_type="highcard", config=config, seats=2))[
        "game"
    ]
    await lobby(gm, "join", "bob", game=game)
    began = now[0]
    now[0] = began + timedelta(seconds=100)  # a seat acknowledges a hundred seconds late
    await acknowledge_all(gm, store, game)
    loaded = await gm.sessions.load(game)
    (turn,) = [d for d in loaded.table.deadlines(loaded.state) if d.key.startswith("turn:")]
    version = loaded.state.version
    asker = Asker(SUBJECTS.timeout)
    # a minute after the turn began, but not after the gate opened: later, when that is
    at = (began + timedelta(seconds=61)).timestamp()
    answer = await gm.on_timeout(Timeout(game=game, version=version, key=turn.key, at=at), asker)
    assert answer["result"] == "later"
    assert answer["due"] == (began + timedelta(seconds=160)).timestamp()
    assert await store.stream_version(game) == version
    # a minute after the gate opened: the house plays
    at = (began + timedelta(seconds=161)).timestamp()
    answer = await gm.on_timeout(Timeout(game=game, version=version, key=turn.key, at=at), asker)
    assert answer["result"] == "fired"
    # it could fire no sooner than the turn so counted: its lateness runs from then
    assert answer["ready"] == (began + timedelta(seconds=160)).timestamp()
    assert any(r.metadata.get("house") for r in await store.read_stream(game))


async def test_a_timeout_deferred_by_a_closed_gate_names_when_the_gate_opened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A game deadline due while a seat has not acknowledged the prompt is deferred; applied
    once the gate opened, the answer names that opening (``ready``), from which the timers
    count its lateness; one whose gate opened before its due time names an earlier one."""
    game_type = EveryonePrompted()
    monkeypatch.setitem(registry._games, game_type.name, game_type)  # for this test only
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    store = InMemoryEventStore(now=lambda: now[0])
    gm = gamemaster(store)
    config = {"think": 10, "table": {"ack_timeout": 3600}}
    created = await lobby(gm, "create", "alice", game_type=game_type.name, config=config, seats=2)
    game = created["game"]
    await lobby(gm, "join", "bob", game=game)

    async def prompted() -> tuple[int, str]:
        """Acknowledge until a player is prompted; the prompt's gate is left closed."""
        while True:
            loaded = await gm.sessions.load(game)
            keys = [d.key for d in loaded.table.deadlines(loaded.state)]
            if think := [k for k in keys if k.startswith("game:")]:
                return loaded.state.version, think[0]
            owed = await store.pending(game)
            assert owed, "never prompted"
            for version, players in sorted(owed.items()):
                for player in sorted(players):
                    result = await store.ack(game, version, player)
                    if result.released_gate is not None:
                        release = Release(game=game, version=result.released_gate)
                        await gm.on_release(release, Asker(SUBJECTS.release))

    version, key = await prompted()
    assert await store.pending(game)  # the prompt is owed: its gate is closed
    began = now[0]
    asker = Asker(SUBJECTS.timeout)
    timeout = Timeout(game=game, version=version, key=key)
    now[0] = began + timedelta(seconds=15)  # due, but nobody has seen the prompt yet
    assert (await gm.on_timeout(timeout, asker))["result"] == "deferred"
    now[0] = began + timedelta(seconds=100)  # the gate opens
    await acknowledge_all(gm, store, game)
    assert await store.stream_version(game) == version  # the game waits for the move
    now[0] = began + timedelta(seconds=101)
    answer = await gm.on_timeout(timeout, asker)
    assert answer["result"] == "fired"
    assert answer["ready"] == (began + timedelta(seconds=100)).timestamp()

    # the next prompt, acknowledged at once: its gate held nothing back past the due time
    version, key = await prompted()
    began = now[0]
    await acknowledge_all(gm, store, game)
    assert await store.stream_version(game) == version
    now[0] = began + timedelta(seconds=60)  # fifty seconds after it was due
    answer = await gm.on_timeout(Timeout(game=game, version=version, key=key), asker)
    assert answer["result"] == "fired"
    assert answer["ready"] <= began.timestamp()
