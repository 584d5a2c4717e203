"""Escalation targets obey the rules of posting (contract §6): a copy of an agent's prompt goes only where
a token acting for that agent may post. A thread only other agents own, or one in a channel they claim,
is refused when the step is named (403 naming the target), on a raise and on an agent definition alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.store import keys
from tests.api.conftest import Served, served_gateway, start_run

TOKENS = (
    "ops:agent:tok-ops,deploy:agent:tok-deploy,all:agent:tok-all:*,"
    "desk:operator:tok-desk,opsdesk:operator:tok-opsdesk:ops"
)
OPS_THREAD = "slack:C0456:1712345678.000100"
DEPLOYS = "slack:C0456:1712345678.000200"  # deploy has a run here
DEPLOY_ROOM = "web:deploys"  # and here
CLAIMED = "slack:C0777:1712345678.000300"  # in a channel deploy claims
OURS = "slack:C0888:1712345678.000400"  # in a channel ops claims
UNOWNED = [
    "slack:C0999:1712345678.000500",  # nobody's yet
    "web:oncall",
    OURS,
]
OTHERS = [DEPLOYS, DEPLOY_ROOM, CLAIMED]


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def scoped(real_redis: str) -> AsyncIterator[Served]:
    async with served_gateway(real_redis, threadgate_api_tokens=TOKENS) as gateway:
        yield gateway


@pytest.fixture
async def clients(scoped: Served) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    opened = {
        name: scoped.client(_auth(f"tok-{name}")) for name in ("ops", "deploy", "all", "desk", "opsdesk")
    }
    try:
        desk = opened["desk"]
        assert (await desk.put("/v1/agents/deploy", json={"channels": ["slack:C0777"]})).status_code == 200
        assert (await desk.put("/v1/agents/ops", json={"channels": ["slack:C0888"]})).status_code == 200
        for thread in (DEPLOYS, DEPLOY_ROOM):
            await start_run(opened["deploy"], thread_id=thread, name="deploy")
        yield opened
    finally:
        for client in opened.values():
            await client.aclose()


def _plan(target: str) -> list[dict[str, Any]]:
    return [{"after_seconds": 60, "remind": True}, {"after_seconds": 120, "to": ["web:pager", target]}]


async def _raise(client: httpx.AsyncClient, run_id: str, target: str) -> httpx.Response:
    body = {"kind": "text", "questions": [{"question": "Which build?"}], "escalation": _plan(target)}
    return await client.post(f"/v1/runs/{run_id}/prompts", json=body)


@pytest.mark.parametrize("target", OTHERS)
@pytest.mark.parametrize("token", ["ops", "all"])
async def test_a_raise_escalating_to_another_agents_thread_is_403_naming_it_and_keeps_nothing(
    scoped: Served, clients: dict[str, httpx.AsyncClient], token: str, target: str
) -> None:
    run = await start_run(clients[token], thread_id=OPS_THREAD)
    posts_before = len(scoped.channel.posts)

    refused = await _raise(clients[token], run["run_id"], target)

    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["details"]["target"]) == ("FORBIDDEN", target)
    assert target in error["message"]
    assert scoped.channel.posts[posts_before:] == [], "nothing was asked"
    assert await scoped.runtime.store.redis.zcard(keys.ESCALATION) == 0
    assert (await clients[token].get("/v1/prompts")).json()["items"] == []


@pytest.mark.parametrize("target", OTHERS)
@pytest.mark.parametrize("operator", ["desk", "opsdesk"])
async def test_an_agent_definition_escalating_to_another_agents_thread_is_403_naming_it(
    clients: dict[str, httpx.AsyncClient], operator: str, target: str
) -> None:
    refused = await clients[operator].put(
        "/v1/agents/ops", json={"human_input": {"escalation": _plan(target)}}
    )

    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["details"]["target"]) == ("FORBIDDEN", target)
    kept = (await clients["desk"].get("/v1/agents/ops")).json()
    assert kept["human_input"]["escalation"] == [] and kept["channels"] == ["slack:C0888"]


@pytest.mark.parametrize("target", OTHERS + UNOWNED)
async def test_an_escalation_target_is_refused_exactly_where_posting_there_is(
    clients: dict[str, httpx.AsyncClient], target: str
) -> None:
    ops = clients["ops"]
    run = await start_run(ops, thread_id=OPS_THREAD)
    item = {"content": [{"type": "text", "text": "hello"}]}

    posted = await ops.post(f"/v1/threads/{target}/items", json=item)
    raised = await _raise(ops, run["run_id"], target)
    defined = await clients["opsdesk"].put(
        "/v1/agents/ops", json={"human_input": {"escalation": _plan(target)}}
    )

    forbidden = target in OTHERS
    assert posted.status_code == (403 if forbidden else 202), posted.text
    assert raised.status_code == (403 if forbidden else 201), raised.text
    assert defined.status_code == (403 if forbidden else 200), defined.text
