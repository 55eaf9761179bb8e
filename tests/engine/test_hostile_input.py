"""Every input from outside is hostile: whatever a player sends as a command and whatever a
creator gives as a config, the table answers with a ``Rejection`` carrying a stable code (or,
for a command, accepts a move the rules allow) and changes nothing; never another exception.

For every game of the ``cardroom.games`` entry points and the test games, from states reached
by playing legal moves: named kinds of bad input (listed below, each applied to every field
of a real command of the player who moves next) and hypothesis-generated JSON values. Macaua
moves are signed: a bad value inside a move is signed again with the player's own key, so it
reaches the parsing behind the signature check, as a cheating client's would.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, TypeVar

import orjson
import pytest
from cardroom_engine import Game, Rejection, Table, TableState
from cardroom_engine.simulate import LocalGame, new_game
from cardroom_engine.table import ACK_TIMEOUT_MAX, ACK_TIMEOUT_MIN, TableOptions
from cardroom_mentalpoker import sign_move
from cardroom_wire import ErrorCode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.highcard import GAME as HIGHCARD
from support.timedhighcard import GAME as TIMEDHIGHCARD

GAMES: dict[str, Game[Any]] = {ep.name: ep.load() for ep in entry_points(group="cardroom.games")}
GAMES |= {HIGHCARD.name: HIGHCARD, TIMEDHIGHCARD.name: TIMEDHIGHCARD}
NAMES = sorted(GAMES)
T = TypeVar("T")

CONFIGS: dict[str, list[dict[str, Any]]] = {
    # short shuffle proofs, and few turns, so that the audit at the end is reached
    "macaua": [{"shuffle_rounds": 2, "max_turns": 6}],
    "sixtysix": [{"protocol": "v2"}, {"protocol": "v1"}],  # each has commands of its own
}
# The games' own refusal codes (a new game adds its own here; every other code is the wire's).
GAME_CODES: dict[str, set[str]] = {
    "take5": {"already_played"},
    "sixtysix": {"stop_already_requested", "must_target_another_player"},
    "papas": {
        "card_not_in_hand",
        "not_playable",
        "invalid_threesome",
        "bad_target",
        "reaction_closed",
        "already_interrupted",
        "already_skipped",
        "not_an_interrupt",
        "cannot_cancel_threesome",
        "unknown_token",
        "unknown_card_name",
        "discard_and_draw_unavailable",
        "wrong_state",
    },
    "macaua": {
        "bad_signature",
        "replayed_move",
        "bad_sequence",
        "stale_state",
        "wrong_game",
        "bad_key",
        "bad_proof",
        "not_your_card",
        "card_mismatch",
    },
}
WIRE_CODES = {code.value for code in ErrorCode}
CODE = re.compile(r"[a-z][a-z0-9_]{1,47}")
LONGEST_MESSAGE = 300


def test_every_shipped_game_is_covered() -> None:
    assert {"sixtysix", "take5", "papas", "macaua", "highcard"} <= set(NAMES)


# -- reachable states ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Spot:
    """A state reached by legal play; ``reference`` is the same state folded again from the
    log (equal, sharing nothing with it), to see that a refusal changed nothing."""

    label: str
    table: Table
    state: TableState
    reference: TableState
    player: str
    command: dict[str, Any]  # what that player really sent next (for macaua: signed)
    signing: Any = None  # macaua: the player's signing key


def _signed(game: Game[Any]) -> bool:
    """A game whose commands only its players' programs can make (action templates filled
    in with their secrets and signed: Macaua): its bots choose, and sign the bad moves."""
    return game.action_templates


def _key(game: Game[Any], player: str) -> str | None:
    """A seat key for ``player`` where the game binds seats to keys (any 64 hex characters
    pass the lobby; a game that checks moves against it gets its bots' real keys)."""
    if not getattr(game, "seat_keys", False):
        return None
    return hashlib.sha256(player.encode()).hexdigest()


def _bot_chooser(game: Game[Any], seats: list[str]) -> tuple[Any, dict[str, Any]]:
    """``simulate.bots_chooser`` with the game's random bots, which it also returns: their
    signing keys sign the bad moves."""
    bots = {p: game.bots["random"](p) for p in seats}
    fed = dict.fromkeys(seats, 0)

    def choose(local: LocalGame, player: str, actions: list[Any], rng: random.Random) -> Any:
        seen = local.seen_by(player)
        for message in seen[fed[player] :]:
            bots[player].observe(message)
        fed[player] = len(seen)
        return bots[player].choose(local.table.view(local.state, player), actions, rng)

    return choose, bots


@functools.cache
def spots(name: str) -> tuple[Spot, ...]:
    """A few states of one game: the lobby, moments of play (the first command of every shape,
    for a signed game of every phase, and some more), and the end."""
    found: list[Spot] = []
    for config in CONFIGS.get(name, [{}]):
        found += _played(GAMES[name], config)
    return tuple(found)


def _played(game: Game[Any], config: dict[str, Any]) -> list[Spot]:
    rng = random.Random(20)
    seats = ["ann", "bob", "cat"][: 2 if _signed(game) else min(3, game.max_players)]
    table = Table(game)
    created = table.create("g1", "ann", config, seats=len(seats), key=_key(game, "ann"))
    found = [Spot("lobby", table, table.replay(created), table.replay(created), "ann", {})]
    bots: dict[str, Any] = {}
    if _signed(game):
        choose, bots = _bot_chooser(game, seats)
    else:
        choose = lambda local, player, actions, rng: rng.choice(actions)  # noqa: E731
    keys = {p: k for p, b in bots.items() if isinstance(k := getattr(b, "verify_key", None), str)}
    local = new_game(game, seats, rng, config, keys=keys or None)
    shapes: set[Any] = set()
    for count in range(3000):
        if local.state.status != "playing":
            break
        movers = [(p, a) for p in local.state.seats if (a := table.actions(local.state, p))]
        player, actions = rng.choice(movers)
        command = dict(choose(local, player, actions, rng))
        phase = getattr(local.state.game, "phase", "")
        shape = phase if _signed(game) else (command.get("type"), *sorted(command))
        if shape not in shapes or count in (3, 20, 90):
            shapes.add(shape)
            key = getattr(bots.get(player), "signing_key", None)
            label = f"{phase or command.get('type')} {count}"
            found.append(_spot(label, local, player, command, key))
        local.apply(table.decide(local.state, player, command, rng, gate_open=True))
        local.settle(rng)
    if local.state.status == "finished":
        found.append(_spot("over", local, seats[0], found[-1].command, None))
    return found


def _spot(label: str, local: LocalGame, player: str, command: Any, key: Any) -> Spot:
    reference = local.table.replay([json.loads(json.dumps(s.event)) for s in local.steps])
    assert reference == local.state
    assert reference is not local.state
    return Spot(label, local.table, local.state, reference, player, command, key)


# -- judging one input ----------------------------------------------------------------------------


def _storable(events: list[Any]) -> None:
    """What would be appended is JSON the store and every reader hold: no NaN or infinity, no
    integer beyond 64 bits (orjson, which the services read with, refuses those), no NUL
    character (jsonb cannot hold one)."""
    assert "\\u0000" not in json.dumps(events, allow_nan=False)
    orjson.dumps(events)


def attempt(call: Callable[[], T]) -> T | Rejection:
    """What ``call`` returns, or the Rejection it raises (any other exception fails)."""
    try:
        return call()
    except Rejection as exc:
        return exc


def _check_refusal(name: str, exc: Rejection) -> None:
    assert CODE.fullmatch(exc.code), exc.code
    assert exc.code in WIRE_CODES | GAME_CODES.get(name, set()), exc.code
    assert isinstance(exc.message, str), exc.message
    assert 0 < len(exc.message) <= LONGEST_MESSAGE, exc.message


def judge(spot: Spot, command: Any, *, refused: bool) -> Rejection | None:
    """Decide ``command`` at ``spot``: a Rejection with a known code and a short message, or
    (unless it must be ``refused``) storable events; the state unchanged either way."""
    name = spot.table.game.name
    before = spot.state
    rng = random.Random(0)
    outcome = attempt(lambda: spot.table.decide(before, spot.player, command, rng, gate_open=True))
    if isinstance(outcome, Rejection):
        _check_refusal(name, outcome)
    else:
        assert not refused, f"{name} at {spot.label} accepted {_short(command)}"
        _storable(outcome)
    assert spot.state is before
    assert spot.state == spot.reference, f"{name} at {spot.label}: the state changed"
    return outcome if isinstance(outcome, Rejection) else None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 300 else text[:300] + "..."


# -- the named kinds of bad input --------------------------------------------------------------


def _deep(levels: int, inner: Callable[[Any], Any]) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = inner(value)
    return value


DEEP_LIST = _deep(2000, lambda v: [v])  # deeper than Python's recursion limit
DEEP_OBJECT = _deep(2000, lambda v: {"a": v})
JUNK: list[Any] = [None, True, "a", 1.5, {}, [], -1]

# Whole-command kinds: (how, always refused?). The extra-field kinds may be accepted: a game
# may ignore fields it does not read (take5's protocol, sixtysix).
COMMAND_KINDS: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], bool]] = {
    "empty command": (lambda c: {}, True),
    "no type": (lambda c: {k: v for k, v in c.items() if k != "type"}, True),
    "type null": (lambda c: {**c, "type": None}, True),
    "type a number": (lambda c: {**c, "type": 1}, True),
    "type true": (lambda c: {**c, "type": True}, True),
    "type a list": (lambda c: {**c, "type": [c.get("type")]}, True),
    "type an object": (lambda c: {**c, "type": {"type": c.get("type")}}, True),
    "type empty": (lambda c: {**c, "type": ""}, True),
    "type 65 characters": (lambda c: {**c, "type": "x" * 65}, True),
    "type 100k characters": (lambda c: {**c, "type": "x" * 100_000}, True),
    "type unknown": (lambda c: {**c, "type": "Teleport"}, True),
    "type in other case": (lambda c: {**c, "type": str(c.get("type")).swapcase()}, True),
    "type padded": (lambda c: {**c, "type": f" {c.get('type')} "}, True),
    "type with NUL": (lambda c: {**c, "type": f"{c.get('type')}\x00"}, True),
    "type an emoji": (lambda c: {**c, "type": "\U0001f4a5"}, True),
    "type of another game": (lambda c: {**c, "type": "play_response"}, False),
    "only the type": (lambda c: {"type": c.get("type")}, False),
    "extra field": (lambda c: {**c, "extra": 1}, False),
    "1000 extra fields": (lambda c: {**c, **{f"x{i}": i for i in range(1000)}}, False),
    "extra field 10k name": (lambda c: {**c, "k" * 10_000: 1}, False),
    "extra field nested deep": (lambda c: {**c, "extra": DEEP_OBJECT}, False),
}

MISSING = object()


def _int_or(value: Any, change: Callable[[int], Any], other: Any) -> Any:
    return change(value) if type(value) is int else other


# Field kinds: the honest value -> a hostile one, and whether it is never legal anywhere.
VALUE_KINDS: dict[str, tuple[Callable[[Any], Any], bool]] = {
    "missing": (lambda v: MISSING, False),
    "null": (lambda v: None, False),
    "true": (lambda v: True, True),
    "false": (lambda v: False, True),
    "zero": (lambda v: 0, False),
    "minus one": (lambda v: -1, True),
    "2^31": (lambda v: 2**31, True),
    "2^63 - 1": (lambda v: 2**63 - 1, True),
    "2^63": (lambda v: 2**63, True),
    "-2^63 - 1": (lambda v: -(2**63) - 1, True),
    "10^30": (lambda v: 10**30, True),
    "one and a half": (lambda v: 1.5, True),
    "a whole float": (lambda v: _int_or(v, float, 1.0), True),
    "1e308": (lambda v: 1e308, True),
    "NaN": (lambda v: math.nan, True),
    "infinity": (lambda v: math.inf, True),
    "minus infinity": (lambda v: -math.inf, True),
    "minus zero": (lambda v: -0.0, True),
    "empty string": (lambda v: "", True),
    "as a string": (lambda v: v if isinstance(v, str) else json.dumps(v), False),
    "100k string": (lambda v: "7" * 100_000, True),
    "NUL string": (lambda v: "\x00", True),
    "lone surrogate": (lambda v: "\ud800", True),
    "empty list": (lambda v: [], False),
    "100k list": (lambda v: [0] * 100_000, True),
    "list of junk": (lambda v: list(JUNK), True),
    "list nested 2000 deep": (lambda v: DEEP_LIST, True),
    "object nested 2000 deep": (lambda v: DEEP_OBJECT, True),
    "empty object": (lambda v: {}, True),
    "object of junk": (lambda v: {str(i): j for i, j in enumerate(JUNK)}, True),
    "wrapped in a list": (lambda v: [v], True),
    "wrapped in an object": (lambda v: {"value": v}, True),
    "twice over": (lambda v: v * 2 if isinstance(v, list | str) else v, False),
    "off by one": (lambda v: _int_or(v, lambda i: i + 1, v), False),
    "negated": (lambda v: _int_or(v, lambda i: -i, v), False),
}


def test_there_are_at_least_forty_named_kinds() -> None:
    assert len(COMMAND_KINDS) + len(VALUE_KINDS) >= 40


Path = tuple[str | int, ...]


def paths(value: Any, depth: int = 4, prefix: Path = ()) -> Iterator[Path]:
    """Where a command holds values: every key of every object, the first item of a list."""
    if depth == 0:
        return
    children: list[tuple[str | int, Any]] = []
    if isinstance(value, dict):
        children = [(k, v) for k, v in value.items() if prefix or k != "type"]
    elif isinstance(value, list) and value:
        children = [(0, value[0])]
    for key, child in children:
        yield (*prefix, key)
        yield from paths(child, depth - 1, (*prefix, key))


def get(value: Any, path: Path) -> Any:
    for key in path:
        value = value[key]
    return value


def put(value: Any, path: Path, new: Any) -> Any:
    """A copy of ``value`` with the item at ``path`` replaced (``MISSING``: removed)."""
    if not path:
        return new
    key, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        changed = put(copy[key], rest, new)
        if changed is MISSING:
            del copy[key]
        else:
            copy[key] = changed
        return copy
    items = list(value)
    changed = put(items[key], rest, new)  # type: ignore[index]
    if changed is MISSING:
        del items[key]  # type: ignore[arg-type]
    else:
        items[key] = changed  # type: ignore[index]
    return items


def variant(spot: Spot, path: Path, new: Any) -> dict[str, Any]:
    """The spot's command with the value at ``path`` replaced. Inside a signed move the move
    is signed again with the player's key (when it can be: a float or a lone surrogate has no
    canonical form, and the old signature then stays)."""
    command = spot.command
    if spot.signing is None or path[0] != "move":
        changed: dict[str, Any] = put(command, path, new)
        return changed
    move = put(command["move"], path[1:], new)
    if move is MISSING:
        return {k: v for k, v in command.items() if k != "move"}
    try:
        signed = sign_move(
            spot.signing, command["game_id"], command["seq"], command["prev_hash"], move
        )
    except (TypeError, ValueError, RecursionError):
        return {**command, "move": move}
    return {"type": command["type"], **signed.to_json()}


def cases(name: str) -> Iterator[tuple[Spot, str, dict[str, Any], bool]]:
    """Every named kind at every spot and every field; a kind that changes nothing there (zero
    for a zero, "off by one" of a string) is left out: that is the real command."""
    for spot in spots(name):
        for kind, (make, refused) in COMMAND_KINDS.items():
            yield spot, kind, make(spot.command), refused
        for path in paths(spot.command):
            honest = get(spot.command, path)
            where = ".".join(str(p) for p in path)
            for kind, (change, refused) in VALUE_KINDS.items():
                command = variant(spot, path, change(honest))
                if command != spot.command:
                    yield spot, f"{where}: {kind}", command, refused


@pytest.mark.parametrize("name", NAMES)
def test_named_bad_commands_are_refused_and_change_nothing(name: str) -> None:
    """Each named kind at each spot: refused (always, for a kind no game may accept) with a
    known code and a short message, or a legal move; the state unchanged."""
    refusals: dict[str, int] = {}
    total = 0
    for spot, kind, command, refused in cases(name):
        try:
            outcome = judge(spot, command, refused=refused)
        except AssertionError as exc:
            raise AssertionError(f"{name} at {spot.label}, {kind}: {exc}") from None
        total += 1
        if isinstance(outcome, Rejection):
            refusals[outcome.code] = refusals.get(outcome.code, 0) + 1
    assert total > 2 * (len(COMMAND_KINDS) + len(VALUE_KINDS))
    # the game's own checks were reached, not only the table's and the type's
    assert len(refusals) >= 3, refusals


# -- hypothesis: any JSON value -----------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=40)
    | st.sampled_from(["", "A", "move", "keys", "draw", "ann", "bob", "0" * 64]),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_json_in_any_field_is_refused_or_legal(name: str, data: st.DataObject) -> None:
    """Any JSON value in one field of a real command, extra fields, or a command of random
    fields, from any seated player: a Rejection or a legal move, nothing changed."""
    spot = data.draw(st.sampled_from(spots(name)), label="spot")
    where = list(paths(spot.command))
    how = data.draw(st.sampled_from(["field", "fields", "command"]), label="how")
    if how == "field" and where:
        path = data.draw(st.sampled_from(where), label="path")
        command: Any = variant(spot, path, data.draw(json_values, label="value"))
    elif how == "fields":
        keys = st.sampled_from(sorted({str(p[0]) for p in where} | {"type", "data", "x"}))
        extra = data.draw(st.dictionaries(keys | st.text(max_size=6), json_values, max_size=4))
        command = {**spot.command, **extra}
    else:
        command = data.draw(st.dictionaries(st.text(max_size=8), json_values, max_size=5))
    players = sorted({spot.player, *spot.state.seats})
    player = data.draw(st.sampled_from(players), label="player")
    judge(
        Spot(spot.label, spot.table, spot.state, spot.reference, player, spot.command),
        command,
        refused=False,
    )


# -- configs and table options ------------------------------------------------------------------

# Values no option of any game accepts (nor ack_timeout, nor turn_timeout).
CONFIG_KINDS: dict[str, Any] = {
    "true": True,
    "false": False,
    "a numeric string": "1",
    "empty string": "",
    "100k string": "x" * 100_000,
    "10^30": 10**30,
    "2^63": 2**63,
    "-2^63 - 1": -(2**63) - 1,
    "minus one": -1,
    "minus one and a half": -1.5,
    "NaN": math.nan,
    "infinity": math.inf,
    "minus infinity": -math.inf,
    "1e308": 1e308,
    "empty list": [],
    "100k list": [1] * 100_000,
    "list of junk": list(JUNK),
    "list nested 2000 deep": DEEP_LIST,
    "empty object": {},
    "object nested 2000 deep": DEEP_OBJECT,
}
TABLE_KINDS: dict[str, dict[str, Any]] = {
    "ack_timeout null (never)": {"ack_timeout": None},
    "ack_timeout under a second": {"ack_timeout": 0.99},
    "ack_timeout zero": {"ack_timeout": 0},
    "ack_timeout over an hour": {"ack_timeout": ACK_TIMEOUT_MAX + 0.5},
    "ack_timeout a day": {"ack_timeout": 86_400},
    "turn_timeout too short": {"turn_timeout": 0.05},
    "turn_timeout over a day": {"turn_timeout": 86_401},
    "unknown option": {"grace": 5},
    "option with a 10k name": {"a" * 10_000: 1},
}
WHOLE_CONFIG_KINDS: dict[str, Any] = {
    "a list": [1],
    "a string": "rounds=3",
    "null": None,
    "a number": 3,
    "unknown option": {"cheat": True},
    "1000 unknown options": {f"o{i}": i for i in range(1000)},
    "option with a 10k name": {"o" * 10_000: 1},
    "table not an object": {"table": 5},
    "table a list": {"table": [{"ack_timeout": 5}]},
    "table a string": {"table": "ack_timeout=5"},
}
SEATS_KINDS: dict[str, Any] = {
    "zero": 0,
    "minus one": -1,
    "true": True,
    "a float": 2.0,
    "a string": "2",
    "10^30": 10**30,
    "a list": [2],
}


def _create_refused(name: str, config: Any, seats: Any = 2) -> None:
    table = Table(GAMES[name])
    with pytest.raises(Rejection) as refused:
        table.create("g1", "ann", config, seats=seats, key=_key(GAMES[name], "ann"))
    assert refused.value.code == ErrorCode.BAD_CONFIG
    assert 0 < len(refused.value.message) <= LONGEST_MESSAGE, refused.value.message[:400]


@pytest.mark.parametrize("name", NAMES)
def test_named_bad_configs_are_refused(name: str) -> None:
    fields = list(GAMES[name].config_model.model_fields)
    for field in fields:
        for value in CONFIG_KINDS.values():
            _create_refused(name, {field: value})
    for option in ("ack_timeout", "turn_timeout"):
        for value in CONFIG_KINDS.values():
            _create_refused(name, {"table": {option: value}})
    for options in TABLE_KINDS.values():
        _create_refused(name, {"table": options})
    for config in WHOLE_CONFIG_KINDS.values():
        _create_refused(name, config)
    for seats in SEATS_KINDS.values():
        _create_refused(name, {}, seats)


config_values = json_values | st.integers(-5, 300) | st.floats(0, 4000)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_config_is_refused_or_starts(name: str, data: st.DataObject) -> None:
    """A config is refused with ``bad_config``, or it is stored as storable JSON, a table
    fills and starts with it (or refuses to start, ``bad_config``, when the deck cannot deal
    for that many), and its ack timeout is a finite number of seconds."""
    game = GAMES[name]
    fields = sorted(game.config_model.model_fields)
    keys = st.sampled_from([*fields, "x"]) | st.text(max_size=6)
    config: dict[str, Any] = data.draw(st.dictionaries(keys, config_values, max_size=3))
    if data.draw(st.booleans(), label="table options"):
        options = st.sampled_from(["ack_timeout", "turn_timeout", "x"])
        config["table"] = data.draw(st.dictionaries(options, config_values, max_size=2))
    seats = data.draw(st.integers(game.min_players, game.max_players), label="seats")
    table = Table(game)
    created = attempt(lambda: table.create("g1", "ann", config, seats=seats, key=_key(game, "ann")))
    if isinstance(created, Rejection):
        assert created.code == ErrorCode.BAD_CONFIG
        assert 0 < len(created.message) <= LONGEST_MESSAGE
        return
    _storable(created)
    state = table.replay(json.loads(json.dumps(created)))
    assert isinstance(state.options.ack_timeout, float)
    assert ACK_TIMEOUT_MIN <= state.options.ack_timeout <= ACK_TIMEOUT_MAX
    rng = random.Random(1)
    for i in range(1, seats):
        joined = attempt(lambda: table.join(state, f"p{i}", rng, key=_key(game, f"p{i}")))  # noqa: B023
        if isinstance(joined, Rejection):  # the deck cannot deal for that many
            assert joined.code == ErrorCode.BAD_CONFIG
            return
        _storable(joined)
        state = table.evolve_many(state, json.loads(json.dumps(joined)))
    if state.status == "lobby":
        started = attempt(lambda: table.start(state, "ann", rng))
        if isinstance(started, Rejection):
            assert started.code == ErrorCode.BAD_CONFIG
            return
        state = table.evolve_many(state, started)
    assert state.status in ("playing", "finished")


# -- a table nobody acknowledges -------------------------------------------------------------


def test_the_ack_timeout_is_always_finite() -> None:
    table = Table(HIGHCARD)
    with pytest.raises(Rejection) as refused:
        table.create("g1", "ann", {"table": {"ack_timeout": None}})
    assert refused.value.code == ErrorCode.BAD_CONFIG
    assert "never" in refused.value.message
    for given_, folded in [(None, ACK_TIMEOUT_MAX), (86_400, ACK_TIMEOUT_MAX), (0.01, 1.0)]:
        # a log written under wider bounds still folds, to the nearest bound
        created = table.create("g1", "ann", {})
        created[0]["options"] = {"ack_timeout": given_, "turn_timeout": None}
        assert table.replay(created).options.ack_timeout == folded
    assert TableOptions.stored({"ack_timeout": 12, "turn_timeout": 3}) == TableOptions(
        ack_timeout=12, turn_timeout=3
    )


def _house_plays_out(game: Game[Any], seed: int) -> TableState:
    """Nobody acknowledges: every seat is marked away when its ack timeout passes, and from
    then on the house plays whoever must act, as the gamemaster does."""
    rng = random.Random(seed)
    seats = ["ann", "bob", "cat"][: min(3, game.max_players)]
    keys = {p: k for p in seats if (k := _key(game, p)) is not None}
    local = new_game(game, seats, rng, CONFIGS.get(game.name, [{}])[0], keys=keys or None)
    table = local.table
    for player in seats:
        local.apply(table.mark_away(local.state, player))
    for _ in range(20_000):
        if local.state.status != "playing":
            break
        moves = table.house_moves(local.state, table.movers(local.state), rng)
        assert moves, f"{game.name}: the house has no move for {table.movers(local.state)}"
        for _, events in moves:
            local.apply(events)
        local.settle(rng)
    return local.state


@pytest.mark.parametrize("name", [n for n in NAMES if not _signed(GAMES[n])])
def test_a_table_nobody_acknowledges_is_played_to_its_end(name: str) -> None:
    for seed in range(3):
        state = _house_plays_out(GAMES[name], seed)
        assert state.status == "finished"
        assert state.options.ack_timeout <= ACK_TIMEOUT_MAX
