"""gateway.delivery.feeds: a stream read once per process, fanned out to readers, on every store backend."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.cursors import position
from gateway.delivery.feeds import Feeds
from gateway.delivery.feeds.tail import Entry, Tail, Vector
from gateway.store import keys
from tests.support.conditions import eventually

THREAD = "web:lobby"


EVENTS = keys.events_feed(keys.partition(THREAD))  # one partition of the event feed


async def _add(redis: Any, key: str, n: int, start: int = 0) -> list[str]:
    return [str(await redis.xadd(key, {"j": json.dumps({"n": start + i})})) for i in range(n)]


async def _read_until(feeds: Feeds, tail: Tail, after: Vector, count: int) -> list[Entry]:
    """Read in small pages, as a slow reader would, until ``count`` entries came (bounded by time)."""
    got: list[Entry] = []
    async with asyncio.timeout(10):
        while len(got) < count:
            rows = await feeds.read(tail, after, 2, wait_s=5)
            got.extend(rows)
            for row in rows:
                after = tail.advance(after, row)
    return got


def _at(tail: Tail, stream: str, entry_id: str) -> Vector:
    """A vector at ``entry_id`` in ``stream`` and at the start of every other stream of the feed."""
    vector = tail.vector(None)
    part = tail.streams.index(stream)
    return (*vector[:part], position(entry_id), *vector[part + 1 :])


@pytest.fixture
async def feeds(redis_client: Any) -> AsyncIterator[Feeds]:
    hub = Feeds(redis_client, keep=2, linger_s=0.05)  # keep 2: resuming further back reads from Redis
    await hub.start()
    yield hub
    await hub.stop()


async def test_a_reader_resuming_from_far_back_gets_every_entry_once_across_replay_and_live(
    feeds: Feeds, redis_client: Any
) -> None:
    old = await _add(redis_client, EVENTS, 6)
    tail = feeds.events
    await _read_until(feeds, tail, _at(tail, EVENTS, old[-2]), 1)  # the tail holds only the newest now
    reader = asyncio.create_task(_read_until(feeds, tail, _at(tail, EVENTS, old[0]), 9))
    live = await _add(redis_client, EVENTS, 4, start=6)
    got = await reader
    assert [entry.id for entry in got] == old[1:] + live
    assert [entry.data["n"] for entry in got] == list(range(1, 10))


async def test_one_entry_reaches_every_waiting_reader(feeds: Feeds, redis_client: Any) -> None:
    start = await feeds.head(feeds.events)
    readers = [asyncio.create_task(feeds.read(feeds.events, start, 10, wait_s=10)) for _ in range(50)]
    await asyncio.sleep(0)  # let each reader take the wake-up signal before the entry lands
    [entry_id] = await _add(redis_client, EVENTS, 1)
    results = await asyncio.wait_for(asyncio.gather(*readers), 10)
    assert all([row.id for row in rows] == [entry_id] for rows in results)


async def test_a_thread_log_is_followed_live_while_read_and_dropped_after(
    feeds: Feeds, redis_client: Any
) -> None:
    key = keys.items(THREAD)
    [before] = await _add(redis_client, key, 1)
    async with feeds.thread_log(THREAD) as log:
        assert log.head == (position(before),)  # followed from the log's end: later entries are live
        waiting = asyncio.create_task(feeds.read(log, log.vector(before), 10, wait_s=10))
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
    [old] = await _add(redis_client, EVENTS, 1)
    assert feeds.followed == 0  # a process nobody reads the feeds from reads nothing of them
    head = await feeds.head(feeds.events)
    assert head == _at(feeds.events, EVENTS, old)  # "from now" is the end at the first reader
    assert feeds.followed == 1
    waiting = asyncio.create_task(feeds.read(feeds.events, head, 10, wait_s=10))
    [new] = await _add(redis_client, EVENTS, 1, start=1)
    assert [row.id for row in await asyncio.wait_for(waiting, 10)] == [new]
    nothing = feeds.messages.vector(None)
    assert [row.id for row in await feeds.read(feeds.messages, nothing, 10)] == []  # read: followed too
    assert feeds.followed == 2


async def test_a_feed_merges_its_partitions_and_a_cursor_resumes_in_another_process(
    feeds: Feeds, redis_client: Any
) -> None:
    """Entries of three partitions (and the legacy stream an earlier version wrote) reach a reader in each
    stream's order; its cursor, taken half way and handed to a second process whose memory holds nothing of
    the feed, gets exactly the rest: none lost, none twice."""
    tail = feeds.events
    streams = [tail.streams[0], tail.streams[5], tail.streams[11], keys.EVENTS]
    start = await feeds.head(tail)
    written = {stream: await _add(redis_client, stream, 3, start=10 * i) for i, stream in enumerate(streams)}
    first = await _read_until(feeds, tail, start, 6)
    at = start
    for entry in first:
        at = tail.advance(at, entry)
    cursor = tail.cursor(at)
    other = Feeds(redis_client, keep=2)
    await other.start()
    try:
        resumed = other.events.vector(cursor)
        rest = await _read_until(other, other.events, resumed, 12 - len(first))
        assert await other.read(other.events, _fold(other.events, resumed, rest), 10) == []
    finally:
        await other.stop()
    got = [(tail.streams[entry.part], entry.id) for entry in first + rest]
    assert sorted(got) == sorted((stream, entry_id) for stream, ids in written.items() for entry_id in ids)
    for stream, ids in written.items():
        assert [entry_id for key, entry_id in got if key == stream] == ids  # each stream in its order


async def test_an_earlier_versions_stream_id_resumes_after_it_in_every_partition(
    feeds: Feeds, redis_client: Any
) -> None:
    tail = feeds.events
    [old] = await _add(redis_client, keys.EVENTS, 1)  # the cursor an earlier version handed out
    await asyncio.sleep(0.005)
    newer = [await _add(redis_client, stream, 1) for stream in (tail.streams[2], tail.streams[9])]
    rows = await feeds.read(tail, tail.vector(old), 10)
    assert sorted(row.id for row in rows) == sorted(entry_id for [entry_id] in newer)


async def test_a_tampered_feed_cursor_is_refused(feeds: Feeds) -> None:
    cursor = feeds.events.cursor(await feeds.head(feeds.events))
    for bad in (cursor[:-3], cursor + "AAAA", "f1.", "f1.!!", "x" + cursor):
        with pytest.raises(ValueError):
            feeds.events.vector(bad)


def _fold(tail: Tail, at: Vector, entries: list[Entry]) -> Vector:
    for entry in entries:
        at = tail.advance(at, entry)
    return at
