"""``/mcp`` as the 2025-11-25 transport has it: the Origin of every connection checked, one JSON-RPC message
per request with a string or integer id, and sessions capped per token so one token cannot take them all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from gateway.api.deps import ApiOptions
from tests.integrations.test_mcp_http import (
    ACCEPT,
    INITIALIZE,
    OPS_TOKEN,
    bearer,
    messages,
    open_session,
)
from tests.web.conftest import AGENT_TOKEN, WebGateway, web_gateway

FOREIGN = ("http://evil.example.com", "https://127.0.0.1.evil.example", "null")


@asynccontextmanager
async def gateway(**settings: Any) -> AsyncIterator[WebGateway]:
    options = ApiOptions(max_wait_s=5, sse_heartbeat_s=0.2, mcp_progress_s=0.05)
    tokens = f"ops:agent:{OPS_TOKEN}"
    async with web_gateway(options=options, api_tokens=tokens, **settings) as web:
        yield web


@pytest.mark.parametrize("origin", FOREIGN)
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
async def test_a_foreign_origin_is_refused_on_every_method(method: str, origin: str) -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, bearer(AGENT_TOKEN))
        headers = {**session, "Origin": origin}
        if method == "GET":
            headers["Accept"] = "text/event-stream"
        body = {"jsonrpc": "2.0", "id": 9, "method": "ping"} if method == "POST" else None
        async with client.stream(method, "/mcp", json=body, headers=headers) as response:
            await response.aread()
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "CROSS_SITE_REQUEST"


async def test_a_get_stream_from_the_gateways_own_origin_opens() -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, bearer(AGENT_TOKEN))
        headers = {key: value for key, value in session.items() if key != "Content-Type"}
        headers.update(Accept="text/event-stream", Origin=web.base_url)
        async with client.stream("GET", "/mcp", headers=headers) as stream:
            assert stream.status_code == 200


PING = {"jsonrpc": "2.0", "method": "ping"}


@pytest.mark.parametrize(
    "body",
    [
        [{**PING, "id": 1}],
        [{**PING, "id": 1}, {**PING, "id": 2}],
        [INITIALIZE],
        [],
        {**PING, "id": None},
        {**PING, "id": {"a": 1}},
        {**PING, "id": [1]},
        {**PING, "id": 1.5},
        {**PING, "id": True},
        {**PING, "id": 3, "jsonrpc": "1.0"},
        {"jsonrpc": "2.0", "id": 4},
        "ping",
        7,
    ],
)
async def test_what_is_not_one_json_rpc_message_is_one_invalid_request_error(body: Any) -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, bearer(AGENT_TOKEN))
        in_session = await client.post("/mcp", json=body, headers=session)
        opening = await client.post("/mcp", json=body, headers={**ACCEPT, **bearer(AGENT_TOKEN)})
    for response in (in_session, opening):
        assert response.status_code == 400, response.text
        reply = response.json()
        assert reply["jsonrpc"] == "2.0" and reply["id"] is None
        assert reply["error"]["code"] == -32600
        assert reply["error"]["message"].startswith("Invalid Request")
        assert "validation error" not in response.text.lower() and "pydantic" not in response.text


@pytest.mark.parametrize("request_id", [0, 7, -3, "abc", ""])
async def test_string_and_integer_ids_are_answered_with_their_id(request_id: Any) -> None:
    async with gateway() as web, web.client() as client:
        session = await open_session(client, bearer(AGENT_TOKEN))
        response = await client.post("/mcp", json={**PING, "id": request_id}, headers=session)
    assert response.status_code == 200, response.text
    (reply,) = messages(response)
    assert reply == {"jsonrpc": "2.0", "id": request_id, "result": {}}


async def test_sessions_are_capped_per_token_and_the_other_tokens_still_open_theirs() -> None:
    async with gateway(threadgate_mcp_sessions_per_token=3) as web, web.client() as client:
        opened = [await open_session(client, bearer(AGENT_TOKEN)) for _ in range(3)]
        refused = [
            await client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **bearer(AGENT_TOKEN)})
            for _ in range(2)
        ]
        other = await open_session(client, bearer(OPS_TOKEN))  # another token is not held up
        ended = await client.delete("/mcp", headers=opened[0])
        again = await client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **bearer(AGENT_TOKEN)})
        still = await client.post("/mcp", json={**PING, "id": 5}, headers=opened[1])
    for response in refused:
        assert response.status_code == 429, response.text
        assert response.json()["error"]["code"] == "RATE_LIMITED"
        assert response.json()["error"]["details"]["limit"] == 3
        assert int(response.headers["retry-after"]) > 0
    assert other["mcp-session-id"]
    assert ended.status_code == 200
    assert again.status_code == 200, again.text
    assert still.status_code == 200


async def test_refused_openings_and_failed_ones_do_not_use_up_the_tokens_room() -> None:
    async with gateway(threadgate_mcp_sessions_per_token=2) as web, web.client() as client:
        for _ in range(5):  # not an initialize: the SDK refuses it and the session is dropped again
            opening = {**ACCEPT, **bearer(AGENT_TOKEN)}
            ping = await client.post("/mcp", json={**PING, "id": 1}, headers=opening)
            assert ping.status_code == 400
        for _ in range(2):
            await open_session(client, bearer(AGENT_TOKEN))
        for _ in range(3):
            response = await client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **bearer(AGENT_TOKEN)})
            assert response.status_code == 429
