"""Identifiers: ULID-based object ids, thread ids and person identities, parsed and checked."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ulid import ULID

from gateway.errors import GatewayError

PLATFORMS = ("slack", "telegram", "discord", "web")

# Matched whole (fullmatch: "$" alone would let a trailing newline through) and ASCII-only, so
# "\d" takes no other script's digits: one conversation has exactly one spelling.
_THREAD_PATTERNS: dict[str, re.Pattern[str]] = {
    "slack": re.compile(r"slack:(?P<channel>[A-Z0-9]{2,32}):(?P<ts>\d{1,12}\.\d{1,9})", re.ASCII),
    "telegram": re.compile(r"telegram:(?P<chat>-?\d{1,20})(?::(?P<topic>\d{1,12}))?", re.ASCII),
    "discord": re.compile(r"discord:(?P<channel>\d{5,25})", re.ASCII),
    "web": re.compile(r"web:(?P<room>[A-Za-z0-9_-]{1,64})", re.ASCII),
}
_IDENTITY = re.compile(r"(?P<platform>[a-z][a-z0-9_-]{0,31}):(?P<id>[^\s]{1,128})")


def new_id(prefix: str) -> str:
    """A sortable, unique id such as ``prm_01J…``."""
    return f"{prefix}_{ULID()}"


@dataclass(frozen=True, slots=True)
class ThreadRef:
    """A parsed thread id: its platform and the coordinates inside it."""

    thread_id: str
    platform: str
    parts: tuple[str, ...]


def parse_thread_id(thread_id: str) -> ThreadRef:
    """Parse ``<platform>:<coordinates>`` as the contract spells it, or raise ``INVALID_THREAD_ID``."""
    platform = thread_id.split(":", 1)[0] if isinstance(thread_id, str) else ""
    pattern = _THREAD_PATTERNS.get(platform)
    match = pattern.fullmatch(thread_id) if pattern else None
    if match is None:
        raise GatewayError(
            "INVALID_THREAD_ID",
            f"{thread_id!r} is not a thread id. Use slack:<channel>:<thread_ts>, telegram:<chat_id>"
            "[:<topic_id>], discord:<channel_id> or web:<room>.",
            400,
            {"thread_id": thread_id},
        )
    parts = tuple(value for value in match.groups() if value is not None)
    return ThreadRef(thread_id, platform, parts)


def is_identity(value: str) -> bool:
    """True for ``<platform>:<id>`` identities such as ``slack:U0123ABC``."""
    return bool(_IDENTITY.fullmatch(value))
