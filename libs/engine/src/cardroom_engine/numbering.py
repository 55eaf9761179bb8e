"""Notifications, numbered: the one definition of ``seq``.

Each player's notifications in a game are numbered ``seq`` 1, 2, ... without gaps, counted
over the game's events in order (a client that sees a gap syncs). Everyone who numbers them
does it here, so the gamemaster's live notifications, the projector's stored ones, a
rebuild's and a replay's are the same documents:

- :func:`notify`: one new event: the state after it and each addressee's numbered
  notification (built by ``Table.notification``);
- :func:`fold`: a log: the state at its end, counting each event's notifications from its
  recorded addressees (``metadata.to``) without running the game's ``notify``, or with it
  for an event recorded without them;
- :func:`count`: the numbering itself, for a reader that folds events its own way;
  :class:`Tally` the same for a run of events that are only counted.

Pure, like the rest of the engine; ``seqs`` (player -> last ``seq``) is updated in place.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any, NamedTuple

from .game import Event
from .table import Table, TableState

#: Each player's last notification number in one game.
Seqs = dict[str, int]


class Numbered(NamedTuple):
    """One addressee's notification of one event."""

    player: str
    seq: int
    version: int  # the version the player acknowledges (``TableState.seen``)
    #: the ``cardroom_wire.Notification`` document; None when not asked for (see ``owed``)
    document: dict[str, Any] | None


def count(seqs: Seqs, addressees: Iterable[str]) -> list[int]:
    """Number one event's notifications: each addressee's next ``seq``, in order."""
    numbers = []
    for player in addressees:
        seq = seqs[player] = seqs.get(player, 0) + 1
        numbers.append(seq)
    return numbers


class Tally:
    """Events counted but not yet numbered, by their addressees. A log's events share a few
    addressee lists (readers such as ``read_histories`` decode equal lists once), so a run
    of them is numbered once per list (:meth:`into`), not once per event: the last ``seq``
    of each player is the same in any order."""

    __slots__ = ("_runs",)

    def __init__(self) -> None:
        # id of an addressee list -> [the list, events]; the list is kept, so its id stays
        self._runs: dict[int, list[Any]] = {}

    def add(self, addressees: Sequence[str]) -> None:
        """Count one event sent to ``addressees`` (not to be changed until :meth:`into`)."""
        run = self._runs.get(id(addressees))
        if run is None:
            self._runs[id(addressees)] = [addressees, 1]
        else:
            run[1] += 1

    def into(self, seqs: Seqs) -> None:
        """Number every event counted so far into ``seqs``; the tally is then empty."""
        for addressees, events in self._runs.values():
            for player in addressees:
                seqs[player] = seqs.get(player, 0) + events
        self._runs.clear()


def notify(
    table: Table,
    state: TableState,
    event: Event,
    seqs: Seqs,
    *,
    owed: Collection[tuple[int, str]] | None = None,
    sent_to: Sequence[str] | None = None,
) -> tuple[TableState, list[Numbered]]:
    """Apply ``event``: the state after it and its addressees' notifications, numbered.

    ``owed``: build the documents of these ``(version, player)`` only (the others are
    numbered all the same); None builds every one. ``sent_to``: the event's addressees as
    recorded (``metadata.to``); with ``owed``, the game's ``notify`` runs only when one of
    them is owed (a rebuild owes few of a log's notifications, and building the others was
    most of folding a game whose events change what the seats see).
    """
    after = table.evolve(state, event)
    if (
        owed is not None
        and sent_to is not None
        and not any((after.seen(p), p) in owed for p in sent_to)
    ):
        numbers = count(seqs, sent_to)
        return after, [
            Numbered(p, seq, after.seen(p), None) for p, seq in zip(sent_to, numbers, strict=True)
        ]
    messages = table.notify(state, event, after)
    numbered = []
    for (player, message), seq in zip(messages.items(), count(seqs, messages), strict=True):
        shown = after.seen(player)
        document = (
            table.notification(after, player, seq, message)
            if owed is None or (shown, player) in owed
            else None
        )
        numbered.append(Numbered(player, seq, shown, document))
    return after, numbered


def fold(
    table: Table,
    state: TableState,
    seqs: Seqs,
    entries: Iterable[tuple[Event, Sequence[str] | None]],
) -> TableState:
    """Fold events (each with its recorded addressees, None when it has none) into
    ``state``, numbering their notifications; the state at the end. Events with their
    addressees recorded are folded in runs (``Table.evolve_many``), the others one by one
    through the game's ``notify``."""
    run: list[Event] = []
    tally = Tally()
    for event, sent_to in entries:
        if sent_to is None:
            state, run = table.evolve_many(state, run), []
            after = table.evolve(state, event)
            sent_to = list(table.notify(state, event, after))
            state = after
        else:
            run.append(event)
        tally.add(sent_to)
    tally.into(seqs)
    return table.evolve_many(state, run) if run else state
