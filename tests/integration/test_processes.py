"""Guarantees that only hold across processes and crashes, on a real redis-server (contract §5)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    InboundMessage,
    PromptRequest,
    PromptState,
    RunRequest,
)
from gateway.decision.service import Outcome
from gateway.store import keys
from tests.support import workers
from tests.support.feeds import feed_entries
from tests.support.memory_channel import MemoryChannel
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.slow
ALICE = "slack:UALICE"
SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture
def url(redis_server: RedisServer) -> str:
    redis_server.flush()
    return redis_server.url


async def test_200_answers_from_4_processes_exactly_one_wins(url: str) -> None:
    async with workers.gateway_on(url) as service:
        run = await service.create_run(RunRequest(thread_id=workers.THREAD, agent="ops", started_by=ALICE))
        prompt = await service.raise_prompt(run.run_id, PromptRequest.model_validate(workers.QUESTION))

    texts = ["staging", "production", "1", "2", "something else"] * 10
    start_at = time.time() + 1.5
    with SPAWN.Pool(4) as pool:
        batches = pool.starmap(
            workers.answer_many, [(url, prompt.prompt_id, ALICE, texts, start_at) for _ in range(4)]
        )
    results = [result for batch in batches for result in batch]

    assert len(results) == 200
    statuses = Counter(result["status"] for result in results)
    assert statuses["answered"] == 1
    winner = next(result["answers"] for result in results if result["status"] == "answered")
    assert all(result["answers"] == winner for result in results), "every caller is told how it settled"
    async with workers.gateway_on(url) as service:
        settled = await service.get_prompt(prompt.prompt_id)
    assert settled.answers is not None and [a.answer for a in settled.answers] == winner


async def test_50_concurrent_raises_leave_exactly_one_active_prompt(url: str) -> None:
    async with workers.gateway_on(url) as service:
        run = await service.create_run(RunRequest(thread_id=workers.THREAD, agent="ops", started_by=ALICE))

    start_at = time.time() + 1.5
    with SPAWN.Pool(4) as pool:
        batches = pool.starmap(workers.raise_many, [(url, run.run_id, n, start_at) for n in (13, 13, 12, 12)])
    prompt_ids = [prompt_id for batch in batches for prompt_id in batch]

    async with workers.gateway_on(url) as service:
        prompts = [await service.get_prompt(prompt_id) for prompt_id in prompt_ids]
        active = await service.store.active_prompt_id(workers.THREAD)
    assert len(prompts) == 50
    pending = [p for p in prompts if p.prompt_state is PromptState.PENDING]
    assert [p.prompt_id for p in pending] == [active]
    cancelled = [p for p in prompts if p.prompt_state is PromptState.CANCELLED]
    assert len(cancelled) == 49
    assert {p.reason_code for p in cancelled} == {"superseded"}


async def test_a_reminder_due_while_two_processes_sweep_is_posted_once(url: str) -> None:
    async with workers.gateway_on(url) as service:  # raises, and stops before the step is due
        run = await service.create_run(RunRequest(thread_id=workers.THREAD, agent="ops", started_by=ALICE))
        body = {**workers.QUESTION, "escalation": [{"after_seconds": 2, "remind": True}]}
        prompt = await service.raise_prompt(run.run_id, PromptRequest.model_validate(body))
        await service.outbox.idle()

    with SPAWN.Pool(2) as pool:
        reminded = pool.starmap(workers.sweep_for, [(url, 5.0), (url, 5.0)])

    assert sorted(reminded, key=len) == [[], [prompt.prompt_id]]
    async with workers.gateway_on(url) as service:
        events = await feed_entries(service.store.redis, keys.EVENTS)
        taken = (await service.get_prompt(prompt.prompt_id)).escalations
    assert [e["data"]["step"] for e in events if e["type"] == "input.reminded"] == [0]
    assert taken is not None and [one.step for one in taken] == [0]


async def test_prompt_raised_by_a_killed_process_is_answered_by_a_new_one(url: str, tmp_path: Path) -> None:
    report = tmp_path / "raised.json"
    child = SPAWN.Process(target=workers.raise_and_hang, args=(url, ALICE, str(report)))
    child.start()
    deadline = time.monotonic() + 30
    while not report.exists() or not report.read_text():
        assert time.monotonic() < deadline, "the child never raised its prompt"
        assert child.is_alive(), "the child died before raising its prompt"
        await asyncio.sleep(0.05)
    raised = json.loads(report.read_text())
    os.kill(raised["pid"], signal.SIGKILL)
    child.join(10)
    assert child.exitcode == -signal.SIGKILL

    channel = MemoryChannel("slack")
    async with workers.gateway_on(url, channel) as service:
        received = await service.receive(
            InboundMessage(thread_id=workers.THREAD, sender=ALICE, text="2", event_id="ev-after-crash")
        )
        await service.outbox.idle()
        await service.outbox.sweep(everything=True)
        settled = await service.get_prompt(raised["prompt_id"])

    assert received.outcome is Outcome.ANSWERED
    assert settled.answers is not None and settled.answers[0].answer == ["production"]
    assert [item.text for item in channel.items_of("pending_prompt_resolved")] == ["✓ Answered: production"]


async def test_reply_whose_process_is_killed_mid_receive_is_answered_once_on_redelivery(url: str) -> None:
    async with workers.gateway_on(url) as service:
        run = await service.create_run(RunRequest(thread_id=workers.THREAD, agent="ops", started_by=ALICE))
        prompt = await service.raise_prompt(run.run_id, PromptRequest.model_validate(workers.QUESTION))
        await service.outbox.idle()

    child = SPAWN.Process(target=workers.receive_and_get_killed, args=(url, ALICE, "2", "Ev-killed"))
    child.start()
    await asyncio.to_thread(child.join, 30)
    assert child.exitcode == -signal.SIGKILL, "the child was to be killed between its two receive steps"

    channel = MemoryChannel("slack")
    redelivery = InboundMessage(thread_id=workers.THREAD, sender=ALICE, text="2", event_id="Ev-killed")
    async with workers.gateway_on(url, channel) as service:
        outcomes = [(await service.receive(redelivery)).outcome for _ in range(2)]
        await service.outbox.idle()
        await service.outbox.sweep(everything=True)
        settled = await service.get_prompt(prompt.prompt_id)

    assert outcomes == [Outcome.ANSWERED, Outcome.DUPLICATE]
    assert settled.answers is not None and settled.answers[0].answer == ["production"]
    assert [item.text for item in channel.items_of("pending_prompt_resolved")] == ["✓ Answered: production"]


async def test_state_survives_redis_kill_9_and_restart(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis", appendfsync="always")
    server.start()
    try:
        queued_thread = "slack:C0QUEUE:1712345678.000200"
        async with workers.gateway_on(server.url) as service:
            await service.store.put_agent(
                AgentDefinition(name="ops", human_input=HumanInput(approvers=["slack:UBOB", "telegram:42"]))
            )
            run = await service.create_run(
                RunRequest(thread_id=workers.THREAD, agent="ops", started_by=ALICE)
            )
            prompt = await service.raise_prompt(run.run_id, PromptRequest.model_validate(workers.QUESTION))
            await service.create_run(RunRequest(thread_id=queued_thread, agent="ops", started_by=ALICE))
            queued = await service.receive(
                InboundMessage(thread_id=queued_thread, sender=ALICE, text="later")
            )
            await service.outbox.idle()
        assert queued.outcome is Outcome.QUEUED

        server.kill()
        server.start()

        async with workers.gateway_on(server.url) as service:
            restored = await service.get_prompt(prompt.prompt_id)
            agent = await service.store.get_agent("ops")
            messages = await feed_entries(service.store.redis, keys.MESSAGES, 10)
            assert restored.prompt_state is PromptState.PENDING
            assert [q.question for q in restored.questions] == ["What's the deployment target?"]
            assert agent is not None and agent.human_input.approvers == ["slack:UBOB", "telegram:42"]
            assert [entry["text"] for entry in messages] == ["later"]
            answered = await service.receive(
                InboundMessage(thread_id=workers.THREAD, sender="slack:UBOB", text="1")
            )
            assert answered.outcome is Outcome.ANSWERED
    finally:
        server.stop()
