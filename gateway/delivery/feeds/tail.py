"""One followed feed's recent entries in memory, and the signal that wakes its readers.

A feed is one stream (a thread's log) or several (a partitioned feed: one stream per partition). A
reader's place in it is a *vector*: its position in each stream. Entries keep each stream's order; across
streams they are kept in the order this process read them, and a vector cursor makes that order safe to
resume from anywhere: a reader gets exactly the entries its vector has not passed, whichever process it
asks next.
"""

from __future__ import annotations

import asyncio
import json
import time
from bisect import bisect_right
from collections import OrderedDict
from typing import Any

from gateway.base.cursors import START, Position, feed_cursor, feed_positions, position

Vector = tuple[Position, ...]  # a reader's position in each of a feed's streams


class Entry:
    """One stream entry: its id, its stream (``part``) and its decoded JSON, shared by every reader.

    ``before`` and ``after`` are the feed's vector just before and after this process appended it: a reader
    that stood at ``before`` stands at ``after`` once it has the entry, with its cursor encoded once."""

    __slots__ = ("_body", "_cursor", "after", "before", "data", "id", "part", "position")

    def __init__(self, entry_id: str, data: dict[str, Any], part: int = 0) -> None:
        self.id = entry_id
        self.part = part
        self.position = position(entry_id)
        self.data = data  # shared: readers copy before changing it
        self.before: Vector | None = None
        self.after: Vector | None = None
        self._cursor: str | None = None
        self._body: bytes | None = None

    def frame(self, cursor: str) -> bytes:
        """The entry as one Server-Sent Event (``id`` the reader's ``cursor``, ``event``, ``data``); all but
        the id line is encoded once for every stream."""
        if self._body is None:
            data = json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))
            name = self.data.get("type", "message")
            self._body = f"event: {name}\ndata: {data}\n\n".encode()
        return b"id: " + cursor.encode() + b"\n" + self._body


def decode(rows: list[tuple[str, dict[str, str]]], part: int = 0) -> list[Entry]:
    """Stream rows as written by the store (one ``j`` field of JSON); an undecodable one reads as empty."""
    entries = []
    for entry_id, fields in rows:
        try:
            data = json.loads(fields["j"])
        except (KeyError, ValueError):
            data = {}
        entries.append(Entry(entry_id, data if isinstance(data, dict) else {}, part))
    return entries


def entry_id(data: dict[str, Any]) -> str | None:
    """A feed entry's own stable id: an event's ``id``, a queued message's ``message_id``."""
    value = data.get("id") or data.get("message_id")
    return value if isinstance(value, str) else None


def _text(at: Position) -> str:
    return f"{at[0]}-{at[1]}"


class Tail:
    """Every entry of a feed's streams after ``floor`` up to ``head``; older ones are read from Redis.

    ``streams`` are the feed's stream keys (one for a thread's log); ``key`` names the feed. With
    ``once``, an entry whose own id (``entry_id``) arrived among the recent ones is dropped: the feeds
    append each id once, and this keeps a copy that got in anyway from reaching a reader twice.

    ``changed`` is replaced each time entries arrive: a reader takes it *before* looking for entries, so an
    arrival between its look and its wait still wakes it.
    """

    def __init__(
        self, streams: str | tuple[str, ...], keep: int = 1024, *, once: bool = False, key: str | None = None
    ) -> None:
        self.streams = (streams,) if isinstance(streams, str) else tuple(streams)
        self.key = key or self.streams[0]
        self.keep = keep
        width = len(self.streams)
        self._seen: OrderedDict[str, None] | None = OrderedDict() if once else None
        self.head: Vector = (START,) * width
        self._floor: list[Position] = [START] * width
        self._entries: list[Entry] = []
        self._base = 0  # how many entries were trimmed before ``_entries[0]``
        self._part_positions: list[list[Position]] = [[] for _ in range(width)]
        self._part_indexes: list[list[int]] = [[] for _ in range(width)]  # absolute, as ``_base`` counts
        self.changed = asyncio.Event()
        self.ready = asyncio.Event()  # set once ``head`` is known (a tail asks Redis first)
        self.failed = False
        self.readers = 0  # readers following a thread's log (the feeds are followed regardless)
        self.waiting = 0  # readers waiting for the next entry now
        self.idle_since = time.monotonic()

    # Cursors ---------------------------------------------------------------------------------------

    def vector(self, cursor: str | None) -> Vector:
        """Where a cursor stands (none: before everything). Raises ValueError for one not made here."""
        if not cursor:
            return (START,) * len(self.streams)
        if len(self.streams) == 1:
            return (position(cursor),)
        return tuple(position(one) for one in feed_positions(cursor, len(self.streams)))

    def cursor(self, at: Vector) -> str:
        """The opaque cursor of the vector ``at``: a stream id for a one-stream feed."""
        if len(at) == 1:
            return _text(at[0])
        return feed_cursor(tuple(_text(one) for one in at))

    def advance(self, at: Vector, entry: Entry) -> Vector:
        """Where a reader at ``at`` stands once it has ``entry``."""
        if entry.before is at and entry.after is not None:
            return entry.after
        if at[entry.part] >= entry.position:
            return at
        return (*at[: entry.part], entry.position, *at[entry.part + 1 :])

    def cursor_after(self, at: Vector, entry: Entry) -> str:
        """The cursor of ``at`` (a reader's vector once it has ``entry``), encoded once per entry where it
        is the feed's own vector after it."""
        if at is entry.after:
            if entry._cursor is None:
                entry._cursor = self.cursor(at)
            return entry._cursor
        return self.cursor(at)

    # Following -------------------------------------------------------------------------------------

    def start_at(self, head: Vector) -> None:
        """Begin after ``head`` (each stream's last id when following began)."""
        self.head = head
        self._floor = list(head)
        self.ready.set()

    def extend(self, part: int, entries: list[Entry]) -> None:
        """Append entries of stream ``part`` read after its head, and wake the readers."""
        fresh = [entry for entry in entries if entry.position > self.head[part]]
        if not fresh:
            return
        kept = self._first_copies(fresh) if self._seen is not None else fresh
        head = self.head
        absolute = self._base + len(self._entries)
        for entry in kept:
            entry.part = part
            entry.before = head
            head = entry.after = (*head[:part], entry.position, *head[part + 1 :])
            self._part_positions[part].append(entry.position)
            self._part_indexes[part].append(absolute)
            absolute += 1
        self._entries.extend(kept)
        last = fresh[-1].position  # past a dropped copy too: read once
        self.head = head if head[part] == last else (*head[:part], last, *head[part + 1 :])
        if len(self._entries) > 2 * self.keep:  # trim in chunks: slicing on every entry costs more
            self._trim(len(self._entries) - self.keep)
        woken, self.changed = self.changed, asyncio.Event()
        woken.set()

    def _trim(self, drop: int) -> None:
        cutoff = self._base + drop
        for part, indexes in enumerate(self._part_indexes):
            gone = bisect_right(indexes, cutoff - 1)
            if gone:
                self._floor[part] = self._part_positions[part][gone - 1]
                del indexes[:gone], self._part_positions[part][:gone]
        del self._entries[:drop]
        self._base = cutoff

    def _first_copies(self, entries: list[Entry]) -> list[Entry]:
        """The entries whose id was not among the last ``4 * keep`` ids (ids are remembered as they come)."""
        assert self._seen is not None
        kept = []
        for entry in entries:
            ident = entry_id(entry.data)
            if ident is None:
                kept.append(entry)
            elif ident not in self._seen:
                self._seen[ident] = None
                kept.append(entry)
        while len(self._seen) > 4 * self.keep:
            self._seen.popitem(last=False)
        return kept

    def after(self, at: Vector, limit: int) -> list[Entry] | None:
        """Up to ``limit`` entries ``at`` has not passed, from memory; ``None`` when older ones may be
        missing (``at`` is behind what memory holds in some stream)."""
        start = None
        for part, floor in enumerate(self._floor):
            if at[part] < floor:
                return None
            positions = self._part_positions[part]
            first = bisect_right(positions, at[part])
            if first < len(positions):
                index = self._part_indexes[part][first]
                start = index if start is None else min(start, index)
        if start is None:
            return []
        found: list[Entry] = []
        for entry in self._entries[start - self._base :]:
            if entry.position > at[entry.part]:
                found.append(entry)
                if len(found) >= limit:
                    break
        return found
