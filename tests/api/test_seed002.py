"""The rest of seed 002 over real HTTP: abort, approval policies, forms and URL steps on 002 and 003,
the thread log, the inbox, events and webhooks carrying the new kinds, and the client's helpers."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from gateway.client import ApprovalMismatch, Threadgate
from tests.api.conftest import AGENT_TOKEN, OPERATOR_TOKEN, STARTER, Served, respond_path, start_run
from tests.api.test_threads_and_feeds import _read_events
from tests.support.api_calls import raise_prompt
from tests.support.conditions import until_connected

PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "team": {"type": "string", "enum": ["red", "blue"], "enumNames": ["Red team", "Blue team"]},
    },
    "required": ["name", "age"],
}
URL_STEP = {"kind": "url", "message": "Connect your GitHub account", "url": "https://example.com/connect"}


async def raise_form(
    agent: httpx.AsyncClient, run_id: str, schema: dict[str, Any] = PROFILE_SCHEMA
) -> dict[str, Any]:
    return await raise_prompt(
        agent, run_id, kind="form", message="Your profile", requested_schema=schema, questions=None
    )


def input_path(prompt: dict[str, Any]) -> str:
    return f"/v1/agents/ops/inputs/{prompt['prompt_id']}"


# Abort -------------------------------------------------------------------------------------------


async def test_abort_ends_the_run_and_cancels_its_input_as_aborted(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    response = await agent.post(f"/v1/runs/{run['run_id']}/abort")
    assert (response.status_code, response.json()["state"]) == (200, "ended")
    settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (settled["reason_code"], settled["reason"]) == ("aborted", "the run was aborted")
    missing = await agent.post("/v1/runs/run_nope/abort")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "RUN_NOT_FOUND")


# Approval policies -------------------------------------------------------------------------------


async def test_approval_policy_allows_or_raises_the_approval(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    policy = {"default": "destructive", "tools": {"github__*": "never", "github__delete_*": "always"}}
    assert (await operator.put("/v1/agents/ops", json={"approval": policy})).status_code == 200
    run = await start_run(agent)
    path = f"/v1/runs/{run['run_id']}/approvals"
    cases = [
        ({"tool_call": {"name": "Read", "arguments": {"path": "a"}}}, 200),
        ({"tool_call": {"name": "Bash", "arguments": {"command": "ls"}}}, 201),
        ({"tool_call": {"name": "api", "arguments": {"method": "GET"}}}, 200),
        ({"tool_call": {"name": "api", "arguments": {"method": "POST"}}}, 201),
        ({"tool_call": {"name": "search"}, "destructive": True}, 201),
        ({"tool_call": {"name": "github__list_repos"}}, 200),
        ({"tool_call": {"name": "github__delete_repo"}}, 201),
    ]
    for body, status in cases:
        response = await agent.post(path, json=body)
        assert response.status_code == status, (body, response.text)
        if status == 200:
            assert response.json() == {"decision": "allow", "by": "policy"}
        else:
            prompt = response.json()
            assert (prompt["kind"], prompt["tool_call"]) == (
                "approval",
                {"arguments": {}, **body["tool_call"]},
            )


async def test_a_destructive_policy_asks_unless_something_says_the_call_only_reads(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    assert (
        await operator.put("/v1/agents/ops", json={"approval": {"default": "destructive"}})
    ).status_code == 200
    run = await start_run(agent)
    path = f"/v1/runs/{run['run_id']}/approvals"
    cases = [
        ({"tool_call": {"name": "search", "arguments": {"query": "x"}}}, 201),
        ({"tool_call": {"name": "mcp__github__list_repos"}}, 201),
        ({"tool_call": {"name": "list_repos"}, "annotations": {}}, 201),
        ({"tool_call": {"name": "list_repos"}, "annotations": {"readOnlyHint": True}}, 200),
        ({"tool_call": {"name": "mcp__github__list_repos"}, "annotations": {"destructiveHint": False}}, 200),
        ({"tool_call": {"name": "list_repos"}, "annotations": {"readOnlyHint": False}}, 201),
        ({"tool_call": {"name": "api", "arguments": {"method": ["GET"]}}}, 201),
        ({"tool_call": {"name": "api", "arguments": {"method": {"GET": True}}}}, 201),
        ({"tool_call": {"name": "api", "arguments": {"method": "HEAD"}}}, 200),
        ({"tool_call": {"name": "Grep", "arguments": {"pattern": "x"}}}, 200),
    ]
    for body, status in cases:
        response = await agent.post(path, json=body)
        assert response.status_code == status, (body, response.text)


@pytest.mark.parametrize("field", ["destructive", "readOnlyHint", "destructiveHint"])
async def test_approval_flags_are_json_booleans_only(agent: httpx.AsyncClient, field: str) -> None:
    run = await start_run(agent)
    path = f"/v1/runs/{run['run_id']}/approvals"
    for value in ("no", "false", "true", 0, 1, "", [], {}):
        body: dict[str, Any] = {"tool_call": {"name": "Bash", "arguments": {"command": "rm -rf /"}}}
        if field == "destructive":
            body["destructive"] = value
        else:
            body["annotations"] = {field: value}
        response = await agent.post(path, json=body)
        error = response.json()["error"]
        assert (response.status_code, error["code"]) == (400, "VALIDATION_FAILED"), (value, response.text)
        assert field in error["message"]
    assert await _pending_count(agent) == 0  # nothing was asked, nothing allowed


async def _pending_count(agent: httpx.AsyncClient) -> int:
    return len((await agent.get("/v1/prompts", params={"agent": "ops"})).json()["items"])


async def test_an_agent_without_a_policy_asks_for_every_call(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    response = await agent.post(f"/v1/runs/{run['run_id']}/approvals", json={"tool_call": {"name": "Read"}})
    assert response.status_code == 201


# Forms -------------------------------------------------------------------------------------------


async def test_a_form_outside_the_flat_subset_is_400_naming_the_property(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    schema = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}
    response = await agent.post(
        f"/v1/runs/{run['run_id']}/prompts",
        json={"kind": "form", "message": "Where?", "requested_schema": schema},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_FAILED" and "property 'address'" in error["message"]


async def test_a_form_carries_its_schema_and_one_question_per_property(
    agent: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    prompt = await raise_form(agent, run["run_id"])
    assert prompt["requested_schema"] == PROFILE_SCHEMA and prompt["message"] == "Your profile"
    assert [(q["id"], q["question"]) for q in prompt["questions"]] == [
        ("name", "Name"),
        ("age", "age"),
        ("team", "team"),
    ]
    posted = served.channel.items_of("pending_prompt")[-1]
    assert posted.text.startswith(
        "Your profile\n\n1. Name (name) — string: text, at least 2 characters, required"
    )
    assert posted.metadata["prompt"]["requested_schema"] == PROFILE_SCHEMA
    inbox = (await agent.get("/v1/prompts")).json()["items"]
    assert inbox[0]["requested_schema"] == PROFILE_SCHEMA


async def test_accept_answers_a_form_with_typed_content_and_shown_answers(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    prompt = await raise_form(agent, run["run_id"])
    content = {"name": "Ada", "age": 36, "team": "blue"}
    response = await operator.post(
        input_path(prompt), json={"action": "accept", "content": content, "from": STARTER}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["content"] == content
    assert [(a["question_id"], a["answer"]) for a in body["answers"]] == [
        ("name", ["Ada"]),
        ("age", ["36"]),
        ("team", ["Blue team"]),
    ]
    again = await operator.post(
        input_path(prompt), json={"action": "accept", "content": content, "from": STARTER}
    )
    assert again.status_code == 200
    await served.runtime.gateway.outbox.idle()
    audit = served.channel.items_of("pending_prompt_resolved")[-1]
    assert audit.text == "✓ Answered: Ada · 36 · Blue team"
    assert audit.metadata["prompt"]["content"] == content


async def test_invalid_form_content_is_400_with_one_error_per_property(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_form(agent, run["run_id"])
    response = await operator.post(
        input_path(prompt),
        json={"action": "accept", "content": {"name": "A", "team": "green"}, "from": STARTER},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_FAILED"
    assert error["details"]["errors"] == [
        {"property": "name", "problem": "must have at least 2 characters (minLength 2)"},
        {"property": "age", "problem": "is required"},
        {"property": "team", "problem": "must be one of: Red team, Blue team"},
    ]
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


@pytest.mark.parametrize(("action", "code"), [("decline", "declined"), ("cancel", "cancelled")])
async def test_decline_and_cancel_settle_a_form_unanswered(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, action: str, code: str
) -> None:
    run = await start_run(agent)
    prompt = await raise_form(agent, run["run_id"])
    response = await operator.post(input_path(prompt), json={"action": action, "from": STARTER})
    assert (response.status_code, response.json()["reason_code"]) == (200, code)
    assert "content" not in response.json()


async def test_a_form_is_answered_over_003_by_property_name(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_form(agent, run["run_id"])
    path = respond_path(run, prompt["prompt_id"])
    headers = {"X-Threadgate-From": STARTER}
    bad = await operator.post(
        path,
        json={
            "answers": [{"questionId": "name", "otherText": "Ada"}, {"questionId": "age", "otherText": "old"}]
        },
        headers=headers,
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["errors"] == [
        {"questionId": "age", "problem": "must be a whole number (integer)"}
    ]
    answers = [
        {"questionId": "name", "otherText": "Ada"},
        {"questionId": "age", "otherText": "36"},
        {"questionId": "team", "selected": ["Red team"]},
    ]
    response = await operator.post(path, json={"answers": answers}, headers=headers)
    assert response.status_code == 200, response.text
    settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert settled["content"] == {"name": "Ada", "age": 36, "team": "red"}


# URL steps ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("https://example.com/connect", 201),
        ("http://127.0.0.1:9000/setup", 201),
        ("http://example.com/x", 400),
    ],
)
async def test_a_url_step_takes_https_or_loopback_http(
    agent: httpx.AsyncClient, url: str, status: int
) -> None:
    run = await start_run(agent)
    response = await agent.post(f"/v1/runs/{run['run_id']}/prompts", json={**URL_STEP, "url": url})
    assert response.status_code == status, response.text


async def test_a_url_step_is_posted_with_its_link_and_accepted_as_done(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, served: Served
) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"], **URL_STEP, questions=None)
    assert prompt["url"] == URL_STEP["url"]
    posted = served.channel.items_of("pending_prompt")[-1]
    assert posted.text == "Connect your GitHub account\nhttps://example.com/connect"
    response = await operator.post(input_path(prompt), json={"action": "accept", "from": STARTER})
    assert response.json()["answers"] == [
        {"question": "Connect your GitHub account", "question_id": "q1", "answer": ["done"]}
    ]
    declined = await raise_prompt(agent, run["run_id"], **URL_STEP, questions=None)
    response = await operator.post(input_path(declined), json={"action": "decline", "from": STARTER})
    assert response.json()["reason_code"] == "declined"


# Events and the client ---------------------------------------------------------------------------


async def test_events_carry_the_form_schema_and_its_content(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    async with agent.stream("GET", "/v1/events") as stream:
        lines = stream.aiter_lines()
        await until_connected(lines)  # the stream starts from now
        prompt = await raise_form(agent, run["run_id"])
        content = {"name": "Ada", "age": 36}
        await operator.post(
            input_path(prompt), json={"action": "accept", "content": content, "from": STARTER}
        )
        events = await asyncio.wait_for(_read_events(lines, 3), 5)
    by_type = {event["event"]: event for event in events}
    requested, resolved = by_type["input.requested"], by_type["input.resolved"]
    parked = by_type["message.received"]  # nobody was waiting: the answer is re-driven as the next turn
    assert parked["data"]["data"]["metadata"]["content"] == {"name": "Ada", "age": 36}
    assert requested["data"]["data"]["requested_schema"] == PROFILE_SCHEMA
    assert "content" not in requested["data"]["data"]
    assert resolved["data"]["data"]["content"] == content


class Profile(BaseModel):
    name: str = Field(min_length=2)
    age: int = Field(ge=0)
    team: str | None = None


async def _first_pending(desk: Threadgate) -> str:
    while True:
        page = await desk.list_inputs("ops")
        if page.items:
            return page.items[0].prompt_id
        await asyncio.sleep(0.02)


async def test_ask_form_turns_a_model_class_into_an_instance_or_none_when_declined(served: Served) -> None:
    async with (
        Threadgate(served.base_url, AGENT_TOKEN) as tg,
        Threadgate(served.base_url, OPERATOR_TOKEN) as desk,
    ):
        run = await tg.create_run("slack:C0456:1712345678.000100", agent="ops", started_by=STARTER)
        asking = asyncio.create_task(tg.ask_form(run.run_id, "Your profile", Profile))
        prompt_id = await _first_pending(desk)
        await desk.answer_input("ops", prompt_id, "accept", content={"name": "Ada", "age": 36}, from_=STARTER)
        assert await asyncio.wait_for(asking, 5) == Profile(name="Ada", age=36)
        declining = asyncio.create_task(tg.ask_form(run.run_id, "Your profile", Profile))
        await desk.answer_input("ops", await _first_pending(desk), "decline", from_=STARTER)
        assert await asyncio.wait_for(declining, 5) is None


async def test_abort_run_and_approve_by_policy_from_the_client(served: Served) -> None:
    async with (
        Threadgate(served.base_url, AGENT_TOKEN) as tg,
        Threadgate(served.base_url, OPERATOR_TOKEN) as desk,
    ):
        await desk.put_agent("ops", approvers=[], approval={"default": "never"})
        run = await tg.create_run("slack:C0456:1712345678.000100", agent="ops", started_by=STARTER)
        approval = await tg.approve(run.run_id, "Bash", {"command": "ls"})
        assert (bool(approval), approval.by, approval.arguments) == (True, "policy", {"command": "ls"})
        assert (await tg.abort_run(run.run_id)).state.value == "ended"


async def test_an_approved_call_runs_with_exactly_those_arguments(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        Threadgate(served.base_url, AGENT_TOKEN) as tg,
        Threadgate(served.base_url, OPERATOR_TOKEN) as desk,
    ):
        run = await tg.create_run("slack:C0456:1712345678.000100", agent="ops", started_by=STARTER)
        real_request = tg._http.request

        async def tampered(method: str, url: str, **kwargs: Any) -> httpx.Response:
            body = kwargs.get("json")
            if url.endswith("/approvals") and body is not None:  # what reaches the person differs
                kwargs["json"] = {
                    **body,
                    "tool_call": {**body["tool_call"], "arguments": {"command": "rm -rf /"}},
                }
            return await real_request(method, url, **kwargs)

        monkeypatch.setattr(tg._http, "request", tampered)
        approving = asyncio.create_task(tg.approve(run.run_id, "Bash", {"command": "ls"}))
        await desk.answer_input("ops", await _first_pending(desk), "accept", content=True, from_=STARTER)
        with pytest.raises(ApprovalMismatch):
            await asyncio.wait_for(approving, 5)


async def test_a_form_accepts_name_value_lines_as_typed_in_chat(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    prompt = await raise_form(agent, run["run_id"])
    response = await operator.post(
        input_path(prompt), json={"action": "accept", "content": "Name: Ada\nage: 36", "from": STARTER}
    )
    assert (response.status_code, response.json()["content"]) == (200, {"name": "Ada", "age": 36})


# Hostile values ----------------------------------------------------------------------------------


async def test_a_100k_character_email_is_refused_by_its_length_and_the_form_stays_open(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    run = await start_run(agent)
    schema = {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}
    prompt = await raise_form(agent, run["run_id"], schema)
    for hostile in ("a@" + "." * 99_997 + "@", "@" * 100_000, "a@b." + "a." * 49_998):
        response = await operator.post(
            input_path(prompt), json={"action": "accept", "content": {"email": hostile}, "from": STARTER}
        )
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "VALIDATION_FAILED"
        assert error["details"]["errors"] == [
            {"property": "email", "problem": "must have at most 4096 characters"}
        ]
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


@pytest.mark.parametrize("key", ["minimum", "maximum", "default"])
@pytest.mark.parametrize("big", [10**400, -(10**400)], ids=["1e400", "-1e400"])
async def test_a_schema_number_past_float_range_is_400_naming_the_property(
    agent: httpx.AsyncClient, key: str, big: int
) -> None:
    run = await start_run(agent)
    schema = {"type": "object", "properties": {"replicas": {"type": "integer", key: big}}}
    response = await agent.post(
        f"/v1/runs/{run['run_id']}/prompts",
        json={"kind": "form", "message": "How many?", "requested_schema": schema},
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_FAILED" and "property 'replicas'" in error["message"]


@pytest.mark.parametrize("big", [10**400, -(10**400), 10**4000], ids=["1e400", "-1e400", "1e4000"])
async def test_form_content_past_float_range_is_400_naming_the_property(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, big: int
) -> None:
    run = await start_run(agent)
    prompt = await raise_form(agent, run["run_id"])
    response = await operator.post(
        input_path(prompt),
        json={"action": "accept", "content": {"name": "Ada", "age": big}, "from": STARTER},
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_FAILED"
    assert error["details"]["errors"] == [
        {"property": "age", "problem": "must be a number between -1.8e308 and 1.8e308"}
    ]
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


@pytest.mark.parametrize("text", ["9" * 5000, "1e400", "-" + "9" * 400])
async def test_a_long_or_huge_typed_number_over_003_is_400_naming_the_field(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, text: str
) -> None:
    run = await start_run(agent)
    prompt = await raise_form(agent, run["run_id"])
    answers = [{"questionId": "name", "otherText": "Ada"}, {"questionId": "age", "otherText": text}]
    response = await operator.post(
        respond_path(run, prompt["prompt_id"]),
        json={"answers": answers},
        headers={"X-Threadgate-From": STARTER},
    )
    assert response.status_code == 400, response.text
    assert [e["questionId"] for e in response.json()["error"]["details"]["errors"]] == ["age"]


@pytest.mark.parametrize(
    "url",
    ["http://evil.example\\@127.0.0.1/", "http://evil.example@127.0.0.1/", "http://127.0.0.1\t.evil/"],
)
async def test_a_url_step_a_browser_would_open_elsewhere_is_400(agent: httpx.AsyncClient, url: str) -> None:
    run = await start_run(agent)
    response = await agent.post(f"/v1/runs/{run['run_id']}/prompts", json={**URL_STEP, "url": url})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"
