"""The public wire contract of cardroom: subjects, id tokens, requests, replies, notifications.

Pure: no I/O. Every process and every client speaks through these definitions.
"""

from .ids import MAX_ID_LENGTH, InvalidId, Token, check_id, is_id, new_id
from .messages import (
    MAX_MESSAGE_BYTES,
    Ack,
    Command,
    CreateTable,
    ErrorBody,
    ErrorCode,
    GetTable,
    JoinTable,
    ListTables,
    Notification,
    PublicUpdate,
    StartTable,
    SyncReply,
    SyncRequest,
    WireError,
    decode_json,
    dumps,
    error,
    error_from,
    ok,
    parse,
)
from .subjects import DEFAULT_ROOT, Subjects

__all__ = [
    "DEFAULT_ROOT",
    "MAX_ID_LENGTH",
    "MAX_MESSAGE_BYTES",
    "Ack",
    "Command",
    "CreateTable",
    "ErrorBody",
    "ErrorCode",
    "GetTable",
    "InvalidId",
    "JoinTable",
    "ListTables",
    "Notification",
    "PublicUpdate",
    "StartTable",
    "Subjects",
    "SyncReply",
    "SyncRequest",
    "Token",
    "WireError",
    "check_id",
    "decode_json",
    "dumps",
    "error",
    "error_from",
    "is_id",
    "new_id",
    "ok",
    "parse",
]
