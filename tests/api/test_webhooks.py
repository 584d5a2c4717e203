"""Signed webhooks: delivered from a durable Redis queue, retried with backoff, once per event id."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.base.settings import Settings
from gateway.delivery.webhooks import SIGNATURE_HEADER, Retry, WebhookDispatcher, sign, verify
from gateway.store import keys
from tests.api.conftest import (
    AGENT_AUTH,
    FAST,
    THREAD,
    Served,
    raise_prompt,
    serve,
    served_gateway,
    start_run,
)
from tests.support.conditions import eventually
from tests.support.redis_cluster import RedisCluster

SECRET = "whsec-test-5e1d"
QUICK = Retry(base_s=0.05, max_s=0.2)


@dataclass
class Receiver:
    """A webhook endpoint that fails its first ``failures`` requests, then accepts and records."""

    failures: int = 0
    attempts: int = 0
    accepted: list[dict[str, Any]] = field(default_factory=list)
    bad_signatures: int = 0

    async def hook(self, request: Request) -> Response:
        self.attempts += 1
        body = await request.body()
        if not verify(SECRET, request.headers.get(SIGNATURE_HEADER, ""), body):
            self.bad_signatures += 1
            return Response(status_code=400)
        if self.attempts <= self.failures:
            return Response(status_code=500)
        self.accepted.append(json.loads(body))
        return Response(status_code=204)

    def ids(self) -> list[str]:
        return [entry["id"] for entry in self.accepted]


@contextlib.asynccontextmanager
async def receiving(receiver: Receiver) -> AsyncIterator[str]:
    app = Starlette(routes=[Route("/hook", receiver.hook, methods=["POST"])])
    async with serve(app) as base_url:
        yield f"{base_url}/hook"


@contextlib.asynccontextmanager
async def gateway_with_webhooks(redis_url: str, url: str) -> AsyncIterator[Served]:
    extra = {"threadgate_webhooks": url, "threadgate_webhook_secret": SECRET}
    async with served_gateway(redis_url, FAST, **extra) as served:
        yield served


async def _until(condition: Any, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_signature_is_hmac_sha256_of_timestamp_dot_body() -> None:
    header = sign(SECRET, b'{"id":"e1"}', 1_700_000_000)
    assert header.startswith("t=1700000000,v1=")
    assert verify(SECRET, header, b'{"id":"e1"}', now=1_700_000_030)
    assert not verify(SECRET, header, b'{"id":"e2"}', now=1_700_000_030)
    assert not verify("other-secret", header, b'{"id":"e1"}', now=1_700_000_030)
    assert not verify(SECRET, header, b'{"id":"e1"}', now=1_700_001_000)
    assert not verify(SECRET, "garbage", b'{"id":"e1"}')


def test_webhooks_without_a_secret_refuse_to_start() -> None:
    settings = Settings(_env_file=None, threadgate_webhooks="http://127.0.0.1:9/hook")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="THREADGATE_WEBHOOK_SECRET"):
        WebhookDispatcher.from_settings(settings, redis=None)
    assert WebhookDispatcher.from_settings(Settings(_env_file=None), redis=None) is None  # type: ignore[call-arg]


async def test_receiver_failing_three_times_gets_each_event_exactly_once(
    real_redis: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    receiver = Receiver(failures=3)
    async with receiving(receiver) as url, gateway_with_webhooks(real_redis, url) as served:
        assert served.runtime.webhooks is not None
        served.runtime.webhooks.retry = QUICK
        async with served.client(AGENT_AUTH) as agent:
            run = await start_run(agent)
            prompt = await raise_prompt(agent, run["run_id"])
            await agent.post(f"/v1/prompts/{prompt['prompt_id']}/cancel")
        await _until(lambda: len(receiver.accepted) >= 2)
        await asyncio.sleep(0.3)  # time for any duplicate to show up
        assert await served.runtime.webhooks.queued() == 0
    pid = prompt["prompt_id"]
    assert sorted(receiver.ids()) == sorted([f"{pid}.requested", f"{pid}.resolved"])
    assert receiver.attempts >= 5
    assert receiver.bad_signatures == 0
    assert {entry["type"] for entry in receiver.accepted} == {"input.requested", "input.resolved"}
    assert SECRET not in caplog.text
    assert "webhook.failed" in caplog.text


async def test_queued_deliveries_survive_a_gateway_restart(real_redis: str) -> None:
    receiver = Receiver(failures=10**6)  # down: every delivery fails while the first gateway runs
    async with receiving(receiver) as url:
        async with gateway_with_webhooks(real_redis, url) as first:
            assert first.runtime.webhooks is not None
            first.runtime.webhooks.retry = QUICK
            async with first.client(AGENT_AUTH) as agent:
                run = await start_run(agent)
                prompt = await raise_prompt(agent, run["run_id"])
            await _until(lambda: receiver.attempts >= 2)
        assert receiver.accepted == []
        receiver.failures = 0
        async with gateway_with_webhooks(real_redis, url) as second:
            assert second.runtime.webhooks is not None
            second.runtime.webhooks.retry = QUICK
            await _until(lambda: len(receiver.accepted) == 1)
            await asyncio.sleep(0.2)
    assert receiver.ids() == [f"{prompt['prompt_id']}.requested"]


async def attempted(redis: Any) -> bool:
    """One delivery is queued and its first attempt counted."""
    due = await redis.zrange("tg:{wh}:due", 0, -1)
    return len(due) == 1 and await redis.hget(f"tg:{{wh}}:d:{due[0]}", "attempts") == "1"


async def test_the_queue_keeps_the_key_and_group_names_older_processes_read(redis_client: Any) -> None:
    """A rolling upgrade runs old and new processes on one Redis: both must queue, claim and dedupe on
    the same keys, with the same fields, through the same consumer group, on every store backend."""
    sent: list[bytes] = []

    def accept(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        return httpx.Response(500)  # kept queued, so its keys can be read

    url = "http://127.0.0.1:9/hook"
    dispatcher = WebhookDispatcher(redis_client, [url], SECRET, transport=httpx.MockTransport(accept))
    await dispatcher.start()
    try:
        body = '{"id": "evt_1", "type": "input.requested"}'
        await redis_client.xadd("tg:events", {"j": body})
        await eventually(lambda: attempted(redis_client), "a first attempt")  # retried 2 s later
        [ident] = await redis_client.zrange("tg:{wh}:due", 0, -1)
        assert ident.startswith("evt_1@")
        record = await redis_client.hgetall(f"tg:{{wh}}:d:{ident}")
        assert (record["url"], record["body"], record["attempts"]) == (url, body, "1")
        assert await redis_client.exists(f"tg:{{wh}}:s:{ident}") == 1
        for part in keys.EVERY_PARTITION:
            groups = await redis_client.xinfo_groups(keys.events_feed(part))
            assert [group["name"] for group in groups] == ["threadgate-webhooks"]
    finally:
        await dispatcher.stop()
    assert sent == [body.encode()]


def threads_by_partition(count: int = keys.PARTITIONS) -> dict[int, str]:
    """One Slack thread id in each of ``count`` partitions, by partition."""
    found: dict[int, str] = {}
    for n in itertools.count():
        thread = f"slack:C0456:1712345678.{n:06d}"
        found.setdefault(keys.partition(thread), thread)
        if len(found) == count:
            return found
    raise AssertionError("unreachable")


def event_json(event_id: str, thread: str) -> str:
    """An event as a gateway writes it to an event stream (its JSON in the ``j`` field)."""
    data = {"prompt_id": event_id.split(".")[0], "thread_id": thread, "prompt_state": "pending"}
    body = {"id": event_id, "type": "input.requested", "created_at": "2026-01-05T10:00:00+00:00"}
    return json.dumps({**body, "data": data})


@dataclass
class Hook:
    """A webhook receiver behind ``httpx.MockTransport``: every delivered body's event id, in order."""

    ids: list[str] = field(default_factory=list)

    def accept(self, request: httpx.Request) -> httpx.Response:
        self.ids.append(json.loads(request.content)["id"])
        return httpx.Response(204)

    def dispatcher(self, redis: Any, **options: Any) -> WebhookDispatcher:
        transport = httpx.MockTransport(self.accept)
        return WebhookDispatcher(redis, ["http://127.0.0.1:9/hook"], SECRET, transport=transport, **options)


@contextlib.asynccontextmanager
async def dispatching(*dispatchers: WebhookDispatcher) -> AsyncIterator[None]:
    for dispatcher in dispatchers:
        await dispatcher.start()
    try:
        yield
    finally:
        for dispatcher in dispatchers:
            await dispatcher.stop()


async def test_events_of_every_partition_reach_the_receiver_once(redis_client: Any) -> None:
    """Two processes' dispatchers share the group: an event on any partition's stream, or on the legacy
    stream an older process still appends to, is delivered by one of them, once."""
    hook = Hook()
    first, second = hook.dispatcher(redis_client, poll_s=0.05), hook.dispatcher(redis_client, poll_s=0.05)
    expected = []
    async with dispatching(first, second):
        for part, thread in threads_by_partition().items():
            expected.append(f"prm_{part}.requested")
            await redis_client.xadd(keys.events_feed(part), {"j": event_json(expected[-1], thread)})
        expected.append("prm_legacy.requested")
        await redis_client.xadd(keys.EVENTS, {"j": event_json(expected[-1], "slack:C0456:1.0")})
        await _until(lambda: set(hook.ids) == set(expected))
        await asyncio.sleep(0.3)  # time for any duplicate to show up
        assert await first.queued() == 0
    assert sorted(hook.ids) == sorted(expected)  # each once


async def test_an_event_an_earlier_version_left_undelivered_is_delivered(redis_client: Any) -> None:
    """An earlier version read ``tg:events`` alone through the group: what it left there (never read, or
    read by a process that crashed before queueing it) is delivered after the upgrade, and so is what
    this version appended to a partition before its dispatcher first started."""
    await redis_client.xgroup_create(keys.EVENTS, keys.WEBHOOK_GROUP, id="$", mkstream=True)
    await redis_client.xadd(keys.EVENTS, {"j": event_json("prm_waiting.requested", THREAD)})
    await redis_client.xadd(keys.EVENTS, {"j": event_json("prm_held.requested", THREAD)})
    [[_stream, [(held, _fields)]]] = await redis_client.xreadgroup(
        keys.WEBHOOK_GROUP, "old-host:7:dead", {keys.EVENTS: ">"}, count=1
    )
    part = keys.partition(THREAD)
    await redis_client.xadd(keys.events_feed(part), {"j": event_json("prm_early.requested", THREAD)})
    hook = Hook()
    async with dispatching(hook.dispatcher(redis_client, poll_s=0.05, reclaim_idle_ms=100)):
        await _until(lambda: len(hook.ids) == 3)
        await asyncio.sleep(0.2)
    assert sorted(hook.ids) == ["prm_early.requested", "prm_held.requested", "prm_waiting.requested"]
    assert (await redis_client.xpending(keys.EVENTS, keys.WEBHOOK_GROUP))["pending"] == 0
    assert await redis_client.xack(keys.EVENTS, keys.WEBHOOK_GROUP, held) == 0  # acknowledged already


async def test_a_first_start_delivers_what_comes_after_it(redis_client: Any) -> None:
    """Webhooks set up on a Redis that never had them: the events already on the streams are not sent."""
    stream = keys.events_feed(keys.partition(THREAD))
    await redis_client.xadd(stream, {"j": event_json("prm_old.requested", THREAD)})
    hook = Hook()
    async with dispatching(hook.dispatcher(redis_client, poll_s=0.05)):
        await redis_client.xadd(stream, {"j": event_json("prm_new.requested", THREAD)})
        await _until(lambda: hook.ids == ["prm_new.requested"])
        await asyncio.sleep(0.2)
    assert hook.ids == ["prm_new.requested"]


async def test_a_partition_that_lost_its_group_gets_it_back(
    redis_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A stream deleted (or a Cluster node back empty) loses the group there only: it is made again on
    that stream, from its start, and the events appended since are delivered."""
    caplog.set_level(logging.INFO)
    part = keys.partition(THREAD)
    hook = Hook()
    async with dispatching(hook.dispatcher(redis_client, poll_s=0.05)):
        await redis_client.delete(keys.events_feed(part))
        await redis_client.xadd(keys.events_feed(part), {"j": event_json("prm_after.requested", THREAD)})
        await _until(lambda: hook.ids == ["prm_after.requested"])
    recreated = [record for record in caplog.records if record.getMessage() == "webhooks.group_recreated"]
    assert [record.fields["streams"] for record in recreated] == [[keys.events_feed(part)]]  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", ["redis", "cluster"])
async def test_prompts_of_threads_in_several_partitions_all_reach_the_webhook(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """End to end, on one server and on a Cluster: each prompt's events, whatever its thread's partition."""
    if backend == "cluster":
        cluster: RedisCluster = request.getfixturevalue("redis_cluster")
        cluster.flush()
        redis_url = cluster.url
    else:
        redis_url = request.getfixturevalue("real_redis")
    receiver = Receiver()
    threads = list(threads_by_partition(6).values())
    async with receiving(receiver) as url, gateway_with_webhooks(redis_url, url) as served:
        async with served.client(AGENT_AUTH) as agent:
            prompts = []
            for thread in threads:
                run = await start_run(agent, thread_id=thread)
                prompts.append((await raise_prompt(agent, run["run_id"]))["prompt_id"])
            for prompt_id in prompts:
                await agent.post(f"/v1/prompts/{prompt_id}/cancel")
        expected = {f"{pid}.{end}" for pid in prompts for end in ("requested", "resolved")}
        await _until(lambda: expected <= set(receiver.ids()), timeout=10)
        await asyncio.sleep(0.3)  # time for any duplicate to show up
    assert sorted(receiver.ids()) == sorted(expected)
