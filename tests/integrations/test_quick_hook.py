"""A hook answers a call the agent's policy lets through with one small request, loading only the standard
library; every other call goes the whole way, exactly as before."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx
import pytest

from tests.integrations.conftest import AGENT_TOKEN, Gateway, unique
from tests.support.serve import REPO

HEAVY = ("pydantic", "httpx", "fastapi", "redis", "gateway.base.models", "gateway.client.calls")
# Runs the hook in this interpreter, then says which heavy modules it loaded.
PROBE = (
    "import sys\n"
    "from gateway.cli import main\n"
    "code = main(sys.argv[1:])\n"
    f"print('LOADED', [name for name in {HEAVY!r} if name in sys.modules], file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def run_hook(tool: str, payload: dict[str, Any] | str, env: dict[str, str]) -> tuple[int, str, list[str]]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "hook", tool],
        input=data,
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    loaded = next(line for line in done.stderr.splitlines() if line.startswith("LOADED"))
    return done.returncode, done.stdout, json.loads(loaded.removeprefix("LOADED ").replace("'", '"'))


def read_call(event: str, **overrides: Any) -> dict[str, Any]:
    payload = {
        "hook_event_name": event,
        "session_id": unique("session"),
        "cwd": str(REPO),
        "tool_name": "Read",
        "tool_input": {"file_path": str(REPO / "README.md")},
    }
    payload.update(overrides)
    return payload


@pytest.mark.parametrize(
    ("tool", "event"), [("claude", "PreToolUse"), ("claude", "PermissionRequest"), ("codex", "PreToolUse")]
)
async def test_a_call_the_policy_allows_prints_nothing_and_loads_only_the_standard_library(
    gateway: Gateway, tool: str, event: str
) -> None:
    agent = unique(tool)
    await gateway.set_approval_policy(agent, {"default": "destructive"})
    code, out, loaded = run_hook(tool, read_call(event), gateway.env(agent))
    assert (code, out, loaded) == (0, "", [])
    assert await gateway.pending(agent) == []


async def test_a_call_the_policy_asks_about_goes_the_whole_way(gateway: Gateway) -> None:
    agent = unique("claude")
    await gateway.set_approval_policy(agent, {"default": "destructive"})
    payload = read_call("PreToolUse", tool_name="Bash", tool_input={"command": "rm -rf build"})
    env = gateway.env(agent, THREADGATE_WAIT_SECONDS="0.5")
    code, out, loaded = run_hook("claude", payload, env)
    assert code == 0 and "pydantic" in loaded  # the whole path ran: it asked, nobody answered in time
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "defer"


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        "[]",
        json.dumps(
            {"hook_event_name": "Elicitation", "session_id": "s", "mcp_server_name": "x", "message": "m"}
        ),
        json.dumps(read_call("PreToolUse", tool_name="AskUserQuestion", tool_input={"questions": []})),
        json.dumps(read_call("PreToolUse", tool_input="not an object")),
    ],
)
async def test_anything_but_a_plain_tool_call_goes_the_whole_way(gateway: Gateway, payload: str) -> None:
    agent = unique("claude")
    await gateway.set_approval_policy(agent, {"default": "never"})
    _code, _out, loaded = run_hook("claude", payload, gateway.env(agent, THREADGATE_WAIT_SECONDS="0.5"))
    assert "pydantic" in loaded


@pytest.mark.parametrize("token", ["", "wrong-" + "x" * 24])
async def test_a_refused_token_goes_the_whole_way(gateway: Gateway, token: str) -> None:
    agent = unique("claude")
    await gateway.set_approval_policy(agent, {"default": "never"})
    env = gateway.env(agent, THREADGATE_TOKEN=token, THREADGATE_WAIT_SECONDS="0.5")
    _code, _out, loaded = run_hook("claude", read_call("PreToolUse"), env)
    assert "pydantic" in loaded


async def test_the_policy_route_says_allow_or_ask_and_raises_nothing(gateway: Gateway) -> None:
    agent = unique("ops")
    await gateway.set_approval_policy(agent, {"default": "destructive", "tools": {"Read": "always"}})
    headers = {"Authorization": f"Bearer {AGENT_TOKEN}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=10) as client:

        async def decide(name: str, arguments: dict[str, Any], **more: Any) -> Any:
            body = {"tool_call": {"name": name, "arguments": arguments}, **more}
            return await client.post(f"/v1/agents/{agent}/policy", json=body)

        assert (await decide("Grep", {"pattern": "x"})).json() == {"decision": "allow", "by": "policy"}
        assert (await decide("Read", {"file_path": "a"})).json() == {"decision": "ask", "by": "policy"}
        assert (await decide("Bash", {"command": "ls"})).json()["decision"] == "ask"
        assert (await decide("deploy", {}, destructive=False)).json()["decision"] == "allow"
        refused = await decide("deploy", {}, destructive="no")
        assert refused.status_code in (400, 422) and "error" in refused.json()
    assert await gateway.pending(agent) == []


async def test_the_policy_route_is_for_tokens_acting_for_the_agent(gateway: Gateway) -> None:
    body = {"tool_call": {"name": "Grep", "arguments": {}}}
    async with httpx.AsyncClient(base_url=gateway.url, timeout=10) as client:
        anonymous = await client.post(f"/v1/agents/{unique('ops')}/policy", json=body)
    assert anonymous.status_code == 401
