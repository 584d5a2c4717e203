"""A call a person allowed for the rest of the run: ``POST /v1/runs/{run_id}/approvals`` answers
``{"decision": "allow", "by": "grant:<id>"}`` (contract §9), and every integration reads it as a person's
allow, never as the policy's silence. The gateway side is a wire-level fake answering in the contract's
shapes; how grants are made and matched is tested with the gateway itself."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from gateway.client import Allowed, Threadgate
from gateway.client.target import Target
from gateway.integrations import hook_output
from gateway.integrations.permissions import ask_permission
from tests.integrations.schemas import check_output

RUN = {
    "run_id": "run_01J00000000000000000000000",
    "thread_id": "web:room",
    "agent": "claude-code",
    "state": "running",
    "started_by": "web:alice",
    "created_at": "2024-04-05T00:00:00Z",
}
TARGET = Target(agent="claude-code", thread="web:room", started_by="web:alice", wait_s=5)


def fake_gateway(by: str) -> httpx.MockTransport:
    """Answers the session's run, and every approval with ``{"decision": "allow", "by": by}``."""

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "PUT" and path.endswith("/run"):
            return httpx.Response(201, json={"session_key": "k", "run": RUN, "created": True})
        if path.endswith("/approvals"):
            assert json.loads(request.content)["tool_call"]["name"] == "Bash"
            return httpx.Response(200, json={"decision": "allow", "by": by})
        return httpx.Response(404, json={"error": {"code": "NOT_FOUND", "message": path}})

    return httpx.MockTransport(answer)


@pytest.fixture
def granted() -> Iterator[Threadgate]:
    yield Threadgate("http://gateway.test", "t", transport=fake_gateway("grant:grt_1"))


async def test_approve_reports_who_allowed_the_call_by_grant(granted: Threadgate) -> None:
    async with granted as tg:
        approval = await tg.approve(RUN["run_id"], "Bash", {"command": "npm test"})
        decided = await tg.approval_decision(RUN["run_id"], "Bash", {"command": "npm test"})
    assert (bool(approval), approval.by, approval.prompt) == (True, "grant:grt_1", None)
    assert approval.arguments == {"command": "npm test"}
    assert isinstance(decided, Allowed) and decided.grant_id == "grt_1"


async def test_a_hook_prints_allow_for_a_call_a_grant_allows(granted: Threadgate) -> None:
    tool_input = {"command": "npm test"}
    async with granted as tg:
        verdict = await ask_permission(tg, TARGET, "Bash", tool_input, key="k", header="h")
    assert (verdict.behavior, verdict.by_policy, verdict.answered_by) == ("allow", False, "grant:grt_1")
    request = hook_output.permission_request("claude", "Bash", verdict)
    pre = hook_output.pre_tool_use("claude", "Bash", verdict, "defer")
    assert request == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
    }
    assert pre is not None and pre["hookSpecificOutput"]["permissionDecision"] == "allow"
    check_output("claude", "PermissionRequest", request)
    check_output("claude", "PreToolUse", pre)


async def test_the_policys_allow_is_still_no_decision() -> None:
    async with Threadgate("http://gateway.test", "t", transport=fake_gateway("policy")) as tg:
        verdict = await ask_permission(tg, TARGET, "Bash", {"command": "npm test"}, key="k", header="h")
    assert (verdict.behavior, verdict.by_policy) == (None, True)
