"""Reading streams for the feeds: blocking ``XREAD``s that another connection can end, and replays."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from redis.asyncio.cluster import RedisCluster

Row = tuple[str, dict[str, str]]  # a stream entry: its id and its fields


class StreamReader:
    """One blocking ``XREAD`` at a time over a set of streams.

    Where ``unblocks`` holds, the reads go on a connection of their own and ``unblock`` ends a blocked
    one at once (``CLIENT UNBLOCK`` from the shared client), so a stream added meanwhile joins the next
    read; otherwise it joins when the block times out.
    """

    def __init__(self, redis: Any, *, control: Any = None) -> None:
        self._redis = redis
        self._control = control  # the shared client that unblocks; None: this reader cannot be unblocked
        self._client_id: int | None = None
        self._blocked = False

    @property
    def unblocks(self) -> bool:
        return self._control is not None

    async def read(
        self, heads: Callable[[], dict[str, str]], count: int, block_ms: int
    ) -> list[tuple[str, list[Row]]]:
        """Entries after each stream's head, waiting up to ``block_ms`` for one.

        ``heads`` (``{key: last id}``) is asked for just as the read blocks, with no wait in between: a
        stream added before that is in the read, one added after can end it (``unblock``).
        """
        try:
            if self._control is not None and self._client_id is None:
                self._client_id = int(await self._redis.client_id())
            streams = heads()
            self._blocked = True
            try:
                reply = await self._redis.xread(streams, count=count, block=block_ms)
            finally:
                self._blocked = False
        except Exception:
            self._client_id = None  # the connection may be a new one next time: ask its id again
            raise
        return _streams(reply)

    async def unblock(self) -> None:
        """End the read blocked now, if there is one; at worst the read runs until its block times out."""
        if self._blocked and self._control is not None and self._client_id is not None:
            with contextlib.suppress(Exception):
                await self._control.client_unblock(self._client_id)

    async def close(self) -> None:
        """Give back the connection of its own (a reader on the shared client has none)."""
        if self._control is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()


class StreamSource:
    """The streams of one Redis as the feeds read them: readers fit for the backend, ranges for replays.

    On a Cluster a multi-key ``XREAD`` must stay in one slot, so each followed stream needs a reader of its
    own (``per_stream``). On one server a reader holds a pooled connection for its blocking reads; the
    embedded store reads on its only client and cannot end a blocked read early.
    """

    def __init__(self, redis: Any) -> None:
        self._redis = redis
        self.per_stream = isinstance(redis, RedisCluster)
        self._embedded = type(redis).__module__.startswith("fakeredis")

    def reader(self) -> StreamReader:
        if self.per_stream or self._embedded:
            return StreamReader(self._redis)
        return StreamReader(self._redis.client(), control=self._redis)  # one connection, held for the reads

    async def latest(self, streams: tuple[str, ...]) -> list[str]:
        """The id of each stream's last entry (``0-0`` where it is empty), in one pipelined round trip."""
        pipe = self._redis.pipeline(transaction=False)
        for key in streams:
            pipe.xrevrange(key, count=1)
        return [str(rows[0][0]) if rows else "0-0" for rows in await pipe.execute()]

    async def after(self, streams: list[tuple[str, str]], limit: int) -> list[list[Row]]:
        """Up to ``limit`` entries of each stream after its id (``(key, id)`` pairs; ``0-0``: from the
        stream's start), without waiting, in one pipelined round trip."""
        pipe = self._redis.pipeline(transaction=False)
        for key, after in streams:
            pipe.xrange(key, min=f"({after}" if after != "0-0" else "-", max="+", count=limit)
        return [list(rows) for rows in await pipe.execute()]


def _streams(reply: Any) -> list[tuple[str, list[Row]]]:
    """XREAD's reply as (key, rows) pairs, in RESP2 (a list) or RESP3 (a map) form."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [(str(key), rows) for key, rows in reply.items()]
    return [(str(key), rows) for key, rows in reply]
