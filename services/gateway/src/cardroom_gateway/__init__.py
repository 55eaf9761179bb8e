"""Gateway: the take5 TCP protocol (one JSON value per line) onto cardroom's subjects, and the
web edge that serves the browser client."""

from .lines import LineErrorCode, parse, translate
from .service import Gateway
from .settings import GatewaySettings
from .web import Web, WebSettings

__all__ = [
    "Gateway",
    "GatewaySettings",
    "LineErrorCode",
    "Web",
    "WebSettings",
    "parse",
    "translate",
]
