"""The Python client SDK for cardroom: play games over NATS as one player.

Importing the package mends nats-py's PONG handling (:mod:`.natsfix`) and nothing more; the
client itself is imported when first named (``from cardroom_client import Client``), so that
the services, which import the package for the mend alone, do not pay for the client's
imports at every start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import natsfix

natsfix.mend()

if TYPE_CHECKING:
    from .client import RETRY_LATER, CardroomError, Client, Handler, Verdict, Verifier

__all__ = ["RETRY_LATER", "CardroomError", "Client", "Handler", "Verdict", "Verifier"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
