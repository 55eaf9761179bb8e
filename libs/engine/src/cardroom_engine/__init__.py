"""The game engine: the rules protocol, the table aggregate around any game, the registry.

Pure: no I/O, no asyncio, no clocks. Services feed it commands, acks and randomness, and
persist what it returns.
"""

from . import inputs, numbering, steps
from .game import (
    NEW_TABLE,
    Bot,
    BotFactory,
    Command,
    Completer,
    Deadline,
    Event,
    Game,
    GameRules,
    Message,
    NoMove,
    Outcome,
    RandomBot,
    Rejection,
    parse_command,
)
from .registry import Registry, registry
from .table import (
    AWAY,
    BACK,
    CREATED,
    FINISHED,
    JOINED,
    OPTIONS_KEY,
    PRESENCE,
    STARTED,
    TABLE_PREFIX,
    Table,
    TableDeadline,
    TableOptions,
    TableState,
)

__all__ = [
    "AWAY",
    "BACK",
    "CREATED",
    "FINISHED",
    "JOINED",
    "NEW_TABLE",
    "OPTIONS_KEY",
    "PRESENCE",
    "STARTED",
    "TABLE_PREFIX",
    "Bot",
    "BotFactory",
    "Command",
    "Completer",
    "Deadline",
    "Event",
    "Game",
    "GameRules",
    "Message",
    "NoMove",
    "Outcome",
    "RandomBot",
    "Registry",
    "Rejection",
    "Table",
    "TableDeadline",
    "TableOptions",
    "TableState",
    "inputs",
    "numbering",
    "parse_command",
    "registry",
    "steps",
]
