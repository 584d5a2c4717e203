"""gateway.feeds: a stream read once per process, fanned out to readers, on every store backend."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.feeds import Feeds
from gateway.feeds.tail import Entry
from gateway.store import keys
from tests.support.conditions import eventually

THREAD = "web:lobby"


async def _add(redis: Any, key: str, n: int, start: int = 0) -> list[str]:
    return [str(await redis.xadd(key, {"j": json.dumps({"n": start + i})})) for i in range(n)]


async def _read_until(feeds: Feeds, tail: Any, after: str | None, count: int) -> list[Entry]:
    """Read in small pages, as a slow reader would, until ``count`` entries came (bounded by time)."""
    got: list[Entry] = []
    async with asyncio.timeout(10):
        while len(got) < count:
            rows = await feeds.read(tail, after, 2, wait_s=5)
            got.extend(rows)
            after = rows[-1].id if rows else after
    return got


@pytest.fixture
async def feeds(redis_client: Any) -> AsyncIterator[Feeds]:
    hub = Feeds(redis_client, keep=2, linger_s=0.05)  # keep 2: resuming further back reads from Redis
    await hub.start()
    yield hub
    await hub.stop()


async def test_a_reader_resuming_from_far_back_gets_every_entry_once_across_replay_and_live(
    feeds: Feeds, redis_client: Any
) -> None:
    old = await _add(redis_client, keys.EVENTS, 6)
    await _read_until(feeds, feeds.events, old[-2], 1)  # the tail now holds only the newest entries
    reader = asyncio.create_task(_read_until(feeds, feeds.events, old[0], 9))
    live = await _add(redis_client, keys.EVENTS, 4, start=6)
    got = await reader
    assert [entry.id for entry in got] == old[1:] + live
    assert [entry.data["n"] for entry in got] == list(range(1, 10))


async def test_one_entry_reaches_every_waiting_reader(feeds: Feeds, redis_client: Any) -> None:
    start = await feeds.head(feeds.events)
    readers = [asyncio.create_task(feeds.read(feeds.events, start, 10, wait_s=10)) for _ in range(50)]
    await asyncio.sleep(0)  # let each reader take the wake-up signal before the entry lands
    [entry_id] = await _add(redis_client, keys.EVENTS, 1)
    results = await asyncio.wait_for(asyncio.gather(*readers), 10)
    assert all([row.id for row in rows] == [entry_id] for rows in results)


async def test_a_thread_log_is_followed_live_while_read_and_dropped_after(
    feeds: Feeds, redis_client: Any
) -> None:
    key = keys.items(THREAD)
    [before] = await _add(redis_client, key, 1)
    async with feeds.thread_log(THREAD) as log:
        assert log.head == before  # followed from the log's end at the time: later entries are live
        waiting = asyncio.create_task(feeds.read(log, before, 10, wait_s=10))
        [after] = await _add(redis_client, key, 1, start=1)
        rows = await asyncio.wait_for(waiting, 10)
        assert [row.id for row in rows] == [after]
        assert feeds.followed == 1  # the feeds are not read here, so not followed

    async def dropped() -> bool:  # once it lingered with no reader
        return feeds.followed == 0

    await eventually(dropped, "the thread's log no longer followed")


async def test_a_read_with_nothing_new_returns_empty_after_its_wait(feeds: Feeds) -> None:
    assert await feeds.read(feeds.messages, await feeds.head(feeds.messages), 10, wait_s=0.05) == []


async def test_a_feed_is_followed_from_its_first_reader_on_and_not_before(
    feeds: Feeds, redis_client: Any
) -> None:
    [old] = await _add(redis_client, keys.EVENTS, 1)
    assert feeds.followed == 0  # a process nobody reads the feeds from reads nothing of them
    assert await feeds.head(feeds.events) == old  # "from now" is the end at the first reader
    assert feeds.followed == 1
    waiting = asyncio.create_task(feeds.read(feeds.events, old, 10, wait_s=10))
    [new] = await _add(redis_client, keys.EVENTS, 1, start=1)
    assert [row.id for row in await asyncio.wait_for(waiting, 10)] == [new]
    assert [row.id for row in await feeds.read(feeds.messages, None, 10)] == []  # read: followed too
    assert feeds.followed == 2
