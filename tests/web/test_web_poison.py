"""Web chat posts are held to every request body's limits, and an edit the store cannot keep is "not
taken": never a 500, the approval still open."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.web.conftest import AGENT_AUTH, WebGateway, raise_prompt, start_run, web_gateway

CALL = {"name": "Bash", "arguments": {"command": "rm -rf build", "timeout": 30}}
APPROVE = [{"question_id": "q1", "answer": ["Approve"]}]


@pytest.fixture
async def web() -> AsyncIterator[WebGateway]:
    async with web_gateway() as gateway:
        yield gateway


async def post(web: WebGateway, room: str, body: str) -> tuple[httpx.Response, dict[str, Any]]:
    """Raise an editable approval in ``room``, post ``body`` (raw JSON), and read the prompt after."""
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, room)
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL, editable=True)
        response = await client.post(
            f"/chat/{room}/messages", content=body, headers={"content-type": "application/json"}
        )
        seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    return response, seen


@pytest.mark.parametrize(
    "text",
    [
        'edit {"command": "ls \\ud800"}',
        'edit {"command": "\\udfff"}',
        'edit {"command": ' + "[" * 900 + "]" * 900 + "}",
        'edit {"command": ' + "[" * 33 + "]" * 33 + "}",
        "timeout: [" + '"\\ud800"]',
    ],
)
async def test_a_typed_edit_the_store_cannot_keep_is_not_taken(web: WebGateway, text: str) -> None:
    response, seen = await post(web, "typed", json.dumps({"name": "alice", "text": text}))
    assert response.status_code == 202, response.text
    assert response.json()["outcome"] == "kept"
    assert response.json()["notice"].startswith("Not taken: ")
    assert (seen["prompt_state"], seen.get("approved_call")) == ("pending", None)


def _with_arguments(arguments: str) -> str:
    return f'{{"name": "alice", "answers": {json.dumps(APPROVE)}, "arguments": {{"command": {arguments}}}}}'


@pytest.mark.parametrize(
    "body",
    [
        _with_arguments("[" * 31 + "]" * 31),  # the body 33 deep
        _with_arguments("[" * 150 + "]" * 150),
        _with_arguments('"ls \\ud800"'),
        '{"name": "al\\ud800", "text": "hello"}',
        '{"name": "alice", "text": "Deny", "note": "\\udc00"}',
    ],
)
async def test_a_post_past_a_bodys_limits_is_400_and_changes_nothing(web: WebGateway, body: str) -> None:
    response, seen = await post(web, "limits", body)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "VALIDATION_FAILED")
    assert seen["prompt_state"] == "pending"
