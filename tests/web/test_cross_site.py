"""Cross-site writes: a page on another site cannot answer through a visitor's browser (contract §6)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from channels.web.spec import SPEC as WEB
from gateway.api.same_origin import GUARDED, origin_of, refusal
from gateway.delivery.plugins import route_prefixes, same_origin_prefixes
from gateway.demo import Demo
from tests.web.conftest import AGENT_AUTH, WebGateway, raise_prompt, start_run, web_gateway
from tests.web.test_demo import pending_prompt

APPROVE = {"name": "alice", "text": "approve"}
EVIL = "https://evil.example"


@pytest.fixture
async def web() -> AsyncIterator[WebGateway]:
    async with web_gateway() as gateway:
        yield gateway


def _forged(kind: str) -> dict[str, Any]:
    """What a page on another site can make a browser send without a preflight."""
    if kind == "text/plain":
        return {"content": json.dumps(APPROVE), "headers": {"Content-Type": "text/plain"}}
    if kind == "form":
        return {"data": APPROVE}
    return {"files": {"name": (None, "alice"), "text": (None, "approve")}}


async def _pending(agent: httpx.AsyncClient, prompt_id: str) -> str:
    state: str = (await agent.get(f"/v1/prompts/{prompt_id}")).json()["prompt_state"]
    return state


@pytest.mark.parametrize("kind", ["text/plain", "form", "multipart"])
async def test_open_chat_takes_json_bodies_only(web: WebGateway, kind: str) -> None:
    async with web.client() as visitor, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "forms")
        prompt = await raise_prompt(agent, run["run_id"])
        response = await visitor.post("/chat/forms/messages", **_forged(kind))
        session = await visitor.post("/chat/forms/session", **_forged(kind))
        state = await _pending(agent, prompt["prompt_id"])
    assert response.status_code == 415 and response.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert session.status_code == 415
    assert state == "pending"


@pytest.mark.parametrize(
    "headers",
    [{"Origin": EVIL}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}],
    ids=["foreign-origin", "null-origin", "sec-fetch-site"],
)
async def test_open_chat_refuses_writes_from_another_site(web: WebGateway, headers: dict[str, str]) -> None:
    async with web.client() as visitor, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "csrf")
        prompt = await raise_prompt(agent, run["run_id"])
        response = await visitor.post("/chat/csrf/messages", json=APPROVE, headers=headers)
        state = await _pending(agent, prompt["prompt_id"])
    assert response.status_code == 403 and response.json()["error"]["code"] == "CROSS_SITE_REQUEST"
    assert state == "pending"


@pytest.mark.parametrize("same_origin", [True, False], ids=["same-origin", "no-origin"])
async def test_open_chat_answers_from_its_own_page_and_from_non_browsers(
    web: WebGateway, same_origin: bool
) -> None:
    headers = {"Origin": web.base_url, "Sec-Fetch-Site": "same-origin"} if same_origin else {}
    async with web.client() as visitor, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "own")
        prompt = await raise_prompt(agent, run["run_id"])
        response = await visitor.post("/chat/own/messages", json=APPROVE, headers=headers)
        state = await _pending(agent, prompt["prompt_id"])
    assert response.json() == {"outcome": "answered"}
    assert state == "answered"


async def test_demo_refuses_cross_site_answers_in_the_chat_and_the_inbox(demo: Demo) -> None:
    operator = {"Authorization": f"Bearer {demo.operator_token}"}
    chat = f"/chat/{demo.room}/messages"
    async with httpx.AsyncClient(base_url=demo.base_url, headers=operator, timeout=10) as client:
        await client.post(chat, json={"name": "alice", "text": "hello"})
        prompt = await pending_prompt(client, f"web:{demo.room}", set())
        forged = [await client.post(chat, **_forged(kind)) for kind in ("text/plain", "form", "multipart")]
        foreign = await client.post(chat, json={"name": "alice", "text": "yes"}, headers={"Origin": EVIL})
        inbox = await client.post(
            f"/v1/agents/demo/inputs/{prompt['prompt_id']}",
            json={"action": "accept", "from": "web:operator"},
            headers={"Origin": EVIL},
        )
        state = (await client.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"]
        own = await client.post(
            f"/v1/agents/demo/inputs/{prompt['prompt_id']}",
            json={"action": "accept", "from": "web:operator"},
            headers={"Origin": demo.base_url},
        )
    assert [response.status_code for response in forged] == [415, 415, 415]
    assert (foreign.status_code, inbox.status_code) == (403, 403)
    assert state == "pending"
    assert own.status_code == 200 and own.json()["prompt_state"] == "answered"


def test_the_public_url_is_an_allowed_origin_behind_a_proxy() -> None:
    public = origin_of("https://Gw.Example.com:443/threadgate/")
    behind = {"host": "10.0.0.5:8787", "origin": "https://gw.example.com", "content-type": "application/json"}
    assert public == "https://gw.example.com"
    chat = route_prefixes(WEB)
    assert refusal("POST", "/chat/room/messages", behind, public, chat) is None
    refused = refusal("POST", "/chat/room/messages", behind, None, chat)
    assert refused is not None and refused.status == 403
    assert refusal("GET", "/chat/room/events", {**behind, "origin": EVIL}, public, chat) is None


def test_the_chat_asks_for_the_guard_in_its_spec_and_the_core_names_no_chat_path() -> None:
    assert set(same_origin_prefixes(["web"])) == {"/web/", "/chat/", "/chat-assets/"}
    assert same_origin_prefixes(["slack", "telegram"]) == ()  # servers, not browsers, write to theirs
    assert GUARDED == ("/v1/", "/mcp")
