"""The process's followed streams: the event and message feeds always, a thread's log while it is read."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from gateway.base.cursors import position
from gateway.delivery.feeds.follower import Follower
from gateway.delivery.feeds.tail import Entry, Tail, Vector, decode
from gateway.store import keys
from gateway.store.stream_reader import StreamSource

SHARED_BLOCK_MS = 2_000  # a stream added in the instant before a read blocks joins within this
EMBEDDED_BLOCK_MS = 200  # a shared reader that cannot be unblocked (the embedded store's) blocks briefly
LINGER_S = 30.0  # a thread's log stays followed this long after its last reader left


class Feeds:
    """Each Redis stream read once per process, its entries handed to every local reader from memory.

    A stream is followed once it is read: the event and message feeds from their first reader on (a
    process nobody reads them from spends nothing on them), a thread's log while it is being read.
    On one Redis server a single follower reads every stream in one blocking ``XREAD`` on one connection.
    On Redis Cluster a multi-key ``XREAD`` must stay in one slot, and every thread has its own, so each
    followed stream gets its own follower: each feed, plus one per thread whose log is being read
    (per thread, not per reader). Readers wait on an in-memory signal and hold no connection.
    """

    def __init__(
        self,
        redis: Any,
        *,
        keep: int = 1024,
        linger_s: float = LINGER_S,
        report: Callable[[BaseException, str], bool] | None = None,
    ) -> None:
        self._streams = StreamSource(redis)
        self._report = report
        self._keep = keep
        self._linger_s = linger_s
        self._tails: dict[str, Tail] = {}
        self._followers: dict[str, Follower] = {}  # by stream key on a cluster, else one under ""
        self._stopping: set[asyncio.Task[None]] = set()
        self._started = False
        self.draining = False  # set at shutdown: waits end now, and event streams close
        self.events = _feed(keys.events_feed, keys.EVENTS, keep)
        self.messages = _feed(keys.messages_feed, keys.MESSAGES, keep)
        self._feeds_following = asyncio.Lock()  # one first reader of a feed starts following it

    async def start(self) -> None:
        """Ready to read; the feeds are followed from their first reader on (see ``head``)."""
        self._started = True

    async def stop(self) -> None:
        for follower in list(self._followers.values()):
            await follower.stop()
        self._followers.clear()
        self._started = False
        # Followed again from their ends if read after a restart of the feeds.
        self.events = _feed(keys.events_feed, keys.EVENTS, self._keep)
        self.messages = _feed(keys.messages_feed, keys.MESSAGES, self._keep)

    async def head(self, tail: Tail) -> Vector:
        """Where ``tail`` (a feed or a thread's log) stands now, following the feed first if this is its
        first reader: a reader that starts "from now" starts here."""
        await self._followed(tail)
        return tail.head

    async def _followed(self, tail: Tail) -> None:
        if tail.ready.is_set() or tail.key not in (self.events.key, self.messages.key):
            return
        async with self._feeds_following:
            if not tail.ready.is_set():
                await self._start(tail)

    def drain(self) -> None:
        """The process is stopping: every reader waiting for an entry gets what there is now (maybe none)."""
        self.draining = True
        for tail in (self.events, self.messages, *self._tails.values()):
            tail.changed.set()

    @property
    def followed(self) -> int:
        """How many streams this process follows now (the feeds read so far, the threads being read)."""
        return sum(tail.ready.is_set() for tail in (self.events, self.messages)) + len(self._tails)

    def waiting(self, key: str) -> int:
        """How many readers wait for the next entry of stream ``key`` now (0 if it is not followed)."""
        tail = {self.events.key: self.events, self.messages.key: self.messages}.get(key) or self._tails.get(
            key
        )
        return tail.waiting if tail is not None else 0

    # Reading ---------------------------------------------------------------------------------------

    async def read(self, tail: Tail, after: Vector, limit: int, wait_s: float = 0) -> list[Entry]:
        """Entries the vector ``after`` has not passed (see ``Tail.vector``), waiting up to ``wait_s`` for
        one; a reader moves its vector on with ``Tail.advance``.

        Recent entries come from memory; older ones (a reader resuming from further back than the tail
        keeps) from one non-blocking ``XRANGE`` per stream, merged. Either way the reader's own cursor
        decides what it gets, so nothing between a replay and the live entries is skipped or repeated.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        await self._followed(tail)
        while True:
            changed = tail.changed  # taken before looking: an entry landing meanwhile still wakes us
            rows = tail.after(after, limit)
            if rows is None:
                rows = await self._replay(tail, after, limit)
            remaining = deadline - loop.time()
            if rows or remaining <= 0 or self.draining:
                return rows
            tail.waiting += 1
            try:
                async with asyncio.timeout(remaining):
                    await changed.wait()
            except TimeoutError:
                return []
            finally:
                tail.waiting -= 1

    @contextlib.asynccontextmanager
    async def thread_log(self, thread_id: str) -> AsyncIterator[Tail]:
        """Follow a thread's item log while the block runs (shared by every reader of the thread)."""
        tail = await self._thread_tail(keys.items(thread_id))
        tail.readers += 1
        try:
            yield tail
        finally:
            tail.readers -= 1
            if tail.readers == 0:
                tail.idle_since = time.monotonic()
                asyncio.get_running_loop().call_later(self._linger_s, self._drop_if_idle, tail)

    # Internals -------------------------------------------------------------------------------------

    async def _replay(self, tail: Tail, after: Vector, limit: int) -> list[Entry]:
        """The first ``limit`` entries after ``after`` read from Redis: each stream's, merged by id (then
        stream), so each stream's share is a prefix of what follows its position."""
        wanted = [(key, f"{at[0]}-{at[1]}") for key, at in zip(tail.streams, after, strict=True)]
        read = await self._streams.after(wanted, limit)
        entries = [entry for part, rows in enumerate(read) for entry in decode(rows, part)]
        entries.sort(key=lambda entry: (entry.position, entry.part))
        return entries[:limit]

    async def _start(self, tail: Tail) -> None:
        tail.start_at(tuple(position(one) for one in await self._streams.latest(tail.streams)))
        await self._follow(tail)

    async def _thread_tail(self, key: str) -> Tail:
        while True:
            tail = self._tails.get(key)
            if tail is None:
                tail = Tail(key, self._keep)
                self._tails[key] = tail
                try:
                    await self._start(tail)
                except BaseException:
                    tail.failed = True
                    tail.ready.set()
                    if self._tails.get(key) is tail:
                        del self._tails[key]
                    raise
                return tail
            await tail.ready.wait()
            if not tail.failed:
                return tail

    def _drop_if_idle(self, tail: Tail) -> None:
        if tail.readers or self._tails.get(tail.key) is not tail:
            return
        if time.monotonic() - tail.idle_since < self._linger_s * 0.99:
            return  # a reader came and went since; its own timer drops the tail later
        del self._tails[tail.key]
        follower = self._followers.get(tail.key) or self._followers.get("")
        if follower is None:
            return
        follower.remove(tail.key)
        if follower.name == tail.key and not len(follower):
            self._followers.pop(tail.key, None)
            stopping = asyncio.get_running_loop().create_task(follower.stop(), name="threadgate.unfollow")
            self._stopping.add(stopping)
            stopping.add_done_callback(self._stopping.discard)

    async def _follow(self, tail: Tail) -> None:
        if not self._streams.per_stream:  # one follower for every stream
            await self._follower("", "streams").add(tail, range(len(tail.streams)))
            return
        for part, key in enumerate(tail.streams):  # on a cluster, a follower per stream
            await self._follower(key, key).add(tail, [part])

    def _follower(self, slot: str, name: str) -> Follower:
        follower = self._followers.get(slot)
        if follower is None:
            reader = self._streams.reader()
            block_ms = SHARED_BLOCK_MS if self._streams.per_stream or reader.unblocks else EMBEDDED_BLOCK_MS
            follower = Follower(reader, name, block_ms=block_ms, report=self._report)
            self._followers[slot] = follower
            follower.start()
        return follower


def _feed(stream: Callable[[int], str], name: str, keep: int) -> Tail:
    """A partitioned feed: every partition's stream, the legacy one last, followed as one."""
    return Tail(tuple(stream(part) for part in keys.EVERY_PARTITION), keep, once=True, key=name)
