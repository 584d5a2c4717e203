"""Waiting on what a test needs to be true (a waiter registered, a stream connected), never on a clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from gateway.delivery.feeds import Feeds
from gateway.store import keys

POLL_S = 0.01


async def eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 10.0) -> None:
    """Poll ``check`` until it is true; fail naming ``what`` if it is not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not true within {timeout} s")
        await asyncio.sleep(POLL_S)


async def until_watched(redis: Any, thread_id: str, prompt_id: str) -> None:
    """Until an agent waits on the prompt: its watch key is in Redis, written once the wait is in place
    (a long-poll, a client's ``ask`` or an event stream for the thread); an answer now resolves hot."""

    async def watched() -> bool:
        return bool(await redis.exists(keys.watch(thread_id, prompt_id)))

    await eventually(watched, f"an agent waiting on {prompt_id}")


async def until_waiting_on(feeds: Feeds, stream: str, count: int = 1) -> None:
    """Until ``count`` readers (long-polls, event streams) wait for the next entry of ``stream``: what is
    added from now on reaches them live, not as a replay."""

    async def waiting() -> bool:
        return feeds.waiting(stream) >= count

    await eventually(waiting, f"{count} reader(s) waiting on {stream}")


async def until_connected(lines: AsyncIterator[str]) -> None:
    """Read an SSE stream up to its ``: connected`` comment: every event after that reaches the stream."""
    async with asyncio.timeout(10):
        async for line in lines:
            if line.startswith(": connected"):
                return
    raise AssertionError("the stream ended before it said it was connected")
