"""``cardroom replay``: a game's timeline from its events, and what one player (or a
spectator) saw, produced by the projector's own code (:func:`cardroom_projector.project_events`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cardroom.cli_shell import CliError, err, find_target, run_command, sub_app

if TYPE_CHECKING:
    from cardroom_engine import Table, TableState
    from cardroom_eventstore import EventStore
    from cardroom_eventstore.readmodels import StoredNotification, StoredView
    from rich.table import Table as RichTable

app = sub_app("Replays of recorded games.")


@dataclass
class Replayed:
    """A game folded from its events."""

    table: Table
    state: TableState
    recorded: dict[str, Any] | None  # the outcome in table.finished
    derived: dict[str, Any] | None  # the outcome the game's rules compute from the state

    @property
    def consistent(self) -> bool:
        return self.recorded == self.derived


def no_rules(game_types: Sequence[str]) -> str:
    """What to say of game types this process has no rules for (and what to do)."""
    names = ", ".join(repr(t) for t in game_types)
    if len(game_types) == 1:
        return (
            f"no rules for game type {names} here: install its package, or name it in "
            "CARDROOM_GAMES (module:attribute), as for the services"
        )
    return (
        f"no rules for game types {names} here: install their packages, or name them in "
        "CARDROOM_GAMES (module:attribute, comma-separated), as for the services"
    )


def known_rules(game_type: str) -> None:
    """A game can be folded only with its rules: a type this process has not registered is
    a clear error, not a traceback."""
    from cardroom_engine import registry

    if game_type not in registry:
        raise CliError(no_rules([game_type]))


def _as_event(record: dict[str, Any]) -> dict[str, Any]:
    return {**record["data"], "type": record["type"]}


def replay(records: Sequence[dict[str, Any]]) -> Replayed:
    """Fold a game's event records (public schema) with its rules; re-derive the outcome."""
    from cardroom_engine import FINISHED, Table, registry

    if not records:
        raise CliError("no events")
    table = Table(registry.get(records[0]["game_type"]))
    state = table.replay([_as_event(r) for r in records])
    recorded = next((r["data"].get("outcome") for r in records if r["type"] == FINISHED), None)
    derived = None
    if state.game is not None:
        outcome = table.game.outcome(state.game)
        if outcome is not None:
            derived = json.loads(json.dumps(outcome.to_json()))  # as it was stored
    return Replayed(table, state, recorded, derived)


def _notes(
    records: Sequence[dict[str, Any]],
) -> tuple[list[StoredNotification], list[StoredView]]:
    from cardroom_projector import project_events

    if not records:
        raise CliError("no events")
    _, projected, views = project_events(None, list(records), spectator=False)
    return [n for item in projected for n in item.notes], views


def seen_by(
    records: Sequence[dict[str, Any]], player: str
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """What ``player`` was sent, in order (the notifications, as published), and the view and
    actions they have at the end: the projector's own code over the events."""
    notes, views = _notes(records)
    final = {v.player_id: (v.view, v.actions) for v in views}
    if player not in final:
        raise CliError(f"{player!r} is not seated at this table")
    view, actions = final[player]
    return [n.payload for n in notes if n.player_id == player], view, actions


def public_updates(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a spectator was sent after every event (the projector's public updates)."""
    from cardroom_projector import project_events

    _, projected, _ = project_events(None, list(records))
    return [item.public.model_dump(mode="json") for item in projected if item.public is not None]


async def read_game(store: EventStore, game: str) -> list[dict[str, Any]]:
    """A game's events in the public schema (what the relay publishes)."""
    from cardroom_relay import event_payload

    return [event_payload(e) for e in await store.read_stream(game)]


def _short(value: Any, width: int) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text if width <= 0 or len(text) <= width else text[: width - 1] + "…"


def _timeline(records: Sequence[dict[str, Any]], width: int) -> RichTable:
    from datetime import datetime

    from rich.table import Table as RichTable

    out = RichTable(title=f"{records[0]['game']} ({records[0]['game_type']}): every event")
    out.add_column("v", justify="right")
    out.add_column("+s", justify="right")
    out.add_column("type")
    out.add_column("actor")
    out.add_column("data", overflow="fold")
    start = datetime.fromisoformat(records[0]["recorded_at"])
    for r in records:
        offset = (datetime.fromisoformat(r["recorded_at"]) - start).total_seconds()
        out.add_row(
            str(r["version"]),
            f"{offset:.3f}",
            r["type"],
            str(r["metadata"].get("actor") or ""),
            _short(r["data"], width),
        )
    return out


@app.command(name="replay")
def replay_command(
    game: Annotated[str, typer.Argument(help="The game id.")],
    as_player: Annotated[
        str | None,
        typer.Option("--as", help="Show only what this player saw (the projector's code)."),
    ] = None,
    spectator: Annotated[bool, typer.Option(help="Show what spectators saw.")] = False,
    width: Annotated[int, typer.Option(help="Truncate JSON to this width (0: never).")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Print a game's timeline from its events (the full truth: for operators), or exactly
    what one player or the spectators saw."""
    from rich.console import Console
    from rich.table import Table as RichTable

    async def load() -> list[dict[str, Any]]:
        from cardroom_eventstore import EventStore

        target = await find_target()
        try:
            store = await EventStore.connect(target.shard_url(game))
        except BaseException:
            await target.close()
            raise
        try:
            records = await read_game(store, game)
        finally:
            await store.close()
            await target.close()
        if not records:
            raise CliError(f"no game {game!r}")
        known_rules(records[0]["game_type"])
        return records

    if as_player is not None and spectator:
        err.print("[bold red]error:[/] --as and --spectator: one view at a time")
        raise typer.Exit(2)
    records: list[dict[str, Any]] = run_command(load())
    console = Console()
    try:
        if as_player is not None:
            notes, view, actions = seen_by(records, as_player)
            if as_json:
                print(json.dumps({"notifications": notes, "view": view, "actions": actions}))
                return
            out = RichTable(title=f"{game}: what {as_player} saw")
            for name in ("seq", "v", "message", "actions"):
                out.add_column(name, justify="right" if name != "message" else "left")
            for n in notes:
                out.add_row(
                    str(n["seq"]),
                    str(n["version"]),
                    _short(n["message"], width),
                    str(len(n["actions"])),
                )
            console.print(out)
            console.print(f"[bold]{as_player}'s view now:[/] {_short(view, 0)}")
            console.print(f"[bold]actions:[/] {_short(actions, width)}")
            return
        if spectator:
            updates = public_updates(records)
            if as_json:
                print(json.dumps(updates))
                return
            out = RichTable(title=f"{game}: what spectators saw")
            out.add_column("v", justify="right")
            out.add_column("public view")
            for u in updates:
                out.add_row(str(u["version"]), _short(u["view"], width))
            console.print(out)
            return
        replayed = replay(records)
    except CliError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None
    if as_json:
        print(json.dumps({"events": records, "final": replayed.state.summary()}))
    else:
        console.print(_timeline(records, width))
        s = replayed.state
        console.print(
            f"[bold]status[/] {s.status}  [bold]version[/] {s.version}  "
            f"[bold]seats[/] {', '.join(s.seats)}"
        )
        if replayed.recorded is not None:
            console.print(f"[bold]outcome[/] {_short(replayed.recorded, 0)}")
    if replayed.recorded is not None and not replayed.consistent:
        err.print(
            f"[bold red]the rules derive another outcome from the events:[/] "
            f"{_short(replayed.derived, 0)}"
        )
        raise typer.Exit(1)
