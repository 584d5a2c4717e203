"""The Redis store: keys hash-tagged by thread, one Lua script per state change."""

from gateway.store.connection import Connection, connect, redact_url, trim_idle
from gateway.store.results import (
    Decision,
    FeedEntry,
    Kept,
    OutboxBatch,
    OutboxPass,
    ReadyAnswer,
    Refusal,
    Settlement,
)
from gateway.store.store import Store

__all__ = [
    "Connection",
    "Decision",
    "FeedEntry",
    "Kept",
    "OutboxBatch",
    "OutboxPass",
    "ReadyAnswer",
    "Refusal",
    "Settlement",
    "Store",
    "connect",
    "redact_url",
    "trim_idle",
]
