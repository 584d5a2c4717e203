"""Identifiers: ULID-based object ids, thread ids and person identities, parsed and checked.

Each installed platform (``gateway.base.platforms``) brings its own grammar. Its patterns are matched whole
(fullmatch: "$" alone would let a trailing newline through), so one conversation has exactly one spelling.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass

from gateway.base import platforms
from gateway.base.errors import GatewayError

# A channel an agent claims: an installed platform's name, then its channel's (or thread's) coordinates.
_CLAIM = re.compile(r"[A-Za-z0-9_.:-]{1,190}", re.ASCII)


# A ULID's text: its 128 bits (after 2 zero bits) in Crockford's base32, 26 characters, written here two
# characters (10 bits) per step from a table; python-ulid takes twice as long, and every answer makes some.
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PAIRS = [high + low for high in _CROCKFORD for low in _CROCKFORD]
_SHIFTS = tuple(range(120, -1, -10))
_ulid_lock = threading.Lock()
_last_ulid = 0


def new_ulid() -> str:
    """A ULID: 48 bits of Unix time in ms, then 80 random bits; within the millisecond of the one before,
    that one plus one (as python-ulid makes them), so the ids a process makes sort in the order made."""
    global _last_ulid
    ms = time.time_ns() // 1_000_000
    with _ulid_lock:
        if _last_ulid >> 80 == ms:
            value = _last_ulid = _last_ulid + 1
        else:
            value = _last_ulid = max(ms << 80 | int.from_bytes(os.urandom(10), "big"), _last_ulid + 1)
    return "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS])


def new_id(prefix: str) -> str:
    """A sortable, unique id such as ``prm_01J…``."""
    return f"{prefix}_{new_ulid()}"


@dataclass(frozen=True, slots=True)
class ThreadRef:
    """A parsed thread id: its platform and the coordinates inside it."""

    thread_id: str
    platform: str
    parts: tuple[str, ...]


def thread_forms() -> str:
    """The installed platforms' thread id forms, for a sentence that says what to use."""
    return platforms.either(found.thread_example for found in platforms.installed())


def parse_thread_id(thread_id: str) -> ThreadRef:
    """Parse ``<platform>:<coordinates>`` as its platform spells it, or raise ``INVALID_THREAD_ID``."""
    platform = platforms.platform(platforms.prefix(thread_id)) if isinstance(thread_id, str) else None
    match = platform.threads.fullmatch(thread_id) if platform else None
    if platform is None or match is None:
        raise GatewayError(
            "INVALID_THREAD_ID",
            f"{thread_id!r} is not a thread id. Use {thread_forms()}.",
            400,
            {"thread_id": thread_id},
        )
    parts = tuple(value for value in match.groups() if value is not None)
    return ThreadRef(thread_id, platform.name, parts)


def is_identity(value: str) -> bool:
    """True for ``<platform>:<id>`` identities that the installed platform's own grammar accepts."""
    platform = platforms.platform(platforms.prefix(value)) if isinstance(value, str) else None
    return platform is not None and platform.people.fullmatch(value) is not None


def vouched_for(identity: str) -> bool:
    """Whether someone stands behind ``identity``: a signed-in person (``person:<id>``), or a platform that
    signs its users in. A chat the gateway serves itself (a platform with a ``local`` chat) does not: its
    names are whatever a room token's holder chose."""
    if identity.startswith("person:"):
        return True
    platform = platforms.platform(platforms.prefix(identity))
    return platform is not None and getattr(platform, "local", None) is None


def person_examples() -> str:
    """An identity of each installed platform, for help texts and error messages."""
    return platforms.either(found.person_example for found in platforms.installed())


def channel_examples() -> str:
    """The installed platforms' channel reference forms."""
    return platforms.either(found.channel_example for found in platforms.installed())


def is_thread_or_channel(value: str) -> bool:
    """True for a thread id or a channel reference of an installed platform, as its grammar spells it."""
    platform = platforms.platform(platforms.prefix(value)) if isinstance(value, str) else None
    return platform is not None and bool(
        platform.threads.fullmatch(value) or platform.channels.fullmatch(value)
    )


def is_channel_claim(value: str) -> bool:
    """True for a channel an agent may claim: ``<platform>:<coordinates>`` of an installed platform."""
    head = platforms.prefix(value) if isinstance(value, str) else ""
    return platforms.platform(head) is not None and _CLAIM.fullmatch(value[len(head) + 1 :]) is not None
