"""Migration 0009 renames the stored events of take5, the 66 game and papas to
``<game>.<what_happened>``: a game recorded under the old names still loads, replays and
finishes as it did.

``recorded_before_0009.json`` holds one seeded game of each (the 66 game in both protocol
generations), recorded by the games' code before the rename: every event as it was stored
(type, data, addressees), the moment half-way through the game when the next command was
chosen (``cut``, the number of events by then, and the state of the game's random generator
then), the outcome, and ``digest``: the SHA-256 of what the projector's own fold
(``project_log``, which replays, rebuilds and syncs use) made of the whole log then, every
notification with its ``seq``, every spectator update and the final views and actions. The
games are played the way ``simulate.play`` plays them with random choices: the generator
picks a player who may move, then one of its listed actions; the same state and generator
give the same game.

Each game is stored twice on a database at revision 0008, whole and up to its cut. After the
upgrade, the whole game's log folds to the same digest with today's code, and the cut game,
loaded from the store and played on from its cut with the recorded generator, ends with the
recorded events and outcome and folds to the same digest too. The stored names change, and
only those of these three games: another game type's events of the same names, the
``table.*`` events and Macaua's are left as they were. A downgrade gives back the recorded
names of every event, those the played-on games appended included.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from cardroom_engine import Event, Table, TableState, registry
from cardroom_eventstore import Append, EventStore, NewEvent, RecordedEvent
from cardroom_projector import project_log
from cardroom_runtime.games import load_games

RECORDED: list[dict[str, Any]] = json.loads(
    Path(__file__).with_name("recorded_before_0009.json").read_text()
)
RUNNING = "-running"  # the stream id suffix of a game stored up to its cut


def digest(game_type: str, records: Sequence[RecordedEvent]) -> str:
    """What the projector's fold makes of a log, as one hash."""
    entries = [(r.version, {**r.data, "type": r.type}, r.metadata.get("to")) for r in records]
    _, projected, views = project_log(None, game_type, entries)
    doc = {
        "projected": [
            [
                p.version,
                [[n.player_id, n.seq, n.version, n.payload] for n in p.notes],
                None if p.public is None else p.public.model_dump(mode="json"),
            ]
            for p in projected
        ],
        "views": [[v.player_id, v.version, v.view, v.actions, v.seq] for v in views],
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def as_new(event: dict[str, Any]) -> NewEvent:
    return NewEvent(event["type"], event["data"], addressees=frozenset(event["to"]))


async def store_recorded(store: EventStore, game: dict[str, Any], stream: str, end: int) -> None:
    events = [as_new(e) for e in game["events"][:end]]
    await store.append(Append(stream, game["game_type"], 0, events))


def generator(game: dict[str, Any]) -> random.Random:
    version, internal, gauss = game["rng"]
    rng = random.Random()
    rng.setstate((version, tuple(internal), gauss))
    return rng


def play_on(table: Table, state: TableState, rng: random.Random) -> tuple[TableState, list[Event]]:
    """The rest of the game from ``state``, chosen as the recording chose (``simulate.play``
    with random choices): every event through JSON, as the store gives it back."""
    out: list[Event] = []

    def apply(events: list[Event]) -> None:
        nonlocal state
        for produced in events:
            event = json.loads(json.dumps(produced))
            out.append(
                {**event, "to": sorted(table.notify(state, event, table.evolve(state, event)))}
            )
            state = table.evolve(state, event)

    while state.status == "playing":
        movers = [(p, a) for p in state.seats if (a := table.actions(state, p))]
        player, actions = rng.choice(movers)
        apply(table.decide(state, player, dict(rng.choice(actions)), rng, gate_open=True))
        while events := table.follow_up(state, rng):
            apply(events)
    return state, out


def types(records: Sequence[RecordedEvent]) -> list[str]:
    return [r.type for r in records]


async def test_games_recorded_under_the_old_names_load_replay_and_finish_after_0009(
    es_empty_database_url: str, es_alembic_config: Callable[[str], Config]
) -> None:
    load_games("")
    config = es_alembic_config(es_empty_database_url)
    await asyncio.to_thread(command.upgrade, config, "0008")
    store = await EventStore.connect(es_empty_database_url)
    try:
        for game in RECORDED:
            await store_recorded(store, game, game["game"], len(game["events"]))
            await store_recorded(store, game, game["game"] + RUNNING, game["cut"])
        # another game type's events that happen to have the old names
        others = [NewEvent("dealt", {}), NewEvent("PlayCard", {}), NewEvent("round_dealt", {})]
        await store.append(Append("other", "highcard", 0, others))

        await asyncio.to_thread(command.upgrade, config, "0009")

        for game in RECORDED:
            game_type, recorded = game["game_type"], game["events"]
            records = await store.read_stream(game["game"])
            # the same events: versions, data and addressees; only the game's own types
            # renamed, each old name to one new name of the game's, the others unchanged
            assert [r.data for r in records] == [e["data"] for e in recorded]
            assert [r.metadata["to"] for r in records] == [e["to"] for e in recorded]
            renamed: dict[str, str] = {}
            for record, event in zip(records, recorded, strict=True):
                old = event["type"]
                if old.startswith("table."):
                    assert record.type == old
                    continue
                assert record.type.startswith(f"{game_type}.")
                assert renamed.setdefault(old, record.type) == record.type
            assert len(set(renamed.values())) == len(renamed)
            # replayed, the log makes every notification, view and action it made before
            assert digest(game_type, records) == game["digest"]
            state = Table(registry.get(game_type)).replay(
                [{**r.data, "type": r.type} for r in records]
            )
            assert state.status == "finished"
            assert state.outcome == game["outcome"]

            # the game recorded half-way loads from the store and plays on to the same end
            stream = game["game"] + RUNNING
            loaded = await store.read_stream(stream)
            assert len(loaded) == game["cut"]
            table = Table(registry.get(game_type))
            state = table.replay([{**r.data, "type": r.type} for r in loaded])
            state, rest = play_on(table, state, generator(game))
            assert state.outcome == game["outcome"]
            # today's code names each event as the migration renamed the recorded ones
            assert [e["type"] for e in rest] == [
                e["type"] if e["type"].startswith("table.") else renamed[e["type"]]
                for e in recorded[game["cut"] :]
            ]
            appended = [
                NewEvent(
                    e["type"],
                    {k: v for k, v in e.items() if k not in ("type", "to")},
                    addressees=frozenset(e["to"]),
                )
                for e in rest
            ]
            await store.append(Append(stream, game_type, len(loaded), appended))
            whole = await store.read_stream(stream)
            assert types(whole) == types(records)
            assert [r.data for r in whole] == [e["data"] for e in recorded]
            assert digest(game_type, whole) == game["digest"]

        assert types(await store.read_stream("other")) == ["dealt", "PlayCard", "round_dealt"]

        await asyncio.to_thread(command.downgrade, config, "0008")

        for game in RECORDED:
            names = [e["type"] for e in game["events"]]
            assert types(await store.read_stream(game["game"])) == names
            assert types(await store.read_stream(game["game"] + RUNNING)) == names
        assert types(await store.read_stream("other")) == ["dealt", "PlayCard", "round_dealt"]
    finally:
        await store.close()
