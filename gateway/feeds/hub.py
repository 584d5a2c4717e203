"""The process's followed streams: the event and message feeds always, a thread's log while it is read."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from gateway.feeds.follower import Follower
from gateway.feeds.tail import Entry, Tail, decode
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
        self.events = Tail(keys.EVENTS, keep, once=True)
        self.messages = Tail(keys.MESSAGES, keep, once=True)
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
        self.events = Tail(keys.EVENTS, self._keep, once=True)
        self.messages = Tail(keys.MESSAGES, self._keep, once=True)

    async def head(self, tail: Tail) -> str:
        """The last entry id ``tail`` (a feed or a thread's log) holds, following the feed first if this
        is its first reader: a reader that starts "from now" starts here."""
        await self._followed(tail)
        return tail.head

    async def _followed(self, tail: Tail) -> None:
        if tail.ready.is_set() or tail.key not in (self.events.key, self.messages.key):
            return
        async with self._feeds_following:
            if not tail.ready.is_set():
                tail.start_at(await self._streams.latest(tail.key))
                await self._follow(tail)

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

    async def read(self, tail: Tail, after: str | None, limit: int, wait_s: float = 0) -> list[Entry]:
        """Entries after ``after`` (none: from the stream's start), waiting up to ``wait_s`` for one.

        Recent entries come from memory; older ones (a reader resuming from further back than the tail
        keeps) from one non-blocking ``XRANGE``. Either way the reader's own cursor decides what it gets,
        so nothing between a replay and the live entries is skipped or repeated.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        await self._followed(tail)
        while True:
            changed = tail.changed  # taken before looking: an entry landing meanwhile still wakes us
            rows = tail.after(after, limit)
            if rows is None:
                rows = await self._replay(tail.key, after, limit)
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

    async def _replay(self, key: str, after: str | None, limit: int) -> list[Entry]:
        return decode(await self._streams.after(key, after, limit))

    async def _thread_tail(self, key: str) -> Tail:
        while True:
            tail = self._tails.get(key)
            if tail is None:
                tail = Tail(key, self._keep)
                self._tails[key] = tail
                try:
                    tail.start_at(await self._streams.latest(key))
                    await self._follow(tail)
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
        own = self._streams.per_stream  # a follower per stream on a cluster, else one for them all
        follower = self._followers.get(tail.key if own else "")
        if follower is None:
            reader = self._streams.reader()
            block_ms = SHARED_BLOCK_MS if own or reader.unblocks else EMBEDDED_BLOCK_MS
            name = tail.key if own else "streams"
            follower = Follower(reader, name, block_ms=block_ms, report=self._report)
            self._followers[tail.key if own else ""] = follower
            follower.start()
        await follower.add(tail)
