"""One task that follows a set of streams with one blocking XREAD at a time, fanning entries into tails."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from gateway.feeds.tail import Tail, decode
from gateway.logs import event
from gateway.tasks import cancel_and_wait

BATCH = 500  # entries per stream per read; a burst larger than this takes several reads, none lost
MAX_BACKOFF_S = 5.0


class Follower:
    """Reads every tail it holds in one ``XREAD BLOCK`` (one connection, however many readers wait).

    ``unblock_via`` is a client on the same server used to end a blocked read at once (``CLIENT UNBLOCK``)
    when a stream is added; without it a new stream joins when the current block times out.
    A Redis error is logged once, retried with backoff, and its recovery logged once: the task never ends
    on its own, and each tail resumes after the last entry it holds.
    """

    def __init__(
        self,
        redis: Any,
        name: str,
        *,
        block_ms: int,
        unblock_via: Any = None,
        report: Callable[[BaseException, str], bool] | None = None,
    ) -> None:
        self.name = name
        self._report = report  # the process's store-outage record: True when it logs the outage itself
        self.block_ms = block_ms
        self._redis = redis
        self._unblock_via = unblock_via
        self._tails: dict[str, Tail] = {}
        self._wake = asyncio.Event()
        self._client_id: int | None = None
        self._blocked = False
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._tails)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"threadgate.feeds.{self.name}")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None

    async def add(self, tail: Tail) -> None:
        """Follow ``tail`` from its head; ends a blocked read so the next one includes it."""
        self._tails[tail.key] = tail
        self._wake.set()
        if self._blocked and self._unblock_via is not None and self._client_id is not None:
            with contextlib.suppress(Exception):  # at worst the stream joins when the block times out
                await self._unblock_via.client_unblock(self._client_id)

    def remove(self, key: str) -> None:
        self._tails.pop(key, None)

    async def _run(self) -> None:
        failing = logged = False
        delay = 0.1
        while True:
            try:
                if self._tails:
                    await self._read_once()
                else:
                    self._wake.clear()
                    await self._wake.wait()
                if failing:
                    if logged:
                        event("feeds.recovered", follower=self.name)
                    failing, logged, delay = False, False, 0.1
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._client_id = None
                if not failing:
                    failing = True
                    if self._report is None or not self._report(exc, f"feeds.{self.name}"):
                        logged = True
                        event("feeds.read_failed", logging.WARNING, follower=self.name, error=_describe(exc))
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_S)
            # redis-py can swallow a cancellation that lands mid-read; honour it here.
            if (task := asyncio.current_task()) is not None and task.cancelling():
                raise asyncio.CancelledError

    async def _read_once(self) -> None:
        if self._unblock_via is not None and self._client_id is None:
            self._client_id = int(await self._redis.client_id())
        streams = {key: tail.head for key, tail in self._tails.items()}
        self._blocked = True
        try:
            reply = await self._redis.xread(streams, count=BATCH, block=self.block_ms)
        finally:
            self._blocked = False
        for key, rows in _streams(reply):
            tail = self._tails.get(key)
            if tail is not None:
                tail.extend(decode(rows))


def _streams(reply: Any) -> list[tuple[str, list[Any]]]:
    """XREAD's reply as (key, rows) pairs, in RESP2 (a list) or RESP3 (a map) form."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [(str(key), rows) for key, rows in reply.items()]
    return [(str(key), rows) for key, rows in reply]


def _describe(exc: Exception) -> str:
    return str(exc) or type(exc).__name__
