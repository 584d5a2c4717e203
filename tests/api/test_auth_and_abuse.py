"""Bearer tokens and roles, and bad input: every failure is the contract's envelope and a 4xx, never a 500."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import httpx
import pytest

from gateway.api.deps import ApiOptions
from tests.api.conftest import (
    AGENT_TOKEN,
    OPERATOR_TOKEN,
    STARTER,
    THREAD,
    Served,
    raise_prompt,
    respond_path,
    served_gateway,
    start_run,
)


async def _get(served: Served, path: str, token: str) -> httpx.Response:
    async with served.client({"Authorization": f"Bearer {token}"}) as client:
        return await client.get(path)


def _error(response: httpx.Response) -> dict[str, object]:
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    error: dict[str, object] = body["error"]
    return error


async def test_missing_or_invalid_token_is_401(served: Served) -> None:
    async with served.client() as anonymous, served.client({"Authorization": "Bearer wrong"}) as wrong:
        for client in (anonymous, wrong):
            response = await client.get("/v1/prompts")
            assert response.status_code == 401
            assert _error(response)["code"] == "UNAUTHORIZED"


async def test_agent_token_can_never_answer(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    prompt = await raise_prompt(agent, run["run_id"])
    seed_002 = await agent.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": STARTER}
    )
    seed_003 = await agent.post(
        respond_path(run, prompt["prompt_id"]), json={"skip": True}, headers={"X-Threadgate-From": STARTER}
    )
    approvers = await agent.put("/v1/agents/ops", json={"human_input": {"approvers": ["slack:U0ME"]}})
    for response in (seed_002, seed_003, approvers):
        assert response.status_code == 403
        assert _error(response)["code"] == "FORBIDDEN"
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


async def test_operator_token_does_not_raise_prompts(operator: httpx.AsyncClient) -> None:
    response = await operator.post("/v1/runs", json={"thread_id": "web:room", "agent": "ops"})
    assert response.status_code == 403


async def test_a_gateway_without_tokens_refuses_every_call(real_redis: str) -> None:
    async with served_gateway(real_redis, threadgate_api_tokens=None) as served:
        response = await _get(served, "/v1/prompts", "anything")
    assert response.status_code == 401
    assert "THREADGATE_API_TOKENS" in str(_error(response)["message"])


async def test_tokens_never_appear_in_logs_or_errors(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    async with served.client({"Authorization": f"Bearer {AGENT_TOKEN}x"}) as near_miss:
        seen.append((await near_miss.get("/v1/prompts")).text)
    async with served.client({"Authorization": f"Bearer {AGENT_TOKEN}"}) as agent:
        run = await start_run(agent)
        seen.append((await agent.post(f"/v1/runs/{run['run_id']}/prompts", json={"kind": "bogus"})).text)
        seen.append((await agent.post("/v1/agents/ops/inputs/prm_x", json={"action": "accept"})).text)
    text = caplog.text + "".join(seen)
    assert AGENT_TOKEN not in text
    assert OPERATOR_TOKEN not in text


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"{not json", "application/json"),
        (b"\xff\xfe\x00garbage", "application/json"),
        (b'{"thread_id": "web:room", "agent": "ops"', "application/json"),
        (b"[]", "application/json"),
        (b'"a string"', "application/json"),
        (b'{"thread_id": 12, "agent": ["ops"]}', "application/json"),
        (b'{"thread_id": "web:\\ud800", "agent": "ops"}', "application/json"),
        (b'{"thread_id": "web:room", "agent": "ops", "extra": 1}', "application/json"),
        (b"", "application/json"),
    ],
)
async def test_malformed_bodies_are_400_in_the_envelope(
    agent: httpx.AsyncClient, content: bytes, content_type: str
) -> None:
    response = await agent.post("/v1/runs", content=content, headers={"Content-Type": content_type})
    assert response.status_code == 400, response.text
    assert _error(response)["code"] == "VALIDATION_FAILED"


async def test_lone_surrogates_anywhere_in_a_body_are_refused(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    body = b'{"kind": "text", "questions": [{"question": "Why \\udfff?"}]}'
    response = await agent.post(
        f"/v1/runs/{run['run_id']}/prompts", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert "Unicode" in str(_error(response)["message"])


async def test_unicode_edge_cases_that_are_valid_text_are_kept(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    text = "Déployer 🚀 en production\u200b? \u202eevil\u202c \x00 ok"
    prompt = await raise_prompt(agent, run["run_id"], kind="text", questions=[{"question": text}])
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["questions"][0]["question"] == text


async def test_unicode_and_odd_ids_in_paths_are_4xx(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    for path in (
        "/v1/prompts/%F0%9F%9A%80",
        "/v1/prompts/%ED%A0%80",
        "/v1/runs/%00/end",
        "/v1/threads/web:%C3%A9/items",
    ):
        response = await (agent.get(path) if "prompts" in path or "items" in path else agent.post(path))
        assert 400 <= response.status_code < 500, path
        _error(response)
    response = await operator.get("/v1/agents/%E2%98%83/inputs")
    assert response.status_code == 422


async def test_huge_bodies_are_413_declared_or_streamed(real_redis: str) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b" " * 1000

    json_type = {"Content-Type": "application/json"}
    async with (
        served_gateway(real_redis, ApiOptions(max_body_bytes=4096)) as served,
        served.client({"Authorization": f"Bearer {AGENT_TOKEN}"}) as agent,
    ):
        declared = await agent.post("/v1/runs", content=b"x" * 5000, headers=json_type)
        streamed = await agent.post("/v1/runs", content=chunks(), headers=json_type)
    for response in (declared, streamed):
        assert response.status_code == 413
        assert _error(response)["code"] == "PAYLOAD_TOO_LARGE"


async def test_unknown_route_and_wrong_method_are_enveloped(agent: httpx.AsyncClient) -> None:
    missing = await agent.get("/v1/nothing-here")
    wrong = await agent.delete("/v1/runs")
    assert (missing.status_code, _error(missing)["code"]) == (404, "NOT_FOUND")
    assert (wrong.status_code, _error(wrong)["code"]) == (405, "METHOD_NOT_ALLOWED")


async def test_bad_query_parameters_are_422_invalid_params(agent: httpx.AsyncClient) -> None:
    for params in ({"limit": 0}, {"limit": "many"}, {"cursor": "-1"}, {"state": "answered"}):
        response = await agent.get("/v1/prompts", params=params)
        assert response.status_code == 422, params
        assert _error(response)["code"] == "INVALID_PARAMS"
    response = await agent.get("/v1/messages", params={"after": "not-a-cursor"})
    assert response.status_code == 422


async def test_cursor_beyond_what_redis_can_hold_is_422(agent: httpx.AsyncClient) -> None:
    for path in ("/v1/messages", f"/v1/threads/{THREAD}/items", "/v1/events"):
        response = await agent.get(path, params={"after": "30169617443332183434-03"})
        assert response.status_code == 422, path
