"""Typing "always allow" in the web chat (the core's reading, so every channel's typed reply) approves the
call and lets the same call through for the rest of the run; someone who may not answer grants nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.rules import notices
from tests.web.conftest import AGENT_AUTH, WebGateway, raise_prompt, start_run, web_gateway
from tests.web.test_web_channel import read_items

STATUS = {"name": "Bash", "arguments": {"command": "git status"}}


@pytest.fixture
async def web() -> AsyncIterator[WebGateway]:
    async with web_gateway() as gateway:
        yield gateway


async def ask(agent: httpx.AsyncClient, run_id: str, tool_call: dict[str, Any]) -> httpx.Response:
    return await agent.post(f"/v1/runs/{run_id}/approvals", json={"tool_call": tool_call})


async def test_typing_always_approves_and_grants_the_exact_call_for_the_run(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "always")
        asked = (await ask(agent, run["run_id"], STATUS)).json()
        reply = await client.post("/chat/always/messages", json={"name": "alice", "text": "Always allow"})
        settled = (await agent.get(f"/v1/prompts/{asked['prompt_id']}")).json()
        (grant,) = (await agent.get(f"/v1/runs/{run['run_id']}/grants")).json()["items"]
        same = await ask(agent, run["run_id"], STATUS)
        other = await ask(agent, run["run_id"], {"name": "Bash", "arguments": {"command": "git log"}})
    assert settled["answers"][0]["answer"] == ["Approve"]
    assert (grant["match"], grant["created_by"]) == (STATUS, "web:alice")
    assert reply.json()["outcome"] == "answered"
    assert "git status" in reply.json()["notice"] and grant["grant_id"] in reply.json()["notice"]
    assert same.json() == {"decision": "allow", "by": f"grant:{grant['grant_id']}"}
    assert other.status_code == 201


async def test_always_from_someone_who_may_not_answer_grants_nothing(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "guarded-always")
        asked = (await ask(agent, run["run_id"], STATUS)).json()
        reply = await client.post(
            "/chat/guarded-always/messages", json={"name": "mallory", "text": "always allow"}
        )
        still = (await agent.get(f"/v1/prompts/{asked['prompt_id']}")).json()
        grants = (await agent.get(f"/v1/runs/{run['run_id']}/grants")).json()["items"]
    assert reply.json() == {"outcome": "not_allowed", "notice": notices.NOT_ALLOWED}
    assert still["prompt_state"] == "pending"
    assert grants == []


async def test_approve_for_this_session_posts_grant_and_the_exact_call_is_granted(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "session")
        asked = (await ask(agent, run["run_id"], STATUS)).json()
        [card] = await read_items(client, "session", 1)
        approve = [{"question_id": "q1", "answer": ["Approve"]}]
        post = {"name": "mallory", "answers": approve, "prompt_id": asked["prompt_id"], "grant": True}
        refused = await client.post("/chat/session/messages", json=post)
        nothing = (await agent.get(f"/v1/runs/{run['run_id']}/grants")).json()["items"]
        reply = await client.post("/chat/session/messages", json={**post, "name": "alice"})
        settled = (await agent.get(f"/v1/prompts/{asked['prompt_id']}")).json()
        (grant,) = (await agent.get(f"/v1/runs/{run['run_id']}/grants")).json()["items"]
        same = await ask(agent, run["run_id"], STATUS)
    assert card["metadata"]["prompt"]["session_label"] == notices.APPROVE_FOR_SESSION
    assert (refused.json()["outcome"], nothing) == ("not_allowed", [])
    assert (settled["answered_by"], settled["answers"][0]["answer"]) == ("web:alice", ["Approve"])
    assert (grant["match"], grant["created_by"]) == (STATUS, "web:alice")
    assert reply.json() == {"outcome": "answered", "notice": reply.json()["notice"], "granted": STATUS}
    assert grant["grant_id"] in reply.json()["notice"]
    assert same.json() == {"decision": "allow", "by": f"grant:{grant['grant_id']}"}


async def test_a_card_that_needs_two_approvers_offers_no_approve_for_this_session(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "quorum-card")
        await raise_prompt(agent, run["run_id"], tool_call=STATUS, approvals=2)
        [card] = await read_items(client, "quorum-card", 1)
    prompt = card["metadata"]["prompt"]
    assert prompt["approvals"] == 2 and "typing_hint" in prompt
    assert "session_label" not in prompt  # a grant is one person's word: pressing it would be refused


async def test_grant_must_be_json_true(web: WebGateway) -> None:
    async with web.client() as client:
        reply = await client.post(
            "/chat/strict/messages", json={"name": "alice", "text": "yes", "grant": "yes"}
        )
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "VALIDATION_FAILED"
