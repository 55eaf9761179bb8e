"""Helpers for the take5 tests: states built by hand, scripted tables, the protocol's grammar.

The grammar checker is written from the take5 protocol alone (its message shapes and its
message loop), not from the game's code.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cardroom_engine import Table, TableState
from cardroom_engine.simulate import LocalGame
from cardroom_games.take5 import GAME, Take5Config, Take5State

STACK_IDS = ("A", "B", "C", "D")


def make_state(
    rows: Sequence[Sequence[int]],
    hands: Sequence[Sequence[int]],
    *,
    scores: Sequence[int] | None = None,
    turn: int = 1,
    config: Mapping[str, Any] | None = None,
) -> Take5State:
    """A state waiting for plays (phase "play") with these rows and hands."""
    seats = tuple("abcdefghij"[: len(hands)])
    cfg = Take5Config.model_validate(dict(config or {}))
    state = GAME.setup(cfg, seats)
    return state._replace(
        phase="play",
        round=1,
        turn=turn,
        hands=tuple(tuple(sorted(h)) for h in hands),
        rows=tuple(tuple(r) for r in rows),
        scores=tuple(scores) if scores is not None else state.scores,
        plays=(None,) * len(seats),
    )


def card(face: int) -> dict[str, int]:
    return {"face": face, "bull": GAME_BULLS[face]}


GAME_BULLS = Take5Config().bull_values()


def play_cmd(face: int, bulls: Sequence[int] = GAME_BULLS) -> dict[str, Any]:
    return {"type": "play_response", "data": {"face": face, "bull": bulls[face]}}


def apply_all(state: Take5State, events: Iterable[dict[str, Any]]) -> Take5State:
    for event in events:
        state = GAME.evolve(state, event)
    return state


def settle(state: Take5State, rng: random.Random) -> tuple[Take5State, list[dict[str, Any]]]:
    """One follow-up (what happens once the gate opens): the state after it and its events."""
    events = GAME.follow_up(state, rng)
    return apply_all(state, events), events


def scripted_table(
    seats: Sequence[str],
    hands: Mapping[str, Sequence[int]],
    rows: Sequence[int],
    config: Mapping[str, Any] | None = None,
) -> LocalGame:
    """A table whose first deal is given (instead of shuffled), settled until plays."""
    table = Table(GAME)
    created = table.create("g1", seats[0], config or {}, seats=len(seats))
    local = LocalGame(table, table.replay(created))
    rest: list[dict[str, Any]] = [{"type": "table.joined", "player": p} for p in seats[1:]]
    rest.append({"type": "table.started", "seats": list(seats)})
    rest.append({"type": "take5.dealt", "round": 1, "hands": dict(hands), "rows": list(rows)})
    local.apply(rest)
    local.settle(random.Random(0))
    return local


def command(local: LocalGame, player: str, cmd: Mapping[str, Any], rng: random.Random) -> None:
    local.apply(local.table.decide(local.state, player, cmd, rng, gate_open=True))
    local.settle(rng)


def game_messages(messages: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The take5 protocol messages among a player's notifications (the table's own
    GameStarted/GameOver envelopes are the engine's, not the protocol's)."""
    return [m for m in messages if m.get("type") not in ("GameStarted", "GameOver")]


# -- the protocol's grammar ------------------------------------------------------------------


class GrammarError(AssertionError):
    pass


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise GrammarError(what)


def _number(value: Any) -> bool:
    return type(value) in (int, float)  # JSON numbers (a bool is not one)


def check_card(value: Any, cfg: Take5Config) -> int:
    _need(type(value) is dict and value.keys() == {"face", "bull"}, f"CARD: {value!r}")
    face, bull = value["face"], value["bull"]
    _need(_number(face) and _number(bull), f"CARD numbers: {value!r}")
    _need(1 <= face <= cfg.deck_size, f"CARD face out of the deck: {value!r}")
    _need(cfg.bull_range[0] <= bull <= cfg.bull_range[1], f"CARD bull: {value!r}")
    return int(face)


def check_stack(value: Any, cfg: Take5Config, *, board: bool) -> list[int]:
    _need(isinstance(value, list), f"STACK: {value!r}")
    if board:
        _need(1 <= len(value) <= cfg.stack_size, f"STACK length {len(value)}")
    faces = [check_card(c, cfg) for c in value]
    if board:
        _need(faces == sorted(faces), f"a row ascends: {faces}")
    return faces


def check_board(value: Any, cfg: Take5Config) -> dict[str, list[int]]:
    _need(isinstance(value, dict) and list(value) == list(STACK_IDS), f"BOARD keys: {value!r}")
    return {k: check_stack(v, cfg, board=True) for k, v in value.items()}


def check_message(msg: Any, cfg: Take5Config, players: int) -> set[int]:
    """One message against the protocol's message shapes, exactly (no other keys).

    Returns the faces of every card in it (a message that passes has no other data)."""
    _need(isinstance(msg, dict) and set(msg) == {"type", "data"}, f"MESSAGE keys: {msg!r}")
    kind, data = msg["type"], msg["data"]
    faces: list[int] = []
    if kind == "deal":
        _need(isinstance(data, list) and len(data) == cfg.turn_count, "DEAL: turn_count cards")
        faces = [check_card(c, cfg) for c in data]
        _need(len(set(faces)) == len(faces), "DEAL: distinct cards")
    elif kind in ("play_request", "choose_request"):
        faces = [f for row in check_board(data, cfg).values() for f in row]
    elif kind == "played":
        _need(isinstance(data, list) and len(data) == players, "PLAYED: one per player")
        ids = []
        for entry in data:
            _need(isinstance(entry, dict) and set(entry) == {"id", "card"}, f"PLAYED: {entry}")
            _need(_number(entry["id"]), "ID is a number")
            ids.append(entry["id"])
            faces.append(check_card(entry["card"], cfg))
        _need(sorted(ids) == list(range(players)), f"PLAYED ids: {ids}")
        _need(faces == sorted(faces), "PLAYED in ascending face order")
    elif kind == "taken":
        _need(isinstance(data, dict) and set(data) == {"id", "stack"}, f"TAKEN: {data!r}")
        _need(_number(data["id"]) and 0 <= data["id"] < players, "TAKEN id")
        faces = check_stack(data["stack"], cfg, board=False)
        _need(1 <= len(faces) <= cfg.stack_size, "TAKEN: a row of 1..stack_size cards")
    elif kind == "game_over":
        _need(isinstance(data, list) and len(data) == players, "GAME_OVER: one per player")
        for entry in data:
            _need(isinstance(entry, dict) and set(entry) == {"player", "score"}, f"{entry}")
            _need(_number(entry["player"]) and _number(entry["score"]), f"{entry}")
        _need(sorted(e["player"] for e in data) == list(range(players)), "GAME_OVER ids")
    else:
        raise GrammarError(f"unknown message type {kind!r}")
    return set(faces)


def check_sequence(messages: Sequence[Mapping[str, Any]], cfg: Take5Config) -> int:
    """One player's messages against "Less English": rounds of a deal then turn_count
    turns of play_request, played, then any number of (choose_request? taken); at the end
    game_over. Returns the number of rounds."""
    kinds = [m["type"] for m in messages]
    i = 0
    rounds = 0
    _need(bool(kinds) and kinds[-1] == "game_over", "ends with game_over")
    while kinds[i] == "deal":
        rounds += 1
        i += 1
        for _turn in range(cfg.turn_count):
            _need(kinds[i : i + 2] == ["play_request", "played"], f"turn at {i}: {kinds[i:]}")
            i += 2
            chosen = 0
            while i < len(kinds) and kinds[i] in ("choose_request", "taken"):
                if kinds[i] == "choose_request":
                    chosen += 1
                    _need(chosen == 1, "at most one choice per turn")
                    _need(kinds[i + 1] == "taken", "choose_request then taken")
                    i += 1
                i += 1
    _need(i == len(kinds) - 1 and rounds >= 1, f"then game_over: {kinds[i:]}")
    return rounds


def faces_in(value: Any) -> set[int]:
    """Every face of every CARD-shaped object anywhere in a JSON value."""
    found: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "face" in item:
                found.add(item["face"])
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def game_state(state: TableState) -> Take5State:
    game = state.game
    assert isinstance(game, Take5State)
    return game
