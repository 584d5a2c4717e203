"""How a prompt lies in Redis: a small hash beside its immutable record, kept and expired together."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.models import InboundMessage, PromptRequest, PromptState, RunRequest
from gateway.decision.service import Gateway, Outcome
from gateway.delivery.channel import Channels
from gateway.store import Store, connect, keys
from gateway.store.codec import RecordCodec, prompt_record
from tests.support.memory_channel import MemoryChannel
from tests.support.redis_server import RedisServer

THREAD = "slack:C0789:1712345678.000200"
ALICE = "slack:UALICE"
# Two questions of three described options: a record far over Redis's 64-byte listpack value limit.
DEPLOY = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "Which environment should this deploy go to?",
            "options": [
                {"label": "staging", "description": "push to staging.example.com"},
                {"label": "production", "description": "push to www.example.com"},
                {"label": "canary", "description": "5% of production traffic"},
            ],
        },
        {
            "question": "Run the database migrations first?",
            "multiSelect": True,
            "options": [
                {"label": "yes", "description": "apply pending migrations before the deploy"},
                {"label": "no", "description": "deploy code only"},
            ],
        },
    ],
}


async def started(store: Store, channel: MemoryChannel) -> Gateway:
    gateway = Gateway(store, Channels([channel]), sweep_interval=0.2)
    await gateway.start()
    return gateway


async def raise_deploy(gateway: Gateway) -> str:
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    prompt = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(DEPLOY))
    return prompt.prompt_id


@pytest.fixture
async def real_store(redis_server: RedisServer) -> AsyncIterator[Store]:
    redis_server.flush()
    connection = connect(redis_server.url)
    store = Store(connection.client)
    await store.load()
    yield store
    await connection.client.aclose()


async def test_a_pending_prompts_hash_stays_a_listpack_with_its_record_apart(real_store: Store) -> None:
    gateway = await started(real_store, MemoryChannel("slack"))
    try:
        prompt_id = await raise_deploy(gateway)
        prompt = await gateway.get_prompt(prompt_id)
    finally:
        await gateway.stop()

    redis = real_store.redis
    assert await redis.object("encoding", keys.prompt(THREAD, prompt_id)) == "listpack"
    assert "rec" not in await redis.hgetall(keys.prompt(THREAD, prompt_id))
    assert await redis.get(keys.prompt_record(THREAD, prompt_id)) == prompt_record(prompt)


async def test_the_stored_record_leaves_out_defaults_and_rebuilds_the_same_prompt(store: Store) -> None:
    gateway = await started(store, MemoryChannel("slack"))
    try:
        prompt = await gateway.get_prompt(await raise_deploy(gateway))
    finally:
        await gateway.stop()

    record = prompt_record(prompt)
    assert '"prompt_state"' not in record and '"multiSelect":false' not in record
    assert '"multiSelect":true' in record
    assert RecordCodec().decode({"rec": record, "state": "pending"}) == prompt


async def test_a_settled_prompts_record_is_kept_exactly_as_long_as_its_hash(store: Store) -> None:
    gateway = await started(store, MemoryChannel("slack"))
    try:
        prompt_id = await raise_deploy(gateway)
        redis = store.redis
        # Pending: kept past its expiry by the retain time, hash and record alike (the sweeper settles it).
        pending_ttl = await redis.pttl(keys.prompt_record(THREAD, prompt_id))
        assert pending_ttl > store.retain_ms
        assert abs(await redis.pttl(keys.prompt(THREAD, prompt_id)) - pending_ttl) < 1000
        await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="1"))
        await gateway.outbox.idle()
        settled = await gateway.get_prompt(prompt_id)
    finally:
        await gateway.stop()

    hash_ttl = await redis.pttl(keys.prompt(THREAD, prompt_id))
    record_ttl = await redis.pttl(keys.prompt_record(THREAD, prompt_id))
    assert store.retain_ms - 60_000 < hash_ttl <= store.retain_ms
    assert abs(hash_ttl - record_ttl) < 1000
    assert settled.prompt_state is PromptState.ANSWERED and len(settled.questions) == 2


async def test_a_missing_record_reads_as_no_prompt(store: Store) -> None:
    gateway = await started(store, MemoryChannel("slack"))
    try:
        prompt_id = await raise_deploy(gateway)
    finally:
        await gateway.stop()
    await store.redis.delete(keys.prompt(THREAD, prompt_id), keys.prompt_record(THREAD, prompt_id))

    assert await Store(store.redis).get_prompt(prompt_id, THREAD) is None


async def move_record_into_hash(redis: Any, prompt_id: str) -> None:
    """Lay a prompt out as it was stored before its record had a key of its own."""
    record = await redis.get(keys.prompt_record(THREAD, prompt_id))
    await redis.hset(keys.prompt(THREAD, prompt_id), "rec", record)
    await redis.delete(keys.prompt_record(THREAD, prompt_id))


async def test_a_prompt_stored_with_its_record_in_the_hash_is_still_read_and_answered(store: Store) -> None:
    first = await started(store, MemoryChannel("slack"))
    try:
        prompt_id = await raise_deploy(first)
    finally:
        await first.stop()
    await move_record_into_hash(store.redis, prompt_id)

    channel = MemoryChannel("slack")
    # A fresh store: no prompt cached, so the reply is mapped against the record the script hands back.
    second = await started(Store(store.redis), channel)
    try:
        assert (await second.get_prompt(prompt_id)).pending
        received = await second.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="2"))
        await second.outbox.idle()
        settled = await second.get_prompt(prompt_id)
    finally:
        await second.stop()

    assert received.outcome is Outcome.ANSWERED
    assert settled.answers is not None and [a.answer for a in settled.answers] == [["production"], ["no"]]
    assert len(channel.items_of("pending_prompt_resolved")) == 1
    assert await store.redis.pttl(keys.prompt(THREAD, prompt_id)) > 0
