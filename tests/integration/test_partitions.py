"""The global indexes split by the thread's hash: each partition in its own slot, readers merging them,
page cursors that survive the change, and the one-key indexes of earlier versions moved in."""

from __future__ import annotations

import time
from typing import Any

import pytest
from redis.crc import key_slot

from gateway.base.cursors import MAX_OLD_OFFSET, page_position
from gateway.store import Store, keys
from gateway.store.legacy import move_legacy_indexes
from gateway.store.publishing import plan
from gateway.store.results import FeedEntry

SLOTS = 16384


def thread_in(part: int, salt: str = "") -> str:
    """A thread id whose partition is ``part``."""
    n = 0
    while keys.partition(f"web:room{salt}-{n}") != part:
        n += 1
    return f"web:room{salt}-{n}"


def test_each_partition_has_its_own_slot_in_its_own_slice_of_the_slot_space() -> None:
    slots = [key_slot(keys.pending_index(part).encode()) for part in range(keys.PARTITIONS)]
    for part, slot in enumerate(slots):
        assert SLOTS * part // keys.PARTITIONS <= slot < SLOTS * (part + 1) // keys.PARTITIONS
        names = (keys.expiry_index, keys.dirty_threads, keys.events_feed, keys.history_feed)
        assert {key_slot(name(part).encode()) for name in names} == {slot}  # one slot per partition
        assert key_slot(keys.agent_pending("ops", part).encode()) == slot
        assert key_slot(keys.feed_seen(keys.events_feed(part), "prm_1.requested").encode()) == slot


def test_threads_spread_over_every_partition() -> None:
    counts = [0] * keys.PARTITIONS
    for n in range(12_000):
        counts[keys.partition(f"slack:T1:C{n}:1712345678.{n:06d}")] += 1
    assert min(counts) > 800 and max(counts) < 1200, counts


async def _pending(store: Store, prompts: dict[str, tuple[str, int]], agent: str = "ops") -> None:
    """Write inbox entries as the open script's prelude does: id -> (thread, created ms)."""
    pipe = store.redis.pipeline(transaction=False)
    for prompt_id, (thread, created) in prompts.items():
        part = keys.partition(thread)
        pipe.zadd(keys.pending_index(part), {prompt_id: created})
        pipe.zadd(keys.agent_pending(agent, part), {prompt_id: created})
        pipe.set(keys.prompt_index(prompt_id), thread)
    await pipe.execute()


async def _all_pages(store: Store, agent: str | None, limit: int) -> list[str]:
    seen: list[str] = []
    position: tuple[int, str] | int | None = None
    for _ in range(1000):
        ids, cursor = await store.pending_ids(agent, position, limit)
        seen += ids
        if cursor is None:
            return seen
        position = page_position(cursor)
    raise AssertionError("the pages never ended")


async def test_the_inbox_pages_newest_first_across_partitions_with_ties_none_lost_or_repeated(
    store: Store,
) -> None:
    """Prompts created in the same millisecond in different partitions (and the same one) page in one
    order: by creation, then id, each once, whatever the page size."""
    prompts = {
        f"prm_{n:04d}": (thread_in(n % keys.PARTITIONS, str(n)), 1_700_000_000_000 + n // 10)
        for n in range(95)
    }
    await _pending(store, prompts)
    expected = sorted(prompts, key=lambda pid: (prompts[pid][1], pid), reverse=True)
    for limit in (1, 7, 10, 100):
        assert await _all_pages(store, None, limit) == expected, limit
        assert await _all_pages(store, "ops", limit) == expected, limit


async def test_an_offset_cursor_from_an_earlier_version_still_pages_on(store: Store) -> None:
    prompts = {f"prm_{n:04d}": (thread_in(n % 5, str(n)), 1_700_000_000_000 + n) for n in range(30)}
    await _pending(store, prompts)
    newest_first = sorted(prompts, reverse=True)
    ids, cursor = await store.pending_ids(None, 10, 8)  # "10": the cursor of an old 10-item page
    assert ids == newest_first[10:18]
    assert cursor is not None
    rest, end = await store.pending_ids(None, page_position(cursor), 100)
    assert rest == newest_first[18:] and end is None
    with pytest.raises(ValueError, match="start again"):
        page_position(str(MAX_OLD_OFFSET + 1))


@pytest.mark.parametrize("bad", ["i1.", "i1.!!", "i1.MTIz", "i2.MTox", "x" * 20])
def test_a_page_cursor_not_made_here_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        page_position(bad)


async def test_due_prompts_and_dirty_threads_are_merged_oldest_first(store: Store) -> None:
    now = int(time.time() * 1000)
    due = {f"prm_{n}": now - 1000 * n for n in range(1, 25)}
    pipe = store.redis.pipeline(transaction=False)
    for n, (prompt_id, at) in enumerate(due.items()):
        pipe.zadd(keys.expiry_index(n % keys.PARTITIONS), {prompt_id: at})
    pipe.zadd(keys.expiry_index(0), {"prm_later": now + 60_000})
    pipe.zadd(keys.EXPIRY, {"prm_legacy": now - 100_000})  # left by an earlier version: still expires
    for n in range(6):
        thread = thread_in(n * 2, "d")
        pipe.zadd(keys.dirty_threads(keys.partition(thread)), {thread: now - n})
    await pipe.execute()
    oldest = ["prm_legacy", *sorted(due, key=due.__getitem__)]
    assert await store.due_prompts(now, limit=5) == oldest[:5]
    assert await store.due_prompts(now) == oldest
    dirty = await store.dirty_threads(now, limit=3)
    assert dirty == [thread_in(n * 2, "d") for n in (5, 4, 3)]


async def _legacy(redis: Any, now: int) -> dict[str, str]:
    """What an earlier version left: one-key indexes (prompt -> thread for the prompts)."""
    threads = {f"prm_{n}": thread_in(n % keys.PARTITIONS, f"l{n}") for n in range(30)}
    pipe = redis.pipeline(transaction=False)
    for n, (prompt_id, thread) in enumerate(threads.items()):
        pipe.set(keys.prompt_index(prompt_id), thread)
        pipe.zadd(keys.PENDING, {prompt_id: now + n})
        pipe.zadd("tg:pending:ops", {prompt_id: now + n})
        pipe.zadd(keys.EXPIRY, {prompt_id: now + 3_600_000})
        pipe.zadd(keys.ESCALATION, {f"{prompt_id}:0": now + 60_000})
        pipe.zadd(keys.DIRTY, {thread: now})
    pipe.zadd(keys.PENDING, {"prm_gone": now})  # its prompt (and index) expired long ago
    await pipe.execute()
    return threads


async def test_the_indexes_an_earlier_version_left_are_read_then_moved_into_the_partitions(
    store: Store,
) -> None:
    now = int(time.time() * 1000)
    threads = await _legacy(store.redis, now)
    newest_first = sorted(threads, key=lambda pid: int(pid[4:]), reverse=True)
    assert await _all_pages(store, "ops", 7) == newest_first  # read where they are, before the move
    assert await store.pending_count() == 31

    assert await move_legacy_indexes(store.redis) == 5 * 30
    assert not await store.redis.exists(
        keys.PENDING, keys.EXPIRY, keys.ESCALATION, keys.DIRTY, "tg:pending:ops"
    )
    for prompt_id, thread in threads.items():
        part = keys.partition(thread)
        assert await store.redis.zscore(keys.pending_index(part), prompt_id) is not None
        assert await store.redis.zscore(keys.agent_pending("ops", part), prompt_id) is not None
        assert await store.redis.zscore(keys.expiry_index(part), prompt_id) == now + 3_600_000
        assert await store.redis.zscore(keys.escalation_schedule(part), f"{prompt_id}:0") is not None
        assert await store.redis.zscore(keys.dirty_threads(part), thread) == now
    assert await _all_pages(store, "ops", 7) == newest_first  # the same inbox, now partitioned
    assert await store.pending_count() == 30  # the entry of a prompt that is gone was dropped
    assert await move_legacy_indexes(store.redis) == 0  # nothing left: one round trip


def test_a_publish_sends_each_partition_one_call_whose_keys_share_its_slot() -> None:
    threads = [thread_in(part, "p") for part in (1, 1, 7)]
    entries = [
        FeedEntry(keys.events_feed(keys.partition(t)), f"prm_{n}.resolved", "{}")
        for n, t in enumerate(threads)
    ]
    entries.append(FeedEntry(keys.history_feed(1), "prm_0", "{}"))
    drops = [("ZREM", keys.pending_index(1), "prm_0", "prm_1"), ("ZREM", keys.expiry_index(4), "prm_9")]
    groups = plan(entries, drops)
    assert len(groups) == 3  # partitions 1, 7 and 4: one script call each
    for group in groups:
        name, call_keys, _ = group.call(lambda stream: (100, "0-0"), 60)
        assert name == "publish_feed"
        assert len({key_slot(key.encode()) for key in call_keys}) == 1
    [whole] = plan(entries, drops, by_slot=False)  # one server: one call for everything
    _, call_keys, _ = whole.call(lambda stream: (100, "0-0"), 60)
    assert len(call_keys) == 3 + 4 + 2  # three streams, four markers, two indexes


async def test_a_publish_appends_each_entry_once_and_drops_the_settled_from_the_partitions_indexes(
    store: Store,
) -> None:
    thread = thread_in(5, "s")
    events, pending = keys.events_feed(5), keys.pending_index(5)
    await store.redis.zadd(pending, {"prm_a": 1, "prm_b": 2})
    entry = FeedEntry(events, "prm_a.resolved", '{"id": "prm_a.resolved"}')
    drops = [("ZREM", pending, "prm_a")]
    for _ in range(2):  # a second drain of the same batch adds nothing
        [group] = plan([entry], drops)
        await store.scripts.call(store.redis, *group.call(lambda stream: 1000, 60))
    assert await store.redis.xlen(events) == 1
    assert await store.redis.zrange(pending, 0, -1) == ["prm_b"]
    assert keys.partition(thread) == 5


async def test_a_thread_left_dirty_by_an_earlier_version_is_dropped_from_its_set_once_drained(
    store: Store,
) -> None:
    await store.load()
    thread = thread_in(2, "x")
    now = int(time.time() * 1000)
    await store.redis.zadd(keys.DIRTY, {thread: now - 60_000})
    assert await store.dirty_threads(now) == [thread]
    await store.drop_dirty(thread, now)
    assert await store.dirty_threads(now) == []
    assert not await store.redis.exists(keys.DIRTY)
