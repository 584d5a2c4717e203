"""The API's door: the token is checked on the raw request, then the body is parsed once, within limits."""

from __future__ import annotations

import httpx
import pytest

from tests.api.conftest import AGENT_AUTH, Served, start_run
from tests.support.log_capture import assert_short_lines, captured_logs

JSON = {"Content-Type": "application/json"}
HOSTILE_BODIES = [
    b"[" * 900 + b"]" * 900,
    b'{"thread_id": "\\ud800", "agent": "ops"}',
    b'{"thread_id": "web:\xff\xfe", "agent": "ops"}',
    b"{not json",
    b"1" * 5000,
]


def _code(response: httpx.Response) -> str:
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    return str(body["error"]["code"])


@pytest.mark.parametrize(
    "body", HOSTILE_BODIES, ids=["deep", "surrogate", "not-utf8", "not-json", "huge-int"]
)
async def test_without_a_valid_token_the_body_is_never_parsed(served: Served, body: bytes) -> None:
    with captured_logs() as records:
        async with served.client() as anonymous, served.client({"Authorization": "Bearer nope"}) as wrong:
            for client in (anonymous, wrong):
                response = await client.post("/v1/runs", content=body, headers=JSON)
                assert response.status_code == 401, response.text
                assert _code(response) == "UNAUTHORIZED"
                assert response.headers["www-authenticate"] == "Bearer"
    assert_short_lines(records)


@pytest.mark.parametrize(
    "body", HOSTILE_BODIES, ids=["deep", "surrogate", "not-utf8", "not-json", "huge-int"]
)
async def test_with_a_valid_token_hostile_bodies_are_400_and_log_no_traceback(
    agent: httpx.AsyncClient, body: bytes
) -> None:
    with captured_logs() as records:
        response = await agent.post("/v1/runs", content=body, headers=JSON)
    assert response.status_code == 400, response.text
    assert _code(response) == "VALIDATION_FAILED"
    assert len(response.content) < 1000
    assert_short_lines(records)


async def test_nesting_is_refused_past_32_levels_wherever_it_sits(agent: httpx.AsyncClient) -> None:
    run = await start_run(agent)
    deep = "[" * 40 + "]" * 40
    body = f'{{"kind": "text", "questions": [{{"question": "?", "options": {deep}}}]}}'
    response = await agent.post(f"/v1/runs/{run['run_id']}/prompts", content=body, headers=JSON)
    assert response.status_code == 400
    assert "nested deeper than 32" in response.json()["error"]["message"]


async def test_a_body_that_is_not_json_is_415(agent: httpx.AsyncClient) -> None:
    for content_type in (
        "application/x-www-form-urlencoded",
        "text/plain",
        "multipart/form-data; boundary=x",
    ):
        response = await agent.post(
            "/v1/runs", content=b"thread_id=web:room", headers={"Content-Type": content_type}
        )
        assert response.status_code == 415, content_type
        assert _code(response) == "UNSUPPORTED_MEDIA_TYPE"


async def test_json_media_types_with_parameters_or_suffixes_are_json(agent: httpx.AsyncClient) -> None:
    body = b'{"thread_id": "web:room", "agent": "ops", "started_by": "web:alice"}'
    for content_type in ("application/json; charset=utf-8", "application/vnd.threadgate+json"):
        response = await agent.post("/v1/runs", content=body, headers={"Content-Type": content_type})
        assert response.status_code == 201, response.text


async def test_the_routes_see_the_caller_the_door_authenticated(served: Served) -> None:
    async with served.client(AGENT_AUTH) as agent:
        run = await start_run(agent)
        ended = await agent.post(f"/v1/runs/{run['run_id']}/end")
    assert ended.status_code == 200
    assert ended.json()["state"] == "ended"
