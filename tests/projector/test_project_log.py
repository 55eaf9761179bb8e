"""The projector's fold (``project_log``): the paths that only count an event (not owed; in
runs when no spectator view is built) give what building every notification gives."""

from __future__ import annotations

import random
from typing import Any

import pytest
from cardroom_engine import Table, numbering, registry, simulate
from cardroom_engine.game import Game
from cardroom_games.papas import GAME as PAPAS
from cardroom_games.sixtysix import GAME as SIXTYSIX
from cardroom_games.take5 import GAME as TAKE5
from cardroom_projector import Entry, project_log
from support.highcard import GAME as HIGHCARD
from support.public import public_versions

GAMES: list[Game[Any]] = [HIGHCARD, PAPAS, TAKE5, SIXTYSIX]


def _log(game: Game[Any], seed: int) -> list[Entry]:
    """A random game's events as the store holds them: each with its addressees (``to``),
    presence changes in between, and (rarely) an old event recorded without ``to``."""
    rng = random.Random(seed)
    config = {"rounds": 2} if game is HIGHCARD else {}
    local = simulate.play(game, ["a", "b"], rng, config)
    out: list[Entry] = []
    for i, step in enumerate(local.steps):
        to = sorted(step.notifications) if rng.random() > 0.05 else None
        out.append((step.version, dict(step.event), to))
        if i > 3 and rng.random() < 0.03:
            out.append((0, {"type": "table.away", "player": "b"}, ["a"]))
            out.append((0, {"type": "table.back", "player": "b"}, ["a"]))
    return [(v, event, to) for v, (_, event, to) in enumerate(out, start=1)]


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_counting_only_the_acknowledged_gives_the_owed_notifications(game: Game[Any]) -> None:
    registry.register(game)
    for seed in range(8):
        entries = _log(game, seed)
        _, every, full_views = project_log(None, game.name, entries, spectator=False)
        sent = [n for item in every for n in item.notes]
        assert sent, "the game notifies its players"
        rng = random.Random(seed)
        owed = {(n.version, n.player_id) for n in sent if rng.random() < 0.2}
        for spectator in (False, True):
            proj, out, views = project_log(None, game.name, entries, spectator=spectator, owed=owed)
            built = [n for item in out for n in item.notes]
            assert built == [n for n in sent if (n.version, n.player_id) in owed]
            assert views == full_views
            assert proj.state.version == len(entries)
            assert proj.seqs == {p: max(n.seq for n in sent if n.player_id == p) for p in "ab"}
            if spectator:  # one public update per event, but none for one for some seats
                public = public_versions(game, [event for _, event, _ in entries])
                assert [item.version for item in out if item.public] == public
                # numbered without those: a spectator cannot count them
                shown = [item.public.version for item in out if item.public]
                assert shown == list(range(1, len(public) + 1))
        # the same log in two pieces, the second onto the projection of the first
        cut = len(entries) // 2
        proj, first, _ = project_log(None, game.name, entries[:cut], spectator=False, owed=owed)
        proj, second, views = project_log(
            proj, game.name, entries[cut:], spectator=False, owed=owed
        )
        assert [n for item in first + second for n in item.notes] == built
        assert views == full_views


def test_a_version_out_of_order_is_refused() -> None:
    registry.register(HIGHCARD)
    entries = _log(HIGHCARD, 1)
    entries[5], entries[6] = entries[6], entries[5]
    with pytest.raises(ValueError, match="applied as"):
        project_log(None, HIGHCARD.name, entries, spectator=False, owed=set())


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_gamemasters_fold_numbers_as_the_projector_and_the_live_path(game: Game[Any]) -> None:
    """``numbering.fold`` (a game loaded from its log) and ``numbering.notify`` event by
    event (the live path) end with the projector's state and each player's last ``seq``."""
    registry.register(game)
    table = Table(game)
    for seed in range(4):
        entries = _log(game, seed)
        proj, every, _ = project_log(None, game.name, entries, spectator=False)
        first = table.evolve(None, entries[0][1])
        seqs: numbering.Seqs = {}
        folded = numbering.fold(table, first, seqs, ((e, to) for _, e, to in entries[1:]))
        assert seqs == proj.seqs
        assert folded == proj.state
        live: numbering.Seqs = {}
        state = first
        sent = []
        for _, event, _ in entries[1:]:
            state, numbered = numbering.notify(table, state, event, live)
            sent += [(n.player, n.seq, n.version, n.document) for n in numbered]
        assert live == proj.seqs
        assert sent == [
            (n.player_id, n.seq, n.version, n.payload) for item in every for n in item.notes
        ]


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_games_notify_runs_only_for_what_is_owed(
    game: Game[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild owes few notifications: the game's ``notify`` (building them) runs for the
    events whose addressees were not recorded and for those with one owed, never for the
    rest, events for some seats only included."""
    registry.register(game)
    entries = _log(game, 3)
    _, every, _ = project_log(None, game.name, entries, spectator=False)
    sent = [n for item in every for n in item.notes]
    owed = {(n.version, n.player_id) for n in sent[-3:]}
    asked: list[int] = []
    notify = Table.notify

    def counting(self: Table, before: Any, event: Any, after: Any) -> Any:
        asked.append(after.version)
        return notify(self, before, event, after)

    monkeypatch.setattr(Table, "notify", counting)
    _, out, _ = project_log(None, game.name, entries, spectator=False, owed=owed)
    assert [n for item in out for n in item.notes] == sent[-3:]
    unrecorded = {v for v, _, to in entries if to is None and v > 1}  # 1: the creation
    with_owed = {item.version for item in every for n in item.notes if n in sent[-3:]}
    assert sorted(asked) == sorted(unrecorded | with_owed)


def _listed(table: Table, events: list[Any]) -> dict[str, Any]:
    """The lobby listing's row of a table, folded event by event: its summary as of the last
    event that changed its seats, status or seats away."""
    state = None
    listing: dict[str, Any] = {}
    for event in events:
        after = table.evolve(state, event)
        if state is None or (state.status, state.seats, state.away) != (
            after.status,
            after.seats,
            after.away,
        ):
            listing = after.summary()
        state = after
    return listing


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_listing_is_the_summary_of_its_last_change_however_the_log_is_cut(
    game: Game[Any],
) -> None:
    """What the projector stores in the lobby listing is a function of the log alone: the
    same whether the events come in one piece or many (JetStream's batches), with or
    without spectator views and owed notifications (the live path and a rebuild's runs);
    it is not rewritten by a game's move, but is by a seat marked away or back."""
    registry.register(game)
    table = Table(game)
    for seed in range(4):
        base = _log(game, seed)
        mid = len(base) // 2
        # a seat marked away in the middle of the game, and back a little later
        marked = [
            *base[:mid],
            (0, {"type": "table.away", "player": "b"}, ["a"]),
            *base[mid : mid + 3],
            (0, {"type": "table.back", "player": "b"}, ["a"]),
            *base[mid + 3 :],
        ]
        entries = [(v, event, to) for v, (_, event, to) in enumerate(marked, start=1)]
        _, every, _ = project_log(None, game.name, entries, spectator=False)
        sent = [n for item in every for n in item.notes]
        rng = random.Random(seed)
        owed = {(n.version, n.player_id) for n in sent if rng.random() < 0.2}
        stale = 0
        for end in sorted({max(2, len(entries) * k // 8) for k in range(1, 9)}):
            prefix = entries[:end]
            expected = _listed(table, [event for _, event, _ in prefix])
            final = table.replay([event for _, event, _ in prefix])
            stale += expected["version"] < final.summary()["version"]
            assert expected["away"] == list(final.away)
            for spectator in (False, True):
                for cuts in ([], [end // 2], sorted(rng.sample(range(1, end), min(3, end - 1)))):
                    proj = None
                    for lo, hi in zip([0, *cuts], [*cuts, end], strict=True):
                        if lo < hi:
                            proj, _, _ = project_log(
                                proj, game.name, prefix[lo:hi], spectator=spectator, owed=owed
                            )
                    assert proj is not None
                    assert proj.listing == expected
        assert stale, "a game in play keeps the row of its last change, not of every move"
