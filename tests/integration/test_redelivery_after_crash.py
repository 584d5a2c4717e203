"""A process that dies between being handed the active prompt and deciding on it loses no reply: the
platform's redelivery of the same event is taken in full, exactly once (contract §5, dedupe)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.base.models import InboundMessage, PromptRequest, PromptState, RunRequest
from gateway.decision.service import Gateway, Outcome
from gateway.delivery.channel import Channels
from gateway.store import Decision, Store
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0CRASH:1712345678.000100"
ALICE = "slack:UALICE"
MALLORY = "slack:UMALLORY"
DEPLOY = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "What's the deployment target?",
            "options": [{"label": "staging"}, {"label": "production"}],
        }
    ],
}


class ProcessDied(Exception):
    """Stands for the process ending at this point (kill -9, OOM, power loss)."""


class DiesAfterHandBack(Store):
    """A store whose process dies right after the receive script handed the active prompt back."""

    async def receive(self, *args: Any, **kwargs: Any) -> Decision:
        decision = await super().receive(*args, **kwargs)
        if decision.status == "active":
            raise ProcessDied
        return decision


def reply(text: str, sender: str = ALICE) -> InboundMessage:
    return InboundMessage(thread_id=THREAD, sender=sender, text=text, event_id="Ev-redelivered")


async def raise_deploy_prompt(store: Store, channel: MemoryChannel) -> str:
    """Raise the prompt in a process of its own, so the receiving processes have never seen it."""
    raiser = Gateway(Store(store.redis), Channels([channel]), sweep_interval=3600)
    await raiser.start()
    try:
        run = await raiser.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        prompt = await raiser.raise_prompt(run.run_id, PromptRequest.model_validate(DEPLOY))
        await raiser.outbox.idle()
    finally:
        await raiser.stop()
    return prompt.prompt_id


async def receive_in_a_new_process(store: Store, channel: MemoryChannel, message: InboundMessage) -> Outcome:
    service = Gateway(Store(store.redis), Channels([channel]), sweep_interval=3600)
    await service.start()
    try:
        received = await service.receive(message)
        await service.outbox.idle()
    finally:
        await service.stop()
    return received.outcome


async def crash_while_receiving(store: Store, channel: MemoryChannel, message: InboundMessage) -> None:
    doomed = Gateway(DiesAfterHandBack(store.redis), Channels([channel]), sweep_interval=3600)
    await doomed.start()
    try:
        with pytest.raises(ProcessDied):
            await doomed.receive(message)
    finally:
        await doomed.stop()


async def test_redelivery_after_a_crash_between_receive_and_answer_answers_once(store: Store) -> None:
    channel = MemoryChannel("slack")
    prompt_id = await raise_deploy_prompt(store, channel)

    await crash_while_receiving(store, channel, reply("2"))
    redelivered = await receive_in_a_new_process(store, channel, reply("2"))
    again = await receive_in_a_new_process(store, channel, reply("2"))

    assert (redelivered, again) == (Outcome.ANSWERED, Outcome.DUPLICATE)
    settled = await store.get_prompt(prompt_id)
    assert settled is not None and settled.prompt_state is PromptState.ANSWERED
    assert settled.answers is not None and settled.answers[0].answer == ["production"]
    assert [item.text for item in channel.items_of("pending_prompt_resolved")] == ["✓ Answered: production"]
    logged = [entry for _id, entry in await store.thread_items(THREAD, None, 100)]
    assert [entry["text"] for entry in logged if entry.get("sender") == ALICE] == ["2"]


async def test_redelivery_after_a_crash_refuses_a_stranger_once(store: Store) -> None:
    channel = MemoryChannel("slack")
    prompt_id = await raise_deploy_prompt(store, channel)

    await crash_while_receiving(store, channel, reply("2", sender=MALLORY))
    redelivered = await receive_in_a_new_process(store, channel, reply("2", sender=MALLORY))
    again = await receive_in_a_new_process(store, channel, reply("2", sender=MALLORY))

    assert (redelivered, again) == (Outcome.NOT_ALLOWED, Outcome.DUPLICATE)
    assert [identity for _thread, identity, _text in channel.notices] == [MALLORY]
    assert (await store.get_prompt(prompt_id)).pending  # type: ignore[union-attr]


async def test_same_event_delivered_twice_to_processes_that_never_saw_the_prompt_answers_once(
    store: Store,
) -> None:
    channel = MemoryChannel("slack")
    await raise_deploy_prompt(store, channel)

    outcomes = await asyncio.gather(*(receive_in_a_new_process(store, channel, reply("1")) for _ in range(3)))

    assert sorted(outcomes) == sorted([Outcome.ANSWERED, Outcome.DUPLICATE, Outcome.DUPLICATE])
    assert [item.text for item in channel.items_of("pending_prompt_resolved")] == ["✓ Answered: staging"]
