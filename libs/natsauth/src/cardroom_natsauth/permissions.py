"""What a player (or a guest) may do on NATS: DESIGN.md's rights as NATS permissions.

Identity is carried by the subject (``<root>.cmd.<game>.<player>``), so a player's rights are
plain subject permissions. A player may

- publish its own commands, acknowledgements, sync and lobby requests: ``<root>.cmd.*.<self>``,
  ``<root>.ack.*.<self>``, ``<root>.sync.*.<self>``, ``<root>.lobby.*.<self>``;
- subscribe its private tree ``<root>.player.<self>.>``, the public ``<root>.public.>`` and its
  own inbox prefix ``_INBOX_<root>.<self>.>`` (where the replies to its requests arrive).

Everything else is denied: other players' subjects, ``<root>.events.>``, ``<root>.internal.>``,
the shared ``_INBOX.>`` and anything under ``$JS.API`` (so no JetStream at all).

A guest (a connection that has no player yet) may only ask the lobby for one
(``<root>.lobby.register.<nonce>``) and read the replies on its own inbox prefix.

NATS checks the subjects a client publishes on, not the reply address it names; the services
answer only below the inbox prefix of the asker the subject names
(``Subjects.reply_prefix``), so the inbox prefixes here are the only places a player's
requests can make a service publish to.

The dictionaries returned here have the shape of the ``nats`` permissions of a user JWT
(``{"pub": {"allow": [...]}, "sub": {"allow": [...]}}``).
"""

from __future__ import annotations

import re
from typing import Any, Final

from cardroom_wire import Subjects, check_id

REGISTER_VERB: Final = "register"
"""The lobby verb a guest may call: it answers with a new player id and its token."""

_NONCE: Final = re.compile(r"[A-Za-z0-9_-]{22,64}")


def inbox_prefix(root: str, player: str) -> str:
    """The inbox prefix of ``player``: its requests' replies arrive below it.

    A client must connect with this prefix (nats-py: ``inbox_prefix=``), since it may not
    subscribe to the shared ``_INBOX.>``.
    """
    return Subjects(root).inbox(player)


def guest_inbox_prefix(root: str, nonce: str) -> str:
    """The inbox prefix of a guest that connected with ``nonce`` (see :func:`check_nonce`)."""
    return Subjects(root).guest_inbox(check_nonce(nonce))


def check_nonce(nonce: object) -> str:
    """A guest's nonce: 22 to 64 random token characters (at least 128 bits), else ValueError.

    The nonce names the guest's inbox, so it must be unguessable: whoever knew it could read
    the lobby's answer to that guest.
    """
    if not isinstance(nonce, str) or not _NONCE.fullmatch(nonce):
        raise ValueError("a guest nonce is 22 to 64 letters, digits, '-' or '_'")
    return nonce


def player_permissions(root: str, player: str) -> dict[str, Any]:
    """The NATS permissions of ``player`` under subject root ``root`` (user-JWT shape)."""
    s = Subjects(root)
    me = check_id(player, "player id")
    return {
        "pub": {
            "allow": [
                f"{s.root}.cmd.*.{me}",
                f"{s.root}.ack.*.{me}",
                f"{s.root}.sync.*.{me}",
                s.lobby_of(me),
            ]
        },
        "sub": {
            "allow": [
                s.player_all(me),
                s.public_all,
                f"{inbox_prefix(root, me)}.>",
            ]
        },
    }


def guest_permissions(root: str, nonce: str) -> dict[str, Any]:
    """The NATS permissions of a guest: ask the lobby for a player, read the answer."""
    s = Subjects(root)
    return {
        "pub": {"allow": [s.lobby(REGISTER_VERB, check_nonce(nonce))]},
        "sub": {"allow": [f"{guest_inbox_prefix(root, nonce)}.>"]},
    }


__all__ = [
    "REGISTER_VERB",
    "check_nonce",
    "guest_inbox_prefix",
    "guest_permissions",
    "inbox_prefix",
    "player_permissions",
]
