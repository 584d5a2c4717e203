"""A call a grant of the run lets through is an allow the person made, named as such in every integration's
shape: never a policy pass (which leaves the tool's own rules to decide) and never a denial.

The gateway side is a wire-level stand-in answering the routes one question takes (thread, the session's
run, approvals), so the grant's answer can be given exactly as the gateway words it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from gateway.client import Threadgate
from gateway.client.target import Target
from gateway.integrations import hook_output
from gateway.integrations.permissions import Verdict, ask_permission
from tests.integrations.schemas import check_output

RUN = {
    "run_id": "run_1",
    "thread_id": "web:sessions-1",
    "agent": "ops",
    "started_by": "web:alice",
    "state": "running",
    "created_at": "2026-01-01T00:00:00Z",
}
TARGET = Target(agent="ops", session_channel="web:sessions", started_by="web:alice")


def gateway_answering(decision: dict[str, Any]) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/thread"):
            return httpx.Response(
                200, json={"session_key": "ops:s1", "thread_id": RUN["thread_id"], "created": False}
            )
        if request.method == "PUT" and path.endswith("/run"):
            return httpx.Response(200, json={"session_key": "ops:s1", "run": RUN, "created": False})
        if path.endswith("/approvals"):
            assert json.loads(request.content)["tool_call"]["name"] == "Bash"
            return httpx.Response(200, json=decision)
        return httpx.Response(404, json={"error": {"code": "NOT_FOUND", "message": path, "details": {}}})

    return handle


async def verdict_for(decision: dict[str, Any]) -> Verdict:
    transport = httpx.MockTransport(gateway_answering(decision))
    async with Threadgate("http://gateway.test", "t", transport=transport) as tg:
        return await ask_permission(tg, TARGET, "Bash", {"command": "git log"}, key="ops:s1", header="h")


async def test_a_grant_is_an_allow_naming_the_grant() -> None:
    verdict = await verdict_for({"decision": "allow", "by": "grant:grt_01ABC"})
    assert (verdict.behavior, verdict.grant_id, verdict.by_policy) == ("allow", "grt_01ABC", False)
    assert verdict.updated_input == {"command": "git log"}


async def test_the_policy_is_still_a_pass_that_leaves_the_tools_rules_to_decide() -> None:
    verdict = await verdict_for({"decision": "allow", "by": "policy"})
    assert (verdict.behavior, verdict.by_policy, verdict.grant_id) == (None, True, None)


@pytest.mark.parametrize("event", ["PreToolUse", "PermissionRequest"])
def test_claude_code_hooks_allow_on_a_grant_and_say_which(event: str) -> None:
    verdict = Verdict("allow", updated_input={"command": "git log"}, grant_id="grt_01ABC")
    if event == "PreToolUse":
        output = hook_output.pre_tool_use("claude", "Bash", verdict, "defer")
        assert output is not None
        assert output["hookSpecificOutput"]["permissionDecision"] == "allow"
        assert "grt_01ABC" in output["hookSpecificOutput"]["permissionDecisionReason"]
    else:
        output = hook_output.permission_request("claude", "Bash", verdict)
        assert output is not None
        assert output["hookSpecificOutput"]["decision"]["behavior"] == "allow"
    check_output("claude", event, output)
