"""The whole decision through ``threadgate hook claude|codex``: a person denies with a reason or approves
with edits in the web chat, and the hook prints it where the tool takes it (checked against its schema)."""

from __future__ import annotations

import json

import httpx

from tests.integrations.conftest import OPERATOR_TOKEN, PERSON, Gateway, fixture, unique
from tests.integrations.schemas import printed
from tests.integrations.test_hooks import plain_bash, pre_tool_use, start_hook

EDIT_BASH = {"tools": {"Bash": {"ask": "always", "edit": True}}}


async def test_a_claude_deny_with_a_reason_tells_claude_why(gateway: Gateway) -> None:
    agent = unique("claude")
    hook = await start_hook("claude", pre_tool_use(), gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert (
        await gateway.say(prompt["thread_id"], "run only the unit tests, the e2e suite is down") == "answered"
    )
    _code, out, _err = await hook
    assert printed("claude", "PreToolUse", out) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"Denied in chat by web:{PERSON}: "
            "run only the unit tests, the e2e suite is down",
        }
    }


async def test_a_permission_request_approved_with_edits_runs_the_edited_input(gateway: Gateway) -> None:
    agent = unique("claude")
    await gateway.set_approval_policy(agent, EDIT_BASH)
    payload = plain_bash(session_id=unique("session"))
    hook = await start_hook("claude", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert prompt["editable"] is True
    assert await gateway.say(prompt["thread_id"], "command: rm -rf node_modules/.cache") == "answered"
    _code, out, _err = await hook
    # updatedInput replaces the whole input: the description the person left alone comes back as it was.
    assert printed("claude", "PermissionRequest", out) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "allow",
                "updatedInput": {
                    "command": "rm -rf node_modules/.cache",
                    "description": "Remove node_modules directory",
                },
            },
        }
    }
    settled = await gateway.prompt(prompt["prompt_id"])
    assert settled["tool_call"]["arguments"]["command"] == "rm -rf node_modules"
    assert settled["approved_call"]["arguments"]["command"] == "rm -rf node_modules/.cache"


async def test_an_editable_tool_is_asked_as_an_approval_even_with_always_allow_choices(
    gateway: Gateway,
) -> None:
    agent = unique("claude")
    await gateway.set_approval_policy(agent, EDIT_BASH)
    payload = fixture("claude/permission_request.input.json", session_id=unique("session"))
    hook = await start_hook("claude", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert (prompt["kind"], prompt["editable"]) == ("approval", True)
    edit = 'edit {"command": "rm -rf node_modules/.vite", "description": "Clear the vite cache"}'
    assert await gateway.say(prompt["thread_id"], edit) == "answered"
    _code, out, _err = await hook
    decision = printed("claude", "PermissionRequest", out)["hookSpecificOutput"]["decision"]
    assert decision == {
        "behavior": "allow",
        "updatedInput": {"command": "rm -rf node_modules/.vite", "description": "Clear the vite cache"},
    }


async def test_a_pre_tool_use_approved_with_edits_runs_the_edited_call(gateway: Gateway) -> None:
    agent = unique("claude")
    await gateway.set_approval_policy(agent, EDIT_BASH)
    payload = pre_tool_use()
    hook = await start_hook("claude", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    assert await gateway.say(prompt["thread_id"], "command: npm test -- --bail") == "answered"
    _code, out, _err = await hook
    edited = {**payload["tool_input"], "command": "npm test -- --bail"}
    body = printed("claude", "PreToolUse", out)["hookSpecificOutput"]
    assert (body["permissionDecision"], body["updatedInput"]) == ("allow", edited)
    assert body["permissionDecisionReason"].startswith(f"Approved in chat by web:{PERSON}, edited to ")


async def test_an_approvers_note_reaches_claude_beside_the_approval(gateway: Gateway) -> None:
    agent = unique("claude")
    hook = await start_hook("claude", pre_tool_use(), gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    body = {"action": "accept", "answers": ["Approve"], "note": "watch the logs", "from": f"web:{PERSON}"}
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=10) as operator:
        response = await operator.post(f"/v1/agents/{agent}/inputs/{prompt['prompt_id']}", json=body)
    assert response.status_code == 200, response.text
    _code, out, _err = await hook
    output = printed("claude", "PreToolUse", out)["hookSpecificOutput"]
    assert output["permissionDecision"] == "allow"
    assert output["additionalContext"] == "The approver's note: watch the logs"
    assert "updatedInput" not in output


async def test_codex_gets_the_reason_and_runs_an_edited_call_on_pre_tool_use(gateway: Gateway) -> None:
    agent = unique("codex")
    await gateway.set_approval_policy(agent, EDIT_BASH)
    payload = pre_tool_use(tool_input={"command": "git push --force origin main"})
    hook = await start_hook("codex", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "command: git push --force-with-lease origin main")
    _code, out, _err = await hook
    assert printed("codex", "PreToolUse", out) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "git push --force-with-lease origin main"},
        }
    }

    denied = await start_hook("codex", pre_tool_use(), gateway.env(agent))
    await gateway.say((await gateway.pending_prompt(agent))["thread_id"], "not while CI is red")
    _code, out, _err = await denied
    body = printed("codex", "PreToolUse", out)["hookSpecificOutput"]
    assert body["permissionDecisionReason"] == f"Denied in chat by web:{PERSON}: not while CI is red"


async def test_codex_permission_request_refuses_the_call_as_asked_when_approved_only_as_edited(
    gateway: Gateway,
) -> None:
    agent = unique("codex")
    await gateway.set_approval_policy(agent, EDIT_BASH)
    payload = fixture("codex_permission_request_bash.json", session_id=unique("session"))
    hook = await start_hook("codex", payload, gateway.env(agent))
    prompt = await gateway.pending_prompt(agent)
    await gateway.say(prompt["thread_id"], "command: git push --force-with-lease origin main")
    _code, out, _err = await hook
    decision = printed("codex", "PermissionRequest", out)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny"
    edited = {**payload["tool_input"], "command": "git push --force-with-lease origin main"}
    assert decision["message"] == (
        f"Approved in chat by web:{PERSON} only as edited: make the call again with exactly "
        f"{json.dumps(edited, sort_keys=True)}."
    )
