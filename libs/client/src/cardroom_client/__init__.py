"""The Python client SDK for cardroom: play games over NATS as one player."""

from .client import CardroomError, Client, Handler

__all__ = ["CardroomError", "Client", "Handler"]
