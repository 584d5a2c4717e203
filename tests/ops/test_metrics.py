"""Prometheus metrics: what the core counts as prompts, messages and platform calls come and go."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.api import create_app
from gateway.base import metrics
from gateway.base.models import InboundMessage, PromptRequest, RunRequest
from gateway.base.settings import Settings
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels, CountedInbound
from gateway.delivery.lease import Lease
from gateway.delivery.webhooks import Retry, WebhookDispatcher
from gateway.process.runtime import Runtime
from gateway.rules.outcomes import Outcome
from gateway.rules.steps import Pick
from gateway.store import Store, connect, keys
from tests.support.conditions import eventually
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000100"
ALICE, MALLORY = "slack:UALICE", "slack:UMALLORY"
APPROVAL = {"kind": "approval", "questions": [{"question": "Allow db__drop to run?"}]}


def value(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


class Delta:
    """Sample values now, to assert how much they grew since."""

    def __init__(self, name: str, **labels: str) -> None:
        self.name, self.labels = name, labels
        self.before = value(name, **labels)

    @property
    def grown(self) -> float:
        return value(self.name, **self.labels) - self.before


@pytest.fixture
async def core() -> AsyncIterator[tuple[Gateway, MemoryChannel]]:
    channel = MemoryChannel("slack")
    service = Gateway(Store(connect(None).client), Channels([channel]), sweep_interval=3600)
    await service.start()
    yield service, channel
    await service.stop()


async def raise_approval(gateway: Gateway) -> Any:
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    return await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(APPROVAL)), run


async def test_raised_answered_and_time_to_answer_are_counted_by_kind_and_channel(
    core: tuple[Gateway, MemoryChannel],
) -> None:
    gateway, _ = core
    raised = Delta("threadgate_prompts_raised_total", kind="approval", channel="slack")
    answered = Delta(
        "threadgate_prompts_answered_total", kind="approval", channel="slack", resolution="resolved_parked"
    )
    timed = Delta("threadgate_time_to_answer_seconds_count", kind="approval", channel="slack")
    prompt, _ = await raise_approval(gateway)
    await gateway.answer(prompt.prompt_id, ALICE, text="yes")
    await gateway.outbox.idle()
    assert (raised.grown, answered.grown, timed.grown) == (1, 1, 1)


async def test_cancellations_are_counted_by_reason_code(core: tuple[Gateway, MemoryChannel]) -> None:
    gateway, _ = core
    superseded = Delta(
        "threadgate_prompts_cancelled_total", kind="approval", channel="slack", reason="superseded"
    )
    ended = Delta("threadgate_prompts_cancelled_total", kind="approval", channel="slack", reason="run_ended")
    _, run = await raise_approval(gateway)
    await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(APPROVAL))
    await gateway.end_run(run.run_id)
    await gateway.outbox.idle()
    assert (superseded.grown, ended.grown) == (1, 1)


async def test_inbound_messages_are_counted_by_outcome(core: tuple[Gateway, MemoryChannel]) -> None:
    gateway, _ = core
    sink = CountedInbound(gateway)
    outcomes = ("answered", "queued", "not_allowed", "duplicate")
    deltas = {o: Delta("threadgate_inbound_messages_total", channel="slack", outcome=o) for o in outcomes}
    await raise_approval(gateway)
    await sink.receive(InboundMessage(thread_id=THREAD, sender=MALLORY, text="yes"))
    await sink.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="yes", event_id="ev1"))
    await sink.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="yes", event_id="ev1"))
    await sink.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="thanks"))
    assert {o: d.grown for o, d in deltas.items()} == dict.fromkeys(outcomes, 1)


async def test_a_press_the_answer_step_hands_over_is_counted_as_a_message_is(
    core: tuple[Gateway, MemoryChannel],
) -> None:
    gateway, _ = core
    answered = Delta("threadgate_inbound_messages_total", channel="slack", outcome="answered")
    prompt, _ = await raise_approval(gateway)
    result = await CountedInbound(gateway).step(
        Pick(prompt_id=prompt.prompt_id, sender=ALICE, event_id="press1", option=0)
    )
    assert (result.outcome, answered.grown) == (Outcome.ANSWERED, 1)


async def test_platform_failures_count_429s_apart_from_other_errors(
    core: tuple[Gateway, MemoryChannel],
) -> None:
    gateway, channel = core
    limited = Delta("threadgate_platform_errors_total", channel="slack", kind="rate_limited")
    failed = Delta("threadgate_platform_errors_total", channel="slack", kind="failed")
    prompt, _ = await raise_approval(gateway)
    channel.fail_next, channel.fail_with_retry_after = 1, 0.01
    await gateway.answer(prompt.prompt_id, ALICE, text="yes")  # its audit item meets a 429
    await gateway.outbox.idle()
    channel.fail_next, channel.fail_with_retry_after = 1, None
    with pytest.raises(Exception, match="unavailable"):
        await raise_approval(gateway)
    assert (limited.grown, failed.grown) == (1, 1)


async def test_lease_gauge_follows_who_holds_the_channel_connection() -> None:
    redis = connect(None).client
    ours, theirs = Lease(redis, "telegram:abc123"), Lease(redis, "telegram:abc123")
    assert await ours.try_acquire()
    assert value("threadgate_lease_held", channel="telegram", lease="telegram:abc123") == 1
    assert not await theirs.try_acquire()
    await ours.release()
    assert value("threadgate_lease_held", channel="telegram", lease="telegram:abc123") == 0


async def test_webhook_deliveries_and_retries_are_counted() -> None:
    redis = connect(None).client
    answers = iter([httpx.Response(500), httpx.Response(200)])
    transport = httpx.MockTransport(lambda _request: next(answers))
    dispatcher = WebhookDispatcher(
        redis, ["http://127.0.0.1:9/hook"], "s3cret", transport=transport, retry=Retry(base_s=0.001)
    )
    retried = Delta("threadgate_webhook_deliveries_total", outcome="retry_scheduled")
    delivered = Delta("threadgate_webhook_deliveries_total", outcome="delivered")
    await dispatcher.start()
    try:
        # The dispatcher's own loops take the event, fail once and deliver the retry a millisecond later.
        await redis.xadd(keys.EVENTS, {"j": '{"id": "evt_1", "type": "input.requested"}'})

        async def delivered_once() -> bool:
            return delivered.grown >= 1

        await eventually(delivered_once, "the retried delivery")
    finally:
        await dispatcher.stop()
    assert (retried.grown, delivered.grown) == (1, 1)


async def test_metrics_endpoint_serves_counters_and_the_outbox_depth_read_from_redis() -> None:
    channel = MemoryChannel("slack")
    settings = Settings(_env_file=None, threadgate_allowed_hosts="gateway")  # type: ignore[call-arg]
    runtime = Runtime.build(settings, channels=[])  # the test client's host, allowed as a deployment's
    runtime.gateway.channels.add(channel)
    app = create_app(runtime)
    transport = httpx.ASGITransport(app=app)
    await runtime.start()
    try:
        prompt, _ = await raise_approval(runtime.gateway)
        channel.fail_next, channel.fail_with_retry_after = 1, 3600  # the audit item waits in the outbox
        await runtime.gateway.answer(prompt.prompt_id, ALICE, text="yes")
        await runtime.gateway.outbox.idle()
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            response = await client.get("/metrics")
    finally:
        await runtime.stop()
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    lines = response.text.splitlines()
    assert "threadgate_outbox_depth 1.0" in lines
    assert "threadgate_outbox_threads 1.0" in lines
    assert any(line.startswith("threadgate_time_to_answer_seconds_bucket{") for line in lines)
    assert any(line.startswith("process_resident_memory_bytes") for line in lines)
