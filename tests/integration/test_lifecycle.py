"""The prompt lifecycle of seed 000, through the core service, on the embedded store and on real Redis."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from gateway.base.errors import GatewayError
from gateway.base.ids import ThreadRef
from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    InboundMessage,
    PromptRequest,
    PromptState,
    ReasonCode,
    Resolution,
    RunRequest,
    ThreadItem,
)
from gateway.decision.service import AnswerStatus, Gateway, Outcome
from gateway.delivery.channel import Channels, MessageRef
from gateway.store import Store, keys
from tests.support.conditions import until_watched
from tests.support.feeds import feed_entries
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000100"
ALICE = "slack:UALICE"
BOB = "slack:UBOB"

DEPLOY = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "What's the deployment target?",
            "options": [
                {"label": "staging", "description": "push to staging.example.com"},
                {"label": "production", "description": "push to www.example.com"},
            ],
        }
    ],
}
APPROVAL = {
    "kind": "approval",
    "questions": [{"question": "Allow db__drop to run?"}],
    "tool_call": {"name": "db__drop", "arguments": {"db": "staging"}},
}


def request(payload: dict[str, Any]) -> PromptRequest:
    return PromptRequest.model_validate(payload)


def reply(text: str, sender: str = ALICE, event_id: str | None = None, **extra: Any) -> InboundMessage:
    return InboundMessage(thread_id=THREAD, sender=sender, text=text, event_id=event_id, **extra)


async def start_run(gateway: Gateway, started_by: str | None = ALICE, agent: str = "ops") -> str:
    run = await gateway.create_run(RunRequest(thread_id=THREAD, agent=agent, started_by=started_by))
    return run.run_id


async def feed(store: Store, stream: str) -> list[dict[str, Any]]:
    return await feed_entries(store.redis, stream)


async def test_prompt_is_posted_as_seed_text_and_a_number_reply_answers_it(
    gateway: Gateway, channel: MemoryChannel
) -> None:
    run_id = await start_run(gateway)
    prompt = await gateway.raise_prompt(run_id, request(DEPLOY))

    assert channel.posts[0].item.text == (
        "What's the deployment target?\n"
        "  1. staging — push to staging.example.com\n"
        "  2. production — push to www.example.com"
    )
    assert channel.posts[0].item.metadata["prompt"]["prompt_id"] == prompt.prompt_id

    received = await gateway.receive(reply("2"))
    await gateway.outbox.idle()

    assert received.outcome is Outcome.ANSWERED
    settled = await gateway.get_prompt(prompt.prompt_id)
    assert settled.prompt_state is PromptState.ANSWERED
    assert settled.answers is not None and settled.answers[0].answer == ["production"]
    assert settled.answered_by == ALICE
    assert [item.text for item in channel.items_of("pending_prompt_resolved")] == ["✓ Answered: production"]


async def test_record_is_held_before_the_chat_is_notified(store: Store) -> None:
    seen: list[PromptState | None] = []

    class Checking(MemoryChannel):
        async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
            if item.type == "pending_prompt":
                stored = await store.get_prompt(item.metadata["prompt"]["prompt_id"])
                seen.append(stored.prompt_state if stored else None)
            return await super().post(thread, item)

    service = Gateway(store, Channels([Checking("slack")]))
    await service.start()
    try:
        await service.raise_prompt(await start_run(service), request(DEPLOY))
    finally:
        await service.stop()
    assert seen == [PromptState.PENDING]


async def test_a_new_prompt_supersedes_the_active_one(gateway: Gateway, channel: MemoryChannel) -> None:
    run_id = await start_run(gateway)
    first = await gateway.raise_prompt(run_id, request(DEPLOY))
    second = await gateway.raise_prompt(run_id, request(APPROVAL))
    await gateway.outbox.idle()

    old = await gateway.get_prompt(first.prompt_id)
    assert old.prompt_state is PromptState.CANCELLED
    assert old.reason_code is ReasonCode.SUPERSEDED
    assert old.answers is None
    assert await gateway.store.active_prompt_id(THREAD) == second.prompt_id
    kinds = [posted.item.type for posted in channel.posts]
    assert kinds == ["pending_prompt", "pending_prompt_resolved", "pending_prompt"]


async def test_a_retried_open_does_not_supersede_the_prompt_it_opened(gateway: Gateway) -> None:
    """The store retries a command whose reply was lost with its connection: the retry must be a no-op."""
    run_id = await start_run(gateway)
    prompt = await gateway.raise_prompt(run_id, request(DEPLOY))
    status, superseded = await gateway.store.open_prompt(prompt, "retried", gateway.now_ms())

    assert (status, superseded) == ("ok", "")
    assert (await gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.PENDING
    assert await gateway.store.active_prompt_id(THREAD) == prompt.prompt_id


async def test_failed_post_cancels_the_prompt_and_says_unavailable_not_denied(
    gateway: Gateway, channel: MemoryChannel
) -> None:
    run_id = await start_run(gateway)
    channel.fail_next = 1

    with pytest.raises(GatewayError) as caught:
        await gateway.raise_prompt(run_id, request(APPROVAL))
    await gateway.outbox.idle()

    assert caught.value.code == "PROMPT_UNAVAILABLE"
    assert caught.value.status == 503
    assert caught.value.message.startswith("Approval unavailable")
    prompt = await gateway.get_prompt(caught.value.details["prompt_id"])
    assert prompt.prompt_state is PromptState.CANCELLED
    assert prompt.answers is None
    assert "Deny" not in (prompt.reason or "")
    assert channel.items_of("pending_prompt_resolved") == []
    assert await gateway.store.active_prompt_id(THREAD) is None


async def test_question_unavailable_names_a_question(gateway: Gateway, channel: MemoryChannel) -> None:
    run_id = await start_run(gateway)
    channel.fail_next = 1
    with pytest.raises(GatewayError) as caught:
        await gateway.raise_prompt(run_id, request(DEPLOY))
    assert caught.value.message.startswith("Question unavailable")


async def test_reply_from_someone_not_allowed_is_not_an_answer(
    gateway: Gateway, channel: MemoryChannel
) -> None:
    run_id = await start_run(gateway)
    prompt = await gateway.raise_prompt(run_id, request(DEPLOY))

    received = await gateway.receive(reply("1", sender=BOB))

    assert received.outcome is Outcome.NOT_ALLOWED
    assert (await gateway.get_prompt(prompt.prompt_id)).pending
    assert channel.notices and channel.notices[0][1] == BOB
    assert "What's the deployment target" not in channel.notices[0][2]


async def test_an_agents_approver_may_answer(gateway: Gateway) -> None:
    await gateway.store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=[BOB])))
    run_id = await start_run(gateway, started_by=None)
    prompt = await gateway.raise_prompt(run_id, request(APPROVAL))

    assert (await gateway.receive(reply("approve", sender=ALICE))).outcome is Outcome.NOT_ALLOWED
    assert (await gateway.receive(reply("approve", sender=BOB))).outcome is Outcome.ANSWERED
    settled = await gateway.get_prompt(prompt.prompt_id)
    assert settled.answers is not None and settled.answers[0].answer == ["Approve"]


async def test_message_with_no_prompt_open_is_queued_for_the_agent(gateway: Gateway) -> None:
    await start_run(gateway)
    received = await gateway.receive(reply("please also update the docs", event_id="ev-1"))
    await gateway.outbox.idle()

    assert received.outcome is Outcome.QUEUED
    messages = await feed(gateway.store, keys.MESSAGES)
    assert [(m["sender"], m["text"], m["tag"]) for m in messages] == [
        (ALICE, "please also update the docs", None)
    ]
    events = await feed(gateway.store, keys.EVENTS)
    assert [e["type"] for e in events] == ["message.received"]


async def test_same_platform_event_twice_resolves_once_and_posts_one_audit_item(
    gateway: Gateway, channel: MemoryChannel
) -> None:
    prompt = await gateway.raise_prompt(await start_run(gateway), request(DEPLOY))

    first, second = await asyncio.gather(
        gateway.receive(reply("1", event_id="Ev0001")), gateway.receive(reply("1", event_id="Ev0001"))
    )
    third = await gateway.receive(reply("1", event_id="Ev0001"))
    await gateway.outbox.idle()

    assert sorted([first.outcome, second.outcome, third.outcome]) == sorted(
        [Outcome.ANSWERED, Outcome.DUPLICATE, Outcome.DUPLICATE]
    )
    assert len(channel.items_of("pending_prompt_resolved")) == 1
    assert (await gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.ANSWERED


async def test_every_handled_platform_event_is_remembered_for_48_hours(gateway: Gateway) -> None:
    run_id = await start_run(gateway)
    assert (await gateway.receive(reply("later", event_id="Ev-queued"))).outcome is Outcome.QUEUED
    old = await gateway.raise_prompt(run_id, request(DEPLOY))
    await gateway.raise_prompt(run_id, request(DEPLOY))
    outcomes = [
        await gateway.receive(reply("1", event_id="Ev-stale", prompt_id=old.prompt_id, notify=False)),
        await gateway.receive(reply("1", sender=BOB, event_id="Ev-refused", notify=False)),
        await gateway.receive(reply("1", event_id="Ev-answered")),
    ]
    assert [received.outcome for received in outcomes] == [
        Outcome.STALE,
        Outcome.NOT_ALLOWED,
        Outcome.ANSWERED,
    ]

    for event_id in ("Ev-queued", "Ev-stale", "Ev-refused", "Ev-answered"):
        ttl = await gateway.store.redis.ttl(keys.seen(THREAD, event_id))
        assert 48 * 3600 - 60 <= ttl <= 48 * 3600, (event_id, ttl)
        assert (await gateway.receive(reply("1", event_id=event_id))).outcome is Outcome.DUPLICATE


@pytest.mark.parametrize("agent_defined", [False, True], ids=["no-agent-definition", "agent-without-expiry"])
async def test_a_prompt_raised_without_an_expiry_stays_open_for_seven_days(
    store: Store, channel: MemoryChannel, agent_defined: bool
) -> None:
    now = [1_800_000_000.0]
    service = Gateway(store, Channels([channel]), clock=lambda: now[0], sweep_interval=3600)
    await service.start()
    try:
        if agent_defined:
            await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=[BOB])))
        prompt = await service.raise_prompt(await start_run(service), request(DEPLOY))
        assert prompt.expires_at - prompt.created_at == timedelta(days=7)
        now[0] += 7 * 24 * 3600 - 1
        assert await service.expire_due() == 0
        assert (await service.get_prompt(prompt.prompt_id)).pending
        now[0] += 1
        assert await service.expire_due() == 1
    finally:
        await service.stop()


async def test_first_answer_wins_and_later_callers_learn_how_it_settled(gateway: Gateway) -> None:
    prompt = await gateway.raise_prompt(await start_run(gateway), request(DEPLOY))

    won = await gateway.answer(prompt.prompt_id, ALICE, text="staging")
    again = await gateway.answer(prompt.prompt_id, ALICE, text="1")
    other = await gateway.answer(prompt.prompt_id, ALICE, text="production")

    assert won.status is AnswerStatus.ANSWERED
    assert again.status is AnswerStatus.SAME
    assert other.status is AnswerStatus.CONFLICT
    assert other.prompt.answers is not None and other.prompt.answers[0].answer == ["staging"]
    assert other.prompt.answered_by == ALICE and other.prompt.settled_at is not None


async def test_rest_answer_from_someone_not_allowed_is_forbidden(gateway: Gateway) -> None:
    prompt = await gateway.raise_prompt(await start_run(gateway), request(DEPLOY))
    with pytest.raises(GatewayError) as caught:
        await gateway.answer(prompt.prompt_id, BOB, text="1")
    assert caught.value.code == "FORBIDDEN" and caught.value.status == 403
    assert (await gateway.get_prompt(prompt.prompt_id)).pending


async def test_structured_answers_answer_each_question(gateway: Gateway) -> None:
    payload = {
        "kind": "ask_user_question",
        "questions": [
            {
                "question": "Where should the data come from?",
                "options": [{"label": "CSV import"}, {"label": "API"}],
            },
            {
                "question": "Which sections?",
                "multiSelect": True,
                "options": [{"label": "KPI cards"}, {"label": "Table"}, {"label": "Chart"}],
            },
        ],
    }
    prompt = await gateway.raise_prompt(await start_run(gateway), request(payload))
    answers = [
        {"question": "Where should the data come from?", "answer": ["CSV import"]},
        {"question_id": "q2", "answer": ["KPI cards", "Table"]},
    ]
    received = await gateway.receive(reply("CSV import · KPI cards, Table", answers=answers))

    assert received.outcome is Outcome.ANSWERED
    settled = await gateway.get_prompt(prompt.prompt_id)
    assert settled.answers is not None
    assert [a.answer for a in settled.answers] == [["CSV import"], ["KPI cards", "Table"]]


async def test_ending_the_run_cancels_its_prompt(gateway: Gateway, channel: MemoryChannel) -> None:
    run_id = await start_run(gateway)
    prompt = await gateway.raise_prompt(run_id, request(DEPLOY))
    await gateway.end_run(run_id)
    await gateway.outbox.idle()

    cancelled = await gateway.get_prompt(prompt.prompt_id)
    assert cancelled.prompt_state is PromptState.CANCELLED
    assert cancelled.reason == "the run ended" and cancelled.reason_code is ReasonCode.RUN_ENDED
    assert channel.items_of("pending_prompt_resolved")[-1].text == "✗ Cancelled: the run ended"
    with pytest.raises(GatewayError) as caught:
        await gateway.raise_prompt(run_id, request(DEPLOY))
    assert caught.value.code == "RUN_ENDED"


async def test_prompts_expire_after_their_expiry(store: Store, channel: MemoryChannel) -> None:
    now = [1_800_000_000.0]
    service = Gateway(store, Channels([channel]), clock=lambda: now[0], sweep_interval=3600)
    await service.start()
    try:
        prompt = await service.raise_prompt(
            await start_run(service), request({**DEPLOY, "expires_in_seconds": 60})
        )
        assert await service.expire_due() == 0
        now[0] += 61
        assert await service.expire_due() == 1
        await service.outbox.idle()
        expired = await service.get_prompt(prompt.prompt_id)
        assert expired.prompt_state is PromptState.CANCELLED and expired.reason_code is ReasonCode.EXPIRED
        assert await service.expire_due() == 0
    finally:
        await service.stop()


async def test_agent_default_expiry_applies(gateway: Gateway) -> None:
    await gateway.store.put_agent(
        AgentDefinition(name="ops", human_input=HumanInput(expires_in_seconds=3600))
    )
    prompt = await gateway.raise_prompt(await start_run(gateway), request(DEPLOY))
    assert (prompt.expires_at - prompt.created_at).total_seconds() == 3600


async def test_waiting_agent_is_woken_and_answer_is_hot(gateway: Gateway) -> None:
    prompt = await gateway.raise_prompt(await start_run(gateway), request(DEPLOY))
    waiter = asyncio.create_task(gateway.wait_prompt(prompt.prompt_id, 10))
    await until_watched(gateway.store.redis, THREAD, prompt.prompt_id)
    await gateway.receive(reply("staging"))
    settled = await asyncio.wait_for(waiter, 5)  # woken: left to run out, it would take 10 s

    assert settled.prompt_state is PromptState.ANSWERED
    assert settled.resolution is Resolution.HOT


async def test_answer_while_agent_is_away_is_parked_and_redriven_as_next_turn(gateway: Gateway) -> None:
    prompt = await gateway.raise_prompt(await start_run(gateway), request(DEPLOY))
    await gateway.receive(reply("production"))
    await gateway.outbox.idle()

    settled = await gateway.get_prompt(prompt.prompt_id)
    assert settled.resolution is Resolution.PARKED
    messages = await feed(gateway.store, keys.MESSAGES)
    assert messages[-1]["tag"] == "parked_answer"
    assert messages[-1]["message_id"] == settled.turn_id
    assert messages[-1]["metadata"]["answers"][0]["answer"] == ["production"]


async def test_restarted_gateway_adopts_pending_prompt_and_resolves_it(store: Store) -> None:
    before = MemoryChannel("slack")
    first = Gateway(store, Channels([before]))
    await first.start()
    prompt = await first.raise_prompt(await start_run(first), request(DEPLOY))
    await first.stop()

    after = MemoryChannel("slack")
    second = Gateway(Store(store.redis), Channels([after]))
    await second.start()
    try:
        assert await second.adopt() == 1
        assert (await second.receive(reply("1"))).outcome is Outcome.ANSWERED
        await second.outbox.idle()
    finally:
        await second.stop()
    assert [item.text for item in after.items_of("pending_prompt_resolved")] == ["✓ Answered: staging"]
    assert (await second.store.get_prompt(prompt.prompt_id)).prompt_state is PromptState.ANSWERED  # type: ignore[union-attr]


async def test_audit_item_that_cannot_be_posted_is_retried_not_invented(
    gateway: Gateway, channel: MemoryChannel
) -> None:
    prompt = await gateway.raise_prompt(await start_run(gateway), request(DEPLOY))
    channel.fail_next = 1
    channel.fail_with_retry_after = 0.5  # long enough that a loaded machine does not retry before the check
    await gateway.receive(reply("1"))
    await gateway.outbox.idle()
    assert channel.items_of("pending_prompt_resolved") == []

    await asyncio.sleep(0.55)
    await gateway.outbox.sweep(everything=True)

    assert [item.text for item in channel.items_of("pending_prompt_resolved")] == ["✓ Answered: staging"]
    assert (await gateway.get_prompt(prompt.prompt_id)).answers is not None


async def test_audit_items_go_out_in_order(gateway: Gateway, channel: MemoryChannel) -> None:
    await start_run(gateway)
    for text in ("one", "two", "three"):
        await gateway.post_message(THREAD, text)
    await gateway.outbox.idle()
    assert [posted.item.text for posted in channel.posts] == ["one", "two", "three"]
    logged = await gateway.store.thread_items(THREAD, None, 10)
    assert [entry["content"][0]["text"] for _id, entry in logged] == ["one", "two", "three"]


async def test_control_for_a_superseded_prompt_changes_nothing(
    gateway: Gateway, channel: MemoryChannel
) -> None:
    run_id = await start_run(gateway)
    old = await gateway.raise_prompt(run_id, request(DEPLOY))
    new = await gateway.raise_prompt(run_id, request(APPROVAL))

    received = await gateway.receive(reply("approve", prompt_id=old.prompt_id))

    assert received.outcome is Outcome.STALE
    assert received.prompt is not None and received.prompt.reason_code is ReasonCode.SUPERSEDED
    assert (await gateway.get_prompt(new.prompt_id)).pending
    assert channel.notices[-1][1] == ALICE


async def test_late_press_on_an_answered_prompt_learns_how_it_settled(gateway: Gateway) -> None:
    prompt = await gateway.raise_prompt(await start_run(gateway), request(DEPLOY))
    await gateway.receive(reply("production"))

    late = await gateway.receive(reply("staging", prompt_id=prompt.prompt_id, notify=False))

    assert late.outcome is Outcome.STALE
    assert late.prompt is not None and late.prompt.answers is not None
    assert late.prompt.answers[0].answer == ["production"]


async def test_unconfigured_channel_and_bad_thread_ids_are_refused(gateway: Gateway) -> None:
    with pytest.raises(GatewayError) as unconfigured:
        await gateway.create_run(RunRequest(thread_id="telegram:12345", agent="ops"))
    with pytest.raises(GatewayError) as malformed:
        await gateway.create_run(RunRequest(thread_id="slack:nope", agent="ops"))
    assert unconfigured.value.code == "CHANNEL_NOT_CONFIGURED"
    assert malformed.value.code == "INVALID_THREAD_ID"
