"""Escalation and thread ownership through the core: a step is checked again when it fires (owners change
after a raise), and a copy never takes a thread from another agent's run: a message typed where that
agent has a run reaches that agent, and its own prompt is answered as if no copy were there."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.base.ids import ThreadRef
from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    InboundMessage,
    PromptRequest,
    PromptState,
    RunRequest,
)
from gateway.decision.service import Gateway, Outcome
from gateway.delivery.channel import Channels
from gateway.rules.render import message_item
from gateway.store import Store, keys
from tests.support.feeds import feed_entries
from tests.support.log_capture import captured_logs
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000100"  # ops's run asks here
SHARED = "slack:C0777:1712345678.000300"  # the copy's thread, nobody's when the prompt is raised
PAGER = "slack:C0999:1712345678.000500"  # another target, nobody's throughout
ALICE = "slack:UALICE"  # started ops's run
BOB = "slack:UBOB"  # ops's approver
CAROL = "slack:UCAROL"  # started deploy's run
START = 1_800_000_000.0
DEPLOY: dict[str, Any] = {
    "kind": "ask_user_question",
    "questions": [
        {"question": "What's the deployment target?", "options": [{"label": "staging"}, {"label": "prod"}]}
    ],
}


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


class ThreadingChannel(MemoryChannel):
    """The memory channel, able to start a thread in a channel (its header the thread's root)."""

    async def start_thread(self, channel: ThreadRef, text: str) -> str:
        await self.post(channel, message_item(text))
        return f"{channel.thread_id}:1712345678.{len(self.posts):06d}"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def threading() -> ThreadingChannel:
    return ThreadingChannel("slack")


@pytest.fixture
async def service(store: Store, threading: ThreadingChannel, clock: Clock) -> AsyncIterator[Gateway]:
    gateway = Gateway(store, Channels([threading]), clock=clock, sweep_interval=3600)
    await gateway.start()
    await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=[BOB])))
    yield gateway
    await gateway.stop()


async def _raise(service: Gateway, targets: list[str]) -> str:
    run = await service.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    body = {**DEPLOY, "escalation": [{"after_seconds": 60, "to": targets}]}
    prompt = await service.raise_prompt(run.run_id, PromptRequest.model_validate(body))
    await service.outbox.idle()
    return prompt.prompt_id


async def _fire(service: Gateway, clock: Clock) -> None:
    clock.now += 60
    assert await service.escalate_due() == 1
    await service.outbox.idle()


def _copies(channel: MemoryChannel, prompt_id: str) -> list[str]:
    """The threads a copy of the prompt was posted in (its own thread aside)."""
    return [
        p.thread_id
        for p in channel.posts
        if p.item.type == "pending_prompt" and p.thread_id != THREAD
        if p.item.metadata["prompt"]["prompt_id"] == prompt_id
    ]


async def _deploy_claims(service: Gateway) -> None:
    await service.store.put_agent(AgentDefinition(name="deploy", channels=["slack:C0777"]))


async def _deploy_runs(service: Gateway) -> None:
    await service.create_run(RunRequest(thread_id=SHARED, agent="deploy", started_by=CAROL))


@pytest.mark.parametrize(
    ("target", "change"),
    [(SHARED, _deploy_runs), (SHARED, _deploy_claims), ("slack:C0777", _deploy_claims)],
    ids=["thread-then-another-agents-run", "thread-then-its-channel-claimed", "channel-then-claimed"],
)
async def test_a_target_another_agent_came_to_own_after_the_raise_is_skipped_when_the_step_fires(
    service: Gateway, threading: ThreadingChannel, clock: Clock, target: str, change: Any
) -> None:
    prompt_id = await _raise(service, [target, PAGER])
    await change(service)

    with captured_logs() as records:
        await _fire(service, clock)

    assert _copies(threading, prompt_id) == [PAGER], "only the target ops may still post to"
    assert not [p for p in threading.posts if p.thread_id.startswith("slack:C0777")], "nothing posted there"
    [refused] = [r for r in records if r.getMessage() == "escalation.target_refused"]
    fields = refused.fields  # type: ignore[attr-defined]
    assert refused.levelno == logging.WARNING
    assert (fields["prompt_id"], fields["agent"], fields["target"]) == (prompt_id, "ops", target)
    assert "other agents own" in fields["reason"]
    prompt = await service.get_prompt(prompt_id)
    assert prompt.pending and prompt.copy_threads == [PAGER]


@pytest.mark.parametrize(
    "sender", [CAROL, BOB, ALICE], ids=["deploys-starter", "ops-approver", "ops-starter"]
)
@pytest.mark.parametrize("text", ["prod", "2", "hello"])
async def test_a_message_where_another_agent_has_a_run_reaches_that_agent_not_the_copy(
    service: Gateway, store: Store, threading: ThreadingChannel, clock: Clock, sender: str, text: str
) -> None:
    prompt_id = await _raise(service, [SHARED])
    await _fire(service, clock)
    assert _copies(threading, prompt_id) == [SHARED]
    await _deploy_runs(service)

    received = await service.receive(InboundMessage(thread_id=SHARED, sender=sender, text=text))
    await service.outbox.idle()

    assert received.outcome is Outcome.QUEUED
    assert not [n for n in threading.notices if n[0] == SHARED], "nobody is told they may not answer"
    queued = await feed_entries(store.redis, keys.MESSAGES)
    assert [(m["thread_id"], m["sender"], m["text"]) for m in queued] == [(SHARED, sender, text)]
    assert (await service.get_prompt(prompt_id)).pending

    # The copy's own control still answers it there (a press names its prompt).
    pressed = await service.receive(
        InboundMessage(
            thread_id=SHARED,
            sender=BOB,
            prompt_id=prompt_id,
            answers=[{"question_id": "q1", "answer": ["prod"]}],
        )
    )
    assert pressed.outcome is Outcome.ANSWERED


async def test_the_other_agents_own_prompt_is_answered_while_the_copy_is_open(
    service: Gateway, threading: ThreadingChannel, clock: Clock
) -> None:
    prompt_id = await _raise(service, [SHARED])
    await _fire(service, clock)
    deploy = await service.create_run(RunRequest(thread_id=SHARED, agent="deploy", started_by=CAROL))
    own = await service.raise_prompt(deploy.run_id, PromptRequest.model_validate(DEPLOY))
    await service.outbox.idle()

    answered = await service.receive(InboundMessage(thread_id=SHARED, sender=CAROL, text="staging"))
    assert answered.outcome is Outcome.ANSWERED
    settled = await service.get_prompt(own.prompt_id)
    assert (settled.prompt_state, settled.answered_by) == (PromptState.ANSWERED, CAROL)
    assert (await service.get_prompt(prompt_id)).pending, "the copy's prompt is left alone"
    # Once deploy's prompt settled, a message there is still deploy's.
    later = await service.receive(InboundMessage(thread_id=SHARED, sender=CAROL, text="prod"))
    assert later.outcome is Outcome.QUEUED
    assert (await service.get_prompt(prompt_id)).pending


async def test_a_reply_typed_where_only_the_prompts_own_agent_has_runs_still_answers_the_copy(
    service: Gateway, threading: ThreadingChannel, clock: Clock
) -> None:
    prompt_id = await _raise(service, [SHARED])
    await _fire(service, clock)
    await service.create_run(RunRequest(thread_id=SHARED, agent="ops", started_by=CAROL))

    answered = await service.receive(InboundMessage(thread_id=SHARED, sender=BOB, text="prod"))

    assert answered.outcome is Outcome.ANSWERED
    settled = await service.get_prompt(prompt_id)
    assert (settled.prompt_state, settled.answered_by) == (PromptState.ANSWERED, BOB)
