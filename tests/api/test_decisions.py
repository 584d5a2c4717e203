"""The whole decision over real HTTP and a real Redis (contract §9): a reason with a deny, an approve with
edits checked against the tool's schema, and approvals that need several people."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from gateway.base.models import InboundMessage
from tests.api.conftest import STARTER, THREAD, Served, raise_prompt, respond_path, start_run
from tests.api.test_threads_and_feeds import _read_events
from tests.support.conditions import until_connected

ALICE, BOB, CAROL = "slack:U0ALICE", "slack:U0BOB", "slack:U0CAROL"
CALL = {"name": "Bash", "arguments": {"command": "rm -rf build", "timeout": 30}}
SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string", "maxLength": 40}, "timeout": {"type": "integer"}},
    "required": ["command"],
}


async def _approvers(operator: httpx.AsyncClient, *people: str, **rule: Any) -> None:
    body: dict[str, Any] = {"human_input": {"approvers": list(people)}}
    if rule:
        body["approval"] = {"tools": {"Bash": rule}}
    response = await operator.put("/v1/agents/ops", json=body)
    assert response.status_code == 200, response.text


async def _input(operator: httpx.AsyncClient, prompt_id: str, **body: Any) -> httpx.Response:
    return await operator.post(f"/v1/agents/ops/inputs/{prompt_id}", json=body)


async def _approval(agent: httpx.AsyncClient, **extra: Any) -> dict[str, Any]:
    run = await start_run(agent)
    return await raise_prompt(agent, run["run_id"], tool_call=CALL, **extra)


# Deny with a reason -----------------------------------------------------------------------------------


async def test_a_deny_carries_the_persons_note_to_the_agent(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    prompt = await _approval(agent)
    response = await _input(
        operator, prompt["prompt_id"], action="decline", note="use the staging copy", **{"from": STARTER}
    )
    assert response.status_code == 200, response.text
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (seen["answers"][0]["answer"], seen["note"], seen["approved_call"]) == (
        ["Deny"],
        "use the staging copy",
        None,
    )


async def test_answers_in_the_seeds_shape_deny_with_a_note(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    prompt = await _approval(agent)
    response = await _input(
        operator,
        prompt["prompt_id"],
        action="accept",
        answers=["Deny"],
        note="not today",
        **{"from": STARTER},
    )
    assert response.status_code == 200, response.text
    assert (response.json()["answers"][0]["answer"], response.json()["note"]) == (["Deny"], "not today")


async def test_a_typed_reply_that_is_not_an_approve_token_denies_and_becomes_the_note(
    served: Served, agent: httpx.AsyncClient
) -> None:
    prompt = await _approval(agent)
    said = "sure, go ahead but on staging"
    await served.runtime.gateway.receive(InboundMessage(thread_id=THREAD, sender=STARTER, text=said))
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (seen["answers"][0]["answer"], seen["note"]) == (["Deny"], said)


async def test_an_approve_token_approves_the_call_as_asked_with_no_note(
    served: Served, agent: httpx.AsyncClient
) -> None:
    prompt = await _approval(agent)
    await served.runtime.gateway.receive(InboundMessage(thread_id=THREAD, sender=STARTER, text="yes"))
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (seen["answers"][0]["answer"], seen["note"], seen["approved_call"]) == (["Approve"], None, CALL)


@pytest.mark.parametrize(
    ("answer", "note"),
    [
        ({"action": "decline", "note": "use the staging copy"}, "use the staging copy"),
        (
            {"action": "accept", "answers": ["Deny"], "note": "not before the freeze lifts"},
            "not before the freeze lifts",
        ),
        ({"action": "accept", "content": False, "note": 'ünïcode, and "quotes"'}, 'ünïcode, and "quotes"'),
        ({"action": "accept", "note": "go, but watch the error rate"}, "go, but watch the error rate"),
        ({"action": "decline"}, None),
    ],
)
async def test_a_parked_decision_is_re_driven_with_the_persons_note(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, answer: dict[str, Any], note: str | None
) -> None:
    """Nobody waits on the approval: the decision reaches the agent as its next turn's message, on the
    messages feed and as ``message.received``, with the person's reason beside it."""
    async with agent.stream("GET", "/v1/events") as stream:
        lines = stream.aiter_lines()
        await until_connected(lines)
        prompt = await _approval(agent)
        response = await _input(operator, prompt["prompt_id"], **answer, **{"from": STARTER})
        assert response.status_code == 200, response.text
        events = await asyncio.wait_for(_read_events(lines, 3), 5)
    (parked,) = [event["data"]["data"] for event in events if event["event"] == "message.received"]
    queued = (await agent.get("/v1/messages", params={"thread_id": THREAD})).json()["items"]
    (message,) = [item for item in queued if item["metadata"].get("prompt_id") == prompt["prompt_id"]]
    assert message == parked
    assert (message["tag"], message["message_id"]) == ("parked_answer", response.json()["turn_id"])
    assert message["metadata"].get("note") == note


# Approve with edits -----------------------------------------------------------------------------------


async def test_edited_arguments_approve_exactly_the_edited_call(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    prompt = await _approval(agent, editable=True, input_schema=SCHEMA)
    edited = {"command": "rm -rf build/tmp", "timeout": 30}
    response = await _input(
        operator, prompt["prompt_id"], action="accept", arguments=edited, **{"from": STARTER}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_call"] == CALL
    assert body["approved_call"] == {"name": "Bash", "arguments": edited}
    assert body["answers"][0]["answer"] == ["Approve"]


async def test_arguments_on_a_prompt_not_raised_editable_are_400_not_editable(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    prompt = await _approval(agent)
    response = await _input(
        operator, prompt["prompt_id"], action="accept", arguments={"command": "ls"}, **{"from": STARTER}
    )
    assert (response.status_code, response.json()["error"]["code"]) == (400, "NOT_EDITABLE")
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


async def test_arguments_off_the_tools_schema_are_400_naming_the_field(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    prompt = await _approval(agent, editable=True, input_schema=SCHEMA)
    response = await _input(
        operator, prompt["prompt_id"], action="accept", arguments={"command": 7}, **{"from": STARTER}
    )
    error = response.json()["error"]
    assert (response.status_code, error["code"]) == (400, "VALIDATION_FAILED")
    assert [entry["field"] for entry in error["details"]["errors"]] == ["command"]


async def test_a_typed_edit_approves_the_edited_call(served: Served, agent: httpx.AsyncClient) -> None:
    prompt = await _approval(agent, editable=True, input_schema=SCHEMA)
    await served.runtime.gateway.receive(
        InboundMessage(thread_id=THREAD, sender=STARTER, text="command: rm -rf build/cache\ntimeout: 5")
    )
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert seen["approved_call"] == {
        "name": "Bash",
        "arguments": {"command": "rm -rf build/cache", "timeout": 5},
    }


async def test_a_typed_edit_off_the_schema_leaves_the_approval_open(
    served: Served, agent: httpx.AsyncClient
) -> None:
    prompt = await _approval(agent, editable=True, input_schema=SCHEMA)
    received = await served.runtime.gateway.receive(
        InboundMessage(thread_id=THREAD, sender=STARTER, text='edit {"command": "' + "x" * 50 + '"}')
    )
    assert received.notice is not None and "command" in received.notice
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


async def test_an_edit_through_seed_003_respond_is_the_same_rule(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL, editable=True)
    body = {
        "answers": [{"questionId": "q1", "selected": ["Approve"]}],
        "arguments": {"command": "make clean"},
    }
    response = await operator.post(
        respond_path(run, prompt["prompt_id"]), json=body, headers={"X-Threadgate-From": STARTER}
    )
    assert response.status_code == 200, response.text
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert seen["approved_call"] == {"name": "Bash", "arguments": {"command": "make clean"}}


# Several approvers ------------------------------------------------------------------------------------


async def test_two_approvers_settle_on_the_second_distinct_approval(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _approvers(operator, ALICE, BOB)
    prompt = await _approval(agent, approvals=2)
    first = await _input(operator, prompt["prompt_id"], action="accept", **{"from": ALICE})
    assert first.status_code == 200, first.text
    assert first.json()["prompt_state"] == "pending"
    assert [vote["by"] for vote in first.json()["votes"]] == [ALICE]
    again = await _input(operator, prompt["prompt_id"], action="accept", **{"from": ALICE})
    assert (again.status_code, again.json()["error"]["code"]) == (409, "ALREADY_VOTED")
    second = await _input(operator, prompt["prompt_id"], action="accept", **{"from": BOB})
    body = second.json()
    assert (body["prompt_state"], body["answers"][0]["answer"]) == ("answered", ["Approve"])
    assert [(vote["by"], vote["answer"]) for vote in body["votes"]] == [(ALICE, "Approve"), (BOB, "Approve")]
    waited = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert len(waited["votes"]) == 2 and waited["approved_call"] == CALL


async def test_any_deny_settles_a_quorum_approval_at_once(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _approvers(operator, ALICE, BOB, CAROL)
    prompt = await _approval(agent, approvals=3)
    await _input(operator, prompt["prompt_id"], action="accept", **{"from": ALICE})
    denied = await _input(operator, prompt["prompt_id"], action="decline", note="too risky", **{"from": BOB})
    body = denied.json()
    assert (body["prompt_state"], body["answers"][0]["answer"], body["note"]) == (
        "answered",
        ["Deny"],
        "too risky",
    )
    assert [vote["answer"] for vote in body["votes"]] == ["Approve", "Deny"]
    late = await _input(operator, prompt["prompt_id"], action="accept", **{"from": CAROL})
    assert late.status_code == 409


async def test_the_starter_does_not_count_where_the_rule_says_so(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _approvers(operator, ALICE, ask="always", approvals=2, starter_counts=False)
    run = await start_run(agent)
    response = await agent.post(f"/v1/runs/{run['run_id']}/approvals", json={"tool_call": CALL})
    assert response.status_code == 201, response.text
    prompt = response.json()
    assert (prompt["approvals"], prompt["starter_counts"]) == (2, False)
    starter = await _input(operator, prompt["prompt_id"], action="accept", **{"from": STARTER})
    assert starter.json()["prompt_state"] == "pending"
    alice = await _input(operator, prompt["prompt_id"], action="accept", **{"from": ALICE})
    assert alice.json()["prompt_state"] == "pending", "the starter's approval does not count toward two"


async def test_chat_votes_are_the_same_rule_and_a_second_vote_changes_nothing(
    served: Served, agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _approvers(operator, ALICE, BOB)
    prompt = await _approval(agent, approvals=2)
    gateway = served.runtime.gateway
    first = await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="approve"))
    again = await gateway.receive(InboundMessage(thread_id=THREAD, sender=ALICE, text="approve"))
    assert (first.outcome.value, again.outcome.value) == ("voted", "already_voted")
    told = [text for _, who, text in served.channel.notices if who == ALICE]
    assert told[0].startswith("Your approval was recorded (Approved 1 of 2: slack:U0ALICE)")
    assert "already recorded" in told[1]
    await gateway.outbox.flush(THREAD)
    shown = [post.item for post in served.channel.posts if post.item.metadata.get("type") == "votes"]
    assert [item.text for item in shown] == ["Approved 1 of 2: slack:U0ALICE"]
    await gateway.receive(InboundMessage(thread_id=THREAD, sender=BOB, text="ok"))
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (seen["prompt_state"], [vote["by"] for vote in seen["votes"]]) == ("answered", [ALICE, BOB])


async def test_a_rule_can_make_a_tools_approvals_editable(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _approvers(operator, ask="always", edit=True)
    run = await start_run(agent)
    response = await agent.post(f"/v1/runs/{run['run_id']}/approvals", json={"tool_call": CALL})
    assert response.json()["editable"] is True


async def test_edits_and_several_approvers_do_not_mix(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    response = await agent.post(
        f"/v1/runs/{run['run_id']}/prompts",
        json={
            "kind": "approval",
            "questions": [{"question": "Run it?"}],
            "tool_call": CALL,
            "editable": True,
            "approvals": 2,
        },
    )
    assert response.status_code == 400
