"""``/mcp`` on a served gateway: the conformance suite's server scenarios over real HTTP (initialize, ping,
tools-list, a failing tool call, several SSE streams at once, DNS-rebinding protection), the protocol's
errors, the token's agent scoping, and a question answered from the web chat with progress on the way."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gateway.api.deps import ApiOptions
from tests.web.conftest import AGENT_TOKEN, OPERATOR_TOKEN, WebGateway, web_gateway

PROTOCOL = "2025-11-25"
OPS_TOKEN = "mcp-ops-token-77aa"
TEAM_TOKEN = "mcp-team-token-41bc"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def gateway() -> AsyncIterator[WebGateway]:
    options = ApiOptions(max_wait_s=5, sse_heartbeat_s=0.2, mcp_progress_s=0.05)
    tokens = f"ops:agent:{OPS_TOKEN},team:agent:{TEAM_TOKEN}:ops|deploy"
    async with web_gateway(options=options, api_tokens=tokens) as web:
        yield web


def messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response, whether a JSON body or an SSE stream."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    body = response.json()
    return body if isinstance(body, list) else [body]


async def open_session(client: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, str]:
    """Initialize a session; the headers every later request of it sends."""
    response = await client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **headers})
    assert response.status_code == 200, response.text
    (reply,) = messages(response)
    assert reply["result"]["serverInfo"]["name"] == "threadgate"
    session = {**ACCEPT, **headers, "mcp-session-id": response.headers["mcp-session-id"]}
    session["mcp-protocol-version"] = reply["result"]["protocolVersion"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post("/mcp", json=initialized, headers=session)).status_code == 202
    return session


async def call(
    client: httpx.AsyncClient, session: dict[str, str], request_id: int, method: str, **params: Any
) -> Any:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    response = await client.post("/mcp", json=body, headers=session)
    (reply,) = [m for m in messages(response) if m.get("id") == request_id]
    return reply


async def test_initialize_ping_and_tools_list_over_http() -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, bearer(AGENT_TOKEN))
        pong = await call(client, session, 2, "ping")
        listed = await call(client, session, 3, "tools/list")
    assert pong["result"] == {}
    tools = {tool["name"]: tool for tool in listed["result"]["tools"]}
    assert set(tools) >= {"ask_user", "request_approval", "permission_prompt"}
    for tool in tools.values():
        assert tool["description"] and tool["inputSchema"]["type"] == "object"
        assert "ctx" not in tool["inputSchema"].get("properties", {})


async def test_a_failing_tool_call_is_a_result_with_is_error() -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, bearer(AGENT_TOKEN))
        reply = await call(client, session, 2, "tools/call", name="ask_user", arguments={"questions": []})
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"]


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("tools/call", {"name": "no_such_tool", "arguments": {}}, "Unknown tool: no_such_tool"),
        ("prompts/get", {"name": "no_such_prompt"}, "Unknown prompt: no_such_prompt"),
        ("tools/call", [1, 2], "The params of tools/call must be an object."),
        ("tools/call", "ask_user", "The params of tools/call must be an object."),
        ("ping", 7, "The params of ping must be an object."),
    ],
)
async def test_protocol_errors_are_invalid_params_with_the_request_id(
    method: str, params: Any, message: str
) -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, bearer(AGENT_TOKEN))
        body = {"jsonrpc": "2.0", "id": 41, "method": method, "params": params}
        response = await client.post("/mcp", json=body, headers=session)
    (reply,) = messages(response)
    assert reply["id"] == 41
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"] == message
    assert "Traceback" not in response.text


async def test_a_get_stream_and_concurrent_posts_each_get_their_own_answer() -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, bearer(AGENT_TOKEN))
        get_headers = {key: value for key, value in session.items() if key != "Content-Type"}
        get_headers["Accept"] = "text/event-stream"
        async with client.stream("GET", "/mcp", headers=get_headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            replies = await asyncio.gather(*(call(client, session, 1000 + n, "tools/list") for n in range(3)))
    assert [reply["id"] for reply in replies] == [1000, 1001, 1002]
    assert all(reply["result"]["tools"] for reply in replies)


async def test_a_host_it_is_not_served_at_is_refused_and_loopback_is_served() -> None:
    async with gateway() as web, web.client() as client:
        port = web.base_url.rsplit(":", 1)[1]
        evil = {"Host": "evil.example.com", "Origin": "http://evil.example.com", **bearer(AGENT_TOKEN)}
        own = {"Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}", **bearer(AGENT_TOKEN)}
        refused = await client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **evil})
        served = await client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **own})
    assert 400 <= refused.status_code < 500
    assert served.status_code == 200


async def test_a_post_from_another_sites_page_is_refused() -> None:
    async with gateway() as web, web.client() as client:
        headers = {**ACCEPT, **bearer(AGENT_TOKEN), "Origin": "http://evil.example.com"}
        response = await client.post("/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "CROSS_SITE_REQUEST"


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({}, 401, "UNAUTHORIZED"),
        (bearer("not-a-token"), 401, "UNAUTHORIZED"),
        (bearer(OPERATOR_TOKEN), 403, "FORBIDDEN"),  # the tools ask as an agent: never an operator's token
        ({**bearer(OPS_TOKEN), "X-Threadgate-Agent": "deploy"}, 403, "FORBIDDEN"),
        (bearer(TEAM_TOKEN), 400, "VALIDATION_ERROR"),  # several agents, none named
    ],
)
async def test_mcp_needs_an_agent_token_acting_for_the_sessions_agent(
    headers: dict[str, str], status: int, code: str
) -> None:
    async with gateway() as web, web.client() as client:
        response = await client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **headers})
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


async def test_the_agent_named_in_the_query_is_accepted_when_the_token_acts_for_it() -> None:
    async with gateway() as web, web.client() as client:
        response = await client.post(
            "/mcp", params={"agent": "deploy"}, json=INITIALIZE, headers={**ACCEPT, **bearer(TEAM_TOKEN)}
        )
    assert response.status_code == 200, response.text


async def test_a_session_answers_only_the_token_and_agent_that_opened_it() -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, {**bearer(TEAM_TOKEN), "X-Threadgate-Agent": "ops"})
        other_agent = {**session, "X-Threadgate-Agent": "deploy"}
        other_token = {**session, **bearer(AGENT_TOKEN)}
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert (await client.post("/mcp", json=ping, headers=other_agent)).status_code == 404
        assert (await client.post("/mcp", json=ping, headers=other_token)).status_code == 404
        assert (await client.post("/mcp", json=ping, headers=session)).status_code == 200


@asynccontextmanager
async def mcp_client(web: WebGateway, headers: dict[str, str]) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    async with http, Client(streamable_http_client(f"{web.base_url}/mcp", http_client=http)) as client:
        yield client


async def pending_prompt(web: WebGateway, agent: str) -> dict[str, Any]:
    async with web.client(bearer(AGENT_TOKEN)) as api:
        while True:
            items = (await api.get("/v1/prompts", params={"state": "pending", "agent": agent})).json()[
                "items"
            ]
            if items:
                prompt: dict[str, Any] = items[0]
                return prompt
            await asyncio.sleep(0.02)


async def test_ask_user_over_http_reports_progress_until_the_person_answers_in_chat() -> None:
    where = {"X-Threadgate-Session-Channel": "web:mcp-room", "X-Threadgate-Started-By": "web:alice"}
    progressed = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    async with gateway() as web, mcp_client(web, {**bearer(OPS_TOKEN), **where}) as client:
        questions = [
            {"question": "Deploy where?", "options": [{"label": "staging"}, {"label": "production"}]}
        ]
        task = asyncio.create_task(
            client.call_tool("ask_user", {"questions": questions}, progress_callback=on_progress)
        )
        prompt = await asyncio.wait_for(pending_prompt(web, "ops"), 10)
        await asyncio.wait_for(progressed.wait(), 10)  # still nobody has answered
        async with web.client() as person:
            room = prompt["thread_id"].removeprefix("web:")
            said = await person.post(f"/chat/{room}/messages", json={"name": "alice", "text": "staging"})
            assert said.status_code == 202, said.text
        result = await asyncio.wait_for(task, 10)
    assert prompt["agent"] == "ops"
    assert not result.is_error
    assert result.structured_content == {
        "answers": [{"question": "Deploy where?", "answer": ["staging"]}],
        "answered_by": "web:alice",
    }


async def test_someone_who_may_not_answer_does_not_settle_an_http_question() -> None:
    where = {"X-Threadgate-Session-Channel": "web:mcp-guarded", "X-Threadgate-Started-By": "web:alice"}
    async with gateway() as web, mcp_client(web, {**bearer(OPS_TOKEN), **where}) as client:
        task = asyncio.create_task(client.call_tool("ask_user", {"questions": [{"question": "Go?"}]}))
        prompt = await asyncio.wait_for(pending_prompt(web, "ops"), 10)
        room = prompt["thread_id"].removeprefix("web:")
        async with web.client() as people:
            await people.post(f"/chat/{room}/messages", json={"name": "mallory", "text": "yes"})
            still = (
                await people.get(f"/v1/prompts/{prompt['prompt_id']}", headers=bearer(AGENT_TOKEN))
            ).json()
            assert still["prompt_state"] == "pending"
            await people.post(f"/chat/{room}/messages", json={"name": "alice", "text": "go"})
        result = await asyncio.wait_for(task, 10)
    assert result.structured_content is not None
    assert result.structured_content["answered_by"] == "web:alice"


# Who may answer an MCP question when dana is behind two identities (Slack, and her name in the web chat):
# as the run's starter by her other identity, as a listed person, as a member of a listed group.
DANA_IS = {
    "starter": ({"X-Threadgate-Started-By": "slack:U0DANA"}, []),
    "person": ({"X-Threadgate-Started-By": "web:alice"}, ["person:dana"]),
    "group": ({"X-Threadgate-Started-By": "web:alice"}, ["group:sre"]),
}


@pytest.mark.parametrize("dana_is", sorted(DANA_IS))
async def test_a_person_answers_an_http_question_from_their_other_identity_and_a_stranger_does_not(
    dana_is: str,
) -> None:
    started_by, approvers = DANA_IS[dana_is]
    where = {"X-Threadgate-Session-Channel": f"web:mcp-{dana_is}", **started_by}
    async with gateway() as web:
        async with web.client(bearer(OPERATOR_TOKEN)) as operator:
            dana = {"identities": ["slack:U0DANA", "web:dana"], "groups": ["sre"]}
            assert (await operator.put("/v1/people/dana", json=dana)).status_code == 200
            listed = await operator.put("/v1/agents/ops", json={"human_input": {"approvers": approvers}})
            assert listed.status_code == 200, listed.text
        async with mcp_client(web, {**bearer(OPS_TOKEN), **where}) as client:
            task = asyncio.create_task(client.call_tool("ask_user", {"questions": [{"question": "Go?"}]}))
            prompt = await asyncio.wait_for(pending_prompt(web, "ops"), 10)
            room = prompt["thread_id"].removeprefix("web:")
            async with web.client() as people:
                refused = await people.post(f"/chat/{room}/messages", json={"name": "mallory", "text": "yes"})
                assert refused.json()["outcome"] == "not_allowed"
                await people.post(f"/chat/{room}/messages", json={"name": "dana", "text": "go"})
            result = await asyncio.wait_for(task, 10)
    assert result.structured_content is not None
    assert result.structured_content["answered_by"] == "web:dana"


async def test_request_approval_over_http_follows_the_agents_policy() -> None:
    where = {"X-Threadgate-Session-Channel": "web:mcp-policy"}
    async with gateway() as web:
        async with web.client(bearer(OPERATOR_TOKEN)) as operator:
            put = await operator.put("/v1/agents/ops", json={"approval": {"default": "destructive"}})
            assert put.status_code == 200, put.text
        async with mcp_client(web, {**bearer(OPS_TOKEN), **where}) as client:
            lookup = {"tool_name": "db__lookup", "arguments": {"id": 7}, "destructive": False}
            allowed = await asyncio.wait_for(client.call_tool("request_approval", lookup), 10)
    assert allowed.structured_content is not None
    assert allowed.structured_content["approved"] is True
    assert allowed.structured_content["answered_by"] is None


async def test_an_approval_over_http_says_the_reason_and_the_edited_call() -> None:
    where = {"X-Threadgate-Session-Channel": "web:mcp-decide", "X-Threadgate-Started-By": "web:alice"}
    scale = {"tool_name": "scale", "arguments": {"service": "api", "replicas": 8}, "editable": True}
    async with gateway() as web, mcp_client(web, {**bearer(OPS_TOKEN), **where}) as client:
        results = []
        for reply in ("replicas: 3", "not during the sale"):
            task = asyncio.create_task(client.call_tool("request_approval", scale))
            prompt = await asyncio.wait_for(pending_prompt(web, "ops"), 10)
            async with web.client() as person:
                room = prompt["thread_id"].removeprefix("web:")
                said = await person.post(f"/chat/{room}/messages", json={"name": "alice", "text": reply})
                assert said.json()["outcome"] == "answered", said.text
            results.append((await asyncio.wait_for(task, 10)).structured_content)
    edited, denied = results
    assert edited is not None and denied is not None
    assert edited["approved"] is True
    assert edited["approved_call"] == {"name": "scale", "arguments": {"service": "api", "replicas": 3}}
    assert (denied["approved"], denied["note"]) == (False, "not during the sale")
    assert denied["message"] == "Denied in chat by web:alice: not during the sale"
