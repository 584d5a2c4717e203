"""A dead process's outbox: taken over once its lock lapses, and its events reach each feed once."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio.cluster import RedisCluster

from gateway.base.models import InboundMessage, PromptRequest, RunRequest
from gateway.base.settings import Settings
from gateway.decision.outbox import LOCK_TTL_MS, Outbox
from gateway.decision.service import Gateway, Outcome
from gateway.delivery.channel import Channels
from gateway.delivery.feeds.tail import Entry, Tail
from gateway.store import OutboxPass, Store, keys
from gateway.store.results import OutboxMode
from tests.support.feeds import feed_length, feed_rows
from tests.support.memory_channel import HeldChannel, MemoryChannel

THREAD = "slack:C0456:1712345678.000100"
ALICE = "slack:UALICE"
QUESTION = {"kind": "text", "questions": [{"question": "Which branch?"}]}


async def events(store: Store) -> list[str]:
    return [row[1]["j"] for row in await feed_rows(store.redis, keys.EVENTS)]


async def test_an_outbox_drained_again_after_a_crash_between_append_and_ack_adds_each_event_once(
    store: Store,
) -> None:
    """On a cluster a process appends a batch's events, then dies before acknowledging it: the next drain
    appends the same batch again, and the feeds still hold each event (and queued message) once. On one
    server the events are appended in the acknowledgement's own step: a process that dies before it has
    appended nothing, and the next drain appends each once."""
    channel = MemoryChannel("slack")
    dying = Outbox(store, Channels([channel]))
    now_ms = int(time.time() * 1000)
    assert await _queue_a_message(store, now_ms)
    [batch] = await store.take_outboxes([OutboxPass(THREAD, "dead", 60_000, OutboxMode.ACQUIRE)])
    assert batch is not None and batch.pub
    if isinstance(store.redis, RedisCluster):
        await dying._publish({THREAD: batch}, {})  # appended to the feeds ...
    # ... and the process died: its lock lapses (given up here, with nothing acknowledged)
    await store.take_outboxes([OutboxPass(THREAD, "dead", 60_000, OutboxMode.RELEASE)])

    survivor = Outbox(store, Channels([channel]))
    assert await survivor.drain(THREAD)

    entries = await events(store)
    assert len(entries) == 1 and '"m1.received"' in entries[0]
    assert await feed_length(store.redis, keys.MESSAGES) == 1


async def _queue_a_message(store: Store, now_ms: int) -> bool:
    message = {"message_id": "m1", "thread_id": THREAD, "sender": ALICE, "text": "hi"}
    decision = await store.receive(THREAD, "ev1", None, message, now_ms)
    return decision.status == "queued"


async def test_readers_of_a_feed_get_an_id_once_even_if_the_stream_holds_it_twice() -> None:
    tail = Tail(("a", "b"), keep=16, once=True)
    tail.start_at(tail.vector(None))
    copy = {"id": "prm_1.requested", "type": "input.requested"}
    tail.extend(0, [Entry("1-0", copy), Entry("2-0", {"id": "prm_1.resolved"}), Entry("3-0", dict(copy))])
    rows = tail.after(tail.vector(None), 10)
    assert rows is not None and [entry.id for entry in rows] == ["1-0", "2-0"]
    assert tail.head == ((3, 0), (0, 0))  # the copy is read past, not read again


async def test_a_stale_outbox_lock_is_taken_over_once_it_lapses(store: Store) -> None:
    """The holder is gone (its lock was never released): another process delivers the outbox within the
    lock's TTL, shortened here through the same setting as in production."""
    lock_ms = 300
    channel = MemoryChannel("slack")
    gateway = Gateway(store, Channels([channel]), sweep_interval=3600, outbox_lock_ms=lock_ms)
    # Held before the gateway starts: its first sweep, in the background, finds the lock taken too.
    now_ms = int(time.time() * 1000)
    await _queue_a_message(store, now_ms)
    assert await store.take_outboxes([OutboxPass(THREAD, "dead", lock_ms, OutboxMode.ACQUIRE)]) != [None]
    await gateway.start()
    try:
        started = time.monotonic()
        assert not await gateway.outbox.drain(THREAD)  # held by the dead process
        while not await gateway.outbox.drain(THREAD):
            assert time.monotonic() - started < lock_ms / 1000 + 2.0
        taken_after = time.monotonic() - started
    finally:
        await gateway.stop()
    assert await feed_length(store.redis, keys.MESSAGES) == 1
    assert taken_after < lock_ms / 1000 + 2.0


async def test_a_drain_longer_than_the_lock_keeps_it_and_delivers_once(store: Store) -> None:
    """A post slower than the lock's TTL does not let another process take the same batch: the lock is
    renewed while the pass runs."""
    lock_ms = 300
    slow = HeldChannel()
    first = Outbox(store, Channels([slow]), lock_ttl_ms=lock_ms)
    second = Outbox(store, Channels([MemoryChannel("slack")]), lock_ttl_ms=lock_ms)
    item = {"type": "message", "content": [{"type": "text", "text": "hi"}]}
    await store.push_chat(THREAD, {"t": "message", "item": item}, int(time.time() * 1000))

    draining = asyncio.create_task(first.drain(THREAD))
    await slow.posting.wait()
    await asyncio.sleep(3 * lock_ms / 1000)  # the post outlasts the lock's TTL three times over
    taken_by_second = await second.drain(THREAD)
    slow.go.set()

    assert not taken_by_second
    assert await draining
    assert len(slow.posts) == 1


def test_the_outbox_lock_is_ten_seconds_by_default() -> None:
    assert LOCK_TTL_MS == 10_000
    assert Settings(_env_file=None).threadgate_outbox_lock_ms == 10_000  # type: ignore[call-arg]


async def test_a_long_held_lock_is_renewed_in_time_while_other_passes_start_and_end_around_it(
    store: Store,
) -> None:
    """Each pass that ends wakes the renewer; that must not put off renewing a lock still held."""
    lock_ms = 300
    slow = HeldChannel()  # slack: THREAD's post waits
    first = Outbox(store, Channels([slow, MemoryChannel("telegram")]), lock_ttl_ms=lock_ms)
    second = Outbox(store, Channels([MemoryChannel("slack")]), lock_ttl_ms=lock_ms)
    item = {"type": "message", "content": [{"type": "text", "text": "hi"}]}
    now_ms = int(time.time() * 1000)
    await store.push_chat(THREAD, {"t": "message", "item": item}, now_ms)
    draining = asyncio.create_task(first.drain(THREAD))
    await slow.posting.wait()
    loop = asyncio.get_running_loop()
    deadline, n = loop.time() + 3 * lock_ms / 1000, 0
    while loop.time() < deadline:  # first's own passes on other threads, one ending every few ms
        other = f"telegram:{100 + n}"
        await store.push_chat(other, {"t": "message", "item": item}, now_ms)
        assert await first.drain(other)
        n += 1
    assert n > 3
    assert not await second.drain(THREAD)  # THREAD's lock was renewed, whatever ended meanwhile
    slow.go.set()
    assert await draining


async def test_answers_back_to_back_cost_no_renewal_of_their_outbox_locks(store: Store) -> None:
    """Renewals keep their own clock (a third of the lock's TTL): answers one after another, each pass
    starting as the last ends and done long before then, renew nothing."""
    gateway = Gateway(store, Channels([MemoryChannel("slack")]), sweep_interval=3600)
    await gateway.start()
    try:
        opened = []
        for n in range(20):
            run = await gateway.create_run(
                RunRequest(thread_id=f"slack:C0999:{n}.000100", agent="ops", started_by=ALICE)
            )
            opened.append(await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION)))
        await gateway.outbox.idle()
        modes: list[OutboxMode] = []
        take = store.take_outboxes

        async def recorded(passes: list[OutboxPass], *published: object) -> list[object]:
            modes.extend(one.mode for one in passes)
            return list(await take(passes, *published))  # type: ignore[arg-type]

        store.take_outboxes = recorded  # type: ignore[method-assign,assignment]
        for n, prompt in enumerate(opened):
            message = InboundMessage(thread_id=prompt.thread_id, sender=ALICE, text="main", event_id=f"e{n}")
            assert (await gateway.receive(message)).outcome is Outcome.ANSWERED
        await gateway.outbox.idle()
        assert OutboxMode.CONTINUE in modes
        assert OutboxMode.RENEW not in modes
        assert OutboxMode.ACQUIRE not in modes  # each answer's own script took its thread's lock
    finally:
        await gateway.stop()


async def test_an_answer_takes_a_free_outbox_lock_for_its_claim_and_hands_back_the_first_batch(
    store: Store,
) -> None:
    gateway = Gateway(store, Channels([MemoryChannel("slack")]), sweep_interval=3600)
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    prompt = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
    assert await gateway.outbox.drain(THREAD)
    await store.redis.set(keys.thread_prefix(THREAD) + "lock", "another", px=60_000)
    now_ms = int(time.time() * 1000)
    claim = gateway.outbox.claim()
    busy = await store.resolve(THREAD, prompt.prompt_id, [], ALICE, "t1", now_ms, claim=claim)
    assert busy.ok and busy.held is None  # the lock is another's: the answer stands, the drain waits

    await store.redis.delete(keys.thread_prefix(THREAD) + "lock")
    second = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
    await store.take_outboxes([OutboxPass(THREAD, "x", 60_000, OutboxMode.ACQUIRE)])
    await store.take_outboxes([OutboxPass(THREAD, "x", 60_000, OutboxMode.RELEASE)])
    claim = gateway.outbox.claim()
    settled = await store.resolve(THREAD, second.prompt_id, [], ALICE, "t2", now_ms, claim=claim)
    assert settled.ok and settled.held is not None
    assert settled.held.token == claim.token
    assert await store.redis.get(keys.thread_prefix(THREAD) + "lock") == claim.token
    assert [effect["t"] for effect in settled.held.batch.chat][-1] == "audit"
    assert second.prompt_id in settled.held.batch.prompts
