"""One task that follows a set of streams with one blocking XREAD at a time, fanning entries into tails."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from gateway.base.logs import event
from gateway.base.tasks import cancel_and_wait
from gateway.delivery.feeds.tail import Tail, decode
from gateway.store.stream_reader import StreamReader

BATCH = 500  # entries per stream per read; a burst larger than this takes several reads, none lost
MAX_BACKOFF_S = 5.0


class Follower:
    """Reads every tail it holds in one blocking read (one connection, however many readers wait).

    A stream added while a read blocks ends that read at once where the reader can be unblocked; otherwise
    it joins when the current block times out.
    A Redis error is logged once, retried with backoff, and its recovery logged once: the task never ends
    on its own, and each tail resumes after the last entry it holds.
    """

    def __init__(
        self,
        reader: StreamReader,
        name: str,
        *,
        block_ms: int,
        report: Callable[[BaseException, str], bool] | None = None,
    ) -> None:
        self.name = name
        self._report = report  # the process's store-outage record: True when it logs the outage itself
        self.block_ms = block_ms
        self._reader = reader
        self._tails: dict[str, tuple[Tail, int]] = {}  # stream key -> its feed, and its place there
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._tails)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"threadgate.feeds.{self.name}")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None
        await self._reader.close()

    async def add(self, tail: Tail, parts: range | list[int]) -> None:
        """Follow streams ``parts`` of ``tail`` from its head; ends a blocked read so the next one
        includes them."""
        for part in parts:
            self._tails[tail.streams[part]] = (tail, part)
        self._wake.set()
        await self._reader.unblock()

    def remove(self, key: str) -> None:
        self._tails.pop(key, None)

    def _heads(self) -> dict[str, str]:
        return {
            key: f"{tail.head[part][0]}-{tail.head[part][1]}" for key, (tail, part) in self._tails.items()
        }

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
        for key, rows in await self._reader.read(self._heads, BATCH, self.block_ms):
            followed = self._tails.get(key)
            if followed is not None:
                tail, part = followed
                tail.extend(part, decode(rows, part))


def _describe(exc: Exception) -> str:
    return str(exc) or type(exc).__name__
