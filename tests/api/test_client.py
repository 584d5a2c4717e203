"""The Python client against a served gateway: thin calls, `ask` and `approve`, errors as values."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gateway.base.models import InboundMessage
from gateway.client import PromptCancelled, PromptUnavailable, Threadgate, ThreadgateError
from tests.api.conftest import AGENT_TOKEN, OPERATOR_TOKEN, STARTER, THREAD, Served
from tests.support.conditions import eventually, until_watched


@pytest.fixture
async def tg(served: Served) -> AsyncIterator[Threadgate]:
    async with Threadgate(served.base_url, AGENT_TOKEN) as client:
        yield client


@pytest.fixture
async def desk(served: Served) -> AsyncIterator[Threadgate]:
    async with Threadgate(served.base_url, OPERATOR_TOKEN) as client:
        yield client


async def _first_pending(desk: Threadgate) -> str:
    """The id of the agent's first pending input, once there is one."""
    found: list[str] = []

    async def pending() -> bool:
        found[:] = [prompt.prompt_id for prompt in (await desk.list_inputs("ops")).items]
        return bool(found)

    await eventually(pending, "a pending input of agent ops")
    return found[0]


async def test_ask_returns_the_chosen_label(tg: Threadgate, desk: Threadgate) -> None:
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    asking = asyncio.create_task(tg.ask(run.run_id, "Deploy where?", ["staging", "production"]))
    prompt_id = await _first_pending(desk)
    await desk.answer_input("ops", prompt_id, "accept", content="staging", from_=STARTER)
    assert await asyncio.wait_for(asking, 5) == ["staging"]


async def test_approve_is_true_for_approve_and_false_for_deny(tg: Threadgate, desk: Threadgate) -> None:
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    for content, expected in ((True, True), (False, False)):
        approving = asyncio.create_task(tg.approve(run.run_id, "db__drop", {"name": "staging"}))
        prompt_id = await _first_pending(desk)
        await desk.answer_input("ops", prompt_id, "accept", content=content, from_=STARTER)
        approval = await asyncio.wait_for(approving, 5)
        assert bool(approval) is expected
        assert approval.arguments == {"name": "staging"}


async def test_request_approval_is_the_policy_step_alone(tg: Threadgate, desk: Threadgate) -> None:
    await desk.put_agent("ops", approvers=[], approval={"default": "destructive"})
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    assert await tg.request_approval(run.run_id, "Grep", {"pattern": "TODO"}) is None
    raised = await tg.request_approval(run.run_id, "db__drop", {"name": "staging"}, destructive=True)
    assert raised is not None and raised.pending  # raised, not waited for
    assert raised.tool_call is not None and raised.tool_call.arguments == {"name": "staging"}


async def test_approve_hands_back_the_arguments_as_the_person_edited_them(
    tg: Threadgate, desk: Threadgate
) -> None:
    schema = {"type": "object", "properties": {"replicas": {"type": "integer", "maximum": 5}}}
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    approving = asyncio.create_task(
        tg.approve(run.run_id, "scale", {"service": "api", "replicas": 8}, editable=True, input_schema=schema)
    )
    prompt_id = await _first_pending(desk)
    raised = await tg.get_prompt(prompt_id)
    assert (raised.editable, raised.input_schema) == (True, schema)
    with pytest.raises(ThreadgateError) as refused:
        await desk.answer_input(
            "ops", prompt_id, "accept", answers=["Approve"], arguments={"replicas": 9}, from_=STARTER
        )
    assert refused.value.code == "VALIDATION_FAILED"
    await desk.answer_input(
        "ops",
        prompt_id,
        "accept",
        answers=["Approve"],
        arguments={"service": "api", "replicas": 3},
        note="three is plenty",
        from_=STARTER,
    )
    approval = await asyncio.wait_for(approving, 5)
    assert (bool(approval), approval.edited) == (True, True)
    assert (approval.arguments, approval.note) == ({"service": "api", "replicas": 3}, "three is plenty")
    assert approval.prompt is not None and approval.prompt.tool_call is not None
    assert approval.prompt.tool_call.arguments == {"service": "api", "replicas": 8}  # what was asked


async def test_a_deny_carries_the_persons_note(tg: Threadgate, desk: Threadgate) -> None:
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    approving = asyncio.create_task(tg.approve(run.run_id, "db__drop", {"name": "staging"}))
    prompt_id = await _first_pending(desk)
    await desk.answer_input("ops", prompt_id, "decline", note="take a snapshot first", from_=STARTER)
    approval = await asyncio.wait_for(approving, 5)
    assert (bool(approval), approval.edited, approval.note) == (False, False, "take a snapshot first")
    assert approval.arguments == {"name": "staging"}


async def test_raise_prompt_and_request_approval_pass_the_decision_settings(
    tg: Threadgate, desk: Threadgate
) -> None:
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    call = {"name": "deploy", "arguments": {"target": "production"}}
    two = await tg.raise_prompt(run.run_id, "approval", [{"question": "Ship?"}], tool_call=call, approvals=2)
    assert (two.approvals, two.editable) == (2, False)
    editable = await tg.request_approval(run.run_id, "deploy", {"target": "staging"}, editable=True)
    assert editable is not None and editable.editable is True
    with pytest.raises(ThreadgateError) as refused:
        await tg.request_approval(run.run_id, "deploy", {}, input_schema={"type": "array"})
    assert (refused.value.code, refused.value.status) == ("VALIDATION_FAILED", 400)


async def test_a_cancelled_prompt_is_never_reported_as_a_denial(tg: Threadgate, desk: Threadgate) -> None:
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    approving = asyncio.create_task(tg.approve(run.run_id, "db__drop"))
    await _first_pending(desk)
    await tg.end_run(run.run_id)
    with pytest.raises(PromptCancelled) as raised:
        await asyncio.wait_for(approving, 5)
    assert raised.value.prompt.reason_code is not None
    assert raised.value.prompt.reason_code.value == "run_ended"


async def test_a_prompt_that_cannot_be_posted_raises_prompt_unavailable(
    tg: Threadgate, served: Served
) -> None:
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    served.channel.fail_next = 1
    with pytest.raises(PromptUnavailable) as raised:
        await tg.approve(run.run_id, "db__drop")
    assert raised.value.message.startswith("Approval unavailable")


async def test_errors_carry_the_contracts_code(tg: Threadgate) -> None:
    with pytest.raises(ThreadgateError) as raised:
        await tg.get_prompt("prm_nope")
    assert (raised.value.code, raised.value.status) == ("PROMPT_NOT_FOUND", 404)


async def test_respond_and_messages_and_items(tg: Threadgate, desk: Threadgate, served: Served) -> None:
    await desk.put_agent("ops", approvers=["slack:U0APPROVER"], expires_in_seconds=3600)
    assert (await tg.get_agent("ops")).human_input.approvers == ["slack:U0APPROVER"]
    run = await tg.create_run(THREAD, agent="ops", started_by=None)
    prompt = await tg.raise_prompt(run.run_id, "text", [{"question": "Release name?"}])
    result = await desk.respond(
        run.run_id,
        THREAD,
        prompt.prompt_id,
        answers=[{"questionId": "q1", "otherText": "Heron"}],
        from_="slack:U0APPROVER",
    )
    assert result["status"] == "resolved_parked"
    feed = await tg.messages(wait=2)
    assert [m["tag"] for m in feed.items] == ["parked_answer"]
    await served.runtime.gateway.receive(InboundMessage(thread_id=THREAD, sender=STARTER, text="next"))
    more = await tg.messages(after=feed.cursor, wait=2)
    assert [m["text"] for m in more.items] == ["next"]
    await tg.post_message(THREAD, "Thanks!")
    await served.runtime.gateway.outbox.idle()
    log = await tg.thread_items(THREAD)
    assert log.items[-1]["content"][0]["text"] == "Thanks!"


async def test_respond_carries_an_approvals_note(tg: Threadgate, desk: Threadgate) -> None:
    await desk.put_agent("ops", approvers=["slack:U0APPROVER"])
    run = await tg.create_run(THREAD, agent="ops", started_by=None)
    approval = await tg.raise_prompt(
        run.run_id, "approval", [{"question": "Go?"}], tool_call={"name": "go", "arguments": {}}
    )
    denied = await desk.respond(
        run.run_id,
        THREAD,
        approval.prompt_id,
        answers=[{"questionId": "q1", "selected": ["Deny"]}],
        note="not before the freeze lifts",
        from_="slack:U0APPROVER",
    )
    assert denied["status"] == "resolved_parked"
    assert (await tg.get_prompt(approval.prompt_id)).note == "not before the freeze lifts"


async def test_events_iterator_yields_typed_events(tg: Threadgate, served: Served) -> None:
    run = await tg.create_run(THREAD, agent="ops", started_by=STARTER)
    prompt = await tg.raise_prompt(run.run_id, "approval", [{"question": "Go?"}])
    stream = tg.events(thread_id=THREAD)
    first = asyncio.create_task(anext(stream))
    # A stream for the thread marks the agent waiting on its prompt once connected: from then on it
    # follows live, so the cancellation below is an event it sees arrive, not one replayed to it.
    await until_watched(served.runtime.store.redis, THREAD, prompt.prompt_id)
    await tg.cancel_prompt(prompt.prompt_id)
    event = await asyncio.wait_for(first, 5)
    assert (event.type, event.id, event.data["prompt_id"]) == (
        "input.resolved",
        f"{prompt.prompt_id}.resolved",
        prompt.prompt_id,
    )
    assert event.data["prompt_state"] == "cancelled"
    assert event.cursor
    await stream.aclose()  # type: ignore[attr-defined]
