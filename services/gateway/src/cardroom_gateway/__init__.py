"""Gateway: the take5 TCP protocol (one JSON value per line) onto cardroom's subjects."""

from .lines import LineErrorCode, parse, translate
from .service import Gateway
from .settings import GatewaySettings

__all__ = ["Gateway", "GatewaySettings", "LineErrorCode", "parse", "translate"]
