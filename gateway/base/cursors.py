"""Every cursor a client may send, checked in one place: feed and log positions, inbox page cursors, and
the history's cursors.

A feed position is a Redis stream id ``<ms>-<seq>``; Redis holds each part in 64 bits, so a part beyond
that is refused before Redis sees it, and the largest id, after which nothing can ever come, reads empty.
"""

from __future__ import annotations

import base64
import binascii
import re

from gateway.base.partitions import EVERY_PARTITION

U64 = 2**64 - 1
Position = tuple[int, int]  # a stream id as a comparable pair of numbers
START: Position = (0, 0)
STREAM_ID = r"^\d{1,20}-\d{1,20}$"
LAST_STREAM_ID = f"{U64}-{U64}"
# An inbox page cursor: the position of a page's last prompt (``i1.``), or an offset from earlier versions.
PAGE_CURSOR = r"^(\d{1,9}|i1\.[A-Za-z0-9_-]{1,400})$"
PAGE_CURSOR_PREFIX = "i1."
MAX_OLD_OFFSET = 10_000  # an earlier version's offset cursor is served up to this far into the inbox
PAGE_CURSOR_PROBLEM = "expected the `cursor` of an earlier page, exactly as it was given"
OLD_OFFSET_PROBLEM = (
    f"this page cursor is an offset from an earlier version, more than {MAX_OLD_OFFSET:,} prompts in; "
    "start again from the first page (no cursor)"
)
_STREAM_ID = re.compile(STREAM_ID, re.ASCII)
STREAM_ID_PROBLEM = "expected a feed position <ms>-<seq> such as 1712345678901-0, each number at most 2^64-1"


def position(entry_id: str | None) -> Position:
    """``"1712345678901-3"`` → ``(1712345678901, 3)``; no id is the start of the stream."""
    if not entry_id:
        return START
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


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


HISTORY_CURSOR_PREFIX = "h1:"  # one stream id: the cursors of the one-stream history of earlier versions
HISTORY_VECTOR_PREFIX = "h2:"  # a position in each partition of the history
HISTORY_CURSOR_MAX = 600  # characters: the longest vector of positions fits within this
_HISTORY_CURSOR = re.compile(rf"^[A-Za-z0-9_-]{{1,{HISTORY_CURSOR_MAX}}}$", re.ASCII)
HISTORY_CURSOR_PROBLEM = "expected the `next` value of an earlier history page, exactly as it was given"


def _opaque(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("ascii")).decode("ascii").rstrip("=")


def history_cursor(position: str) -> str:
    """The ``h1:`` cursor earlier versions handed out for continuing after the stream id ``position``."""
    return _opaque(f"{HISTORY_CURSOR_PREFIX}{position}")


def history_vector_cursor(positions: tuple[str, ...]) -> str:
    """The opaque cursor a history page hands out: where the reader stands in each partition."""
    return _opaque(HISTORY_VECTOR_PREFIX + feed_cursor(positions))


def history_positions(cursor: str, width: int) -> tuple[str, ...]:
    """Where a history cursor stands in each of ``width`` partitions; an ``h1:`` cursor stands at its
    stream id in every one. Raises ValueError for anything but a cursor exactly as this module made it."""
    if not _HISTORY_CURSOR.fullmatch(cursor):
        raise ValueError(HISTORY_CURSOR_PROBLEM)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        positions, remade = _history_vector(raw, width)
    except (binascii.Error, ValueError):
        raise ValueError(HISTORY_CURSOR_PROBLEM) from None
    if remade != cursor:  # the same positions written another way (spare bits, padded numbers)
        raise ValueError(HISTORY_CURSOR_PROBLEM)
    return positions


def _history_vector(raw: str, width: int) -> tuple[tuple[str, ...], str]:
    """The positions of a decoded history cursor, and the cursor this module makes of them."""
    if raw.startswith(HISTORY_CURSOR_PREFIX):
        position = raw[len(HISTORY_CURSOR_PREFIX) :]
        if not is_stream_position(position):
            raise ValueError(HISTORY_CURSOR_PROBLEM)
        return (position,) * width, history_cursor(position)
    vector = raw.removeprefix(HISTORY_VECTOR_PREFIX)
    if vector == raw or not vector.startswith(FEED_CURSOR_PREFIX):
        raise ValueError(HISTORY_CURSOR_PROBLEM)
    positions = feed_positions(vector, width)
    return positions, history_vector_cursor(positions)


FEED_CURSOR_PREFIX = "f1."
FEED_CURSOR_MAX = 600  # characters: 13 positions at their longest fit well within this
FEED_CURSOR = r"^(\d{1,20}-\d{1,20}|f1\.[A-Za-z0-9_-]{1,600})$"
FEED_CURSOR_PROBLEM = (
    "expected a cursor exactly as an earlier response gave it (or a feed position <ms>-<seq> from an "
    "earlier version); to start over, leave it out"
)


FEED_WIDTH = len(EVERY_PARTITION)  # positions in a feed cursor: one per partition, the legacy stream last


def feed_cursor_value(value: str | None) -> str | None:
    """A feed cursor as a pydantic validator: raises ValueError unless this gateway (or an earlier
    version, as a stream id) could have made it."""
    if value is not None:
        feed_positions(value, FEED_WIDTH)
    return value


def _varint(value: int, out: bytearray) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(raw: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(raw) or shift > 63:
            raise ValueError(FEED_CURSOR_PROBLEM)
        byte = raw[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def feed_cursor(positions: tuple[str, ...]) -> str:
    """The opaque cursor of a partitioned feed: where a reader stands in each partition (stream ids).

    Compact: the newest millisecond once, then each position as its distance back from it and its
    sequence number (an untouched partition, ``0-0``, is one byte)."""
    pairs = [position(one) for one in positions]
    base = max(ms for ms, _ in pairs)
    out = bytearray()
    _varint(len(pairs), out)
    _varint(base, out)
    for ms, seq in pairs:
        if (ms, seq) == (0, 0):
            out.append(0)
        else:
            _varint(base - ms + 1, out)
            _varint(seq, out)
    return FEED_CURSOR_PREFIX + base64.urlsafe_b64encode(bytes(out)).decode("ascii").rstrip("=")


def feed_positions(cursor: str, width: int) -> tuple[str, ...]:
    """The positions a feed cursor stands at, one per partition (``width`` of them).

    A single stream id (a cursor of the one-stream feeds before partitioning) stands at that id in every
    partition: nothing after it is missed, wherever it was written. Raises ValueError for anything else."""
    if is_stream_position(cursor):
        return (cursor,) * width
    if len(cursor) > FEED_CURSOR_MAX or not cursor.startswith(FEED_CURSOR_PREFIX) or not cursor.isascii():
        raise ValueError(FEED_CURSOR_PROBLEM)
    body = cursor[len(FEED_CURSOR_PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise ValueError(FEED_CURSOR_PROBLEM) from None
    count, at = _read_varint(raw, 0)
    base, at = _read_varint(raw, at)
    if count != width or base > U64:
        raise ValueError(FEED_CURSOR_PROBLEM)
    positions = []
    for _ in range(count):
        back, at = _read_varint(raw, at)
        if back == 0:
            positions.append("0-0")
            continue
        seq, at = _read_varint(raw, at)
        if back - 1 > base or seq > U64:
            raise ValueError(FEED_CURSOR_PROBLEM)
        positions.append(f"{base - back + 1}-{seq}")
    if at != len(raw):
        raise ValueError(FEED_CURSOR_PROBLEM)
    return tuple(positions)


def page_cursor(score: int, member: str) -> str:
    """The opaque cursor of an inbox page whose last prompt is ``member`` (created at ``score`` ms)."""
    raw = f"{score}:{member}".encode()
    return PAGE_CURSOR_PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def page_position(cursor: str) -> tuple[int, str] | int:
    """Where an inbox page cursor goes on: (score, member) after a page's last prompt, or an earlier
    version's offset (an int). Raises ValueError for anything this module did not make."""
    if cursor.isascii() and cursor.isdigit() and len(cursor) <= 9:
        offset = int(cursor)
        if offset > MAX_OLD_OFFSET:
            raise ValueError(OLD_OFFSET_PROBLEM)
        return offset
    body = cursor.removeprefix(PAGE_CURSOR_PREFIX)
    if body == cursor or len(body) > 400 or not body.isascii():
        raise ValueError(PAGE_CURSOR_PROBLEM)
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    except (binascii.Error, ValueError):
        raise ValueError(PAGE_CURSOR_PROBLEM) from None
    score, sep, member = raw.partition(":")
    if not sep or not member or not score.isascii() or not score.isdigit() or len(score) > 16:
        raise ValueError(PAGE_CURSOR_PROBLEM)
    return int(score), member
