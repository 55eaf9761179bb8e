"""The checks every hosted game must pass, written against the ``Game`` protocol alone.

A game is played in memory as the services play it (``cardroom_engine.simulate``: the table
around the rules, every event through JSON, follow-ups when the gate opens), each seat by the
game's own ``random`` bot (a game whose seats are bound to keys gets its bots' verify keys),
and every check reads what the table would send: views, notifications, actions, refusals.
Each check returns a list of problems (empty: the game passes), so that a test can also show
that a deliberately broken game fails it.

What is checked, one function each:

- :func:`addressed_only` -- an event addressed to some seats that is no public news changes
  nothing the others can observe (their views, the ``version`` included, their actions, the
  spectator's view, the turn clock by which the house plays for a slow mover), but for the
  player whose move it was; each addressee sees its version move by exactly one (it
  acknowledges by that number);
- :func:`notifications_hold_no_secret` -- no notification names a distinctive value that
  another seat sees and its addressee does not (a hidden card, a card just dealt or drawn),
  unless all are told alike;
- :func:`public_is_public` -- what a spectator sees, every seat sees too (a seat may know a
  value better, never less), and anyone not seated sees exactly the spectator's view;
- :func:`actions_are_decided` -- every listed action is accepted by ``decide``, and commands
  not listed (another seat's actions, listed ones with a field changed) are refused; for a
  game whose actions are templates (``action_templates``: Macaua), every command the
  player's own bot fills a listed action in with, at that moment of the game, is accepted,
  and the same command sent by another seat is refused;
- :func:`refusals` -- every refusal has a stable code (a snake_case name, the same for the
  same command), and a command naming a value hidden from its sender is answered exactly as
  one naming a value nobody can see (the answer tells nothing about where a card is);
- :func:`house_moves` -- the house's move for a seat is one ``decide`` accepts;
- :func:`replays` -- folding the recorded log gives the live state at every step, whether
  event by event or in runs; the projector's fold (replays, sync) sends every player
  exactly the notifications it was sent live, and its views are the live ones; the
  spectator stream has one update per event a spectator may know of, numbered without gaps;
- :func:`folds_are_total` -- every prefix of a recorded log folds, presence changes
  (away, back) anywhere included, and the outcome is the recorded one;
- :func:`sync_not_older` -- the view a sync answers is never older than a notification the
  player was sent.

What a generic suite cannot judge stays with each game's own tests: whether a value in a
view is one its player may know, and a secret that is no distinctive value (a card's rank,
a small number) or that every seat is told alike. The per-game leak models in
``tests/games`` judge those, and for a game with a search hook
(tests/games/test_search_determinizers.py) every view is compared with the view of states
sampled from it, whose hidden parts vary: a view that shows more than its player may know
differs from them.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cardroom_engine import Completer, Game, Rejection, Table, TableState, registry
from cardroom_engine.simulate import LocalGame, bots_chooser, new_game
from cardroom_projector import project_log

CODE = re.compile(r"^[a-z][a-z0-9_]{1,48}$")

Problems = list[str]


@dataclass(frozen=True)
class Profile:
    """How a game is played by the suite: seat counts and a config (bounded in time)."""

    seats: tuple[int, ...] = (2, 3)
    configs: tuple[Mapping[str, Any], ...] = ({},)
    seeds: tuple[int, ...] = (1,)
    probes: int = 12  # states at which decide is probed, per game played
    # a game whose actions are templates: its bots fill them in at the first ``fill_window``
    # decisions of a game (sampled: filling a shuffle means proving one)
    fill_window: int = 60


PROFILES: dict[str, Profile] = {
    # Macaua's moves are proofs and signatures: short games, few probes
    "macaua": Profile(seats=(2, 3), configs=({"max_turns": 40},), probes=4),
    # both protocol generations
    "sixtysix": Profile(configs=({}, {"protocol": "v1"}), seeds=(1, 2, 3)),
    "papas": Profile(seats=(2, 4)),
}


@dataclass
class Played:
    """One whole game with the table state after each of its steps."""

    local: LocalGame
    states: list[TableState]  # states[i]: after local.steps[i]
    actors: dict[int, str]  # step index -> the player whose command made that event
    # a game whose actions are templates: (state index, player, listed action, the commands
    # the player's bot filled it in with then), at sampled moments of the game
    filled: list[tuple[int, str, dict[str, Any], list[dict[str, Any]]]] | None = None

    @property
    def table(self) -> Table:
        return self.local.table

    def before(self, i: int) -> TableState | None:
        return self.states[i - 1] if i > 0 else None


def play_game(game: Game[Any], players: int, seed: int, config: Mapping[str, Any] | None) -> Played:
    """A whole game as ``simulate.play`` plays it, noting whose command made each event."""
    seats = [f"s{i}" for i in range(players)]
    kinds = dict.fromkeys(seats, "random")
    bots = {p: game.bots["random"](p) for p in seats}
    held = {p: getattr(b, "verify_key", None) for p, b in bots.items()}
    keys = {p: k for p, k in held.items() if isinstance(k, str)}
    choose = bots_chooser(game, kinds, bots)
    rng = random.Random(seed)
    local = new_game(game, seats, rng, config, keys=keys or None)
    table, actors = local.table, {}
    profile = PROFILES.get(game.name, Profile())
    fill_at = set(_sample(profile.fill_window, profile.probes, random.Random(seed + 7)))
    filled: list[tuple[int, str, dict[str, Any], list[dict[str, Any]]]] = []
    decisions = 0
    while local.state.status == "playing":
        movers = [(p, a) for p in local.state.seats if (a := table.actions(local.state, p))]
        assert movers, f"{game.name}: nobody can move and the game is not over"
        if game.action_templates and decisions in fill_at:
            # filled in now, by the bots as they are now (their keys, their cards)
            for p, acts in movers:
                completer: Completer = bots[p]  # type: ignore[assignment]
                view = table.view(local.state, p)
                for action in acts:
                    commands = completer.completions(view, action)
                    filled.append((len(local.steps) - 1, p, action, commands))
        decisions += 1
        player, actions = rng.choice(movers)
        command = dict(choose(local, player, actions, rng))
        done = len(local.steps)
        local.apply(table.decide(local.state, player, command, rng, gate_open=True))
        actors.update(dict.fromkeys(range(done, len(local.steps)), player))
        local.settle(rng)
        assert len(local.steps) < 100_000, f"{game.name}: no end"
    _VALUES.clear()
    states: list[TableState] = []
    state: TableState | None = None
    for step in local.steps:
        state = table.evolve(state, step.event)
        states.append(state)
    return Played(local, states, actors, filled if game.action_templates else None)


def games_of(game: Game[Any]) -> Iterator[Played]:
    profile = PROFILES.get(game.name, Profile())
    for players in profile.seats:
        if not game.min_players <= players <= game.max_players:
            continue
        for seed in profile.seeds:
            for config in profile.configs:
                yield play_game(game, players, seed, config)


def _sample(n: int, k: int, rng: random.Random) -> list[int]:
    return sorted(rng.sample(range(n), min(n, k)))


# -- observations -----------------------------------------------------------------------------


def observed(table: Table, state: TableState, player: str | None) -> Any:
    """Everything ``player`` can see of ``state`` (None: a spectator)."""
    if player is None:
        return table.view(state, None)
    return (table.view(state, player), table.actions(state, player))


def _public_news(table: Table, before: TableState, after: TableState) -> bool:
    """Whether an event changes what a spectator sees, its version aside."""
    old, new = table.view(before, None), table.view(after, None)
    return {**old, "version": 0} != {**new, "version": 0}


def addressed_only(played: Played) -> Problems:
    """An event addressed to some seats only that is no public news (a spectator sees nothing
    change but the version) changes nothing the others observe, version included, but for
    the player whose move it is (it knows what it did). (Public news may reach a seat's
    view before its notification does: "the others first, then the active player"
    announces a turn in two gated steps.)"""
    problems: Problems = []
    table = played.table
    for i, step in enumerate(played.local.steps):
        before, after = played.before(i), played.states[i]
        kind = step.event["type"]
        if before is None or kind.startswith("table.") or not step.notifications:
            continue
        where = f"v{step.version} {kind}"
        told = set(step.notifications)
        for player in told:
            if after.seen(player) != before.seen(player) + 1:
                problems.append(f"{where}: addressee {player} does not see one version more")
        known = told | ({played.actors[i]} if i in played.actors else set())
        if known == set(after.seats) or _public_news(table, before, after):
            continue
        for player in after.seats:
            if player in told or player == played.actors.get(i):  # (it made the move)
                continue
            if observed(table, after, player) != observed(table, before, player):
                problems.append(f"{where}: for others than {player}, yet it sees a change")
        if observed(table, after, None) != observed(table, before, None):
            problems.append(f"{where}: for some seats only, yet a spectator sees a change")
        if after.moved_at != before.moved_at:  # when the house plays for a slow mover
            problems.append(f"{where}: for some seats only, yet the turn clock restarts")
    return problems


def leaves(doc: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every ``(path, scalar)`` of a JSON document; list items keep their index."""
    if isinstance(doc, Mapping):
        for key, value in doc.items():
            yield from leaves(value, f"{path}.{key}")
    elif isinstance(doc, list | tuple):
        for index, value in enumerate(doc):
            yield from leaves(value, f"{path}[{index}]")
    else:
        yield path, doc


def public_is_public(played: Played) -> Problems:
    problems: Problems = []
    table = played.table
    for i in _sample(len(played.states), 60, random.Random(7)):
        state = played.states[i]
        public = table.view(state, None)
        if table.view(state, "not-seated") != public:
            problems.append(f"v{state.version}: someone not seated sees more than a spectator")
        # (a field the spectator has as null is the viewer's own: "me", its seat index)
        shown = {p: v for p, v in leaves(public) if p != ".version" and v is not None}
        for player in state.seats:
            # a seat may know a value better (its own draw), never less than a spectator
            mine = dict(leaves(table.view(state, player)))
            differs = [p for p, v in shown.items() if mine.get(p) is None]
            if differs:
                problems.append(
                    f"v{state.version}: the spectator sees {differs[:3]} otherwise than {player}"
                )
    return problems


def _telling(value: Any) -> bool:
    """A value distinctive enough that finding it is no coincidence: small numbers (indexes,
    counts) are everywhere."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) >= 10
    return isinstance(value, str) and len(value) >= 2


def notifications_hold_no_secret(played: Played) -> Problems:
    """No notification names a value that another seat sees after the event and its
    addressee does not (nor a spectator), and that was hidden from the addressee before it
    too or seen by nobody (a card just dealt or drawn), unless every seat is told it alike
    (a public reveal): another player's hidden card, say."""
    problems: Problems = []
    table = played.table
    for i, step in enumerate(played.local.steps):
        before, after = played.before(i), played.states[i]
        if before is None or before.status != "playing" or after.status != "playing":
            continue
        told = step.notifications
        everyone: set[Any] = set()
        if set(told) == set(after.seats):
            sets = [{v for _, v in leaves(m)} for m in told.values()]
            everyone = set.intersection(*sets)
        seen = _seen_anywhere(table, before)
        for player, message in told.items():
            hidden = _hidden_from(table, before, player)
            later = _hidden_from(table, after, player)
            secret = {
                v
                for kind in later
                for v in later[kind]
                if _telling(v) and (v in hidden[kind] or v not in seen)
            }
            found = sorted(
                {
                    f"{path}={value!r}"
                    for path, value in leaves(message)
                    if value in secret and value not in everyone
                }
            )
            if found:
                problems.append(f"v{step.version} {step.event['type']} to {player}: {found[:3]}")
    return problems


# -- decide -----------------------------------------------------------------------------------


Answer = tuple[str, str] | None  # None: accepted; else (code, message)


def answer(table: Table, state: TableState, player: str, command: Mapping[str, Any]) -> Answer:
    try:
        table.decide(state, player, command, random.Random(0), gate_open=True)
    except Rejection as exc:
        return (str(exc.code), exc.message)
    return None


def _probe_states(played: Played, k: int) -> list[TableState]:
    playing = [s for s in played.states if s.status == "playing" and s.game is not None]
    return [playing[i] for i in _sample(len(playing), k, random.Random(11))]


Keys = tuple[str | int, ...]


def _fields(doc: Any, keys: Keys = ()) -> Iterator[tuple[Keys, Any]]:
    """Every scalar field of a command (nested ones too), but its ``type``."""
    if isinstance(doc, Mapping):
        for key, value in doc.items():
            if keys or key != "type":
                yield from _fields(value, (*keys, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _fields(value, (*keys, index))
    elif keys:
        yield keys, doc


def _with(doc: Any, keys: Keys, value: Any) -> Any:
    """``doc`` with the field at ``keys`` set to ``value`` (a copy)."""
    if not keys:
        return value
    head, rest = keys[0], keys[1:]
    if isinstance(doc, Mapping):
        return {**doc, head: _with(doc[head], rest, value)}
    copy = list(doc)
    copy[int(head)] = _with(copy[int(head)], rest, value)
    return copy


def _variants(action: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The action with one integer field moved by one."""
    for keys, value in _fields(action):
        if isinstance(value, int) and not isinstance(value, bool):
            for other in (value - 1, value + 1):
                yield _with(action, keys, other)


def actions_are_decided(played: Played, probes: int) -> Problems:
    if played.filled is not None:
        return _templates_are_decided(played)
    problems: Problems = []
    table = played.table
    for state in _probe_states(played, probes):
        listed = {p: table.actions(state, p) for p in state.seats}
        for player, actions in listed.items():
            where = f"v{state.version} {player}"
            mine = [json.dumps(a, sort_keys=True) for a in actions]
            for action in actions:
                got = answer(table, state, player, action)
                if got is not None:
                    problems.append(f"{where}: listed {action['type']} refused {got[0]}")
            others = [a for p, acts in listed.items() if p != player for a in acts]
            for command in others[:6] + [v for a in actions[:6] for v in _variants(a)]:
                if json.dumps(command, sort_keys=True) in mine:
                    continue
                if answer(table, state, player, command) is None:
                    problems.append(f"{where}: {command['type']} accepted but not listed")
    return problems


def _templates_are_decided(played: Played) -> Problems:
    """Every command a player's bot filled a listed template in with is accepted; sent by
    another seat, it is refused (the move is signed for the seat whose key it carries)."""
    problems: Problems = []
    table = played.table
    if not played.filled:
        return ["no listed action was filled in: nothing was checked"]
    kinds: set[str] = set()
    for index, player, action, commands in played.filled:
        state = played.states[index]
        where = f"v{state.version} {player} {action.get('kind', action['type'])}"
        for command in commands:
            got = answer(table, state, player, command)
            if got is not None:
                problems.append(f"{where}: filled in, refused {got[0]}")
            else:
                kinds.add(str(action.get("kind", action["type"])))
            for other in state.seats:
                if other != player and answer(table, state, other, command) is None:
                    problems.append(f"{where}: accepted from {other} too")
    if not kinds:
        problems.append("no filled-in action was accepted")
    return problems


_VALUES: dict[tuple[int, str | None], tuple[TableState, frozenset[Any]]] = {}


def _values(table: Table, state: TableState, player: str | None) -> frozenset[Any]:
    """The scalars of ``player``'s view of ``state`` (and its actions), computed once."""
    key = (id(state), player)
    found = _VALUES.get(key)
    if found is None or found[0] is not state:
        values = {v for _, v in leaves(table.view(state, player))}
        if player is not None:
            values |= {v for _, v in leaves(table.actions(state, player))}
        found = _VALUES[key] = (state, frozenset(values))
    return found[1]


def _hidden_from(table: Table, state: TableState, player: str) -> dict[type, set[Any]]:
    """Scalars other seats see and ``player`` does not (nor a spectator), by type."""
    mine = _values(table, state, player) | _values(table, state, None)
    theirs: dict[type, set[Any]] = {int: set(), str: set()}
    for other in state.seats:
        if other == player:
            continue
        for value in _values(table, state, other) - mine:
            if type(value) in theirs and value not in state.seats:
                theirs[type(value)].add(value)
    return theirs


def _seen_anywhere(table: Table, state: TableState) -> set[Any]:
    seen = set(_values(table, state, None))
    for player in state.seats:
        seen |= _values(table, state, player)
    return seen


def refusals(played: Played, probes: int) -> Problems:
    problems: Problems = []
    table = played.table
    for state in _probe_states(played, probes):
        seen = _seen_anywhere(table, state)
        for player in state.seats:
            hidden = _hidden_from(table, state, player)
            for action in table.actions(state, player)[:4]:
                for keys, value in _fields(action):
                    kind = type(value)
                    secret = sorted(hidden.get(kind, ()))[:4]
                    if not secret:
                        continue
                    nowhere: list[Any] = []
                    if kind is int:
                        low, high = min(secret), max(secret)
                        nowhere = [v for v in range(low, high + 1) if v not in seen][:2]
                    answers: dict[Answer, Any] = {}
                    for probe in [*secret, *nowhere]:
                        command = _with(action, keys, probe)
                        got = answer(table, state, player, command)
                        if got is not None:
                            if not CODE.match(got[0]):
                                problems.append(f"unstable refusal code {got[0]!r}")
                            if answer(table, state, player, command) != got:
                                problems.append(f"{got[0]}: another answer the second time")
                            got = (got[0], got[1].replace(str(probe), "<x>"))
                        answers.setdefault(got, probe)
                    if len(answers) > 1:
                        told = {(a or ("accepted",))[0]: v for a, v in answers.items()}
                        field = ".".join(map(str, keys))
                        problems.append(
                            f"v{state.version} {player} {action['type']}.{field}: values hidden "
                            f"from it are answered differently: {told}"
                        )
    return problems


def house_moves(played: Played, probes: int) -> Problems:
    problems: Problems = []
    table, game = played.table, played.table.game
    rng = random.Random(5)
    for state in _probe_states(played, probes):
        for player in state.seats:
            if not table.actions(state, player):
                continue
            move = game.house_action(state.game, player, rng)
            if move is not None and (got := answer(table, state, player, move)) is not None:
                problems.append(f"v{state.version} {player}: the house's move is refused {got}")
    return problems


# -- logs -------------------------------------------------------------------------------------


def _stored(event: Mapping[str, Any]) -> dict[str, Any]:
    return dict(json.loads(json.dumps(event)))


def replays(played: Played) -> Problems:
    problems: Problems = []
    table = played.table
    events = [_stored(s.event) for s in played.local.steps]
    state = table.replay(events[:1])
    for i in range(1, len(events)):
        state = table.evolve(state, events[i])
        live = played.states[i]
        if state.version != live.version or any(
            state.seen(p) != live.seen(p) for p in (*live.seats, None)
        ):
            problems.append(f"v{live.version}: the replayed versions differ")
    final = played.states[-1]
    runs = table.replay(events)
    for player in (*final.seats, None):
        if table.view(runs, player) != table.view(final, player):
            problems.append(f"the replay's view for {player} differs from the live one")
    # the projector's fold, which replays (--as), rebuilds and syncs use
    entries = [
        (s.version, events[i], sorted(s.notifications)) for i, s in enumerate(played.local.steps)
    ]
    _, projected, views = project_log(None, final.game_type, entries, spectator=False)
    sent: dict[str, list[Any]] = {}
    for item in projected:
        for note in item.notes:
            sent.setdefault(note.player_id, []).append(note.payload)
    for player in final.seats:
        live_notes = _live_notifications(played, player)
        if sent.get(player, []) != live_notes:
            problems.append(f"the projector's notifications for {player} differ from the live ones")
    for stored in views:
        player = None if stored.player_id not in final.seats else stored.player_id
        if stored.view != table.view(final, player):
            problems.append(f"the projector's view for {stored.player_id} differs")
    problems += _spectator_stream(played, entries)
    return problems


def _spectator_stream(played: Played, entries: list[Any]) -> Problems:
    """The spectators' updates: one per event a spectator may know of (none for an event
    for some seats only), numbered 1, 2, 3 ... without gaps, each the live spectator view."""
    problems: Problems = []
    table = played.table
    _, projected, _ = project_log(None, played.states[-1].game_type, entries, spectator=True)
    updates = {item.version: item.public for item in projected if item.public is not None}
    expected = 1
    for i, step in enumerate(played.local.steps):
        before, after = played.before(i), played.states[i]
        public = updates.get(step.version)
        told_some = before is not None and after.private != before.private
        if told_some:
            if public is not None:
                problems.append(f"v{step.version}: a spectator update for an event for some seats")
            continue
        if public is None:
            problems.append(f"v{step.version}: no spectator update")
            continue
        if public.version != expected or public.view != _stored(table.view(after, None)):
            problems.append(f"v{step.version}: the spectator update is not the live view")
        expected += 1
    return problems


def _live_notifications(played: Played, player: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, step in enumerate(played.local.steps):
        if player in step.notifications:
            out.append(
                played.table.notification(
                    played.states[i], player, len(out) + 1, step.notifications[player]
                )
            )
    return _stored({"n": out})["n"]  # type: ignore[no-any-return]


def folds_are_total(played: Played) -> Problems:
    problems: Problems = []
    table = played.table
    events = [_stored(s.event) for s in played.local.steps]
    seats = played.states[-1].seats
    rng = random.Random(3)
    for k in sorted(
        {1, 2, len(events), *rng.sample(range(1, len(events) + 1), min(40, len(events)))}
    ):
        prefix = events[:k]
        if k > 2 and rng.random() < 0.3:  # presence changes anywhere
            who = rng.choice(seats)
            prefix = [
                *prefix[:-1],
                {"type": "table.away", "player": who},
                {"type": "table.back", "player": who},
                prefix[-1],
            ]
        try:
            table.replay(prefix)
        except Exception as exc:  # a fold must never fail on a recorded log
            problems.append(f"the log up to v{k} does not fold: {type(exc).__name__}: {exc}")
    final = table.replay(events)
    recorded = next((e["outcome"] for e in reversed(events) if e["type"] == "table.finished"), None)
    if recorded is None or final.outcome != recorded:
        problems.append("the replayed outcome is not the recorded one")
    return problems


def sync_not_older(played: Played) -> Problems:
    """What a sync answers (the projector's stored view and seq) against what was sent."""
    problems: Problems = []
    final = played.states[-1]
    entries = [(s.version, _stored(s.event), sorted(s.notifications)) for s in played.local.steps]
    _, _, views = project_log(None, final.game_type, entries, spectator=False)
    for stored in views:
        if stored.player_id not in final.seats:
            continue
        sent = _live_notifications(played, stored.player_id)
        if sent and stored.version < sent[-1]["version"]:
            problems.append(f"{stored.player_id}: the sync view is older than a notification")
        if stored.seq != len(sent):
            problems.append(f"{stored.player_id}: the sync's seq is not the last one sent")
    return problems


Check = Callable[[Played, int], Problems]

CHECKS: dict[str, Check] = {
    "addressed_only": lambda p, _: addressed_only(p),
    "public_is_public": lambda p, _: public_is_public(p),
    "notifications_hold_no_secret": lambda p, _: notifications_hold_no_secret(p),
    "actions_are_decided": actions_are_decided,
    "refusals": refusals,
    "house_moves": house_moves,
    "replays": lambda p, _: replays(p),
    "folds_are_total": lambda p, _: folds_are_total(p),
    "sync_not_older": lambda p, _: sync_not_older(p),
}


def run(game: Game[Any], checks: Sequence[str] = tuple(CHECKS)) -> dict[str, Problems]:
    """Every check over every game the profile plays: ``{check: problems}``. The game is
    registered first if it is not (the replay check folds with the projector's code, which
    finds a game's rules by its name)."""
    if game.name not in registry:
        registry.register(game)
    profile = PROFILES.get(game.name, Profile())
    found: dict[str, Problems] = {name: [] for name in checks}
    for played in games_of(game):
        for name in checks:
            found[name] += CHECKS[name](played, profile.probes)
    return found
