"""Tokens act for their agents (contract §6): another agent's runs, prompts and threads are out of reach."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.base.models import InboundMessage
from gateway.base.settings import Settings
from gateway.store.sessions import SessionBindings
from tests.api.conftest import STARTER, Served, raise_prompt, served_gateway, start_run

# Tokens named like their agents act for that agent only (the default); "both" names two agents.
SCOPED_TOKENS = (
    "ops:agent:tok-ops,deploy:agent:tok-deploy,both:agent:tok-both:ops|deploy,"
    "desk:operator:tok-desk,opsdesk:operator:tok-opsdesk:ops,all:agent:tok-all:*"
)
OPS_THREAD = "slack:C0456:1712345678.000100"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _code(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


async def _opened(client: httpx.AsyncClient, params: dict[str, str]) -> tuple[int, str]:
    """``GET /v1/events``'s status and error code, without following a stream that was granted."""
    async with client.stream("GET", "/v1/events", params=params) as response:
        if response.status_code == 200:
            return 200, "OPENED"
        await response.aread()
        return _code(response)


@pytest.fixture
async def scoped(real_redis: str) -> AsyncIterator[Served]:
    async with served_gateway(real_redis, threadgate_api_tokens=SCOPED_TOKENS) as gateway:
        yield gateway


@pytest.fixture
async def clients(scoped: Served) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    names = ("ops", "deploy", "both", "desk", "opsdesk", "all")
    opened = {name: scoped.client(_auth(f"tok-{name}")) for name in names}
    try:
        yield opened
    finally:
        for client in opened.values():
            await client.aclose()


def test_the_agents_field_defaults_to_the_agent_named_like_the_token() -> None:
    raw = "ops:agent:a,fleet:agent:b:*,pair:agent:c:ops|deploy,desk:operator:d,opsdesk:operator:e:ops"
    tokens = {
        token.name: token.agents for token in Settings(_env_file=None, threadgate_api_tokens=raw).api_tokens()
    }
    assert tokens == {
        "ops": frozenset({"ops"}),
        "fleet": None,
        "pair": frozenset({"ops", "deploy"}),
        "desk": None,
        "opsdesk": frozenset({"ops"}),
    }
    with pytest.raises(ValueError, match="entry 1: the agents field"):
        Settings(_env_file=None, threadgate_api_tokens="ops:agent:tok:not an agent").api_tokens()


async def test_an_agent_token_starts_runs_only_for_its_own_agent(
    clients: dict[str, httpx.AsyncClient],
) -> None:
    own = await clients["ops"].post("/v1/runs", json={"thread_id": OPS_THREAD, "agent": "ops"})
    other = await clients["ops"].post("/v1/runs", json={"thread_id": "web:elsewhere", "agent": "deploy"})
    both = await clients["both"].post("/v1/runs", json={"thread_id": "web:elsewhere", "agent": "deploy"})
    assert own.status_code == 201
    assert _code(other) == (403, "FORBIDDEN")
    assert both.status_code == 201


async def test_another_agents_runs_and_prompts_do_not_exist_for_a_token(
    clients: dict[str, httpx.AsyncClient],
) -> None:
    ops, deploy = clients["ops"], clients["deploy"]
    run = await start_run(ops, thread_id=OPS_THREAD)
    prompt = await raise_prompt(ops, run["run_id"])
    prompt_id, run_id = prompt["prompt_id"], run["run_id"]
    text_prompt = {"kind": "text", "questions": [{"question": "?"}]}
    item = {"content": [{"type": "text", "text": "hi"}]}
    refused = {
        "raise": _code(await deploy.post(f"/v1/runs/{run_id}/prompts", json=text_prompt)),
        "end": _code(await deploy.post(f"/v1/runs/{run_id}/end")),
        "abort": _code(await deploy.post(f"/v1/runs/{run_id}/abort")),
        "approvals": _code(
            await deploy.post(f"/v1/runs/{run_id}/approvals", json={"tool_call": {"name": "Bash"}})
        ),
        "get": _code(await deploy.get(f"/v1/prompts/{prompt_id}")),
        "wait": _code(await deploy.get(f"/v1/prompts/{prompt_id}", params={"wait": 1})),
        "cancel": _code(await deploy.post(f"/v1/prompts/{prompt_id}/cancel", json={"reason": "mine now"})),
        "events": await _opened(deploy, {"run_id": run_id}),
    }
    in_thread = {
        "post": _code(await deploy.post(f"/v1/threads/{OPS_THREAD}/items", json=item)),
        "read": _code(await deploy.get(f"/v1/threads/{OPS_THREAD}/items")),
        "run": _code(await deploy.post("/v1/runs", json={"thread_id": OPS_THREAD, "agent": "deploy"})),
        "follow": await _opened(deploy, {"thread_id": OPS_THREAD}),
    }
    inbox = (await deploy.get("/v1/prompts")).json()["items"]
    by_agent = (await deploy.get("/v1/prompts", params={"agent": "ops"})).json()["items"]
    inputs = (await deploy.get("/v1/agents/ops/inputs")).json()["items"]
    still = (await ops.get(f"/v1/prompts/{prompt_id}")).json()
    seen_by_both = (await clients["both"].get("/v1/prompts")).json()["items"]
    assert refused == {
        "raise": (404, "RUN_NOT_FOUND"),
        "end": (404, "RUN_NOT_FOUND"),
        "abort": (404, "RUN_NOT_FOUND"),
        "approvals": (404, "RUN_NOT_FOUND"),
        "get": (404, "PROMPT_NOT_FOUND"),
        "wait": (404, "PROMPT_NOT_FOUND"),
        "cancel": (404, "PROMPT_NOT_FOUND"),
        "events": (404, "RUN_NOT_FOUND"),
    }
    assert in_thread == {name: (403, "FORBIDDEN") for name in in_thread}
    assert inbox == by_agent == inputs == []
    assert still["prompt_state"] == "pending"
    assert [item["prompt_id"] for item in seen_by_both] == [prompt_id]


async def test_a_scoped_operator_answers_and_lists_only_its_agents_prompts(
    clients: dict[str, httpx.AsyncClient],
) -> None:
    run = await start_run(clients["both"], thread_id="web:deploys", name="deploy")
    prompt = await raise_prompt(clients["both"], run["run_id"])
    path = f"/v1/agent-runs/{run['run_id']}/threads/web:deploys/user-inputs/{prompt['prompt_id']}/respond"
    opsdesk = clients["opsdesk"]
    accept = await opsdesk.post(
        f"/v1/agents/deploy/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": STARTER}
    )
    respond = await opsdesk.post(path, json={"skip": True}, headers={"X-Threadgate-From": STARTER})
    define = await opsdesk.put("/v1/agents/deploy", json={"human_input": {"approvers": ["web:mallory"]}})
    listed = (await opsdesk.get("/v1/prompts")).json()["items"]
    answered = await clients["desk"].post(
        f"/v1/agents/deploy/inputs/{prompt['prompt_id']}", json={"action": "accept", "from": STARTER}
    )
    assert _code(accept) == (404, "PROMPT_NOT_FOUND")
    assert _code(respond) == (404, "AGENT_THREAD_NOT_FOUND")
    assert _code(define) == (403, "FORBIDDEN")
    assert listed == []
    assert answered.status_code == 200 and answered.json()["prompt_state"] == "answered"


async def _say(served: Served, thread_id: str, text: str) -> None:
    await served.runtime.gateway.receive(InboundMessage(thread_id=thread_id, sender=STARTER, text=text))


async def _feed(client: httpx.AsyncClient) -> list[str]:
    items = (await client.get("/v1/messages")).json()["items"]
    return sorted(item["text"] for item in items)


async def _delivered(client: httpx.AsyncClient, count: int) -> None:
    """Wait (bounded) until ``count`` messages are in the feed, as an unscoped token sees it."""
    cursor, seen = None, 0
    for _ in range(20):
        params = {"wait": 1, **({"after": cursor} if cursor else {})}
        page = (await client.get("/v1/messages", params=params)).json()
        cursor, seen = page["cursor"] or cursor, seen + len(page["items"])
        if seen >= count:
            return
    raise AssertionError(f"only {seen} of {count} messages were delivered")


async def _events_until(client: httpx.AsyncClient, last: str) -> list[tuple[str, str]]:
    """The replayed feed as (type, text or agent) pairs, up to the entry ``last`` (a text or an agent)."""
    seen: list[tuple[str, str]] = []
    async with asyncio.timeout(10), client.stream("GET", "/v1/events", params={"after": "0-0"}) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            entry: dict[str, Any] = json.loads(line[6:])
            data = entry["data"]
            seen.append((entry["type"], data.get("text") or data.get("agent")))
            if last in (data.get("text"), data.get("agent")):
                return seen
    return seen


async def test_messages_reach_the_agents_that_own_the_thread_or_claim_its_channel(
    scoped: Served, clients: dict[str, httpx.AsyncClient]
) -> None:
    ops, deploy = clients["ops"], clients["deploy"]
    await _say(scoped, "slack:C0456:1.000001", "before any claim")
    await start_run(deploy, thread_id="slack:C0456:2.000002", name="deploy")
    claim = await clients["desk"].put("/v1/agents/ops", json={"channels": ["slack:C0456"]})
    late = await deploy.post("/v1/runs", json={"thread_id": "slack:C0456:4.000004", "agent": "deploy"})
    await _say(scoped, "slack:C0456:1.000001", "claimed by ops")
    await _say(scoped, "slack:C0456:2.000002", "where deploy has a run")
    await _say(scoped, "slack:C0999:3.000003", "unclaimed channel")
    await _delivered(clients["desk"], 4)
    ops_feed, deploy_feed = await _feed(ops), await _feed(deploy)
    await _say(scoped, "web:lobby", "end")  # after the others in the feed: every token sees it
    ops_events = await _events_until(ops, "end")
    deploy_events = await _events_until(deploy, "end")
    assert claim.json()["channels"] == ["slack:C0456"]
    assert _code(late) == (403, "FORBIDDEN")  # a channel ops claims: deploy starts no new thread there
    assert ops_feed == ["before any claim", "claimed by ops", "unclaimed channel", "where deploy has a run"]
    # Read now, so the claim decides even for a message that came before it.
    assert deploy_feed == ["unclaimed channel", "where deploy has a run"]
    assert sorted(text for kind, text in ops_events if kind == "message.received") == sorted(
        [*ops_feed, "end"]
    )
    assert sorted(text for kind, text in deploy_events if kind == "message.received") == sorted(
        [*deploy_feed, "end"]
    )


async def test_prompt_events_reach_only_tokens_acting_for_the_prompts_agent(
    clients: dict[str, httpx.AsyncClient], scoped: Served
) -> None:
    run = await start_run(clients["ops"], thread_id=OPS_THREAD)
    await raise_prompt(clients["ops"], run["run_id"])
    await _events_until(clients["desk"], "ops")  # the prompt's event is in the feed
    await _say(scoped, "web:lobby", "end")
    ops_events = await _events_until(clients["ops"], "end")
    deploy_events = await _events_until(clients["deploy"], "end")
    assert ops_events == [("input.requested", "ops"), ("message.received", "end")]
    assert deploy_events == [("message.received", "end")]


async def test_a_session_whose_thread_another_agent_owns_does_not_exist_for_a_token(
    scoped: Served, clients: dict[str, httpx.AsyncClient]
) -> None:
    await SessionBindings(scoped.runtime.gateway.store.redis).bind("ops:s1", OPS_THREAD)
    await start_run(clients["ops"], thread_id=OPS_THREAD)
    own = await clients["both"].get("/v1/sessions/ops:s1/thread")
    scoped_out = await clients["deploy"].get("/v1/sessions/ops:s1/thread")
    body = {"channel": "slack:C0456", "header": "Claude Code in api, session 1"}
    await SessionBindings(scoped.runtime.gateway.store.redis).bind("deploy:s1", OPS_THREAD)
    other = await clients["deploy"].get("/v1/sessions/deploy:s1/thread")
    taken = await clients["deploy"].put("/v1/sessions/deploy:s1/thread", json=body)
    assert own.json()["thread_id"] == OPS_THREAD
    assert _code(scoped_out) == (404, "SESSION_NOT_FOUND")
    assert _code(other) == (404, "SESSION_NOT_FOUND")  # its own key, but the thread is only ops's
    assert _code(taken) == (404, "SESSION_NOT_FOUND")


async def test_a_tool_call_binds_and_reveals_only_the_callers_own_prompts(
    clients: dict[str, httpx.AsyncClient],
) -> None:
    run = await start_run(clients["ops"], thread_id=OPS_THREAD)
    prompt = await raise_prompt(clients["ops"], run["run_id"])
    path = "/v1/sessions/ops:s7/calls/toolu_1"

    stolen = await clients["both"].put("/v1/sessions/deploy:s7/calls/toolu_1", json={"prompt_id": "prm_NOPE"})
    bound = await clients["ops"].put(path, json={"prompt_id": prompt["prompt_id"]})
    read = await clients["ops"].get(path)

    assert _code(stolen) == (404, "PROMPT_NOT_FOUND")
    assert bound.status_code == 201
    assert (read.status_code, read.json()["prompt_id"]) == (200, prompt["prompt_id"])


async def _session_verbs(client: httpx.AsyncClient, key: str, replacement: str, owned: str) -> dict[str, Any]:
    """What each session route answers ``client`` for the session ``key``."""
    header = {"channel": "slack:C0456", "header": "Claude Code in api, session S"}
    calls = f"/v1/sessions/{key}/calls/toolu_1"
    answers = {
        "GET thread": await client.get(f"/v1/sessions/{key}/thread"),
        "PUT thread": await client.put(f"/v1/sessions/{key}/thread", json=header),
        "GET call": await client.get(calls),
        "PUT call": await client.put(calls, json={"prompt_id": replacement, "replaces": owned}),
        "PUT new call": await client.put(
            f"/v1/sessions/{key}/calls/toolu_2", json={"prompt_id": replacement}
        ),
    }
    return {
        verb: _code(response) if response.status_code >= 400 else response.status_code
        for verb, response in answers.items()
    }


async def test_session_keys_exist_only_for_tokens_acting_for_the_agent_they_name(
    scoped: Served, clients: dict[str, httpx.AsyncClient]
) -> None:
    """``<agent>:<session>``: every verb of every session route refuses a token of another agent alike."""
    ops, deploy = clients["ops"], clients["deploy"]
    await SessionBindings(scoped.runtime.gateway.store.redis).bind("ops:S", OPS_THREAD)
    ops_run = await start_run(ops, thread_id=OPS_THREAD)
    ops_prompt = (await raise_prompt(ops, ops_run["run_id"]))["prompt_id"]
    assert (
        await ops.put("/v1/sessions/ops:S/calls/toolu_1", json={"prompt_id": ops_prompt})
    ).status_code == 201
    deploy_run = await start_run(deploy, thread_id="web:deploys", name="deploy")
    deploy_prompt = (await raise_prompt(deploy, deploy_run["run_id"]))["prompt_id"]

    refused = {
        verb: (404, "SESSION_NOT_FOUND")
        for verb in ("GET thread", "PUT thread", "GET call", "PUT call", "PUT new call")
    }
    assert await _session_verbs(deploy, "ops:S", deploy_prompt, ops_prompt) == refused
    # A key naming no agent of the token, even one that was never used, is no one's to claim.
    assert await _session_verbs(ops, "claude-code:S", ops_prompt, ops_prompt) == refused
    assert await _session_verbs(ops, "S", ops_prompt, ops_prompt) == refused

    # Nothing changed: the call and the thread are still ops's.
    read = await ops.get("/v1/sessions/ops:S/calls/toolu_1")
    assert read.json()["prompt_id"] == ops_prompt
    assert (await ops.get("/v1/sessions/ops:S/thread")).json()["thread_id"] == OPS_THREAD
    assert _code(await ops.get("/v1/sessions/ops:S/calls/toolu_2")) == (404, "CALL_NOT_FOUND")

    # Tokens acting for the agent, and a `*` token, reach it.
    for name in ("both", "all", "opsdesk"):
        assert (await clients[name].get("/v1/sessions/ops:S/thread")).status_code == 200, name
        assert (await clients[name].get("/v1/sessions/ops:S/calls/toolu_1")).status_code == 200, name
    fresh = await raise_prompt(ops, ops_run["run_id"])
    taken_over = await clients["all"].put(
        "/v1/sessions/ops:S/calls/toolu_3", json={"prompt_id": fresh["prompt_id"]}
    )
    assert taken_over.status_code == 201
