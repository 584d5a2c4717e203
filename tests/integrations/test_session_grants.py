"""A grant made on a hook's prompt ("approve for this session") answers the session's next identical call:
every question of an agent session is asked in the session's one run (``PUT /v1/sessions/{key}/run``),
which outlives the question. Real gateway and redis-server; the hooks run as the tools run them."""

from __future__ import annotations

from typing import Any

import httpx

from tests.integrations.conftest import OPERATOR_TOKEN, PERSON, Gateway, unique
from tests.integrations.schemas import printed
from tests.integrations.test_hooks import pre_tool_use, start_hook


async def approve_with_grant(gateway: Gateway, agent: str, prompt: dict[str, Any]) -> dict[str, Any]:
    """The person approves over REST and grants exactly the call asked about; the grant made."""
    grant = {"scope": "run", "match": {"name": "Bash", "arguments": prompt["tool_call"]["arguments"]}}
    body = {"action": "accept", "from": f"web:{PERSON}", "grant": grant}
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=10) as client:
        response = await client.post(f"/v1/agents/{agent}/inputs/{prompt['prompt_id']}", json=body)
    assert response.status_code == 200, response.text
    made: dict[str, Any] = response.json()["grant"]
    return made


async def test_a_grant_on_a_hooks_approval_allows_the_sessions_next_identical_call(gateway: Gateway) -> None:
    agent, session = unique("claude"), unique("session")
    first = await start_hook("claude", pre_tool_use(session_id=session), gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    grant = await approve_with_grant(gateway, agent, prompt)
    _code, out, _err = await first
    assert printed("claude", "PreToolUse", out)["hookSpecificOutput"]["permissionDecision"] == "allow"

    # The same call again (a new tool_use_id) in the same session: nobody is asked, the grant allows it.
    second = await start_hook("claude", pre_tool_use(session_id=session), gateway.env(agent))
    _code, out, _err = await second
    decided = printed("claude", "PreToolUse", out)["hookSpecificOutput"]
    assert decided["permissionDecision"] == "allow"
    assert grant["grant_id"] in decided["permissionDecisionReason"]
    assert await gateway.pending(agent) == []
    async with gateway.agent_client() as client:
        grants = (await client.get(f"/v1/runs/{prompt['run_id']}/grants")).json()["items"]
    assert [(g["grant_id"], g["uses"]) for g in grants] == [(grant["grant_id"], 1)]


async def test_another_session_does_not_share_the_run_or_its_grant(gateway: Gateway) -> None:
    agent = unique("claude")
    thread = f"web:{unique('room')}"
    env = gateway.env(agent, THREADGATE_THREAD=thread)  # both sessions ask in one thread
    first = await start_hook("claude", pre_tool_use(session_id=unique("session")), env)
    prompt = await gateway.pending_prompt(agent)
    await approve_with_grant(gateway, agent, prompt)
    await first

    other = await start_hook("claude", pre_tool_use(session_id=unique("session")), env)
    asked = await gateway.pending_prompt(agent)
    assert asked["thread_id"] == prompt["thread_id"] == thread
    assert asked["run_id"] != prompt["run_id"]
    assert await gateway.say(thread, "deny") == "answered"
    _code, out, _err = await other
    assert printed("claude", "PreToolUse", out)["hookSpecificOutput"]["permissionDecision"] == "deny"


async def test_the_session_run_route_keeps_one_running_run_per_session(gateway: Gateway) -> None:
    agent = unique("ops")
    thread = f"web:{unique('room')}"
    body = {"thread_id": thread, "agent": agent, "started_by": f"web:{PERSON}"}
    async with gateway.agent_client() as client:
        first = await client.put(f"/v1/sessions/{agent}:one/run", json=body)
        again = await client.put(f"/v1/sessions/{agent}:one/run", json=body)
        other = await client.put(f"/v1/sessions/{agent}:two/run", json=body)
        assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
        run_id = first.json()["run"]["run_id"]
        assert again.json() == {"session_key": f"{agent}:one", "run": first.json()["run"], "created": False}
        assert first.json()["run"]["state"] == "running"
        assert other.json()["run"]["run_id"] != run_id

        assert (await client.post(f"/v1/runs/{run_id}/end")).status_code == 200
        after = await client.put(f"/v1/sessions/{agent}:one/run", json=body)
        assert after.status_code == 201 and after.json()["run"]["run_id"] != run_id

        wrong_agent = await client.put(f"/v1/sessions/{agent}:one/run", json={**body, "agent": "someone"})
        assert wrong_agent.status_code == 403
        bad_key = await client.put("/v1/sessions/no agent/run", json=body)
        assert bad_key.status_code in (400, 422)  # as the other session routes refuse a malformed key
        assert (await client.put(f"/v1/sessions/{agent}:one/run", json={"agent": agent})).status_code == 400
