"""The rest of seed 002 through the core service, on the embedded store, a redis-server and a Cluster:
the new-message rule, abort, forms and URL steps in chat."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    InboundMessage,
    PromptRequest,
    PromptState,
    ReasonCode,
    ReplyPolicy,
    RunRequest,
)
from gateway.decision.service import Gateway, Outcome
from gateway.delivery.channel import Channels
from gateway.rules.replies import NEW_MESSAGE_REASON
from gateway.store import ReadyAnswer, Store, keys
from tests.support.feeds import feed_entries
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000100"
ALICE = "slack:UALICE"
BOB = "slack:UBOB"
APPROVAL = {
    "kind": "approval",
    "questions": [{"question": "Allow db__drop to run?"}],
    "tool_call": {"name": "db__drop", "arguments": {"db": "staging"}},
}
PROFILE = {
    "kind": "form",
    "message": "Your profile",
    "requested_schema": {
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name"}, "age": {"type": "integer", "minimum": 0}},
        "required": ["name", "age"],
    },
}
URL = {"kind": "url", "message": "Connect GitHub", "url": "https://example.com/connect"}


def reply(text: str, sender: str = ALICE, **extra: Any) -> InboundMessage:
    return InboundMessage(thread_id=THREAD, sender=sender, text=text, **extra)


async def start(gateway: Gateway, policy: ReplyPolicy = ReplyPolicy.NEW_MESSAGE) -> str:
    await gateway.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(on_unmatched_reply=policy))
    )
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
    return run.run_id


async def feed(store: Store, stream: str) -> list[dict[str, Any]]:
    return await feed_entries(store.redis, stream)


async def test_new_message_supersedes_waiting_input_then_the_message_runs(
    gateway: Gateway, channel: MemoryChannel
) -> None:
    prompt = await gateway.raise_prompt(await start(gateway), PromptRequest.model_validate(APPROVAL))
    received = await gateway.receive(reply("wait, drop production instead"))
    await gateway.outbox.idle()

    assert received.outcome is Outcome.SUPERSEDED
    settled = await gateway.get_prompt(prompt.prompt_id)
    assert (settled.prompt_state, settled.reason_code, settled.reason) == (
        PromptState.CANCELLED,
        ReasonCode.NEW_MESSAGE,
        "Not answered: the user sent a new message instead",
    )
    assert [m["text"] for m in await feed(gateway.store, keys.MESSAGES)] == ["wait, drop production instead"]
    events = await feed(gateway.store, keys.EVENTS)
    assert [e["type"] for e in events] == ["input.requested", "input.resolved", "message.received"]
    assert [item.text for item in channel.items_of("pending_prompt_resolved")] == [
        f"✗ Cancelled: {NEW_MESSAGE_REASON}"
    ]


async def test_new_message_supersedes_waiting_input_in_a_process_that_never_saw_the_prompt(
    gateway: Gateway, redis_client: Any
) -> None:
    prompt = await gateway.raise_prompt(await start(gateway), PromptRequest.model_validate(APPROVAL))
    other_store = Store(redis_client)
    other = Gateway(other_store, Channels([MemoryChannel("slack")]))
    await other_store.load()

    received = await other.receive(reply("let's talk about the backup first"))
    await other.outbox.idle()

    assert received.outcome is Outcome.SUPERSEDED
    assert (await gateway.get_prompt(prompt.prompt_id)).reason_code is ReasonCode.NEW_MESSAGE
    assert [m["text"] for m in await feed(gateway.store, keys.MESSAGES)] == [
        "let's talk about the backup first"
    ]


async def test_a_reply_that_fits_answers_under_the_new_message_rule(gateway: Gateway) -> None:
    prompt = await gateway.raise_prompt(await start(gateway), PromptRequest.model_validate(APPROVAL))
    assert (await gateway.receive(reply("no"))).outcome is Outcome.ANSWERED
    settled = await gateway.get_prompt(prompt.prompt_id)
    assert settled.answers is not None and settled.answers[0].answer == ["Deny"]


async def test_someone_who_may_not_answer_cannot_supersede_the_input(gateway: Gateway) -> None:
    prompt = await gateway.raise_prompt(await start(gateway), PromptRequest.model_validate(APPROVAL))
    assert (await gateway.receive(reply("what about me?", sender=BOB))).outcome is Outcome.NOT_ALLOWED
    assert (await gateway.get_prompt(prompt.prompt_id)).pending


async def test_the_supersede_cancels_and_queues_in_one_script(gateway: Gateway) -> None:
    """Redis-backed: the receive script leaves the prompt cancelled and the message queued together."""
    prompt = await gateway.raise_prompt(await start(gateway), PromptRequest.model_validate(APPROVAL))
    await gateway.outbox.idle()
    store = gateway.store
    message = {"message_id": "msg_1", "thread_id": THREAD, "sender": ALICE, "text": "new plan"}
    ready = ReadyAnswer(
        prompt.prompt_id,
        [],
        ALICE,
        "turn_1",
        cancel_code=ReasonCode.NEW_MESSAGE,
        cancel_reason=NEW_MESSAGE_REASON,
    )

    decision = await store.receive(THREAD, "ev-1", None, message, gateway.now_ms(), ready)

    assert decision.status == "cancelled"
    state = await store.redis.hget(keys.prompt(THREAD, prompt.prompt_id), "state")
    pub = [json.loads(raw) for raw in await store.redis.lrange(keys.pub_outbox(THREAD), 0, -1)]
    assert state == "cancelled"
    assert [entry["t"] for entry in pub] == ["resolved", "message"]
    assert json.loads(pub[1]["m"])["text"] == "new plan"
    assert await store.active_prompt_id(THREAD) is None


async def test_a_new_message_racing_an_answer_settles_once_and_is_queued_once(gateway: Gateway) -> None:
    prompt = await gateway.raise_prompt(await start(gateway), PromptRequest.model_validate(APPROVAL))
    superseding, _answered = await asyncio.gather(
        gateway.receive(reply("new plan", event_id="ev-new")),
        gateway.answer(prompt.prompt_id, ALICE, text="approve"),
    )
    await gateway.outbox.idle()

    settled = await gateway.get_prompt(prompt.prompt_id)
    if settled.prompt_state is PromptState.ANSWERED:  # the answer came first: the message simply queues
        assert superseding.outcome in (Outcome.QUEUED, Outcome.SUPERSEDED)
    else:
        assert settled.reason_code is ReasonCode.NEW_MESSAGE
    texts = [m["text"] for m in await feed(gateway.store, keys.MESSAGES) if m.get("tag") is None]
    assert texts.count("new plan") == 1


async def test_abort_cancels_the_runs_input_as_aborted(gateway: Gateway) -> None:
    run_id = await start(gateway)
    prompt = await gateway.raise_prompt(run_id, PromptRequest.model_validate(APPROVAL))
    await gateway.end_run(run_id, aborted=True)
    settled = await gateway.get_prompt(prompt.prompt_id)
    assert (settled.reason_code, settled.reason) == (ReasonCode.ABORTED, "the run was aborted")


async def test_a_longer_form_is_answered_a_property_at_a_time_in_chat(
    gateway: Gateway, channel: MemoryChannel
) -> None:
    prompt = await gateway.raise_prompt(
        await start(gateway, ReplyPolicy.ANSWER), PromptRequest.model_validate(PROFILE)
    )
    assert channel.posts[0].item.text.startswith("Your profile\n\n1. Name (name) — string: text, required")

    first = await gateway.receive(reply("Ada"))
    invalid = await gateway.receive(reply("-3"))
    last = await gateway.receive(reply("36"))

    assert (first.outcome, invalid.outcome, last.outcome) == (Outcome.KEPT, Outcome.KEPT, Outcome.ANSWERED)
    assert [text for _thread, _who, text in channel.notices] == [
        "Next, reply with 2. age — integer: a whole number, at least 0, required",
        "Not taken: age must be at least 0 (minimum 0). The form is still open.",
    ]
    settled = await gateway.get_prompt(prompt.prompt_id)
    assert settled.content == {"name": "Ada", "age": 36}
    assert settled.public()["content"] == {"name": "Ada", "age": 36}


async def test_done_completes_a_url_step_and_a_decline_token_declines_it(gateway: Gateway) -> None:
    run_id = await start(gateway, ReplyPolicy.ANSWER)
    first = await gateway.raise_prompt(run_id, PromptRequest.model_validate(URL))
    assert (await gateway.receive(reply("DONE"))).outcome is Outcome.ANSWERED
    answered = await gateway.get_prompt(first.prompt_id)
    assert answered.answers is not None and answered.answers[0].model_dump() == {
        "question": "Connect GitHub",
        "question_id": "q1",
        "answer": ["done"],
    }
    second = await gateway.raise_prompt(run_id, PromptRequest.model_validate(URL))
    assert (await gateway.receive(reply("decline"))).outcome is Outcome.DECLINED
    assert (await gateway.get_prompt(second.prompt_id)).reason_code is ReasonCode.DECLINED
