"""One followed stream's recent entries in memory, and the signal that wakes its readers."""

from __future__ import annotations

import asyncio
import json
import time
from bisect import bisect_right
from collections import OrderedDict
from typing import Any

from gateway.feeds.positions import Position, position


class Entry:
    """One stream entry: its id (the resume cursor) and its decoded JSON, shared by every reader."""

    __slots__ = ("_frame", "data", "id", "position")

    def __init__(self, entry_id: str, data: dict[str, Any]) -> None:
        self.id = entry_id
        self.position = position(entry_id)
        self.data = data  # shared: readers copy before changing it
        self._frame: bytes | None = None

    def frame(self) -> bytes:
        """The entry as one Server-Sent Event (``id``, ``event``, ``data``), encoded once for every stream."""
        if self._frame is None:
            data = json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))
            name = self.data.get("type", "message")
            self._frame = f"id: {self.id}\nevent: {name}\ndata: {data}\n\n".encode()
        return self._frame


def decode(rows: list[tuple[str, dict[str, str]]]) -> list[Entry]:
    """Stream rows as written by the store (one ``j`` field of JSON); an undecodable one reads as empty."""
    entries = []
    for entry_id, fields in rows:
        try:
            data = json.loads(fields["j"])
        except (KeyError, ValueError):
            data = {}
        entries.append(Entry(entry_id, data if isinstance(data, dict) else {}))
    return entries


def entry_id(data: dict[str, Any]) -> str | None:
    """A feed entry's own stable id: an event's ``id``, a queued message's ``message_id``."""
    value = data.get("id") or data.get("message_id")
    return value if isinstance(value, str) else None


class Tail:
    """Every entry of one stream after ``floor`` up to ``head``, in order; older ones are read from Redis.

    With ``once``, an entry whose own id (``entry_id``) arrived among the recent ones is dropped: the feeds
    append each id once, and this keeps a copy that got in anyway from reaching a reader twice.

    ``changed`` is replaced each time entries arrive: a reader takes it *before* looking for entries, so an
    arrival between its look and its wait still wakes it.
    """

    def __init__(self, key: str, keep: int = 1024, *, once: bool = False) -> None:
        self.key = key
        self.keep = keep
        self._seen: OrderedDict[str, None] | None = OrderedDict() if once else None
        self.head = "0-0"
        self._head: Position = (0, 0)
        self._floor: Position = (0, 0)
        self._entries: list[Entry] = []
        self._positions: list[Position] = []
        self.changed = asyncio.Event()
        self.ready = asyncio.Event()  # set once ``head`` is known (a thread tail asks Redis first)
        self.failed = False
        self.readers = 0  # readers following a thread's log (the feeds are followed regardless)
        self.waiting = 0  # readers waiting for the next entry now
        self.idle_since = time.monotonic()

    def start_at(self, head: str) -> None:
        """Begin after ``head`` (the stream's last id when following began)."""
        self.head = head
        self._head = self._floor = position(head)
        self.ready.set()

    def extend(self, entries: list[Entry]) -> None:
        """Append entries read after ``head`` and wake the readers."""
        fresh = [entry for entry in entries if entry.position > self._head]
        if not fresh:
            return
        self.head, self._head = fresh[-1].id, fresh[-1].position  # past a dropped copy too: read once
        if self._seen is not None:
            fresh = self._first_copies(fresh)
        self._entries.extend(fresh)
        self._positions.extend(entry.position for entry in fresh)
        if len(self._entries) > 2 * self.keep:  # trim in chunks: slicing on every entry costs more
            drop = len(self._entries) - self.keep
            self._floor = self._positions[drop - 1]
            del self._entries[:drop], self._positions[:drop]
        woken, self.changed = self.changed, asyncio.Event()
        woken.set()

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

    def after(self, cursor: str | None, limit: int) -> list[Entry] | None:
        """Up to ``limit`` entries after ``cursor`` from memory; ``None`` when older ones may be missing."""
        at = position(cursor)
        if at < self._floor:
            return None
        start = bisect_right(self._positions, at)
        return self._entries[start : start + limit]
