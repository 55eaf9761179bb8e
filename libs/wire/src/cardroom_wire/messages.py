"""Messages on the wire: requests, replies, notifications.

Every message is one JSON object with a ``type`` field (requests) or an ``ok`` field
(replies). Every reply is ``{"ok": true, ...}`` or
``{"ok": false, "error": {"code": ..., "message": ...}}``; codes are stable strings listed in
:class:`ErrorCode` and are what programs should branch on. Messages never carry anything a
recipient may not see: the hidden-information rules are enforced where they are built.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, Literal, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError

from .ids import SeatKey, Token

MAX_MESSAGE_BYTES = 64 * 1024
"""Largest request accepted from outside; larger ones are refused with ``too_large``."""

MAX_VERSION = 2**31 - 1
"""The largest event version storage holds (a 32-bit column): a larger one is refused at the
edge, before it can reach a statement that other players' requests share."""


class ErrorCode(StrEnum):
    BAD_JSON = "bad_json"
    BAD_REQUEST = "bad_request"  # schema: unknown type, missing field, wrong type
    TOO_LARGE = "too_large"
    BAD_ID = "bad_id"
    UNKNOWN_GAME = "unknown_game"
    UNKNOWN_GAME_TYPE = "unknown_game_type"
    BAD_CONFIG = "bad_config"
    NOT_SEATED = "not_seated"
    ALREADY_SEATED = "already_seated"
    TABLE_FULL = "table_full"
    TOO_MANY_TABLES = "too_many_tables"  # create: this player's tables waiting for players
    TOO_MANY_BOTS = "too_many_bots"  # bots: this player's bots playing at once
    NOT_CREATOR = "not_creator"
    NOT_ENOUGH_PLAYERS = "not_enough_players"
    ALREADY_STARTED = "already_started"
    NOT_STARTED = "not_started"
    GAME_FINISHED = "game_finished"
    AWAITING_ACKS = "awaiting_acks"
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL_MOVE = "illegal_move"
    UNKNOWN_COMMAND = "unknown_command"
    UNKNOWN_VERSION = "unknown_version"
    NOT_ADDRESSEE = "not_addressee"
    CONFLICT = "conflict"  # lost an optimistic-concurrency race; retry
    KEY_REQUIRED = "key_required"  # a game whose seats are bound to keys: join with a key
    BAD_TOKEN = "bad_token"  # renew: a token that is malformed, forged or expired
    RATE_LIMITED = "rate_limited"  # this player sends faster than the service takes; slow down
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"


class ErrorBody(BaseModel):
    model_config = ConfigDict(frozen=True)
    code: str
    message: str


class WireError(Exception):
    """An error that is answered to the sender as ``{"ok": false, "error": ...}``."""

    def __init__(self, code: str | ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message

    def body(self) -> ErrorBody:
        return ErrorBody(code=self.code, message=self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled (a worker process's error) as its two fields: the default would rebuild it
        # from ``args``, which hold the message only
        return (type(self), (self.code, self.message))


def ok(**fields: Any) -> dict[str, Any]:
    return {"ok": True, **fields}


def error(code: str | ErrorCode, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": str(code), "message": message}}


def error_from(exc: WireError) -> dict[str, Any]:
    return error(exc.code, exc.message)


# -- requests --------------------------------------------------------------------------


class _Request(BaseModel):
    # strict: "3" is not a version, 1.0 is not a seat count
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


# The lobby requests that act for a player name it in their subject
# (``<root>.lobby.<verb>.<player>``), never in the body: the broker checks the subject.


_KEY_DOC = (
    "the Ed25519 verify key the asker binds to its seat: 64 lowercase hexadecimal characters "
    "(anything else is refused bad_request); recorded in its table.joined event and fixed "
    "for the game. Required (key_required) by games whose seats are bound to keys (Macaua "
    "signs every move and checks each against its seat's key), optional elsewhere"
)


class CreateTable(_Request):
    """Create a table and take its first seat (the asker, named by the subject).

    ``key``: the verify key the creator binds to its seat, as in :class:`JoinTable`."""

    type: Literal["create"] = "create"
    game_type: Token
    config: dict[str, Any] = Field(default_factory=dict)
    seats: int | None = Field(default=None, ge=1, le=16)
    game: Token | None = None  # a caller-chosen id; generated when absent
    key: SeatKey | None = Field(default=None, description=_KEY_DOC)


class JoinTable(_Request):
    """Take the next seat of a table for the asker (the player the subject names, never one
    a body names).

    ``key``: the Ed25519 verify key (64 lowercase hex characters) the asker binds to its seat
    at this table. It is recorded in the seat's ``table.joined`` event and cannot change
    afterwards (a second join is refused ``already_seated``, whatever key it names), and no
    two seats of a table hold the same key (``bad_request``). A game whose rules declare
    ``seat_keys`` (its moves are signed: Macaua) refuses a join without one
    (``key_required``), so that the server or another player cannot swap a key later: the
    rules check every signed move against the key the seat joined with. ``null`` is the
    same as absent."""

    type: Literal["join"] = "join"
    game: Token
    key: SeatKey | None = Field(default=None, description=_KEY_DOC)


class StartTable(_Request):
    type: Literal["start"] = "start"
    game: Token


class ListTables(_Request):
    type: Literal["list"] = "list"
    game_type: Token | None = None
    status: Literal["lobby", "playing", "finished"] | None = None


class GetTable(_Request):
    type: Literal["get"] = "get"
    game: Token


MAX_BOTS = 9
"""Bots one ``bots`` request may seat."""


class SeatBots(_Request):
    """Seat ``count`` bots of ``kind`` (one of the game's bot kinds) at a table waiting for
    players, of which the asker holds a seat. Each bot is a player of its own, registered as
    any guest is, that acts only for its own seat; the service that runs bots (the web edge)
    plays them. Refused ``not_seated`` to a player without a seat there (nobody fills
    another's table), ``already_started`` once it started, ``table_full`` past its free
    seats, ``bad_request`` for a kind the game lacks, ``too_many_bots`` past the bots one
    player may have playing at once, ``unavailable`` where no service runs bots, it runs as
    many as it may, or bots are being seated at many tables at once (send again later)."""

    type: Literal["bots"] = "bots"
    game: Token
    count: int = Field(default=1, ge=1, le=MAX_BOTS)
    kind: Token = "heuristic"


class Register(_Request):
    """A guest asks the lobby for its player id and a token (no fields); one nonce, one player."""

    type: Literal["register"] = "register"


class RenewToken(_Request):
    """A player trades its still-valid token for a fresh one (same player, later expiry)."""

    type: Literal["renew"] = "renew"
    token: str = Field(min_length=1, max_length=256)


class LobbyRequest(
    RootModel[
        Annotated[
            CreateTable
            | JoinTable
            | StartTable
            | ListTables
            | GetTable
            | SeatBots
            | Register
            | RenewToken,
            Field(discriminator="type"),
        ]
    ]
):
    """A request on ``<root>.lobby.<verb>.<asker>``: its ``type`` is the subject's verb (a
    body without one takes the verb's; one that names another verb is refused)."""


class Command(BaseModel):
    """A player's command. ``type`` names the move; the game validates the other fields."""

    model_config = ConfigDict(extra="allow", frozen=True)
    type: str = Field(min_length=1, max_length=64)
    id: Token  # the command id: a repeated id returns the first accepted answer

    def fields(self) -> dict[str, Any]:
        data = self.model_dump()
        data.pop("id")
        return data


class TransitionRejection(_Request):
    """Why a player refuses to sign a transition (games that sign their transitions)."""

    code: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9_]+$")
    reason: str = Field(default="", max_length=500)
    blame: str = Field(
        min_length=1, max_length=64, description="'server', or the player the evidence blames"
    )
    version: int | None = Field(default=None, ge=1, le=MAX_VERSION)
    evidence: dict[str, Any] = Field(
        default_factory=dict, description="the transition as received (cut to 16 KB)"
    )


class Ack(_Request):
    type: Literal["ack"]
    version: int = Field(ge=1, le=MAX_VERSION)
    signature: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{128}$",
        description="games that sign their transitions (Macaua): the player's Ed25519 "
        "signature of the transition it checked, 128 lowercase hex digits",
    )
    reject: TransitionRejection | None = Field(
        default=None,
        description="instead of a signature: the player refuses the transition, and the "
        "table halts with this evidence",
    )


class SyncRequest(_Request):
    type: Literal["sync"]


# -- outputs ---------------------------------------------------------------------------


class Notification(BaseModel):
    """What a player receives on ``<root>.player.<player>.<game>``.

    ``seq`` counts this player's notifications in this game from 1 without gaps, so a client
    sees a gap at once and resyncs; ``version`` is the event version to acknowledge.
    """

    model_config = ConfigDict(frozen=True)
    type: Literal["notification"] = "notification"
    game: str
    player: str
    seq: int
    version: int
    message: dict[str, Any]
    actions: list[dict[str, Any]] = Field(default_factory=list)
    view: dict[str, Any] | None = None  # the player's whole view, sent when it must act
    ack: bool = True  # False for informational messages that hold no gate


class PublicUpdate(BaseModel):
    """What spectators receive on ``<root>.public.<game>``: the public view only."""

    model_config = ConfigDict(frozen=True)
    type: Literal["public"] = "public"
    game: str
    version: int
    view: dict[str, Any]


class SyncReply(BaseModel):
    model_config = ConfigDict(frozen=True)
    ok: Literal[True] = True
    game: str
    player: str
    version: int
    view: dict[str, Any]
    actions: list[dict[str, Any]] = Field(default_factory=list)
    notifications: list[Notification] = Field(default_factory=list)
    last_seq: int = 0
    turn_due_in_ms: int | None = Field(
        None,
        ge=0,
        description=(
            "milliseconds left, counted when the server answered, before the game moves by"
            " itself: the house plays for whoever must act (the table's turn_timeout) or the"
            " game's own deadline passes, whichever is first; the same for every seat. null:"
            " no such clock runs or is known yet, or a gate is held (the turn has not"
            " started)"
        ),
    )


M = TypeVar("M", bound=BaseModel)


def decode_json(data: bytes | str, limit: int = MAX_MESSAGE_BYTES) -> Any:
    """Parse an incoming payload, refusing oversized or malformed input with a WireError."""
    raw = data.encode() if isinstance(data, str) else data
    if len(raw) > limit:
        raise WireError(ErrorCode.TOO_LARGE, f"message is {len(raw)} bytes; the limit is {limit}")
    if b"\\u0000" in raw:  # PostgreSQL's jsonb cannot hold a NUL character in a string
        raise WireError(ErrorCode.BAD_JSON, "NUL characters (\\u0000) are not accepted")
    try:
        return orjson.loads(raw)  # (strict: no NaN, no integers beyond 64 bits)
    except orjson.JSONDecodeError as exc:  # (malformed UTF-8 too)
        raise WireError(ErrorCode.BAD_JSON, f"not valid JSON: {exc.msg}") from None


def cut(name: object, limit: int = 40) -> str:
    """A name someone sent (a field, a key), cut short enough to repeat in a message."""
    text = str(name)
    return text if len(text) <= limit else text[:limit] + "..."


def describe_validation(
    exc: ValidationError, *, most: int = 5, prefix: str = "", default: str = "message"
) -> str:
    """A short message naming the first ``most`` bad fields (``location: message``, the
    location under ``prefix``; ``default`` where it is empty). pydantic's messages do not
    repeat the input, but a location may be a key the sender chose: each part is cut."""
    parts = []
    for err in exc.errors()[:most]:
        where = ".".join(cut(p) for p in (prefix, *err["loc"]) if p != "") or default
        parts.append(f"{where}: {err['msg']}" if where else str(err["msg"]))
    return "; ".join(parts)


def parse(model: type[M], payload: Any) -> M:
    """Validate a decoded payload against ``model`` or raise ``bad_request``."""
    if not isinstance(payload, dict):
        raise WireError(ErrorCode.BAD_REQUEST, "a message must be a JSON object")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        code = (
            ErrorCode.BAD_ID
            if any("letters, digits" in str(e.get("msg", "")) for e in exc.errors())
            else ErrorCode.BAD_REQUEST
        )
        raise WireError(code, describe_validation(exc)) from None


def dumps(obj: BaseModel | Any) -> bytes:
    """Compact JSON, UTF-8: a model, or any JSON value (dict keys that are not strings
    become strings). orjson, because the standard library's encoder is a large share of a
    service's CPU (every notification, reply and event: bench/README.md, "JSON"); what
    orjson refuses (integers beyond 64 bits) goes through the standard library."""
    if isinstance(obj, BaseModel):
        return obj.model_dump_json().encode()
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
