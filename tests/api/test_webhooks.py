"""Signed webhooks: delivered from a durable Redis queue, retried with backoff, once per event id."""

from __future__ import annotations

import asyncio
import contextlib
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

from gateway.settings import Settings
from gateway.webhooks import SIGNATURE_HEADER, Retry, WebhookDispatcher, sign, verify
from tests.api.conftest import (
    AGENT_AUTH,
    FAST,
    Served,
    raise_prompt,
    serve,
    served_gateway,
    start_run,
)

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
        assert await dispatcher.fan_out() == 1
        assert await dispatcher.deliver_due() == 1
        [ident] = await redis_client.zrange("tg:{wh}:due", 0, -1)
        assert ident.startswith("evt_1@")
        record = await redis_client.hgetall(f"tg:{{wh}}:d:{ident}")
        assert (record["url"], record["body"], record["attempts"]) == (url, body, "1")
        assert await redis_client.exists(f"tg:{{wh}}:s:{ident}") == 1
        groups = await redis_client.xinfo_groups("tg:events")
        assert [group["name"] for group in groups] == ["threadgate-webhooks"]
    finally:
        await dispatcher.stop()
    assert sent == [body.encode()]
