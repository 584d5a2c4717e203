"""Every cursor a client may send, checked in one place: feed and log positions, inbox page cursors, and
the history's cursors.

A feed position is a Redis stream id ``<ms>-<seq>``; Redis holds each part in 64 bits, so a part beyond
that is refused before Redis sees it, and the largest id, after which nothing can ever come, reads empty.
"""

from __future__ import annotations

import base64
import binascii
import re

U64 = 2**64 - 1
STREAM_ID = r"^\d{1,20}-\d{1,20}$"
LAST_STREAM_ID = f"{U64}-{U64}"
PAGE_CURSOR = r"^\d{1,9}$"
_STREAM_ID = re.compile(STREAM_ID, re.ASCII)
STREAM_ID_PROBLEM = "expected a feed position <ms>-<seq> such as 1712345678901-0, each number at most 2^64-1"


def is_stream_position(value: str) -> bool:
    """True when ``value`` is a stream id Redis accepts."""
    if not _STREAM_ID.fullmatch(value):
        return False
    return all(int(part) <= U64 for part in value.split("-"))


def stream_position(value: str | None) -> str | None:
    """A feed cursor as a pydantic validator: raises ValueError unless it is a stream id Redis accepts."""
    if value is not None and not is_stream_position(value):
        raise ValueError(STREAM_ID_PROBLEM)
    return value


def exclusive_start(after: str | None) -> str | None:
    """The XRANGE start for entries strictly after ``after`` (``-`` for none); None when none can follow."""
    if not after:
        return "-"
    if after == LAST_STREAM_ID:
        return None
    return f"({after}"


HISTORY_CURSOR_PREFIX = "h1:"
HISTORY_CURSOR_PROBLEM = "expected the `next` value of an earlier history page, exactly as it was given"


def history_cursor(position: str) -> str:
    """The opaque cursor a history page hands out for continuing after the stream id ``position``."""
    raw = f"{HISTORY_CURSOR_PREFIX}{position}".encode("ascii")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def history_position(cursor: str) -> str:
    """The stream id a history cursor continues after; raises ValueError for anything it did not make."""
    if len(cursor) > 80 or not cursor.isascii():
        raise ValueError(HISTORY_CURSOR_PROBLEM)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        raise ValueError(HISTORY_CURSOR_PROBLEM) from None
    position = raw.removeprefix(HISTORY_CURSOR_PREFIX)
    if position == raw or not is_stream_position(position):
        raise ValueError(HISTORY_CURSOR_PROBLEM)
    return position
