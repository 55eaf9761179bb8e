"""The Python client SDK for cardroom: play games over NATS as one player."""

from . import natsfix
from .client import RETRY_LATER, CardroomError, Client, Handler, Verdict, Verifier

natsfix.mend()

__all__ = ["RETRY_LATER", "CardroomError", "Client", "Handler", "Verdict", "Verifier"]
