"""``POST /v1/runs/{run_id}/approvals`` asks for an editable approval when the agent asks (``editable``,
``input_schema``), as the tool's policy rule may; a request the rule makes impossible is a 400, never a
crash."""

from __future__ import annotations

import httpx

from tests.api.conftest import start_run

CALL = {"name": "Bash", "arguments": {"command": "rm -rf build"}}
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


async def test_an_editable_request_raises_an_editable_approval_with_its_schema(
    agent: httpx.AsyncClient,
) -> None:
    run = await start_run(agent)
    response = await agent.post(
        f"/v1/runs/{run['run_id']}/approvals",
        json={"tool_call": CALL, "editable": True, "input_schema": SCHEMA},
    )
    assert response.status_code == 201, response.text
    assert (response.json()["editable"], response.json()["input_schema"]) == (True, SCHEMA)


async def test_an_unusable_input_schema_is_refused_naming_it(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    for schema in ({"type": "array"}, {"type": "object", "properties": 5}, "not a schema"):
        response = await agent.post(
            f"/v1/runs/{run['run_id']}/approvals", json={"tool_call": CALL, "input_schema": schema}
        )
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "VALIDATION_FAILED"
        assert "input_schema" in response.text


async def test_an_edit_asked_of_a_tool_needing_several_approvers_is_refused(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    rule = {"approval": {"tools": {"Bash": {"ask": "always", "approvals": 2}}}}
    assert (await operator.put("/v1/agents/ops", json=rule)).status_code == 200
    run = await start_run(agent)
    response = await agent.post(
        f"/v1/runs/{run['run_id']}/approvals", json={"tool_call": CALL, "editable": True}
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"
    assert "several approvers" in response.json()["error"]["message"]
