"""Everything the store writes has a lifetime: each key family's TTL, and a workload's keys all going away."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    InboundMessage,
    PromptRequest,
    ReasonCode,
    RunRequest,
)
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.store import FeedEntry, Store, connect, keys
from tests.support.memory_channel import MemoryChannel
from tests.support.redis_server import RedisServer

THREAD = "slack:C0456:1712345678.000100"
ROOM = "slack:C0456:1712345699.000200"  # a session-like thread: a header in its log, one run, nothing else
ALICE = "slack:UALICE"
MINUTE_MS = 60_000
DEPLOY = {
    "kind": "ask_user_question",
    "questions": [{"question": "Where?", "options": [{"label": "staging"}, {"label": "production"}]}],
}


async def started(store: Store, clock: Any = time.time) -> Gateway:
    gateway = Gateway(store, Channels([MemoryChannel("slack")]), clock=clock, sweep_interval=3600)
    await gateway.start()
    return gateway


def ask(**extra: Any) -> PromptRequest:
    return PromptRequest.model_validate({**DEPLOY, **extra})


async def ttl(store: Store, key: str) -> int:
    return int(await store.redis.pttl(key))


async def test_an_ended_run_and_its_index_are_kept_the_retain_time_a_running_one_a_year_longer(
    store: Store,
) -> None:
    gateway = await started(store)
    try:
        run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        running = [
            await ttl(store, keys.run(THREAD, run.run_id)),
            await ttl(store, keys.run_index(run.run_id)),
        ]
        await gateway.end_run(run.run_id)
        ended = [await ttl(store, keys.run(THREAD, run.run_id)), await ttl(store, keys.run_index(run.run_id))]
    finally:
        await gateway.stop()
    assert all(left > store.retain_ms + 300 * 24 * 3600 * 1000 for left in running)
    assert all(store.retain_ms - MINUTE_MS < left <= store.retain_ms for left in ended)


async def test_a_threads_log_owners_and_outbox_live_the_idle_time_after_its_last_write(store: Store) -> None:
    gateway = await started(store)
    try:
        await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="hello", event_id="e1"))
        await gateway.outbox.idle()
        lifetimes = {
            name: await ttl(store, keys.thread_prefix(THREAD) + name) for name in ("items", "agents")
        }
        seen = await ttl(store, keys.seen(THREAD, "e1"))
    finally:
        await gateway.stop()
    assert all(store.thread_idle_ms - MINUTE_MS < left <= store.thread_idle_ms for left in lifetimes.values())
    assert 0 < seen <= store.dedupe_ttl_s * 1000


async def test_a_threads_keys_outlive_its_pending_prompt_and_keep_that_lifetime_once_it_settles(
    store: Store,
) -> None:
    """A settlement does not shorten the thread's lifetimes: the thread lives the idle time past the
    prompt's expiry, as its opening set, and so does the prompt's id index (the retain time past it); the
    settled prompt's hash and record live the retain time."""
    gateway = await started(store)
    try:
        run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        prompt = await gateway.raise_prompt(run.run_id, ask(expires_in_seconds=30 * 24 * 3600))
        await gateway.outbox.idle()
        waits_ms = int(prompt.expires_at.timestamp() * 1000) - int(time.time() * 1000)
        thread_keys = [await ttl(store, keys.thread_prefix(THREAD) + name) for name in ("items", "agents")]
        prompt_keys = [
            await ttl(store, keys.prompt(THREAD, prompt.prompt_id)),
            await ttl(store, keys.prompt_record(THREAD, prompt.prompt_id)),
            await ttl(store, keys.prompt_index(prompt.prompt_id)),
        ]
        await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="1", event_id="e1"))
        await gateway.outbox.idle()
        settled_thread = [await ttl(store, keys.thread_prefix(THREAD) + name) for name in ("items", "agents")]
        settled_prompt = [
            await ttl(store, keys.prompt(THREAD, prompt.prompt_id)),
            await ttl(store, keys.prompt_record(THREAD, prompt.prompt_id)),
        ]
        settled_index = await ttl(store, keys.prompt_index(prompt.prompt_id))
    finally:
        await gateway.stop()
    assert all(left > waits_ms + store.thread_idle_ms - MINUTE_MS for left in thread_keys)
    kept_ms = waits_ms + store.retain_ms  # measured after the raise: a little short of what was set
    assert all(kept_ms - MINUTE_MS < left <= kept_ms + MINUTE_MS for left in prompt_keys)
    assert all(left > waits_ms + store.thread_idle_ms - MINUTE_MS for left in settled_thread)
    assert all(store.retain_ms - MINUTE_MS < left <= store.retain_ms for left in settled_prompt)
    assert kept_ms - 2 * MINUTE_MS < settled_index <= kept_ms + MINUTE_MS


async def test_keys_a_busy_thread_creates_or_is_given_from_outside_get_its_lifetime(store: Store) -> None:
    """A write within a hundredth of the thread's lifetime sets no expiry it already has, yet a key it
    creates gets one: the outbox list an undelivered answer leaves, the list an agent message starts."""
    failing = MemoryChannel("slack")
    gateway = Gateway(store, Channels([failing]), sweep_interval=3600)
    await gateway.start()
    try:
        run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        prompt = await gateway.raise_prompt(run.run_id, ask())
        await gateway.outbox.idle()
        failing.fail_next = 10  # the audit post fails: the chat list stays, created by the answer
        reply = InboundMessage(thread_id=THREAD, sender=ALICE, text="1", event_id="e1")
        await gateway.receive(reply)
        await gateway.outbox.idle()
        chat = keys.chat_outbox(THREAD)
        assert await store.redis.llen(chat) >= 1
        log = await ttl(store, keys.thread_prefix(THREAD) + "items")
        assert log > store.thread_idle_ms - MINUTE_MS  # the answer left the lifetime the prompt gave
        assert abs(await ttl(store, chat) - log) < MINUTE_MS  # given the same expiry
        assert (await gateway.get_prompt(prompt.prompt_id)).answers

        await store.redis.delete(chat)
        await store.push_chat(THREAD, {"t": "message", "id": "itm_1", "item": {}}, int(time.time() * 1000))
        # written from outside the scripts: the idle time, and the next script's write sets the thread's
        assert store.thread_idle_ms - MINUTE_MS < await ttl(store, chat) <= store.thread_idle_ms
        assert not await store.redis.exists(keys.thread_kept(THREAD))
        await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="next", event_id="e2"))
        assert store.thread_idle_ms - MINUTE_MS < await ttl(store, chat) <= store.thread_idle_ms
        assert await store.redis.exists(keys.thread_kept(THREAD))
    finally:
        failing.fail_next = 0
        await gateway.stop()


@pytest.mark.parametrize("how", ["answered", "cancelled", "expired", "superseded", "run_ended"])
async def test_a_prompts_drafts_are_deleted_when_it_settles(store: Store, how: str) -> None:
    gateway = await started(store)
    try:
        run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        prompt = await gateway.raise_prompt(run.run_id, ask(expires_in_seconds=3600))
        names = [f"form:{prompt.prompt_id}", "telegram-reply:42"]
        for name in names:
            await gateway.save_draft(prompt.prompt_id, ALICE, name, {"q1": "a"})
        lifetimes = [await ttl(store, keys.draft(THREAD, name)) for name in names]
        if how == "answered":
            await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="1"))
        elif how == "cancelled":
            await gateway.cancel_prompt(prompt.prompt_id)
        elif how == "expired":
            await store.expire(THREAD, prompt.prompt_id, "expired", int(time.time() * 1000) + 7_200_000)
        elif how == "superseded":
            await gateway.raise_prompt(run.run_id, ask())
        else:
            await gateway.end_run(run.run_id)
        left = [await store.redis.exists(keys.draft(THREAD, name)) for name in names]
        index = await store.redis.exists(keys.prompt_drafts(THREAD, prompt.prompt_id))
    finally:
        await gateway.stop()
    assert all(0 < lifetime <= 3_600_000 for lifetime in lifetimes)  # no longer than the prompt's expiry
    assert left == [0, 0] and index == 0


async def test_a_draft_for_a_settled_prompt_is_refused_and_not_written(store: Store) -> None:
    gateway = await started(store)
    try:
        run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        prompt = await gateway.raise_prompt(run.run_id, ask())
        await store.cancel(THREAD, prompt.prompt_id, "gone", ReasonCode.CANCELLED, int(time.time() * 1000))
        merged = await store.update_draft(THREAD, prompt.prompt_id, "late", {"q1": "a"}, 60_000)
    finally:
        await gateway.stop()
    assert merged is None
    assert not await store.redis.exists(keys.draft(THREAD, "late"))


async def test_feeds_are_capped_by_count(store: Store) -> None:
    """The cap is the feed's: each partition keeps its share (whole stream nodes of 100 are trimmed)."""
    capped = Store(store.redis, feed_maxlen=1_200)
    await capped.load()
    share = 1_200 // keys.PARTITIONS
    entries = [
        FeedEntry(keys.messages_feed(i % keys.PARTITIONS), f"m{i}", f'{{"message_id": "m{i}"}}')
        for i in range(6_000)
    ]
    for start in range(0, len(entries), 500):
        await capped.publish(entries[start : start + 500], [])
    lengths = [await store.redis.xlen(keys.messages_feed(part)) for part in range(keys.PARTITIONS)]
    assert all(share <= length < share + 101 for length in lengths), lengths
    assert 1_200 <= sum(lengths) < 2_500


async def test_feeds_are_capped_by_age_by_the_sweeper_not_on_each_append(store: Store) -> None:
    aged = Store(store.redis, feed_max_age_ms=60_000)
    await aged.load()
    now_ms = int(time.time() * 1000)
    events, messages = keys.events_feed(3), keys.messages_feed(3)
    for stream in (events, messages, keys.MESSAGES):  # the legacy stream an earlier version wrote too
        for i in range(1, 150):  # older than the retention: written long ago
            await store.redis.xadd(stream, {"j": "{}"}, id=f"{now_ms - 3_600_000}-{i}")
    await aged.publish([FeedEntry(events, "e1", '{"id": "e1"}')], [], now_ms)
    assert await store.redis.xlen(events) == 150  # an append trims by count only
    await aged.trim_feeds(now_ms)
    assert [row[1]["j"] for row in await store.redis.xrange(events)] == ['{"id": "e1"}']
    assert await store.redis.xlen(messages) == 0
    assert await store.redis.xlen(keys.MESSAGES) == 0


async def test_a_feed_entrys_once_marker_expires_after_the_dedupe_window(store: Store) -> None:
    events = keys.events_feed(0)
    await store.publish([FeedEntry(events, "prm_1.requested", '{"id": "prm_1.requested"}')], [])
    assert 0 < await ttl(store, keys.feed_seen(events, "prm_1.requested")) <= store.feed_dedupe_s * 1000


STREAMS = {  # a trimmed stream stays, empty
    feed(part)
    for feed in (keys.events_feed, keys.messages_feed, keys.history_feed)
    for part in keys.EVERY_PARTITION
}


async def test_a_workload_leaves_nothing_behind_once_its_lifetimes_pass(redis_server: RedisServer) -> None:
    """Runs, prompts (answered, cancelled, expired, superseded by a run's end), form drafts, queued
    messages, events and a session-like thread, with every lifetime shortened: the keyspace returns to the
    agent definitions alone (and the two feeds and the history, empty)."""
    redis_server.flush()
    client = connect(redis_server.url).client
    short = {"retain_ms": 300, "thread_idle_ms": 300, "dedupe_ttl_s": 1, "feed_max_age_ms": 300}
    short |= {"history_max_age_ms": 300}
    store = Store(client, feed_dedupe_s=1, **short)
    await store.load()
    skew = [0.0]  # the sweeper's "a while ago" is 10 s: its clock is moved on instead of waited out
    gateway = await started(store, clock=lambda: time.time() + skew[0])
    try:
        await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=[ALICE])))
        baseline = {key async for key in client.scan_iter()}
        await _workload(gateway, store)
        await gateway.outbox.idle()
        grown = {key async for key in client.scan_iter()} - baseline
        skew[0] = 60.0
        deadline = time.monotonic() + 5
        while True:
            await gateway.outbox.sweep(everything=True)
            left = {key async for key in client.scan_iter()} - baseline
            if left <= STREAMS or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        feeds = [await client.xlen(stream) for stream in sorted(STREAMS)]
    finally:
        await gateway.stop()
        await client.aclose()
    assert len(grown) > 20  # the workload wrote many key families
    assert left <= STREAMS, sorted(left)
    assert not any(feeds)


async def _workload(gateway: Gateway, store: Store) -> None:
    # The prompts expire soon: a thread lives the idle time past its latest prompt's expiry.
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    await gateway.raise_prompt(run.run_id, ask(expires_in_seconds=1))
    await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="1", event_id="ev1"))
    cancelled = await gateway.raise_prompt(run.run_id, ask(expires_in_seconds=1))
    await gateway.save_draft(cancelled.prompt_id, ALICE, f"form:{cancelled.prompt_id}", {"q1": "a"})
    await gateway.cancel_prompt(cancelled.prompt_id)
    expiring = await gateway.raise_prompt(run.run_id, ask(expires_in_seconds=1))
    await store.expire(THREAD, expiring.prompt_id, "expired", int(time.time() * 1000) + 5_000)
    await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="also this", event_id="ev2"))
    pending = await gateway.raise_prompt(run.run_id, ask(expires_in_seconds=1))
    await gateway.save_draft(pending.prompt_id, ALICE, "telegram-reply:7", {"question": "0"})
    await gateway.end_run(run.run_id)
    room = await gateway.create_run(RunRequest(thread_id=ROOM, agent="ops", started_by=ALICE))
    await store.log_item(ROOM, {"role": "gateway", "type": "message", "content": []})
    await gateway.end_run(room.run_id)
