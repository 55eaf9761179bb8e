"""game event names: every game's events are named ``<game>.<what_happened>``

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 11:30:00

take5 (``dealt`` -> ``take5.dealt``), the 66 game (``round_dealt`` -> ``sixtysix.round_dealt``)
and papas (``PlayCard`` -> ``papas.card_played``, its events were named after its protocol's
messages) recorded their events under the names of their first versions; the games now name
them like Macaua (``macaua.played``) and the engine (``table.created``). This renames the
stored ones in place, so that a game recorded before still loads, replays and finishes:
``events.type`` of each game's streams (matched by ``stream_type``, so another game's event of
the same name is left alone). Nothing else stored holds a game's event type: notifications
keep their protocol names (papas' ``PlayCard`` message is unchanged), and the views, tables,
commands, signatures and analytics hold no event type. Macaua and the engine's ``table.*``
events keep their names. Downgrade renames them back.

The names are written out here, not imported: a migration must mean the same thing whatever
the games' code says later.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TAKE5 = (
    "dealt",
    "turn_started",
    "card_played",
    "plays_revealed",
    "card_placed",
    "choice_requested",
    "row_taken",
    "game_ended",
)
_SIXTYSIX = (
    "round_dealt",
    "first_cards_shown",
    "turn_started",
    "turn_prompted",
    "deck_card_taken",
    "discarded_card_taken",
    "round_stopped",
    "cards_replaced",
    "cards_shown",
    "claim_confirmed",
    "card_discarded",
    "power_prompted",
    "own_card_peeked",
    "anothers_card_peeked",
    "swap_own_picked",
    "cards_exchanged",
    "round_finished",
    "next_round_prompted",
)
_PAPAS = {
    "GameStart": "dealt",
    "PlayCard": "card_played",
    "PlayThreesome": "threesome_played",
    "SelectTargets": "targets_selected",
    "SkipReaction": "reaction_skipped",
    "InterruptPlayed": "interrupt_played",
    "NoInterrupt": "not_interrupted",
    "CardSelection": "selection_offered",
    "CardSelected": "card_selected",
    "CardNameSelected": "card_name_selected",
    "ActionResolved": "action_resolved",
    "EndTurn": "turn_ended",
    "DiscardAndDraw": "discarded_and_drawn",
    "AutoDraw": "auto_drawn",
    "DrawCard": "card_drawn",
    "DiscardCards": "card_discarded",
    "NextTurn": "turn_passed",
    "EndScore": "game_won",
}

#: (stream_type, old type, new type) of every renamed event type.
RENAMES: tuple[tuple[str, str, str], ...] = (
    *(("take5", old, f"take5.{old}") for old in _TAKE5),
    *(("sixtysix", old, f"sixtysix.{old}") for old in _SIXTYSIX),
    *(("papas", old, f"papas.{new}") for old, new in _PAPAS.items()),
)


def _rename(pairs: Sequence[tuple[str, str, str]]) -> None:
    """One pass over ``events``: each row whose (stream_type, type) is a pair's first two is
    given the pair's third."""
    rows = ", ".join(f"(:g{i}, :f{i}, :t{i})" for i in range(len(pairs)))
    params: dict[str, str] = {}
    for i, (game, old, new) in enumerate(pairs):
        params.update({f"g{i}": game, f"f{i}": old, f"t{i}": new})
    op.get_bind().execute(
        sa.text(
            "UPDATE events AS e SET type = r.new"
            f" FROM (VALUES {rows}) AS r(stream_type, old, new)"
            " WHERE e.stream_type = r.stream_type AND e.type = r.old"
        ),
        params,
    )


def upgrade() -> None:
    _rename(RENAMES)


def downgrade() -> None:
    _rename([(game, new, old) for game, old, new in RENAMES])
